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
 * scalars; T taken as its MSM's window sums W_w, g2-msm.c's g2_msm_windows), the checks are
 *   (1) [r]·W_w = 0 for every window sum W_w of T, and e(S_B, g2) = e(g1, T)
 *   (2) e(S_K + σ1·S_A + σ2·S_B − Σ_c (w_c + σ1·u_c + σ2·v_c)·λ_c, g2) = e(S_A, β2)·e(α1, T)
 * (2) folds the equations of A, B1 and K into one, so the ptau side is one full-width MSM over λ
 * (section 12); α1 and β2 are the header's, already compared with the ptau's. On failure the
 * equations are taken apart to name the section (`audit.initial_key_mismatch`, or
 * `audit.b2_outside_subgroup` when a window sum fails (1)). The scalars are never stored or shown.
 * Why a key with any wrong point passes with probability ≤ 2^-126 (Schwartz–Zippel over ρ and σ),
 * and why B2's window sums rather than T alone (the twist's cofactor, and what a small-order
 * component of B2 would leak from every proof): docs/audit.md, "Contribution 0's check" and "B2's
 * subgroup".
 *
 * The ptau. This check takes the ptau's points as given; the audit pins the file (pin-ptau.ts) and
 * checks beforehand the sections this check relies on against the ptau's powers of τ
 * (check-ptau-sections.ts): section 12 at the circuit's domain (the λ that (2) combines) and the
 * odd points one level up (H, compared byte for byte). (2) does not rely on sections 14 and 15
 * (α·λ, β·λ): it checks IC and L against α1 and β2 directly, so a key built from forged 14/15 fails
 * it. They are checked on the failure path only, where a forged one names the ptau as the culprit,
 * and IC is then named through them.
 *
 * Memory: the r1cs, the key and the ptau are streamed in chunks; what is held is one 16-byte
 * scalar and (in the kernel's r1cs pass) one 32-byte Montgomery copy per variable, and one 32-byte
 * scalar (the fold) per domain point: about 0.33 GB at 2^22. The failure path scans the r1cs
 * again for u, v and w (three more per domain point), under the same ρ.
 */
import { createHash, type Hash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import { getBn128 } from '../crypto/bn128.ts';
import { BN254_R } from '../crypto/bn254-moduli.ts';
import { readSectionTable, SectionTableError, type SectionLocation } from '../binfile/section-table.ts';
import { SectionReader } from '../binfile/section-reader.ts';
import { readZkeyInfo, SECTION, type ZkeyInfo } from '../zkey/zkey-file.ts';
import { G1Uncompressed } from '../kernel/g1-uncompressed.ts';
import { N8, pairingHolds, type AuditCurve } from './audit-curve.ts';
import { initialKeyMismatch, type InitialKeyPart } from './initial-key-mismatch.ts';
import {
  drawScalars,
  INITIAL_KEY_SCALAR_BYTES,
  readR1csLayout,
  roleScalars,
  scanR1cs,
  type LambdaParts,
  type R1csLayout,
  type RoleScalars,
} from './initial-key-r1cs-pass.ts';
import { checkInitialKeyHeader, checkInitialKeyLayout } from './initial-key-header.ts';
import { checkHSection, hashHPoints } from './initial-key-h.ts';
import { checkPtauSections } from './check-ptau-sections.ts';
import { combineB2Section, combineKeySection, combinePtauPoints, type WindowedSum } from './initial-key-sums.ts';

export { INITIAL_KEY_SCALAR_BYTES };

/**
 * The version of this check: bumped whenever what it checks changes, so that a contribution 0 this
 * machine remembers as checked by an earlier version (verified-initial-key-memo.ts) is checked again.
 */
export const INITIAL_KEY_CHECK_VERSION = 1;
export type { InitialKeyPart };

/** ffjavascript's two-adicity of r: above it snarkjs takes H from elsewhere (never at our sizes). */
const FR_TWO_ADICITY = 28;
/** ptau sections: τ^i in G1, the Lagrange basis in G1, and its α and β multiples. */
const PTAU_TAU_G1 = 2;
const PTAU_LAGRANGE_G1 = 12;
const PTAU_LAGRANGE_ALPHA_G1 = 14;
const PTAU_LAGRANGE_BETA_G1 = 15;

export interface CheckInitialKeyOptions {
  /** How messages name the key (default: "contribution 0"). */
  label?: string;
  /** Called with the fraction of the work done, in [0, 1]. */
  onProgress?: (fraction: number) => void;
  /**
   * Called once if the combined check fails, before its parts are checked one by one to name the
   * culprit (the ptau's α·λ and β·λ sections among them: minutes at 2^22); `onProgress` then
   * counts that search from 0.
   */
  onCulpritSearch?: () => void;
  /** Filled with the milliseconds of each phase (the bench prints them). */
  timings?: Record<string, number>;
}

const G1_SECTIONS: Array<{ id: number; part: InitialKeyPart }> = [
  { id: SECTION.ic, part: 'IC' },
  { id: SECTION.l, part: 'L' },
  { id: SECTION.a, part: 'A' },
  { id: SECTION.b1, part: 'B1' },
];

async function ptauSectionTable(ptau: Awaited<ReturnType<typeof open>>): Promise<Map<number, SectionLocation>> {
  try {
    const { size } = await ptau.stat();
    return (await readSectionTable(ptau, size, 'ptau')).sections;
  } catch (error) {
    if (error instanceof SectionTableError) throw new CoordinatorError('ptau.malformed', `the ptau: ${error.message}`);
    throw error;
  }
}

/** What the check's steps share. */
interface CheckContext {
  curve: AuditCurve;
  uncompressed: G1Uncompressed;
  key: FileHandle;
  r1cs: FileHandle;
  ptau: FileHandle;
  ptauPath: string;
  info: ZkeyInfo;
  r1csLayout: R1csLayout;
  ptauSections: Map<number, SectionLocation>;
  lambdaG1: SectionLocation;
  tauG1: SectionLocation;
  domainSize: number;
  label: string;
  csHash: Hash;
  progress: (points: number) => void;
  lap: (phase: string) => void;
}

/**
 * The key side, in the order snarkjs hashes the sections (IC, H, L (its C), A, B1, B2): each G1
 * section's combination under ρ into `sums`, H compared and hashed; returns B2's window sums.
 */
async function keySideSums(
  context: CheckContext,
  rho: RoleScalars,
  sums: Map<number, Uint8Array>,
): Promise<WindowedSum> {
  const { curve, uncompressed, key, info, ptau, csHash, progress, lap, domainSize } = context;
  const icBytes = (context.r1csLayout.nPublic + 1) * INITIAL_KEY_SCALAR_BYTES;
  const keyScalars: Record<number, Uint8Array> = {
    [SECTION.ic]: rho.bytes.subarray(0, icBytes),
    [SECTION.l]: rho.bytes.subarray(icBytes),
    [SECTION.a]: rho.bytes,
    [SECTION.b1]: rho.bytes,
  };
  const combine = async ({ id, part }: { id: number; part: InitialKeyPart }): Promise<void> => {
    sums.set(id, await combineKeySection(curve, uncompressed, key, info, id, part, keyScalars[id]!, csHash, progress));
  };
  await combine(G1_SECTIONS[0]!);
  lap('key G1 sections');
  await hashHPoints(curve, uncompressed, ptau, context.tauG1, domainSize, csHash);
  lap('circuit hash of H');
  await checkHSection(key, info, ptau, context.lambdaG1, domainSize, progress);
  lap('H bytes');
  for (const section of G1_SECTIONS.slice(1)) await combine(section);
  lap('key G1 sections');
  const b2 = await combineB2Section(curve, key, info, SECTION.b2, rho.bytes, csHash, progress);
  lap('key G2 MSM');
  return b2;
}

/**
 * T = Σ_w 2^(c·w)·W_w, B2's combination, once every window sum is known to lie in the order-r
 * subgroup (see the module comment); `audit.b2_outside_subgroup` otherwise.
 */
function b2Combination(curve: AuditCurve, b2Windows: WindowedSum, label: string): Uint8Array {
  if (b2Windows.windows.some((window) => !curve.G2.isZero(curve.G2.timesScalar(window, BN254_R)))) {
    throw new CoordinatorError(
      'audit.b2_outside_subgroup',
      `${label} is not the key that the r1cs and the ptau produce: B2 has points outside the order-r subgroup of G2`,
    );
  }
  let T = curve.G2.zero;
  for (const window of [...b2Windows.windows].reverse()) {
    for (let bit = 0; bit < b2Windows.windowBits; bit++) T = curve.G2.add(T, T);
    T = curve.G2.add(T, window);
  }
  return T;
}

/** Σ_c scalars_c·λ_c over the ptau's Lagrange basis in G1. */
function lambdaMsm(context: CheckContext, scalars: Uint8Array): Promise<Uint8Array> {
  const { curve, ptau, lambdaG1, domainSize, progress } = context;
  return combinePtauPoints(curve, 'G1', ptau, lambdaG1, domainSize - 1, domainSize, scalars, 'Lagrange', progress);
}

/**
 * The rare path, once the folded equations failed: the equations one by one, to name the culprit
 * (always throws). B2 is judged against B1 once B1 is known right; IC against L by restricting ρ
 * to the public variables.
 */
async function nameCulprit(
  checked: CheckContext,
  rho: RoleScalars,
  sums: Map<number, Uint8Array>,
  b2Holds: boolean,
  options: CheckInitialKeyOptions,
): Promise<never> {
  const { curve, label, ptauSections, domainSize } = checked;
  const { nPublic } = checked.r1csLayout;
  const G1 = curve.G1;
  // The search's own count, in points: two r1cs scans (counted as two domains each, as in the
  // check), five MSMs over a domain, and the ptau's α·λ, β·λ check (two domains of Lagrange points
  // and two of α·τ^j, β·τ^j).
  options.onCulpritSearch?.();
  const searchPoints = 13 * domainSize;
  let searched = 0;
  const progress = (points: number): void => {
    searched += points;
    options.onProgress?.(Math.min(searched / searchPoints, 1));
  };
  progress(0);
  const context: CheckContext = { ...checked, progress };
  // The first pass kept only the fold (bounded memory): the parts are scanned again, under the same ρ.
  const rescan = (scalars: RoleScalars): Promise<LambdaParts> =>
    scanR1cs(context.r1cs, context.r1csLayout, domainSize, scalars, [0n, 0n], undefined, label, 'the r1cs', true).then(
      (scan) => {
        progress(2 * domainSize);
        return scan.parts!;
      },
    );
  const lambdaScalars = await rescan(rho);
  if (!G1.eq(sums.get(SECTION.a)!, await lambdaMsm(context, lambdaScalars.u)))
    throw initialKeyMismatch('A', label, 'is not the combination of the ptau points the r1cs fixes');
  if (!G1.eq(sums.get(SECTION.b1)!, await lambdaMsm(context, lambdaScalars.v)))
    throw initialKeyMismatch('B1', label, 'is not the combination of the ptau points the r1cs fixes');
  if (!b2Holds) throw initialKeyMismatch('B2', label, 'is not B1 in G2');
  // IC or L is wrong against α1 and β2. zkey new composes them from the ptau's α·λ and β·λ
  // (sections 14, 15), which the audit does not check otherwise: a key built from forged ones is the
  // ptau's fault, and named so (audit.ptau_inconsistent); once they hold, IC is named through them.
  const before = searched;
  await checkPtauSections(context.ptauPath, [Math.log2(domainSize)], {
    scope: 'alpha-beta',
    onProgress: (fraction) => progress(before + fraction * 4 * domainSize - searched),
  });
  const publicRho = roleScalars(rho.bytes.map((byte, i) => (i < (nPublic + 1) * INITIAL_KEY_SCALAR_BYTES ? byte : 0)));
  const publicScan = await rescan(publicRho);
  // IC alone, the way zkey new composes it: λ, α·λ and β·λ points (ptau sections 12, 14, 15).
  const [alphaG1, betaG1] = [PTAU_LAGRANGE_ALPHA_G1, PTAU_LAGRANGE_BETA_G1].map((id) => ptauSections.get(id));
  if (!alphaG1 || !betaG1)
    throw new CoordinatorError('ptau.not_prepared', 'the ptau has no alpha and beta Lagrange sections');
  const scaled = (section: SectionLocation, scalars: Uint8Array, what: string): Promise<Uint8Array> =>
    combinePtauPoints(curve, 'G1', context.ptau, section, domainSize - 1, domainSize, scalars, what, progress);
  let expectedIc = await lambdaMsm(context, publicScan.w);
  expectedIc = G1.add(expectedIc, await scaled(alphaG1, publicScan.v, 'alpha Lagrange'));
  expectedIc = G1.add(expectedIc, await scaled(betaG1, publicScan.u, 'beta Lagrange'));
  if (!G1.eq(sums.get(SECTION.ic)!, expectedIc))
    throw initialKeyMismatch('IC', label, 'is not the combination of the ptau points the r1cs fixes');
  throw initialKeyMismatch('L', label, 'is not the combination of the ptau points the r1cs fixes');
}

/** The r1cs's and the ptau's layouts read, the sizes checked: what the check's steps share. */
async function openCheck(
  r1csPath: string,
  options: CheckInitialKeyOptions,
  opened: Pick<CheckContext, 'key' | 'r1cs' | 'ptau' | 'ptauPath' | 'info' | 'curve' | 'label'>,
): Promise<CheckContext> {
  const r1csLayout = await readR1csLayout(r1csPath, opened.r1cs, 'the r1cs');
  const ptauSections = await ptauSectionTable(opened.ptau);
  const power = Math.ceil(Math.log2(r1csLayout.nConstraints + r1csLayout.nPublic + 1));
  const domainSize = 2 ** power;
  if (power >= FR_TWO_ADICITY) throw new CoordinatorError('ptau.too_small', 'the circuit is too large for this check');
  const lagrange = [PTAU_LAGRANGE_G1, PTAU_TAU_G1].map((id) => ptauSections.get(id));
  if (lagrange.some((s) => !s)) throw new CoordinatorError('ptau.not_prepared', 'the ptau has no Lagrange sections');
  const [lambdaG1, tauG1] = lagrange as [SectionLocation, SectionLocation];

  const { nWires } = r1csLayout;
  // In points, a G2 point counted as three G1 points; the r1cs pass as two domains' worth.
  const totalWork = 2 * domainSize + 3 * nWires + domainSize + 3 * nWires + domainSize;
  let done = 0;
  let since = performance.now();
  return {
    ...opened,
    uncompressed: await G1Uncompressed.instantiate(),
    r1csLayout,
    ptauSections,
    lambdaG1,
    tauG1,
    domainSize,
    csHash: createHash('blake2b512'),
    progress: (points) => {
      done += points;
      options.onProgress?.(Math.min(done / totalWork, 1));
    },
    lap: (phase) => {
      const now = performance.now();
      if (options.timings) options.timings[phase] = (options.timings[phase] ?? 0) + (now - since);
      since = now;
    },
  };
}

/**
 * Throws `audit.initial_key_mismatch` naming the first part of the zkey at `zkeyPath` that is not
 * what `snarkjs zkey new r1cs ptau` writes (probability ≤ 2^-128 of missing a G1 difference, see the
 * module comment); read and decode errors throw their own codes. Returns the circuit hash.
 */
export async function checkInitialKey(
  zkeyPath: string,
  r1csPath: string,
  ptauPath: string,
  options: CheckInitialKeyOptions = {},
): Promise<{ csHash: Buffer }> {
  const label = options.label ?? 'contribution 0';
  const info = await readZkeyInfo(zkeyPath, label);
  const curve: AuditCurve = await getBn128();
  const [key, r1cs, ptau] = await Promise.all([open(zkeyPath, 'r'), open(r1csPath, 'r'), open(ptauPath, 'r')]);
  try {
    const context = await openCheck(r1csPath, options, { key, r1cs, ptau, ptauPath, info, curve, label });
    const { csHash, domainSize, r1csLayout } = context;
    await checkInitialKeyLayout(key, info);
    await checkInitialKeyHeader(curve, info, r1csLayout, domainSize, ptau, context.ptauSections, csHash);
    const mpc = info.sections.get(SECTION.mpc)!;
    if (info.mpc.contributions.length !== 0 || mpc.size !== 68)
      throw initialKeyMismatch('contributions', label, 'is not empty');

    // One ρ per variable for A, B1, IC/L and B2, and σ1, σ2 to fold three equations into one (see
    // the module comment).
    const rho = drawScalars(r1csLayout.nWires);
    const sigmas = drawScalars(2);
    const [sigma1, sigma2] = [sigmas.value(0), sigmas.value(1)];
    const coefficientReader = new SectionReader(
      key,
      info.sections.get(SECTION.coefficients)!,
      `the coefficients section of ${label}`,
    );
    if ((await coefficientReader.u32()) !== (info.sections.get(SECTION.coefficients)!.size - 4) / (12 + N8))
      throw initialKeyMismatch('coefficients', label, 'has a wrong count');
    // The r1cs pass runs on this thread while the key's MSMs run on the kernel's threads.
    const scanStart = performance.now();
    const scan = scanR1cs(
      r1cs,
      r1csLayout,
      domainSize,
      rho,
      [sigma1, sigma2],
      coefficientReader,
      label,
      'the r1cs',
    ).then((result) => {
      context.progress(2 * domainSize);
      if (options.timings) options.timings['r1cs pass (overlaps the key side)'] = performance.now() - scanStart;
      return result;
    });
    const sums = new Map<number, Uint8Array>();
    // Both run to the end before a refusal is thrown, so no read is left running on a closed file;
    // an r1cs or coefficients refusal comes first, as it explains what follows.
    const [scanned, keyed] = await Promise.allSettled([scan, keySideSums(context, rho, sums)]);
    if (scanned.status === 'rejected') throw scanned.reason;
    if (keyed.status === 'rejected') throw keyed.reason;
    const lambdaScalars = scanned.value;
    const T = b2Combination(curve, keyed.value, label);

    const G1 = curve.G1;
    const G2 = curve.G2;
    const alpha1 = G1.fromRprLEM(info.header.alpha1, 0);
    const beta2 = G2.fromRprLEM(info.header.beta2, 0);
    const sumA = sums.get(SECTION.a)!;
    const sumB1 = sums.get(SECTION.b1)!;
    const sumK = G1.add(sums.get(SECTION.ic)!, sums.get(SECTION.l)!);
    const b2Holds = await pairingHolds(curve, [
      [sumB1, G2.g],
      [G1.neg(G1.g), T],
    ]);
    // e(ΣρK + σ1·ΣρA + σ2·ΣρB1 − Σ_c (w_c + σ1·u_c + σ2·v_c)·λ_c, g2) = e(ΣρA, β2)·e(α1, T)
    const folded = G1.add(sumK, G1.add(G1.timesScalar(sumA, sigma1), G1.timesScalar(sumB1, sigma2)));
    const combinedHolds = await pairingHolds(curve, [
      [G1.add(folded, G1.neg(await lambdaMsm(context, lambdaScalars.combined))), G2.g],
      [G1.neg(sumA), beta2],
      [G1.neg(alpha1), T],
    ]);
    context.lap('ptau MSM and pairings');
    if (!b2Holds || !combinedHolds) await nameCulprit(context, rho, sums, b2Holds, options);
    // Last, so that a changed point is named by its section rather than by the hash it also breaks.
    if (!csHash.digest().equals(info.mpc.csHash))
      throw initialKeyMismatch('circuit hash', label, "is not the hash of the key's points");
    options.onProgress?.(1);
    return { csHash: info.mpc.csHash };
  } finally {
    await Promise.all([key.close(), r1cs.close(), ptau.close()]);
  }
}
