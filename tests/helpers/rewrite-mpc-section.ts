/**
 * Copies of a zkey with its contribution history rewritten, for the receipt check's tests: the MPC
 * section (section 10, the last one snarkjs writes) rebuilt from a chosen list of records, its
 * size in the section table updated, every other byte kept. Also lets a test change the header's
 * δ. The result is a well-formed zkey whose history no honest chain produced.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { readZkeyInfo, SECTION, type ContributionRecord } from '../../core/zkey/zkey-file.ts';

export interface HistoryRewrite {
  /** The records to keep, in order (default: all of them). */
  records?: (records: ContributionRecord[]) => ContributionRecord[];
  /** Stored bytes (64) to write as the header's vk_delta_1. */
  headerDelta1?: Buffer;
}

export async function rewriteHistory(source: string, target: string, rewrite: HistoryRewrite): Promise<string> {
  const info = await readZkeyInfo(source);
  const bytes = await readFile(source);
  const mpc = info.sections.get(SECTION.mpc)!;
  if (mpc.offset + mpc.size !== bytes.length)
    throw new Error('the MPC section is not the last one; this helper rewrites only that layout');
  const records = (rewrite.records ?? ((r) => r))(info.mpc.contributions);
  const count = Buffer.alloc(4);
  count.writeUInt32LE(records.length);
  const section = Buffer.concat([info.mpc.csHash, count, ...records.map((r) => r.raw)]);
  const head = Buffer.from(bytes.subarray(0, mpc.offset));
  head.writeBigUInt64LE(BigInt(section.length), mpc.offset - 8);
  if (rewrite.headerDelta1) {
    const header = info.sections.get(SECTION.grothHeader)!;
    // vk_delta_1 sits before vk_delta_2 (128 bytes) at the end of the header section.
    rewrite.headerDelta1.copy(head, header.offset + header.size - 128 - 64);
  }
  await writeFile(target, Buffer.concat([head, section]));
  return target;
}
