/**
 * checkInitialKey: decides whether a zkey is exactly the contribution 0 that snarkjs 0.7.6's
 * `zkey new` writes for (r1cs, ptau), without rebuilding it. Rebuilding composes every point from
 * the ptau, one small MSM per variable and section (about 200 s at 2^18 here); this check costs a
 * few large MSMs with short scalars on the key's side.
 *
 * What `zkey new` writes (snarkjs src/zkey_new.js), and how each part is checked here. Writing
 * λ_c, λ^G2_c, α_c, β_c for points c of ptau sections 12–15 at the circuit's domain (Lagrange basis
 * of τ, in G1, G2, and scaled by α and β), a_cs, b_cs, c_cs for the r1cs coefficients of signal s
 * in constraint c, and n for the number of constraints:
 *   - the file's version (1) and section order (1, 2, 4, 3, 9, 8, 5, 6, 7, 10);
 *   - sections 1, 2 (protocol, header: q, r, nVars, nPublic, domainSize, α1, β1, β2 from ptau
 *     sections 4–6, γ2 = δ2 = the G2 generator, δ1 = the G1 generator): compared byte for byte;
 *   - section 4 (coefficients): recomputed from the r1cs (A and B terms, then one row (0, n+s, s, 1)
 *     per public signal s ≤ nPublic; each value coef·R² mod r) and compared byte for byte;
 *   - section 9 (H): the odd points of the doubled domain's Lagrange basis (ptau section 12),
 *     compared byte for byte;
 *   - sections 3, 5, 6, 7, 8 (IC, A, B1, B2, L): each point is a fixed linear combination of ptau
 *     points, A_s = Σ_c a_cs·λ_c (+ λ_{n+s} if s ≤ nPublic), B1_s = Σ_c b_cs·λ_c,
 *     B2_s = Σ_c b_cs·λ^G2_c, and for IC (s ≤ nPublic) and L (s > nPublic)
 *     K_s = Σ_c (a_cs·β_c + b_cs·α_c + c_cs·λ_c) (+ β_{n+s} for IC), that is
 *     K_s = β·A_s + α·B1_s + C'_s with C'_s = Σ_c c_cs·λ_c. Checked by random linear combination,
 *     below; every point is also checked to be a canonically encoded curve point;
 *   - section 10: the circuit hash (csHash) recomputed as snarkjs does (BLAKE2b-512 over the header
 *     points, each point section and the differences τ^{i+d} − τ^i of ptau section 2), no
 *     contributions.
 *
 * The random linear combination. The auditor draws uniform 128-bit scalars from crypto.randomBytes
 * after the files are fixed: one ρ_s per variable s, and σ1, σ2. With u_c = Σ_s ρ_s·a_cs (+ ρ_s at
 * row n+s), v_c = Σ_s ρ_s·b_cs, w_c = Σ_s ρ_s·c_cs (mod r, from the r1cs), and key-side sums
 * S_A = Σ ρ_s·A_s, S_B = Σ ρ_s·B1_s, S_K = Σ ρ_s·K_s (IC and L), T = Σ ρ_s·B2_s (MSMs with 16-byte
 * scalars), the checks are
 *   (1) [r]·T = 0 and e(S_B, g2) = e(g1, T)                                   (B2 is B1 in G2)
 *   (2) e(S_K + σ1·S_A + σ2·S_B − Σ_c (w_c + σ1·u_c + σ2·v_c)·λ_c, g2) = e(S_A, β2)·e(α1, T)
 * (2) folds S_A = Σ u_c·λ_c, S_B = Σ v_c·λ_c and S_K = β·S_A + α·S_B + Σ w_c·λ_c into one equation,
 * so the ptau side is one full-width MSM over λ (section 12); α1 and β2 are the header's, already
 * compared with the ptau's. On failure the equations are taken apart to name the section.
 *
 * Soundness. G1 of BN254 has prime order r (cofactor 1), so every on-curve point of the key is in
 * it; write eA_s, eB_s, eK_s for the discrete logarithms of A_s, B1_s, K_s minus what snarkjs
 * writes, and eB2_s for B2's (its order-r part, see below). (1) says Σ ρ_s·(eB_s − eB2_s) = 0 mod r;
 * (2) says Σ ρ_s·(eK_s + (σ1 − β)·eA_s + σ2·eB_s − α·eB2_s) = 0, which, with eB2 = eB, is
 * P(ρ, σ) = Σ_s ρ_s·(eK_s + (σ1 − β)·eA_s + (σ2 − α)·eB_s) = 0. If some eB_s ≠ eB2_s, (1) is a
 * nonzero linear polynomial in ρ; otherwise, if any error is nonzero, P is a nonzero polynomial of
 * degree ≤ 2 (its ρ_s·σ1 coefficient is eA_s, its ρ_s·σ2 coefficient eB_s, else Σ ρ_s·eK_s). Each
 * variable is uniform over 2^128 < r values, drawn after the files are fixed, so by
 * Schwartz–Zippel a key with any wrong point in IC, A, B1, L or B2's order-r part passes with
 * probability ≤ 2^-128 + 2·2^-128 = 3·2^-128, whatever α and β are and whoever knows them. The
 * scalars are never stored or shown. Equal points with canonical coordinates (checked) are equal
 * bytes, so the sections are byte-identical.
 *
 * G2 and its cofactor. B2's points are only checked to lie on the twist curve E'(F_q²), whose order
 * is r·h with h = 2q − r = 10069 · 5864401 · 1875725156269 · (a 178-bit prime), gcd(r, h) = 1; a
 * per-point subgroup check (a scalar multiplication by r for each of nVars G2 points) would cost
 * more than the whole rest of this check. Write B2_s = (order-r part) + c_s: [r]·T = 0 holds iff
 * Σ ρ_s·c_s = 0, and ρ_s mod 10069 takes only 10069 values, so an error made of small-order points
 * alone passes with probability ≈ 1/10069 (≈ 2^-22.5, 2^-40.8 for the next factors). Why this is
 * enough: B2 is used only by provers, to compute the proof's B in G2; the verifying key (α, β, γ, δ,
 * IC) is checked at 2^-128 above, and verifiers (snarkjs, the EVM's pairing precompile, EIP-197)
 * refuse G2 points outside the subgroup, so a small-order component in B2 can only make honest
 * proofs fail to verify (liveness), never make a false proof verify (soundness). Raising that bound
 * to 2^-128 needs ten independent G2 combinations (ten more G2 MSMs, about as many seconds each at
 * 2^18 even on the kernel) or per-point membership tests; not done.
 *
 * The ptau is an input the audit checks against its recorded hash; its points are taken as given:
 * in particular its Lagrange sections 14 and 15 are taken to be α and β times section 12 (as
 * snarkjs's preparePhase2 writes them and `powersoftau verify` checks), which (2) relies on.
 * Memory: the r1cs and the key are streamed; what is held is one 16-byte scalar, one bigint and (in
 * the kernel's r1cs pass) one 32-byte Montgomery copy per variable, and four 32-byte scalars (u, v,
 * w and their fold) per domain point.
 */
import { createHash, randomBytes } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import type { Bn128Curve, CurveGroup } from 'ffjavascript';
import { CoordinatorError } from '../errors.ts';
import { getBn128 } from '../crypto/bn128.ts';
import { BN254_R } from '../crypto/bn254-moduli.ts';
import { readZkeyInfo, SECTION, type ZkeyInfo } from '../zkey/zkey-file.ts';
import { g1CheckedMultiExpOrFallback, g1MultiExpOrFallback, g2MultiExpOrFallback } from '../kernel/g1-multi-exp.ts';
import { G1Uncompressed } from '../kernel/g1-uncompressed.ts';
import { COEFFICIENT_ENTRY_BYTES, R1csScanKernel } from '../kernel/r1cs-scan.ts';
import { firstPointOffCurve, type CurveMainThread } from '../zkey/point-checks.ts';

const N8 = 32;
const G1_SIZE = 2 * N8;
const G2_SIZE = 4 * N8;
/** Bytes of each random scalar: 128 bits, see the module comment. */
export const INITIAL_KEY_SCALAR_BYTES = 16;
const CHUNK_POINTS = 1 << 17;
/** 2^256 mod r: the Montgomery factor of snarkjs's Fr. */
const MONT_R = (1n << 256n) % BN254_R;
/** What section 4 holds for a coefficient of 1 (it holds a·R² mod r for a). */
const MONT_R2 = (MONT_R * MONT_R) % BN254_R;
/** Bytes of one r1cs term: signal, coefficient. */
const R1CS_TERM_BYTES = 4 + N8;
/** ffjavascript's two-adicity of r: above it snarkjs takes H from elsewhere (never at our sizes). */
const FR_TWO_ADICITY = 28;

/** The parts of ffjavascript's curve that its typings leave out. */
interface CurveExtras {
  G1: CurveGroup & { batchLEMtoU(b: Uint8Array): Promise<Uint8Array> };
  G2: CurveGroup & { batchLEMtoU(b: Uint8Array): Promise<Uint8Array> };
  tm: CurveMainThread['tm'];
}
type Curve = Bn128Curve & CurveExtras;
type GroupName = 'G1' | 'G2';

/** The sections a mismatch can name, as refusals name them. */
export type InitialKeyPart = 'header' | 'IC' | 'coefficients' | 'A' | 'B1' | 'B2' | 'L' | 'H' | 'circuit hash' | 'contributions';

export interface CheckInitialKeyOptions {
  /** How messages name the key (default: "contribution 0"). */
  label?: string;
  /** Called with the fraction of the work done, in [0, 1]. */
  onProgress?: (fraction: number) => void;
  /** Filled with the milliseconds of each phase (the bench prints them). */
  timings?: Record<string, number>;
}

function mismatch(part: InitialKeyPart, label: string, why: string): CoordinatorError {
  return new CoordinatorError('audit.initial_key_mismatch', `${label} is not the key that the r1cs and the ptau produce: ${part} ${why}`);
}

/**
 * The one place that runs the multi-exponentiations. Scalars are little-endian, scalars.length /
 * points bytes each. Both groups run on the kernel's MSMs (core/kernel/g1-multi-exp.ts: G1 2-2.5×
 * ffjavascript's here, G2 2.2-2.4× on B2 at rs18, bench/g2-msm.ts), with ffjavascript's as the
 * fallback where the kernel cannot run.
 */
function multiExp(curve: Curve, group: GroupName, bases: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
  if (bases.length === 0) return Promise.resolve(curve[group].zero);
  const scalarBytes = scalars.length / (bases.length / (group === 'G1' ? G1_SIZE : G2_SIZE));
  return group === 'G1' ? g1MultiExpOrFallback(bases, scalars, scalarBytes) : g2MultiExpOrFallback(bases, scalars, scalarBytes);
}

// ---------------------------------------------------------------------------------------------
// Files

interface BinSection {
  offset: number;
  size: number;
}

/** The section table of a snarkjs binary file (zkey, r1cs, ptau): first occurrence of each id. */
async function binSections(handle: FileHandle, magic: string, what: string, errorCode: 'r1cs.malformed' | 'ptau.malformed'): Promise<Map<number, BinSection>> {
  const { size: fileSize } = await handle.stat();
  const head = Buffer.alloc(12);
  await handle.read(head, 0, 12, 0);
  if (fileSize < 12 || head.toString('latin1', 0, 4) !== magic) throw new CoordinatorError(errorCode, `${what} is not a ${magic} file`);
  const count = head.readUInt32LE(8);
  const sections = new Map<number, BinSection>();
  let position = 12;
  for (let i = 0; i < count; i++) {
    const entry = Buffer.alloc(12);
    const { bytesRead } = await handle.read(entry, 0, 12, position);
    if (bytesRead !== 12) throw new CoordinatorError(errorCode, `${what} is truncated in its section table`);
    const id = entry.readUInt32LE(0);
    const size = Number(entry.readBigUInt64LE(4));
    position += 12;
    if (position + size > fileSize) throw new CoordinatorError(errorCode, `${what}: section ${id} runs past the end of the file`);
    if (!sections.has(id)) sections.set(id, { offset: position, size });
    position += size;
  }
  return sections;
}

async function readAt(handle: FileHandle, position: number, length: number, what: string): Promise<Uint8Array> {
  // A plain Uint8Array with its own buffer: ffjavascript posts slices of it to its workers.
  const bytes = new Uint8Array(length);
  const { bytesRead } = await handle.read(bytes, 0, length, position);
  if (bytesRead !== length) throw new CoordinatorError('chain.file_unreadable', `${what} could not be read completely`);
  return bytes;
}

/** Sequential reader over one section, in 4 MiB reads: the r1cs and the coefficients are never held whole. */
class SectionReader {
  private buffer = Buffer.alloc(0);
  private at = 0;
  private position: number;
  private readonly end: number;

  constructor(private readonly handle: FileHandle, section: BinSection, private readonly what: string) {
    this.position = section.offset;
    this.end = section.offset + section.size;
  }

  get remaining(): number {
    return this.end - this.position + (this.buffer.length - this.at);
  }

  /** Makes the next `n` bytes available to takeNow (one await per constraint, not per term). */
  async ensure(n: number): Promise<void> {
    if (this.buffer.length - this.at < n) {
      const keep = this.buffer.subarray(this.at);
      const length = Math.min(Math.max(n - keep.length, 4 << 20), this.end - this.position);
      if (keep.length + length < n) throw new CoordinatorError('chain.file_unreadable', `${this.what} ends too early`);
      const next = Buffer.alloc(keep.length + length);
      keep.copy(next, 0);
      const { bytesRead } = await this.handle.read(next, keep.length, length, this.position);
      if (bytesRead !== length) throw new CoordinatorError('chain.file_unreadable', `${this.what} could not be read completely`);
      this.position += length;
      this.buffer = next;
      this.at = 0;
    }
  }

  /** The bytes read but not yet taken (a view valid until the next ensure). */
  peek(): Buffer {
    return this.buffer.subarray(this.at);
  }

  /** The next `n` bytes, made available by ensure (a view valid until the next ensure). */
  takeNow(n: number): Buffer {
    if (this.buffer.length - this.at < n) throw new RangeError('SectionReader.takeNow past what ensure provided');
    const out = this.buffer.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  async take(n: number): Promise<Buffer> {
    await this.ensure(n);
    return this.takeNow(n);
  }

  async u32(): Promise<number> {
    return (await this.take(4)).readUInt32LE(0);
  }
}

function leBigint(bytes: Buffer, offset: number): bigint {
  return (
    bytes.readBigUInt64LE(offset) |
    (bytes.readBigUInt64LE(offset + 8) << 64n) |
    (bytes.readBigUInt64LE(offset + 16) << 128n) |
    (bytes.readBigUInt64LE(offset + 24) << 192n)
  );
}

function writeLe(target: Uint8Array, offset: number, value: bigint, bytes: number): void {
  let v = value;
  for (let i = 0; i < bytes; i++) {
    target[offset + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

// ---------------------------------------------------------------------------------------------
// Points



// ---------------------------------------------------------------------------------------------
// The r1cs pass

interface R1csHeader {
  nWires: number;
  nPublic: number;
  nConstraints: number;
  constraints: BinSection;
}

async function readR1csHeader(handle: FileHandle, what: string): Promise<R1csHeader> {
  const sections = await binSections(handle, 'r1cs', what, 'r1cs.malformed');
  const header = sections.get(1);
  const constraints = sections.get(2);
  if (!header || !constraints) throw new CoordinatorError('r1cs.malformed', `${what} lacks its header or constraints section`);
  const bytes = Buffer.from(await readAt(handle, header.offset, header.size, what));
  if (bytes.length < 4 || bytes.readUInt32LE(0) !== N8 || bytes.length !== 4 + N8 + 4 * 4 + 8 + 4) throw new CoordinatorError('r1cs.malformed', `${what} has an unexpected header`);
  if (leBigint(bytes, 4) !== BN254_R) throw new CoordinatorError('r1cs.malformed', `${what} is not over bn128's scalar field`);
  let p = 4 + N8;
  const nWires = bytes.readUInt32LE(p);
  const nPubOut = bytes.readUInt32LE(p + 4);
  const nPubIn = bytes.readUInt32LE(p + 8);
  p += 16 + 8;
  const nConstraints = bytes.readUInt32LE(p);
  return { nWires, nPublic: nPubOut + nPubIn, nConstraints, constraints };
}

/** The random scalars of one role (one key section), as bytes for the MSM and as bigints for the sums. */
interface RoleScalars {
  bytes: Uint8Array;
  values: bigint[];
}

function drawScalars(count: number): RoleScalars {
  const bytes = new Uint8Array(randomBytes(count * INITIAL_KEY_SCALAR_BYTES));
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const values = new Array<bigint>(count);
  for (let i = 0; i < count; i++) values[i] = view.readBigUInt64LE(i * 16) | (view.readBigUInt64LE(i * 16 + 8) << 64n);
  return { bytes, values };
}

/** Full-width scalars for the λ points (ptau section 12), one per domain point. */
interface LambdaScalars {
  /** u_c = Σ_s ρ_s·a_cs (+ ρ_s at row n+s): Σ ρ_s·A_s. */
  u: Uint8Array;
  /** v_c = Σ_s ρ_s·b_cs: Σ ρ_s·B1_s. */
  v: Uint8Array;
  /** w_c = Σ_s ρ_s·c_cs: Σ ρ_s·C'_s, the λ part of Σ ρ_s·K_s. */
  w: Uint8Array;
  /** w + σ1·u + σ2·v: the one MSM of the combined check. */
  combined: Uint8Array;
}

/** Walks whole constraints in `bytes`: how many, their length, and how many A and B terms they hold. */
function wholeConstraints(bytes: Buffer, most: number): { count: number; length: number; abTerms: number[] } {
  const abTerms: number[] = [];
  let length = 0;
  while (abTerms.length < most) {
    let at = length;
    let ab = 0;
    for (let matrix = 0; matrix < 3 && at <= bytes.length; matrix++) {
      if (at + 4 > bytes.length) {
        at = Infinity;
        break;
      }
      const terms = bytes.readUInt32LE(at);
      at += 4 + terms * R1CS_TERM_BYTES;
      if (matrix < 2) ab += terms;
    }
    if (at > bytes.length) break;
    length = at;
    abTerms.push(ab);
  }
  return { count: abTerms.length, length, abTerms };
}

/**
 * One streaming pass over the r1cs constraints: sums c_j = Σ_s ρ_s·M_sj for the ptau points and,
 * when `coefficients` is given, compares the key's section 4 with what snarkjs writes. The field
 * arithmetic runs in the kernel (r1cs-scan.c), a batch of whole constraints at a time.
 */
async function scanR1cs(r1cs: FileHandle, header: R1csHeader, domainSize: number, rho: RoleScalars, sigma: [bigint, bigint], coefficients: SectionReader | undefined, label: string, r1csWhat: string): Promise<LambdaScalars> {
  const { nWires, nPublic, nConstraints } = header;
  const reader = new SectionReader(r1cs, header.constraints, r1csWhat);
  const out: LambdaScalars = {
    u: new Uint8Array(domainSize * N8),
    v: new Uint8Array(domainSize * N8),
    w: new Uint8Array(domainSize * N8),
    combined: new Uint8Array(domainSize * N8),
  };
  const kernel = await R1csScanKernel.instantiate(rho.bytes, INITIAL_KEY_SCALAR_BYTES, nWires, sigma);

  for (let c = 0; c < nConstraints;) {
    let batch = wholeConstraints(reader.peek(), nConstraints - c);
    if (batch.count === 0) {
      // Not one whole constraint in hand: read on (a constraint longer than a read is fine).
      if (reader.remaining <= reader.peek().length) throw new CoordinatorError('r1cs.malformed', `${r1csWhat} ends inside constraint ${c}`);
      await reader.ensure(Math.min(reader.remaining, reader.peek().length + (4 << 20)));
      batch = wholeConstraints(reader.peek(), nConstraints - c);
      if (batch.count === 0) continue;
    }
    let entries: Uint8Array | undefined;
    if (coefficients) {
      const needed = batch.abTerms.reduce((sum, n) => sum + n, 0) * COEFFICIENT_ENTRY_BYTES;
      if (coefficients.remaining < needed) {
        let held = coefficients.remaining;
        const short = batch.abTerms.findIndex((n) => (held -= n * COEFFICIENT_ENTRY_BYTES) < 0);
        throw mismatch('coefficients', label, `end before constraint ${c + short}`);
      }
      entries = await coefficients.take(needed);
    }
    const scanned = kernel.scan(reader.takeNow(batch.length), batch.count, c, entries);
    if ('kind' in scanned) {
      if (scanned.kind === 'signal_out_of_range') throw new CoordinatorError('r1cs.malformed', `${r1csWhat} names a signal beyond its ${nWires} in constraint ${scanned.constraint}`);
      throw mismatch('coefficients', label, `differ at constraint ${scanned.constraint}`);
    }
    out.u.set(scanned.u, c * N8);
    out.v.set(scanned.v, c * N8);
    out.w.set(scanned.w, c * N8);
    out.combined.set(scanned.combined, c * N8);
    c += batch.count;
  }

  // The rows snarkjs adds for the public signals: A has ρ_s, B and C nothing.
  const [sigma1] = sigma;
  const publicEntry = Buffer.alloc(COEFFICIENT_ENTRY_BYTES);
  writeLe(publicEntry, 12, MONT_R2, N8);
  for (let s = 0; s <= nPublic; s++) {
    const row = nConstraints + s;
    writeLe(out.u, row * N8, rho.values[s]!, N8);
    writeLe(out.combined, row * N8, (sigma1 * rho.values[s]!) % BN254_R, N8);
    if (coefficients) {
      if (coefficients.remaining < COEFFICIENT_ENTRY_BYTES) throw mismatch('coefficients', label, `end before constraint ${row}`);
      publicEntry.writeUInt32LE(0, 0);
      publicEntry.writeUInt32LE(row, 4);
      publicEntry.writeUInt32LE(s, 8);
      if (!(await coefficients.take(COEFFICIENT_ENTRY_BYTES)).equals(publicEntry)) throw mismatch('coefficients', label, `differ at constraint ${row}`);
    }
  }
  if (coefficients && coefficients.remaining !== 0) throw mismatch('coefficients', label, 'has entries the r1cs does not produce');
  return out;
}

// ---------------------------------------------------------------------------------------------
// The key side

const G1_SECTIONS: Array<{ id: number; part: InitialKeyPart }> = [
  { id: SECTION.ic, part: 'IC' },
  { id: SECTION.l, part: 'L' },
  { id: SECTION.a, part: 'A' },
  { id: SECTION.b1, part: 'B1' },
];

/**
 * Σ ρ_i·X_i over one point section of the key, streamed, every point checked on the curve; the
 * uncompressed points go into the circuit hash as snarkjs hashes them (length first, big-endian).
 */
async function combineKeySection(curve: Curve, kernel: G1Uncompressed, group: GroupName, key: FileHandle, info: ZkeyInfo, id: number, part: InitialKeyPart, scalars: Uint8Array, csHash: ReturnType<typeof createHash>, progress: (points: number) => void): Promise<Uint8Array> {
  const G = curve[group];
  const size = group === 'G1' ? G1_SIZE : G2_SIZE;
  const section = info.sections.get(id)!;
  const count = section.size / size;
  hashU32(csHash, count);
  let sum = G.zero;
  for (let first = 0; first < count; first += CHUNK_POINTS) {
    const n = Math.min(CHUNK_POINTS, count - first);
    const bases = await readAt(key, section.offset + first * size, n * size, `the ${part} section of ${info.label}`);
    const chunkScalars = scalars.subarray(first * INITIAL_KEY_SCALAR_BYTES, (first + n) * INITIAL_KEY_SCALAR_BYTES);
    let partial: Uint8Array;
    if (group === 'G1') {
      // The MSM threads check the points (on the curve, canonical) before summing them, while this
      // thread converts them for the hash.
      const checked = g1CheckedMultiExpOrFallback(bases, chunkScalars, INITIAL_KEY_SCALAR_BYTES);
      checked.catch(() => undefined);
      csHash.update(kernel.toUncompressed(bases));
      const result = await checked;
      if ('invalidPoint' in result) throw mismatch(part, info.label, `point ${first + result.invalidPoint} is not a point of the curve`);
      partial = result.sum;
    } else {
      const bad = firstPointOffCurve(curve, group, bases);
      if (bad >= 0) throw mismatch(part, info.label, `point ${first + bad} is not a point of the curve`);
      const [sum2, uncompressed] = await Promise.all([multiExp(curve, group, bases, chunkScalars), G.batchLEMtoU(bases)]);
      csHash.update(uncompressed);
      partial = sum2;
    }
    sum = G.add(sum, partial);
    progress(group === 'G2' ? 3 * n : n);
  }
  return sum;
}

/**
 * Π e(P_i, Q_i) = 1, leaving out pairs with an identity point: ffjavascript's pairing does not
 * treat the point at infinity as neutral (a circuit whose public signals never appear in B has
 * zero sums here).
 */
function pairingHolds(curve: Curve, pairs: Array<[Uint8Array, Uint8Array]>): Promise<boolean> {
  const kept = pairs.filter(([p, q]) => !curve.G1.isZero(p) && !curve.G2.isZero(q));
  if (kept.length === 0) return Promise.resolve(true);
  return curve.pairingEq(...kept.flat());
}

/** Σ c_j·P_j over `domainSize` points of a ptau section starting at point `start`. */
async function combinePtau(curve: Curve, group: GroupName, ptau: FileHandle, section: BinSection, start: number, domainSize: number, scalars: Uint8Array, what: string, progress: (points: number) => void): Promise<Uint8Array> {
  const G = curve[group];
  const size = group === 'G1' ? G1_SIZE : G2_SIZE;
  if ((start + domainSize) * size > section.size) throw new CoordinatorError('ptau.too_small', `the ptau's ${what} section is too short for this circuit`);
  let sum = G.zero;
  for (let first = 0; first < domainSize; first += CHUNK_POINTS) {
    const n = Math.min(CHUNK_POINTS, domainSize - first);
    const bases = await readAt(ptau, section.offset + (start + first) * size, n * size, `the ptau's ${what} section`);
    sum = G.add(sum, await multiExp(curve, group, bases, scalars.subarray(first * N8, (first + n) * N8)));
    progress(n);
  }
  return sum;
}

function hashU32(hash: ReturnType<typeof createHash>, n: number): void {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(n, 0);
  hash.update(bytes);
}

/**
 * τ^{i+d} − τ^i for pairs, uncompressed, on ffjavascript's own main-thread wasm, for the pairs the
 * kernel cannot take: snarkjs's last chunk at domains above 2^14 reaches one point past the end of
 * ptau section 2 and hashes whatever bytes follow as if they were a point, so only ffjavascript's
 * own arithmetic on them reproduces its hash.
 */
function hPointDifferences(curve: Curve, high: Uint8Array, low: Uint8Array): Uint8Array {
  const exports = curve.tm.instance.exports as Record<string, (...args: number[]) => void>;
  const count = high.length / G1_SIZE;
  const out = new Uint8Array(count * G1_SIZE);
  const batch = 512;
  const projective = 3 * N8;
  curve.tm.startSyncOp();
  try {
    const pHigh = curve.tm.alloc(batch * G1_SIZE);
    const pLow = curve.tm.alloc(batch * G1_SIZE);
    const pDiff = curve.tm.alloc(batch * projective);
    const pAffine = curve.tm.alloc(batch * G1_SIZE);
    let memory = new Uint8Array(curve.tm.memory.buffer);
    if (pAffine + batch * G1_SIZE > memory.length) throw new Error('ffjavascript main-thread memory is too small for the H differences');
    for (let first = 0; first < count; first += batch) {
      const n = Math.min(batch, count - first);
      memory.set(high.subarray(first * G1_SIZE, (first + n) * G1_SIZE), pHigh);
      memory.set(low.subarray(first * G1_SIZE, (first + n) * G1_SIZE), pLow);
      for (let i = 0; i < n; i++) exports.g1m_subAffine!(pHigh + i * G1_SIZE, pLow + i * G1_SIZE, pDiff + i * projective);
      exports.g1m_batchToAffine!(pDiff, n, pAffine);
      exports.g1m_batchLEMtoU!(pAffine, n, pAffine);
      memory = new Uint8Array(curve.tm.memory.buffer);
      out.set(memory.subarray(pAffine, pAffine + n * G1_SIZE), first * G1_SIZE);
    }
    return out;
  } finally {
    curve.tm.endSyncOp();
  }
}

/**
 * The circuit hash's share of H: τ^{i+d} − τ^i (ptau section 2), uncompressed, as snarkjs hashes
 * them; the differences are taken by the kernel (g1-uncompressed.c), one inversion per chunk,
 * except past the section's end (see hPointDifferences).
 */
async function hashHPoints(curve: Curve, uncompressed: G1Uncompressed, ptau: FileHandle, tauG1: BinSection, domainSize: number, csHash: ReturnType<typeof createHash>): Promise<void> {
  // snarkjs reads chunks of min(d − 1, 2^14) points from 0 while below d − 1: d − 1 points for
  // small domains, whole chunks (d points) above 2^14. Mirrored exactly, file positions included.
  const chunk = 1 << 14;
  const sectionPoints = tauG1.size / G1_SIZE;
  hashU32(csHash, domainSize - 1);
  for (let offset = 0; offset < domainSize - 1; offset += chunk) {
    const n = Math.min(domainSize - 1, chunk);
    const high = await readAt(ptau, tauG1.offset + (offset + domainSize) * G1_SIZE, n * G1_SIZE, "the ptau's tau section");
    const low = await readAt(ptau, tauG1.offset + offset * G1_SIZE, n * G1_SIZE, "the ptau's tau section");
    const inside = Math.max(0, Math.min(n, sectionPoints - (offset + domainSize)));
    csHash.update(uncompressed.differencesUncompressed(high.subarray(0, inside * G1_SIZE), low.subarray(0, inside * G1_SIZE)));
    if (inside < n) csHash.update(hPointDifferences(curve, high.subarray(inside * G1_SIZE), low.subarray(inside * G1_SIZE)));
  }
}

/** Section 9 against the odd points of the doubled domain's Lagrange basis, byte for byte. */
async function checkH(key: FileHandle, info: ZkeyInfo, ptau: FileHandle, lagrangeG1: BinSection, domainSize: number, progress: (points: number) => void): Promise<void> {
  const section = info.sections.get(SECTION.h)!;
  const start = 2 * domainSize - 1;
  if ((start + 2 * domainSize) * G1_SIZE > lagrangeG1.size) throw new CoordinatorError('ptau.too_small', "the ptau's Lagrange section is too short for this circuit's H");
  for (let first = 0; first < domainSize; first += CHUNK_POINTS) {
    const n = Math.min(CHUNK_POINTS, domainSize - first);
    const [points, doubled] = await Promise.all([
      readAt(key, section.offset + first * G1_SIZE, n * G1_SIZE, `the H section of ${info.label}`),
      readAt(ptau, lagrangeG1.offset + (start + 2 * first) * G1_SIZE, 2 * n * G1_SIZE, "the ptau's Lagrange section"),
    ]);
    for (let i = 0; i < n; i++) {
      const expected = doubled.subarray((2 * i + 1) * G1_SIZE, (2 * i + 2) * G1_SIZE);
      if (Buffer.compare(points.subarray(i * G1_SIZE, (i + 1) * G1_SIZE), expected) !== 0) {
        throw mismatch('H', info.label, `differs at point ${first + i}`);
      }
    }
    progress(n);
  }
}

function generatorLem(group: CurveGroup, size: number): Buffer {
  const out = new Uint8Array(size);
  group.toRprLEM(out, 0, group.g);
  return Buffer.from(out);
}

function uncompressedOf(group: CurveGroup, lem: Buffer, size: number): Uint8Array {
  const out = new Uint8Array(size);
  group.toRprUncompressed(out, 0, group.fromRprLEM(lem, 0));
  return out;
}

/** Sections 1 and 2 byte for byte; starts the circuit hash with the header's points. */
async function checkHeader(curve: Curve, info: ZkeyInfo, r1cs: R1csHeader, domainSize: number, ptau: FileHandle, ptauSections: Map<number, BinSection>, csHash: ReturnType<typeof createHash>): Promise<void> {
  const label = info.label;
  const { header } = info;
  if (header.nVars !== r1cs.nWires) throw mismatch('header', label, `has ${header.nVars} variables, the r1cs ${r1cs.nWires}`);
  if (header.nPublic !== r1cs.nPublic) throw mismatch('header', label, `has ${header.nPublic} public signals, the r1cs ${r1cs.nPublic}`);
  if (header.domainSize !== domainSize) throw mismatch('header', label, `has domain size ${header.domainSize}, the r1cs needs ${domainSize}`);
  const first = async (id: number, size: number, what: string): Promise<Buffer> => {
    const section = ptauSections.get(id);
    if (!section || section.size < size) throw new CoordinatorError('ptau.malformed', `the ptau lacks its ${what} section`);
    return Buffer.from(await readAt(ptau, section.offset, size, `the ptau's ${what} section`));
  };
  const expected: Array<[string, Buffer, Buffer, GroupName]> = [
    ['α1', header.alpha1, await first(4, G1_SIZE, 'alpha'), 'G1'],
    ['β1', header.beta1, await first(5, G1_SIZE, 'beta'), 'G1'],
    ['β2', header.beta2, await first(6, G2_SIZE, 'beta G2'), 'G2'],
    ['γ2', header.gamma2, generatorLem(curve.G2, G2_SIZE), 'G2'],
    ['δ1', header.delta1, generatorLem(curve.G1, G1_SIZE), 'G1'],
    ['δ2', header.delta2, generatorLem(curve.G2, G2_SIZE), 'G2'],
  ];
  for (const [name, actual, wanted, group] of expected) {
    if (!actual.equals(wanted)) throw mismatch('header', label, `${name} is not the one snarkjs writes`);
    csHash.update(uncompressedOf(curve[group], wanted, group === 'G1' ? G1_SIZE : G2_SIZE));
  }
}

/** The order in which `zkey new` writes the sections (the file is compared as bytes, so order counts). */
const SECTION_ORDER = [1, 2, 4, 3, 9, 8, 5, 6, 7, 10];

/** The file's version and section order (readZkeyInfo has checked the rest of the layout). */
async function checkLayout(key: FileHandle, info: ZkeyInfo): Promise<void> {
  const head = Buffer.from(await readAt(key, 0, 12, info.label));
  if (head.readUInt32LE(4) !== 1) throw mismatch('header', info.label, `has file version ${head.readUInt32LE(4)}, not 1`);
  const order = [...info.sections.entries()].sort((x, y) => x[1].offset - y[1].offset).map(([id]) => id);
  if (order.join(',') !== SECTION_ORDER.join(',')) throw mismatch('header', info.label, `lists its sections in the order ${order.join(',')}, not ${SECTION_ORDER.join(',')}`);
}

/**
 * Throws `audit.initial_key_mismatch` naming the first part of the zkey at `zkeyPath` that is not
 * what `snarkjs zkey new r1cs ptau` writes (probability ≤ 2^-128 of missing a G1 difference, see the
 * module comment); read and decode errors throw their own codes. Returns the circuit hash.
 */
export async function checkInitialKey(zkeyPath: string, r1csPath: string, ptauPath: string, options: CheckInitialKeyOptions = {}): Promise<{ csHash: Buffer }> {
  const label = options.label ?? 'contribution 0';
  const info = await readZkeyInfo(zkeyPath, label);
  const curve = (await getBn128()) as unknown as Curve;
  const [key, r1cs, ptau] = await Promise.all([open(zkeyPath, 'r'), open(r1csPath, 'r'), open(ptauPath, 'r')]);
  try {
    const r1csHeader = await readR1csHeader(r1cs, 'the r1cs');
    const ptauSections = await binSections(ptau, 'ptau', 'the ptau', 'ptau.malformed');
    const power = Math.ceil(Math.log2(r1csHeader.nConstraints + r1csHeader.nPublic + 1));
    const domainSize = 2 ** power;
    if (power >= FR_TWO_ADICITY) throw new CoordinatorError('ptau.too_small', 'the circuit is too large for this check');
    const lagrange = [12, 2].map((id) => ptauSections.get(id));
    if (lagrange.some((s) => !s)) throw new CoordinatorError('ptau.not_prepared', 'the ptau has no Lagrange sections');
    const [lambdaG1, tauG1] = lagrange as [BinSection, BinSection];

    const { nWires, nPublic } = r1csHeader;
    // In points, a G2 point counted as three G1 points; the r1cs pass as two domains' worth.
    const totalWork = 2 * domainSize + 3 * nWires + domainSize + 3 * nWires + domainSize;
    let done = 0;
    const progress = (points: number): void => {
      done += points;
      options.onProgress?.(Math.min(done / totalWork, 1));
    };

    let since = performance.now();
    const lap = (phase: string): void => {
      const now = performance.now();
      if (options.timings) options.timings[phase] = (options.timings[phase] ?? 0) + (now - since);
      since = now;
    };
    const csHash = createHash('blake2b512');
    const uncompressed = await G1Uncompressed.instantiate();
    await checkLayout(key, info);
    await checkHeader(curve, info, r1csHeader, domainSize, ptau, ptauSections, csHash);
    const mpc = info.sections.get(SECTION.mpc)!;
    if (info.mpc.contributions.length !== 0 || mpc.size !== 68) throw mismatch('contributions', label, 'is not empty');

    // One ρ per variable for A, B1, IC/L and B2, and σ1, σ2 to fold three equations into one (see
    // the module comment).
    const rho = drawScalars(nWires);
    const [sigma1, sigma2] = drawScalars(2).values as [bigint, bigint];
    const coefficientReader = new SectionReader(key, info.sections.get(SECTION.coefficients)!, `the coefficients section of ${label}`);
    if ((await coefficientReader.u32()) !== (info.sections.get(SECTION.coefficients)!.size - 4) / (12 + N8)) throw mismatch('coefficients', label, 'has a wrong count');
    // The r1cs pass runs on this thread while the key's MSMs run on the kernel's threads.
    const scanStart = performance.now();
    const scan = scanR1cs(r1cs, r1csHeader, domainSize, rho, [sigma1, sigma2], coefficientReader, label, 'the r1cs').then((result) => {
      progress(2 * domainSize);
      if (options.timings) options.timings['r1cs pass (overlaps the key side)'] = performance.now() - scanStart;
      return result;
    });

    // Key side, in the order snarkjs hashes the sections: IC, H, L (its C), A, B1, B2.
    const icBytes = (nPublic + 1) * INITIAL_KEY_SCALAR_BYTES;
    const keyScalars: Record<number, Uint8Array> = {
      [SECTION.ic]: rho.bytes.subarray(0, icBytes),
      [SECTION.l]: rho.bytes.subarray(icBytes),
      [SECTION.a]: rho.bytes,
      [SECTION.b1]: rho.bytes,
    };
    const sums = new Map<number, Uint8Array>();
    const keySide = async (): Promise<Uint8Array> => {
      sums.set(SECTION.ic, await combineKeySection(curve, uncompressed, 'G1', key, info, SECTION.ic, 'IC', keyScalars[SECTION.ic]!, csHash, progress));
      lap('key G1 sections');
      await hashHPoints(curve, uncompressed, ptau, tauG1, domainSize, csHash);
      lap('circuit hash of H');
      await checkH(key, info, ptau, lambdaG1, domainSize, progress);
      lap('H bytes');
      for (const { id, part } of G1_SECTIONS.slice(1)) sums.set(id, await combineKeySection(curve, uncompressed, 'G1', key, info, id, part, keyScalars[id]!, csHash, progress));
      lap('key G1 sections');
      const b2 = await combineKeySection(curve, uncompressed, 'G2', key, info, SECTION.b2, 'B2', rho.bytes, csHash, progress);
      lap('key G2 MSM');
      return b2;
    };
    // Both run to the end before a refusal is thrown, so no read is left running on a closed file;
    // an r1cs or coefficients refusal comes first, as it explains what follows.
    const [scanned, keyed] = await Promise.allSettled([scan, keySide()]);
    if (scanned.status === 'rejected') throw scanned.reason;
    if (keyed.status === 'rejected') throw keyed.reason;
    const lambdaScalars = scanned.value;
    const T = keyed.value;

    const G1 = curve.G1;
    const G2 = curve.G2;
    const lambdaMsm = (scalars: Uint8Array): Promise<Uint8Array> => combinePtau(curve, 'G1', ptau, lambdaG1, domainSize - 1, domainSize, scalars, 'Lagrange', progress);
    const alpha1 = G1.fromRprLEM(info.header.alpha1, 0);
    const beta2 = G2.fromRprLEM(info.header.beta2, 0);
    const sumA = sums.get(SECTION.a)!;
    const sumB1 = sums.get(SECTION.b1)!;
    const sumK = G1.add(sums.get(SECTION.ic)!, sums.get(SECTION.l)!);
    /** e(ΣρK − W, g2) = e(ΣρA, β2)·e(α1, T), for sums restricted to some variables. */
    const kHolds = (k: Uint8Array, w: Uint8Array, a: Uint8Array, t: Uint8Array): Promise<boolean> =>
      pairingHolds(curve, [[G1.add(k, G1.neg(w)), G2.g], [G1.neg(a), beta2], [G1.neg(alpha1), t]]);

    if (!G2.isZero(G2.timesScalar(T, BN254_R))) throw mismatch('B2', label, 'has points outside the order-r subgroup');
    const b2Holds = await pairingHolds(curve, [[sumB1, G2.g], [G1.neg(G1.g), T]]);
    const folded = G1.add(sumK, G1.add(G1.timesScalar(sumA, sigma1), G1.timesScalar(sumB1, sigma2)));
    const combinedHolds = await kHolds(folded, await lambdaMsm(lambdaScalars.combined), sumA, T);
    lap('ptau MSM and pairings');
    if (!b2Holds || !combinedHolds) {
      // Rare path: the equations one by one, to name the culprit. B2 is judged against B1 once B1
      // is known right; IC against L by restricting ρ to the public variables.
      if (!G1.eq(sumA, await lambdaMsm(lambdaScalars.u))) throw mismatch('A', label, 'is not the combination of the ptau points the r1cs fixes');
      if (!G1.eq(sumB1, await lambdaMsm(lambdaScalars.v))) throw mismatch('B1', label, 'is not the combination of the ptau points the r1cs fixes');
      if (!b2Holds) throw mismatch('B2', label, 'is not B1 in G2');
      const publicRho: RoleScalars = {
        bytes: rho.bytes.map((byte, i) => (i < (nPublic + 1) * INITIAL_KEY_SCALAR_BYTES ? byte : 0)),
        values: rho.values.map((value, i) => (i <= nPublic ? value : 0n)),
      };
      const publicScan = await scanR1cs(r1cs, r1csHeader, domainSize, publicRho, [0n, 0n], undefined, label, 'the r1cs');
      // IC alone, the way zkey new composes it: λ, α·λ and β·λ points (ptau sections 12, 14, 15).
      const [alphaG1, betaG1] = [14, 15].map((id) => ptauSections.get(id));
      if (!alphaG1 || !betaG1) throw new CoordinatorError('ptau.not_prepared', 'the ptau has no alpha and beta Lagrange sections');
      let expectedIc = await lambdaMsm(publicScan.w);
      expectedIc = G1.add(expectedIc, await combinePtau(curve, 'G1', ptau, alphaG1, domainSize - 1, domainSize, publicScan.v, 'alpha Lagrange', progress));
      expectedIc = G1.add(expectedIc, await combinePtau(curve, 'G1', ptau, betaG1, domainSize - 1, domainSize, publicScan.u, 'beta Lagrange', progress));
      if (!G1.eq(sums.get(SECTION.ic)!, expectedIc)) throw mismatch('IC', label, 'is not the combination of the ptau points the r1cs fixes');
      throw mismatch('L', label, 'is not the combination of the ptau points the r1cs fixes');
    }
    // Last, so that a changed point is named by its section rather than by the hash it also breaks.
    if (!csHash.digest().equals(info.mpc.csHash)) throw mismatch('circuit hash', label, "is not the hash of the key's points");
    options.onProgress?.(1);
    return { csHash: info.mpc.csHash };
  } finally {
    await Promise.all([key.close(), r1cs.close(), ptau.close()]);
  }
}
