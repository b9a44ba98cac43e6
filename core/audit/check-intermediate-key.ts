/**
 * The default audit's check of a key between contribution 0 and the chain's last key, whose file
 * the caller has held to its transcript entry (whole-file and section hashes). Checked: the circuit,
 * the header but δ and the fixed sections are contribution 0's (by the section hashes both files'
 * bytes gave); its history is the first records of the last key's (which check-key-against-initial.ts
 * checked, every proof of knowledge and δ step), byte for byte; its δ1 is its last record's δ and
 * its δ2 the same δ in G2. NOT checked: its L and H against its δ. They are no premise of the last
 * key's check, which compares the last key's L and H with contribution 0's directly, so a key
 * between whose L or H is wrong changes no verdict on the last key (docs/audit.md); `ceremony audit
 * --every-link` (link by link) checks them, at one MSM over L‖H per key.
 */
import { getBn128 } from '../crypto/bn128.ts';
import { CoordinatorError } from '../errors.ts';
import type { ContributionRecord, ZkeyInfo } from '../zkey/zkey-file.ts';
import type { SectionHashes } from '../zkey/zkey-hashes.ts';
import { checkSameCircuit } from '../link-check/check-link-structure.ts';
import { checkDelta2 } from '../link-check/verify-link-from-head.ts';

export interface IntermediateKey {
  init: ZkeyInfo;
  key: ZkeyInfo;
  /** The section hashes this audit computed from each file's bytes. */
  hashes?: { init: SectionHashes; key: SectionHashes };
  /** Its position in the chain: the number of records it must carry. */
  index: number;
  /** The records of the chain's last key, checked against contribution 0. */
  lastRecords: readonly ContributionRecord[];
  /** How refusals name it (`contribution 3`) and the last key (`the final key`). */
  keyName: string;
  lastName: string;
}

/** Checks a key between contribution 0 and the last key as the module comment says; throws naming the fault. */
export async function checkIntermediateKey(check: IntermediateKey): Promise<void> {
  const { init, key, index, lastRecords, keyName, lastName } = check;
  const known = check.hashes ? { head: check.hashes.init, candidate: check.hashes.key } : undefined;
  await checkSameCircuit(init, key, 'contribution 0', known);
  const records = key.mpc.contributions;
  const prefix =
    records.length === index &&
    index <= lastRecords.length &&
    records.every((r, i) => r.raw.equals(lastRecords[i]!.raw));
  if (!prefix)
    throw new CoordinatorError(
      'contribution.history_mismatch',
      `${keyName}'s history (${records.length} records) is not the first ${index} records of ${lastName}'s`,
    );
  if (!records.at(-1)?.deltaAfter.equals(key.header.delta1))
    throw new CoordinatorError(
      'contribution.delta_mismatch',
      `${keyName}'s delta is not the delta its last record produced`,
    );
  await checkDelta2(await getBn128(), key);
}
