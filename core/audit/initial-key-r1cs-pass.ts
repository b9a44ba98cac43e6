/**
 * The r1cs side of the audit's check of contribution 0 (check-initial-key.ts): where the circuit's
 * constraints are (the shared section table and r1cs header readers), the random scalars ρ, σ of
 * the check, and the one streaming pass over the constraints that turns ρ into the scalars of the
 * ptau side (u, v, w and their fold per domain point) while comparing the key's coefficients
 * section with what snarkjs writes. The field arithmetic runs in the kernel (r1cs-scan.c), a batch
 * of whole constraints at a time.
 */
import { randomFillSync } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import { BN254_R } from '../crypto/bn254-moduli.ts';
import { readR1csSummary } from '../setup/r1cs-header.ts';
import { readSectionTable, SectionTableError, type SectionLocation } from '../binfile/section-table.ts';
import { SectionReader } from '../binfile/section-reader.ts';
import { COEFFICIENT_ENTRY_BYTES, R1csScanKernel } from '../kernel/r1cs-scan.ts';
import { N8 } from './audit-curve.ts';
import { initialKeyMismatch } from './initial-key-mismatch.ts';

/** Bytes of each random scalar: 128 bits, see check-initial-key.ts. */
export const INITIAL_KEY_SCALAR_BYTES = 16;
/** 2^256 mod r: the Montgomery factor of snarkjs's Fr. */
const MONT_R = (1n << 256n) % BN254_R;
/** What section 4 holds for a coefficient of 1 (it holds a·R² mod r for a). */
const MONT_R2 = (MONT_R * MONT_R) % BN254_R;
/** Bytes of one r1cs term: signal, coefficient. */
const R1CS_TERM_BYTES = 4 + N8;
const R1CS_CONSTRAINTS_SECTION = 2;

export interface R1csLayout {
  nWires: number;
  nPublic: number;
  nConstraints: number;
  constraints: SectionLocation;
}

/** The r1cs's header (core/setup/r1cs-header.ts) and where its constraints are (its section table). */
export async function readR1csLayout(r1csPath: string, handle: FileHandle, what: string): Promise<R1csLayout> {
  const summary = await readR1csSummary(r1csPath);
  if (summary.prime !== BN254_R)
    throw new CoordinatorError('r1cs.malformed', `${what} is not over bn128's scalar field`);
  let constraints: SectionLocation | undefined;
  try {
    const { size } = await handle.stat();
    constraints = (await readSectionTable(handle, size, 'r1cs')).sections.get(R1CS_CONSTRAINTS_SECTION);
  } catch (error) {
    if (error instanceof SectionTableError) throw new CoordinatorError('r1cs.malformed', `${what}: ${error.message}`);
    throw error;
  }
  if (!constraints) throw new CoordinatorError('r1cs.malformed', `${what} lacks its constraints section`);
  return { nWires: summary.nVars, nPublic: summary.publicInputs, nConstraints: summary.nConstraints, constraints };
}

/**
 * The random scalars of one role (one key section), as bytes for the MSM; `value(i)` reads one as a
 * bigint (only the public rows need them: a bigint per variable would hold about 40 bytes each).
 */
export interface RoleScalars {
  bytes: Uint8Array;
  value(index: number): bigint;
}

/** Scalar `index` of 16-byte little-endian `bytes`, as a bigint. */
function scalarAt(bytes: Uint8Array, index: number): bigint {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = index * INITIAL_KEY_SCALAR_BYTES;
  return view.readBigUInt64LE(at) | (view.readBigUInt64LE(at + 8) << 64n);
}

/** Role scalars over `bytes` (16 bytes each). */
export function roleScalars(bytes: Uint8Array): RoleScalars {
  return { bytes, value: (index) => scalarAt(bytes, index) };
}

/** `count` uniform 128-bit scalars from the OS's randomness (filled in place: no copy of a Buffer). */
export function drawScalars(count: number): RoleScalars {
  return roleScalars(randomFillSync(new Uint8Array(count * INITIAL_KEY_SCALAR_BYTES)));
}

/** The parts of the fold, one full-width scalar per domain point. */
export interface LambdaParts {
  /** u_c = Σ_s ρ_s·a_cs (+ ρ_s at row n+s): Σ ρ_s·A_s. */
  u: Uint8Array;
  /** v_c = Σ_s ρ_s·b_cs: Σ ρ_s·B1_s. */
  v: Uint8Array;
  /** w_c = Σ_s ρ_s·c_cs: Σ ρ_s·C'_s, the λ part of Σ ρ_s·K_s. */
  w: Uint8Array;
}

/**
 * Full-width scalars for the λ points (ptau section 12), one per domain point: the fold always;
 * its parts only when asked (the failure path, which takes the equations apart): at 2^22 each
 * array is 128 MB.
 */
export interface LambdaScalars {
  /** w + σ1·u + σ2·v: the one MSM of the combined check. */
  combined: Uint8Array;
  parts?: LambdaParts;
}

function writeLe(target: Uint8Array, offset: number, value: bigint, bytes: number): void {
  let v = value;
  for (let i = 0; i < bytes; i++) {
    target[offset + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

/** Walks whole constraints in `bytes`: how many, their length, and how many A and B terms they hold. */
export function wholeConstraints(bytes: Buffer, most: number): { count: number; length: number; abTerms: number[] } {
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
 * when `coefficients` is given, compares the key's section 4 with what snarkjs writes. Holds the
 * fold, and its parts only with `keepParts`.
 */
export async function scanR1cs(
  r1cs: FileHandle,
  layout: R1csLayout,
  domainSize: number,
  rho: RoleScalars,
  sigma: [bigint, bigint],
  coefficients: SectionReader | undefined,
  label: string,
  r1csWhat: string,
  keepParts = false,
): Promise<LambdaScalars> {
  const { nWires, nPublic, nConstraints } = layout;
  const reader = new SectionReader(r1cs, layout.constraints, r1csWhat);
  const parts: LambdaParts | undefined = keepParts
    ? { u: new Uint8Array(domainSize * N8), v: new Uint8Array(domainSize * N8), w: new Uint8Array(domainSize * N8) }
    : undefined;
  const out: LambdaScalars = { combined: new Uint8Array(domainSize * N8), ...(parts ? { parts } : {}) };
  const kernel = await R1csScanKernel.instantiate(rho.bytes, INITIAL_KEY_SCALAR_BYTES, nWires, sigma);

  for (let c = 0; c < nConstraints;) {
    let batch = wholeConstraints(reader.peek(), nConstraints - c);
    if (batch.count === 0) {
      // Not one whole constraint in hand: read on (a constraint longer than a read is fine).
      if (reader.remaining <= reader.peek().length)
        throw new CoordinatorError('r1cs.malformed', `${r1csWhat} ends inside constraint ${c}`);
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
        throw initialKeyMismatch('coefficients', label, `end before constraint ${c + short}`);
      }
      entries = await coefficients.take(needed);
    }
    const scanned = kernel.scan(reader.takeNow(batch.length), batch.count, c, entries);
    if ('kind' in scanned) {
      if (scanned.kind === 'signal_out_of_range')
        throw new CoordinatorError(
          'r1cs.malformed',
          `${r1csWhat} names a signal beyond its ${nWires} in constraint ${scanned.constraint}`,
        );
      throw initialKeyMismatch('coefficients', label, `differ at constraint ${scanned.constraint}`);
    }
    if (parts) {
      parts.u.set(scanned.u, c * N8);
      parts.v.set(scanned.v, c * N8);
      parts.w.set(scanned.w, c * N8);
    }
    out.combined.set(scanned.combined, c * N8);
    c += batch.count;
  }

  // The rows snarkjs adds for the public signals: A has ρ_s, B and C nothing.
  const [sigma1] = sigma;
  const publicEntry = Buffer.alloc(COEFFICIENT_ENTRY_BYTES);
  writeLe(publicEntry, 12, MONT_R2, N8);
  for (let s = 0; s <= nPublic; s++) {
    const row = nConstraints + s;
    if (parts) writeLe(parts.u, row * N8, rho.value(s), N8);
    writeLe(out.combined, row * N8, (sigma1 * rho.value(s)) % BN254_R, N8);
    if (coefficients) {
      if (coefficients.remaining < COEFFICIENT_ENTRY_BYTES)
        throw initialKeyMismatch('coefficients', label, `end before constraint ${row}`);
      publicEntry.writeUInt32LE(0, 0);
      publicEntry.writeUInt32LE(row, 4);
      publicEntry.writeUInt32LE(s, 8);
      if (!(await coefficients.take(COEFFICIENT_ENTRY_BYTES)).equals(publicEntry))
        throw initialKeyMismatch('coefficients', label, `differ at constraint ${row}`);
    }
  }
  if (coefficients && coefficients.remaining !== 0)
    throw initialKeyMismatch('coefficients', label, 'has entries the r1cs does not produce');
  return out;
}
