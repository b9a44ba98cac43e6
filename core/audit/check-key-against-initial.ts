/**
 * The default audit's check of a chain's last key (the final key, or the head of a chain not yet
 * finalised) against contribution 0 and the records of its own history, whatever the keys between
 * hold. Contribution 0 must have passed its own check (check-initial-key.ts). Checked:
 *   - the same circuit: header but δ (α, β, γ, sizes, circuit hash) and the fixed sections (IC,
 *     coefficients, A, B1, B2, by the section hashes this audit computed from both files' bytes)
 *     equal to contribution 0's; L and H of its sizes (checkSameCircuit);
 *   - its history, record by record from contribution 0's δ: each record of the expected kind (a
 *     random contribution; the last, once finalised, the transcript's beacon, its key the one the
 *     beacon derives), its transcript digest snarkjs's chain over the records before it, its proof
 *     of knowledge e(g1_s, g2_spx) = e(g1_sx, g2_sp) and its δ step e(δ_before, g2_spx) =
 *     e(δ_after, g2_sp), δ changed, and its contribution hash the transcript's at its position;
 *     the header's δ1 the last record's δ, and δ2 the same δ in G2 (in the order-r subgroup);
 *   - L and H: contribution 0's scaled by δ_0/δ, by one random combination under fresh 64-bit
 *     scalars (verifyScaledLAndH), its points at infinity contribution 0's and every point on the
 *     curve.
 * Why a key that passes descends from every recorded contribution, whoever made the keys between,
 * and the bound: docs/audit.md ("Why a final key that passes descends from every recorded
 * contribution"). Every refusal carries the code the link check gives the same fault.
 */
import type { Bn128Curve } from 'ffjavascript';
import { CoordinatorError, type ErrorCode } from '../errors.ts';
import { contributionHash } from '../zkey/contribution-hash.ts';
import type { ContributionRecord, ZkeyInfo } from '../zkey/zkey-file.ts';
import type { SectionHashes } from '../zkey/zkey-hashes.ts';
import { checkExpectedKind, checkSameCircuit, type LinkExpectation } from '../link-check/check-link-structure.ts';
import { checkProofOfKnowledge, verifyScaledLAndH } from '../link-check/verify-link-from-head.ts';

/** What the transcript says the key's history must be. */
export interface RecordedHistory {
  /** The contribution hash of each record, in order (the beacon's last once finalised). */
  contributionHashes: readonly string[];
  /** The beacon the last record must apply, once the chain is finalised. */
  beacon?: { beaconHex: string; iterationsExp: number };
}

export interface KeyAgainstInitial {
  init: ZkeyInfo;
  key: ZkeyInfo;
  /** The section hashes this audit computed from each file's bytes (never the transcript's). */
  hashes?: { init: SectionHashes; key: SectionHashes };
  history: RecordedHistory;
  /** How refusals name the key: `the final key`, `contribution 7`. */
  keyName: string;
}

const INIT_NAME = 'contribution 0';

function refuse(code: ErrorCode, message: string): never {
  throw new CoordinatorError(code, message);
}

/** How refusals name record `index` (0-based) of the key's history. */
function recordName(history: RecordedHistory, index: number): string {
  const last = index === history.contributionHashes.length - 1;
  return last && history.beacon ? 'the beacon record' : `the record of contribution ${index + 1}`;
}

/** The history's length and its records' kinds and δ, before any pairing. */
function checkRecordShapes(init: ZkeyInfo, key: ZkeyInfo, history: RecordedHistory, keyName: string): void {
  const records = key.mpc.contributions;
  const expected = history.contributionHashes.length;
  if (records.length !== expected)
    refuse(
      'contribution.history_mismatch',
      `${keyName} carries ${records.length} contribution records; the transcript records ${expected} for it`,
    );
  for (const [index, record] of records.entries()) {
    const last = index === records.length - 1;
    const expect: LinkExpectation = last && history.beacon ? { kind: 'beacon', ...history.beacon } : { kind: 'random' };
    checkExpectedKind(record, expect);
    const before = index === 0 ? init.header.delta1 : records[index - 1]!.deltaAfter;
    if (record.deltaAfter.equals(before))
      refuse(
        'contribution.delta_unchanged',
        `${recordName(history, index)} in ${keyName} leaves delta unchanged (its secret is 1): it adds no randomness`,
      );
  }
  const last = records.at(-1);
  if (!last) refuse('contribution.history_mismatch', `${keyName} carries no contribution record`);
  if (!last.deltaAfter.equals(key.header.delta1))
    refuse('contribution.delta_mismatch', `${keyName}'s delta is not the delta its last record produced`);
}

/**
 * Every record's proof of knowledge and δ step, from contribution 0's δ, and its contribution hash
 * against the transcript's (on this thread, while the MSM threads sum L and H).
 */
async function checkRecordProofs(
  curve: Bn128Curve,
  init: ZkeyInfo,
  key: ZkeyInfo,
  history: RecordedHistory,
  keyName: string,
): Promise<void> {
  const records = key.mpc.contributions;
  for (const [index, record] of records.entries()) {
    const before = { mpc: { csHash: key.mpc.csHash, contributions: records.slice(0, index) } };
    const delta1 = index === 0 ? init.header.delta1 : records[index - 1]!.deltaAfter;
    const what = `${recordName(history, index)} in ${keyName}`;
    await checkProofOfKnowledge(curve, { ...before, header: { delta1 } }, record, what);
    if (contributionHash(curve, record) !== history.contributionHashes[index])
      refuse(
        'transcript.corrupt',
        `${what}: the transcript records a different contribution hash at position ${index + 1}`,
      );
  }
}

/**
 * Checks `key` against contribution 0 (`init`) as the module comment says; returns its records
 * (which the keys between must begin with). Throws a CoordinatorError naming the fault.
 */
export async function checkKeyAgainstInitial(check: KeyAgainstInitial): Promise<ContributionRecord[]> {
  const { init, key, history, keyName } = check;
  const known = check.hashes ? { head: check.hashes.init, candidate: check.hashes.key } : undefined;
  await checkSameCircuit(init, key, INIT_NAME, known);
  checkRecordShapes(init, key, history, keyName);
  await verifyScaledLAndH(init, key, {
    words: {
      l: `the L section of ${keyName} is not contribution 0's scaled to its delta`,
      h: `the H section of ${keyName} is not contribution 0's scaled to its delta`,
    },
    alongside: (curve) => checkRecordProofs(curve, init, key, history, keyName),
  });
  return key.mpc.contributions;
}
