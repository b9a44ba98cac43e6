/**
 * checkPtauSections: the audit's check that the parts of the ptau its verdict on contribution 0
 * relies on are what `snarkjs powersoftau preparephase2` derives from the ptau's powers of τ. The
 * pin (pin-ptau.ts) makes the ptau a public file whose secret nobody knows; but its prepared
 * sections 12–15 were computed by whoever prepared it, and are covered by none of the phase-1
 * contributions' proofs. A forged Lagrange point would let the preparer (or a coordinator who
 * published its own ptau) build a key with a known trapdoor that every other check accepts.
 *
 * What is checked, for the circuits' domains d = 2^k (each distinct k once), in the default scope
 * (`relied-on`):
 *   - section 12 (λ_i = L_i(τ)·g1, the Lagrange basis of the 2^k-th roots of unity) at level k,
 *     every point (A, B1, C and, through the key's check, IC and L are combinations of these);
 *   - section 12 at level k+1, its odd points (the key's H is exactly those points);
 *   - section 2 holds successive powers: X_{j+1} = τ·X_j for the points the above use, with τ·g2
 *     from section 3, starting at g1; β1 (section 5's first point) and β2 (section 6) carry the
 *     same β; τ·g2 and β2 are in G2's order-r subgroup.
 * Sections 14 and 15 (α·λ_i, β·λ_i, from which snarkjs composes IC and L) are no verdict's premise:
 * check-initial-key.ts checks IC and L against α1 and β2 directly. The `alpha-beta` scope checks
 * them at level k against sections 4 and 5 (α·τ^j, β·τ^j, successive powers likewise), for
 * check-initial-key.ts to name the ptau rather than the key when contribution 0 fails.
 * At level P+1 (P the ptau's power) section 2 lacks its last power and preparePhase2 takes it as
 * zero; the check uses the same convention (the coefficient of the missing power is dropped).
 *
 * How: one random linear combination. Uniform 128-bit r_i for every Lagrange point checked (zero
 * at the even points of an H level) and s_j for every power; for a level of n = 2^k points,
 * Σ_i r_i·λ_i = Σ_j c_j·τ^j·g1 with c = iFFT_n(r) (fr-fft.c, ffjavascript's ω), and likewise for
 * 14/15 against 4/5, the c of every level of a reference section added up. With
 * A = Σ_S Σ_j (s_{j-1} − C_S[j])·X^S_j (full-width scalars), B = Σ r_i·λ_i and
 * C = Σ_S Σ_j s_j·X^S_j (128-bit scalars), the check is e(A + B, g2) = e(C, τ·g2); on failure the
 * parts are checked one by one to name the section. Why it is sound, and what is not checked
 * (the phase-1 chain, section 13): docs/audit.md, "What is checked, and how".
 */
import { randomFillSync } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { open, type FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import { getBn128 } from '../crypto/bn128.ts';
import { BN254_R } from '../crypto/bn254-moduli.ts';
import { readSectionTable, SectionTableError, type SectionLocation } from '../binfile/section-table.ts';
import { readExactly } from '../binfile/read-exactly.ts';
import { FR_FFT_MAX_LOG, frInverseFft, widenScalars } from '../kernel/fr-fft.ts';
import { frInverseFftOnThread } from '../kernel/fr-fft-on-thread.ts';
import { g1CheckedMultiExpOrFallback, g1MultiExpOrFallback } from '../kernel/multi-exp.ts';
import { coordinatesCanonical } from '../zkey/point-checks.ts';
import { fftWorkItem, tallyWork } from '../runtime/work-tally.ts';
import { G1_SIZE, G2_SIZE, N8, pairingHolds, readAt, type AuditCurve } from './audit-curve.ts';

/** ptau sections (snarkjs's layout). */
const SECTION = {
  header: 1,
  tauG1: 2,
  tauG2: 3,
  alphaTauG1: 4,
  betaTauG1: 5,
  betaG2: 6,
  lagrangeG1: 12,
  lagrangeAlphaG1: 14,
  lagrangeBetaG1: 15,
} as const;
/** What each reference section holds, in the report's words: section 2 the powers of τ, 4 and 5 α and β times them. */
const POWERS_OF_TAU: Record<number, string> = {
  [SECTION.tauG1]: 'successive powers of τ',
  [SECTION.alphaTauG1]: 'successive powers of τ times α',
  [SECTION.betaTauG1]: 'successive powers of τ times β',
};
/**
 * The version of this check: a ptau remembered as verified (verified-ptau-memo.ts) by another
 * version is checked again. Bump it whenever what the check proves changes.
 */
export const PTAU_SECTIONS_CHECK_VERSION = 1;
/** Bytes of the random scalars r and s: 128 bits, see the module comment. */
const SCALAR_BYTES = 16;
const CHUNK_POINTS = 1 << 18;

/** One run of Lagrange points checked against a reference section of powers. */
interface LagrangeCheck {
  lagrange: number;
  reference: number;
  level: number;
  /** Only the odd points (H's level): the even ones get r = 0 and are not read. */
  oddOnly: boolean;
}

export interface PtauSectionsOptions {
  /** Called with the fraction of the work done, in [0, 1]. */
  onProgress?: (fraction: number) => void;
  /** Filled with the milliseconds of each phase (the bench prints them). */
  timings?: Record<string, number>;
  /** Which sections (see the module comment): `relied-on`, the default, or `alpha-beta`. */
  scope?: PtauCheckScope;
}

/** What the audit's verdicts rest on (12 against 2), or the sections they do not (14, 15 against 4, 5). */
export type PtauCheckScope = 'relied-on' | 'alpha-beta';

export interface PtauSectionsReport {
  /** The ptau's power P. */
  power: number;
  /** What was checked, in words, one item per section and level (the audit prints them). */
  checked: string[];
  /** Points read and combined. */
  points: number;
}

function inconsistent(why: string): CoordinatorError {
  return new CoordinatorError(
    'audit.ptau_inconsistent',
    `the ptau's sections are not what preparephase2 derives from its powers of tau: ${why}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Scalars mod r, 32-byte little-endian, standard form, as 8 little-endian u32 limbs.

const R_LIMBS = Uint32Array.from({ length: 8 }, (_, i) => Number((BN254_R >> BigInt(32 * i)) & 0xffffffffn));

/** a[at..] = a[at..] + b[bt..] mod r (both below r). */
function addModR(a: Uint32Array, at: number, b: Uint32Array, bt: number): void {
  let carry = 0;
  for (let i = 0; i < 8; i++) {
    const sum = a[at + i]! + b[bt + i]! + carry;
    a[at + i] = sum >>> 0;
    carry = sum > 0xffffffff ? 1 : 0;
  }
  if (carry === 0) {
    for (let i = 7; i >= 0; i--) {
      if (a[at + i]! !== R_LIMBS[i]!) {
        if (a[at + i]! < R_LIMBS[i]!) return;
        break;
      }
    }
  }
  let borrow = 0;
  for (let i = 0; i < 8; i++) {
    const diff = a[at + i]! - R_LIMBS[i]! - borrow;
    a[at + i] = diff >>> 0;
    borrow = diff < 0 ? 1 : 0;
  }
}

/** out[ot..] = (x − y) mod r, x below 2^128, y below r. */
function subModR(out: Uint32Array, ot: number, x: Uint32Array, xt: number, y: Uint32Array, yt: number): void {
  let borrow = 0;
  for (let i = 0; i < 8; i++) {
    const diff = x[xt + i]! - y[yt + i]! - borrow;
    out[ot + i] = diff >>> 0;
    borrow = diff < 0 ? 1 : 0;
  }
  if (borrow === 0) return;
  let carry = 0;
  for (let i = 0; i < 8; i++) {
    const sum = out[ot + i]! + R_LIMBS[i]! + carry;
    out[ot + i] = sum >>> 0;
    carry = sum > 0xffffffff ? 1 : 0;
  }
}

const limbs = (bytes: Uint8Array): Uint32Array => new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);

/**
 * `count` uniform 128-bit scalars as 16-byte little-endian values (a plain Uint8Array the MSM threads
 * can take), filled in place: a Uint8Array made from randomBytes' Buffer would be a second pass over
 * the bytes.
 */
const randomScalars = (count: number): Uint8Array => randomFillSync(new Uint8Array(count * SCALAR_BYTES));

/** From this size up a transform gets a thread of its own; below, the thread's start-up would cost more than it. */
const FFT_THREAD_MIN_LOG = 16;

/**
 * c = iFFT_n(r): c_j = (1/n)·Σ_i r_i·ω^(-ij), ω ffjavascript's (and preparePhase2's) 2^k-th root. On
 * the kernel up to its largest size (2^25, a circuit of 2^24), from 2^16 on a thread of its own so
 * that several run at once; beyond, with ffjavascript's, whose buffers are not bound by WebAssembly's memory.
 */
async function inverseFft(curve: AuditCurve, r: Uint8Array): Promise<Uint8Array> {
  const level = Math.log2(r.byteLength / SCALAR_BYTES);
  tallyWork(fftWorkItem(level), 1);
  const Fr = curve.Fr;
  if (level > FR_FFT_MAX_LOG)
    return new Uint8Array(
      await Fr.batchFromMontgomery(await Fr.ifft(await Fr.batchToMontgomery(widenScalars(r, SCALAR_BYTES)))),
    );
  const omega = Fr.toObject(Fr.w[level]!);
  if (level < FFT_THREAD_MIN_LOG) return frInverseFft(r, omega, SCALAR_BYTES);
  return frInverseFftOnThread(r, omega, SCALAR_BYTES);
}

// ---------------------------------------------------------------------------------------------

function ptauPower(header: Buffer): number {
  const n8 = header.readUInt32LE(0);
  return header.readUInt32LE(4 + n8);
}

/** The checks for circuits of these domain powers (see the module comment). */
function planChecks(circuitPowers: number[], power: number, scope: PtauCheckScope): LagrangeCheck[] {
  for (const k of circuitPowers) {
    if (k > power)
      throw new CoordinatorError('ptau.too_small', `a circuit needs a ptau of power ${k}; this one has power ${power}`);
  }
  const domains = [...new Set(circuitPowers)].sort((a, b) => a - b);
  if (scope === 'alpha-beta') {
    return domains.flatMap((k) => [
      { lagrange: SECTION.lagrangeAlphaG1, reference: SECTION.alphaTauG1, level: k, oddOnly: false },
      { lagrange: SECTION.lagrangeBetaG1, reference: SECTION.betaTauG1, level: k, oddOnly: false },
    ]);
  }
  const levels = new Map<number, boolean>();
  for (const k of domains) {
    levels.set(k, false);
    if (!levels.has(k + 1)) levels.set(k + 1, true);
  }
  return [...levels]
    .sort((a, b) => a[0] - b[0])
    .map(([level, oddOnly]) => ({ lagrange: SECTION.lagrangeG1, reference: SECTION.tauG1, level, oddOnly }));
}

function describeCheck(check: LagrangeCheck): string {
  const name = { [SECTION.lagrangeG1]: 'λ', [SECTION.lagrangeAlphaG1]: 'α·λ', [SECTION.lagrangeBetaG1]: 'β·λ' }[
    check.lagrange
  ];
  const points = check.oddOnly ? ', odd points (H)' : '';
  return `section ${check.lagrange} (${name}) at 2^${check.level}${points} against section ${check.reference}`;
}

interface Sums {
  /** Σ (s_{j-1} − C[j])·X_j per reference section. */
  a: Map<number, Uint8Array>;
  /** Σ s_j·X_j per reference section. */
  c: Map<number, Uint8Array>;
  /** Σ r_i·λ_i per Lagrange check. */
  b: Uint8Array[];
}

/**
 * Throws `audit.ptau_inconsistent` (naming the section) when a section of the ptau at `ptauPath`
 * that the check of contribution 0 relies on is not derived from its powers of τ, for circuits
 * whose domains are 2^k for k in `circuitPowers` (probability ≤ 2^-128 of missing an error, see
 * the module comment); read and decode errors throw their own codes.
 */
export async function checkPtauSections(
  ptauPath: string,
  circuitPowers: number[],
  options: PtauSectionsOptions = {},
): Promise<PtauSectionsReport> {
  const curve: AuditCurve = await getBn128();
  const G1 = curve.G1;
  const G2 = curve.G2;
  let since = performance.now();
  const lap = (phase: string): void => {
    const now = performance.now();
    if (options.timings) options.timings[phase] = (options.timings[phase] ?? 0) + (now - since);
    since = now;
  };
  const handle = await open(ptauPath, 'r');
  try {
    const section = await ptauSectionLookup(handle);
    const header = section(SECTION.header);
    const power = ptauPower(await readExactly(handle, header.offset, header.size));
    const checks = planChecks(circuitPowers, power, options.scope ?? 'relied-on');
    const referencePoints = referencePointCounts(checks, section);
    const totalPoints =
      [...referencePoints.values()].reduce((sum, n) => sum + n, 0) +
      checks.reduce((sum, c) => sum + (c.oddOnly ? 2 ** (c.level - 1) : 2 ** c.level), 0);
    let done = 0;
    const progress = (points: number): void => {
      done += points;
      options.onProgress?.(Math.min(done / totalPoints, 1));
    };
    const ptau: PtauFile = { handle, section };

    const tau2 = await checkFixedPoints(curve, ptau);
    const scalars = await drawScalars(curve, checks, referencePoints);
    lap('scalars and inverse FFTs');
    const { a, c } = await sumReferenceSections(curve, ptau, referencePoints, scalars, progress);
    lap('reference sections (powers)');
    const sums: Sums = { a, c, b: await sumLagrangeSections(curve, ptau, checks, scalars.r, progress) };
    lap('Lagrange sections');

    let left = sums.b.reduce((sum, b) => G1.add(sum, b), G1.zero);
    for (const a of sums.a.values()) left = G1.add(left, a);
    const right = [...sums.c.values()].reduce((sum, c) => G1.add(sum, c), G1.zero);
    const holds = await pairingHolds(curve, [
      [left, G2.g],
      [G1.neg(right), tau2],
    ]);
    lap('pairing');
    if (!holds) await nameTheCulprit(curve, ptau, checks, referencePoints, scalars.s, scalars.r, sums, tau2);
    options.onProgress?.(1);
    return {
      power,
      checked: [
        ...checks.map(describeCheck),
        ...[...referencePoints].map(
          ([reference, count]) => `section ${reference}: ${count} ${POWERS_OF_TAU[reference]}`,
        ),
        'β1 and β2 the same β; τ·g2 and β2 in G2',
      ],
      points: totalPoints,
    };
  } finally {
    await handle.close();
  }
}

/** The open ptau and its sections, a missing one refused by its own code. */
interface PtauFile {
  handle: FileHandle;
  section: (id: number) => SectionLocation;
}

/** The ptau's section table, as a lookup that refuses a missing section (`ptau.not_prepared` from 12 on). */
async function ptauSectionLookup(handle: FileHandle): Promise<PtauFile['section']> {
  let sections: Map<number, SectionLocation>;
  try {
    sections = (await readSectionTable(handle, (await handle.stat()).size, 'ptau')).sections;
  } catch (error) {
    if (error instanceof SectionTableError) throw new CoordinatorError('ptau.malformed', `the ptau: ${error.message}`);
    throw error;
  }
  return (id: number): SectionLocation => {
    const found = sections.get(id);
    if (!found)
      throw new CoordinatorError(id >= 12 ? 'ptau.not_prepared' : 'ptau.malformed', `the ptau has no section ${id}`);
    return found;
  };
}

/**
 * Points of each reference section the checks use: 2^level, but section 2 has 2^(P+1) − 1.
 * Throws `ptau.too_small` when a Lagrange section lacks a level the checks read.
 */
function referencePointCounts(checks: LagrangeCheck[], section: PtauFile['section']): Map<number, number> {
  const referencePoints = new Map<number, number>();
  for (const check of checks) {
    const available = section(check.reference).size / G1_SIZE;
    const needed = Math.min(2 ** check.level, available);
    referencePoints.set(check.reference, Math.max(referencePoints.get(check.reference) ?? 0, needed));
  }
  for (const check of checks) {
    const start = 2 ** check.level - 1;
    if ((start + 2 ** check.level) * G1_SIZE > section(check.lagrange).size) {
      throw new CoordinatorError(
        'ptau.too_small',
        `the ptau's section ${check.lagrange} has no level 2^${check.level}`,
      );
    }
  }
  return referencePoints;
}

/**
 * The fixed points: g1 first in section 2, τ·g2 and β2 in G2's subgroup, α1 not the identity, β1
 * and β2 the same β. Returns τ·g2.
 */
async function checkFixedPoints(curve: AuditCurve, { handle, section }: PtauFile): Promise<Uint8Array> {
  const G1 = curve.G1;
  const G2 = curve.G2;
  const tau2Bytes = await readAt(handle, section(SECTION.tauG2).offset + G2_SIZE, G2_SIZE, "the ptau's τ·g2");
  const beta2Bytes = await readAt(handle, section(SECTION.betaG2).offset, G2_SIZE, "the ptau's β2");
  const beta1Bytes = await readAt(handle, section(SECTION.betaTauG1).offset, G1_SIZE, "the ptau's β1");
  const firstTau = await readAt(handle, section(SECTION.tauG1).offset, G1_SIZE, "the ptau's τ^0");
  const g2Point = (bytes: Uint8Array, what: string): Uint8Array => {
    const point = G2.fromRprLEM(bytes, 0);
    const valid = G2.isValid(point);
    if (
      !coordinatesCanonical(bytes, 0, 4) ||
      G2.isZero(point) ||
      !valid ||
      !G2.isZero(G2.timesScalar(point, BN254_R))
    ) {
      throw inconsistent(`${what} is not a point of G2's order-r subgroup`);
    }
    return point;
  };
  const tau2 = g2Point(tau2Bytes, 'τ·g2 (section 3)');
  const beta2 = g2Point(beta2Bytes, 'β2 (section 6)');
  if (!G1.eq(G1.fromRprLEM(firstTau, 0), G1.g)) throw inconsistent('section 2 does not start with the generator of G1');
  const alpha1Bytes = await readAt(handle, section(SECTION.alphaTauG1).offset, G1_SIZE, "the ptau's α1");
  if (G1.isZero(G1.fromRprLEM(alpha1Bytes, 0))) throw inconsistent('α1 (section 4) is the identity');
  const beta1 = G1.fromRprLEM(beta1Bytes, 0);
  if (
    !coordinatesCanonical(beta1Bytes, 0, 2) ||
    G1.isZero(beta1) ||
    !(await pairingHolds(curve, [
      [beta1, G2.g],
      [G1.neg(G1.g), beta2],
    ]))
  ) {
    throw inconsistent('β1 (section 5) and β2 (section 6) do not carry the same β');
  }
  return tau2;
}

/** The auditor's random scalars (see the module comment). */
interface RandomScalars {
  /** r per Lagrange check (zero at the even points of an H level). */
  r: Uint8Array[];
  /** s per reference section, for the relations X_{j+1} = τ·X_j. */
  s: Map<number, Uint8Array>;
  /** s_{j-1} − C[j] per reference section (full width). */
  a: Map<number, Uint8Array>;
}

/** Draws r and s, and derives the reference side's coefficients: C[S] = Σ over S's checks of iFFT(r). */
async function drawScalars(
  curve: AuditCurve,
  checks: LagrangeCheck[],
  referencePoints: Map<number, number>,
): Promise<RandomScalars> {
  const r = checks.map((check) => {
    const scalars = randomScalars(2 ** check.level);
    if (check.oddOnly) {
      // The even scalars' four limbs, zeroed in place (no call per scalar).
      const words = limbs(scalars);
      for (let i = 0; i < words.length; i += 8) words[i] = words[i + 1] = words[i + 2] = words[i + 3] = 0;
    }
    return scalars;
  });
  const coefficients = new Map<number, Uint8Array>();
  for (const [reference, count] of referencePoints) coefficients.set(reference, new Uint8Array(count * N8));
  // One transform per check, one lane per core, the largest first and each lane taking the next when
  // it is free. Sums mod r do not depend on the order the transforms finish in.
  const largestFirst = [...checks.keys()].sort((a, b) => checks[b]!.level - checks[a]!.level);
  const transformAndAdd = async (): Promise<void> => {
    for (let index = largestFirst.shift(); index !== undefined; index = largestFirst.shift()) {
      const check = checks[index]!;
      const c = limbs(await inverseFft(curve, r[index]!));
      const total = limbs(coefficients.get(check.reference)!);
      // Past the reference section's end (level P+1 of section 2) the power is taken as zero.
      const count = Math.min(2 ** check.level, referencePoints.get(check.reference)!);
      for (let j = 0; j < count; j++) addModR(total, 8 * j, c, 8 * j);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, availableParallelism()) }, transformAndAdd)).catch((error) => {
    largestFirst.length = 0; // a failed transform fails the check: the other lanes start no more
    throw error;
  });
  // s_j for the relations X_{j+1} = τ·X_j, j < count − 1 (one zero at the end, so the scalars cover every point).
  const s = new Map<number, Uint8Array>();
  const aScalars = new Map<number, Uint8Array>();
  for (const [reference, count] of referencePoints) {
    const powers = randomScalars(count);
    powers.fill(0, (count - 1) * SCALAR_BYTES);
    s.set(reference, powers);
    // a_j = s_{j-1} − C[j], written over C[j] (each limb read before it is written), each s
    // widened on its own: no copy of the section's scalars (at 2^22 section 2's are 256 MB each).
    const narrow = limbs(powers);
    const previous = new Uint32Array(8);
    const a = coefficients.get(reference)!;
    const total = limbs(a);
    for (let j = 0; j < count; j++) {
      if (j > 0) for (let i = 0; i < 4; i++) previous[i] = narrow[4 * (j - 1) + i]!;
      subModR(total, 8 * j, previous, 0, total, 8 * j);
    }
    aScalars.set(reference, a);
  }
  return { r, s, a: aScalars };
}

/** Σ scalars·bases, every base checked on the curve: a point off it is named by its index in `what`. */
async function checkedSum(bases: Uint8Array, scalars: Uint8Array, what: string, first: number): Promise<Uint8Array> {
  const result = await g1CheckedMultiExpOrFallback(bases, scalars, SCALAR_BYTES);
  if ('invalidPoint' in result)
    throw inconsistent(`point ${first + result.invalidPoint} of ${what} is not a point of the curve`);
  return result.sum;
}

/** The reference sections: A (full width) and C (128-bit, the points checked) over the same reads. */
async function sumReferenceSections(
  curve: AuditCurve,
  { handle, section }: PtauFile,
  referencePoints: Map<number, number>,
  scalars: RandomScalars,
  progress: (points: number) => void,
): Promise<Pick<Sums, 'a' | 'c'>> {
  const G1 = curve.G1;
  const sums: Pick<Sums, 'a' | 'c'> = { a: new Map(), c: new Map() };
  for (const [reference, count] of referencePoints) {
    let a = G1.zero;
    let c = G1.zero;
    for (let first = 0; first < count; first += CHUNK_POINTS) {
      const n = Math.min(CHUNK_POINTS, count - first);
      const bases = await readAt(
        handle,
        section(reference).offset + first * G1_SIZE,
        n * G1_SIZE,
        `the ptau's section ${reference}`,
      );
      const [aPart, cPart] = await Promise.all([
        g1MultiExpOrFallback(bases, scalars.a.get(reference)!.subarray(first * N8, (first + n) * N8), N8),
        checkedSum(
          bases,
          scalars.s.get(reference)!.subarray(first * SCALAR_BYTES, (first + n) * SCALAR_BYTES),
          `section ${reference}`,
          first,
        ),
      ]);
      a = G1.add(a, aPart);
      c = G1.add(c, cPart);
      progress(n);
    }
    sums.a.set(reference, a);
    sums.c.set(reference, c);
  }
  return sums;
}

/** The Lagrange points: B (128-bit) per check; an H level reads and combines only its odd points. */
async function sumLagrangeSections(
  curve: AuditCurve,
  { handle, section }: PtauFile,
  checks: LagrangeCheck[],
  r: Uint8Array[],
  progress: (points: number) => void,
): Promise<Uint8Array[]> {
  const G1 = curve.G1;
  const sums: Uint8Array[] = [];
  for (const [index, check] of checks.entries()) {
    const n = 2 ** check.level;
    const start = section(check.lagrange).offset + (n - 1) * G1_SIZE;
    let b = G1.zero;
    for (let first = 0; first < n; first += CHUNK_POINTS) {
      const span = Math.min(CHUNK_POINTS, n - first);
      let bases = await readAt(handle, start + first * G1_SIZE, span * G1_SIZE, `the ptau's section ${check.lagrange}`);
      let scalars = r[index]!.subarray(first * SCALAR_BYTES, (first + span) * SCALAR_BYTES);
      if (check.oddOnly) {
        const odd = new Uint8Array((span / 2) * G1_SIZE);
        const oddScalars = new Uint8Array((span / 2) * SCALAR_BYTES);
        for (let i = 1; i < span; i += 2) {
          odd.set(bases.subarray(i * G1_SIZE, (i + 1) * G1_SIZE), ((i - 1) / 2) * G1_SIZE);
          oddScalars.set(scalars.subarray(i * SCALAR_BYTES, (i + 1) * SCALAR_BYTES), ((i - 1) / 2) * SCALAR_BYTES);
        }
        bases = odd;
        scalars = oddScalars;
      }
      b = G1.add(b, await checkedSum(bases, scalars, `section ${check.lagrange} at 2^${check.level}`, first));
      progress(bases.byteLength / G1_SIZE);
    }
    sums.push(b);
  }
  return sums;
}

/**
 * The rare path: the equation failed, so take it apart. First the powers of each reference
 * section on their own (e(Σ s_{j-1}·X_j, g2) = e(Σ s_j·X_j, τ·g2)), then each Lagrange check on
 * its own against its reference section (Σ r_i·λ_i = Σ c_j·X_j).
 */
async function nameTheCulprit(
  curve: AuditCurve,
  { handle, section }: PtauFile,
  checks: LagrangeCheck[],
  referencePoints: Map<number, number>,
  s: Map<number, Uint8Array>,
  r: Uint8Array[],
  sums: Sums,
  tau2: Uint8Array,
): Promise<never> {
  const G1 = curve.G1;
  for (const [reference, count] of referencePoints) {
    const bases = await readAt(handle, section(reference).offset, count * G1_SIZE, `the ptau's section ${reference}`);
    const powers = s.get(reference)!;
    const shifted = new Uint8Array(count * SCALAR_BYTES);
    shifted.set(powers.subarray(0, (count - 1) * SCALAR_BYTES), SCALAR_BYTES);
    const next = await g1MultiExpOrFallback(bases, shifted, SCALAR_BYTES);
    if (
      !(await pairingHolds(curve, [
        [next, curve.G2.g],
        [G1.neg(sums.c.get(reference)!), tau2],
      ]))
    ) {
      throw inconsistent(`section ${reference} does not hold ${POWERS_OF_TAU[reference]}`);
    }
  }
  for (const [index, check] of checks.entries()) {
    const count = Math.min(2 ** check.level, referencePoints.get(check.reference)!);
    const c = (await inverseFft(curve, r[index]!)).subarray(0, count * N8);
    const bases = await readAt(
      handle,
      section(check.reference).offset,
      count * G1_SIZE,
      `the ptau's section ${check.reference}`,
    );
    if (!G1.eq(sums.b[index]!, await g1MultiExpOrFallback(bases, c, N8)))
      throw inconsistent(`${describeCheck(check)}: not its Lagrange basis`);
  }
  throw inconsistent('the combined check failed but no part did on its own (a failing read?)');
}
