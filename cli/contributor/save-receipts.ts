/**
 * `--receipts FILE`: the coordinator's signed receipts of this contributor's accepted
 * contributions and of their steps through the queue (joins, refusals, removals: the queue log's
 * receipts, core/receipts/step-receipt.ts), saved as exactly the JSON `GET /api/me/receipts`
 * answers (what `ceremony verify-receipt` and the page take), written atomically (temporary file,
 * flush, rename), so an interrupted save leaves the previous file or the new one. Each signature is
 * checked first against the receipt key the coordinator publishes (GET /api/ceremony).
 *
 * A FILE saved by an earlier run may hold receipts of contributions the coordinator's transcript no
 * longer has (it went back to an earlier state: a backup restored after a lost disk). Those
 * contributions are lost; their receipts are the contributor's evidence that the coordinator had
 * accepted them, so the earlier file is kept beside FILE before it is replaced (lostReceipts).
 */
import { constants } from 'node:fs';
import { copyFile, readFile, stat } from 'node:fs/promises';
import { writeFileAtomic } from '../../core/fs/atomic-write.ts';
import { MAX_RECEIPTS_FILE_BYTES, parseReceiptsText, type ReceiptBody } from '../../core/receipts/receipts-file.ts';
import type { TranscriptView } from '../../core/coordinator-api/api-types.ts';
import { verifyReceipt } from '../../server/contributions/receipt-signer.ts';
import type { CoordinatorClient } from './coordinator-client.ts';

export interface ReceiptsAnswer {
  receipts: Array<{ contributionId: string; body: string; signature: string }>;
  steps?: Array<{ seq: number; body: string; signature: string }>;
}

export interface SavedReceipts {
  /** Acceptance receipts. */
  count: number;
  /** Step receipts. */
  steps: number;
  /** Receipts whose signature does not verify against the published key (saved anyway, as answered). */
  badSignatures: number;
}

export async function saveReceipts(
  client: CoordinatorClient,
  receiptPublicKey: string,
  file: string,
): Promise<SavedReceipts> {
  const answer = await client.request<ReceiptsAnswer>('GET', '/api/me/receipts');
  let badSignatures = 0;
  for (const receipt of [...answer.receipts, ...(answer.steps ?? [])]) {
    let valid = false;
    try {
      valid = verifyReceipt(receipt, receiptPublicKey);
    } catch {
      valid = false;
    }
    if (!valid) badSignatures++;
  }
  await writeFileAtomic(file, `${JSON.stringify(answer, null, 2)}\n`);
  return { count: answer.receipts.length, steps: answer.steps?.length ?? 0, badSignatures };
}

export interface LostReceipts {
  /** The acceptances of FILE, of this ceremony, that the transcript no longer records. */
  lost: ReceiptBody[];
  /** Where the earlier FILE was kept (when some were lost). */
  keptAs?: string;
}

/**
 * The receipts of an earlier run's FILE whose contribution the coordinator's transcript (GET
 * /api/transcript) does not record (same circuit, index, contribution and file hashes); when there
 * are any, FILE is copied to `FILE.lost-STAMP.json` so the next save does not erase them. A FILE
 * that is missing, too large or not a receipts file holds nothing to lose (it is replaced as before).
 */
export async function lostReceipts(client: CoordinatorClient, ceremonyId: string, file: string): Promise<LostReceipts> {
  const size = await stat(file).then(
    (info) => (info.isFile() ? info.size : undefined),
    () => undefined,
  );
  if (size === undefined || size > MAX_RECEIPTS_FILE_BYTES) return { lost: [] };
  let bodies: ReceiptBody[];
  try {
    bodies = parseReceiptsText(await readFile(file, 'utf8'))
      .receipts.map((receipt) => receipt.body)
      .filter((body) => body.ceremony === ceremonyId);
  } catch {
    return { lost: [] };
  }
  if (bodies.length === 0) return { lost: [] };
  const { entries } = await client.request<TranscriptView>('GET', '/api/transcript');
  const recorded = new Set(
    entries.flatMap((entry) =>
      entry.type === 'contribution'
        ? [`${entry.circuit}|${entry.index}|${entry.contributionHash}|${entry.fileHash}`]
        : [],
    ),
  );
  const lost = bodies.filter(
    (body) => !recorded.has(`${body.circuit}|${body.index}|${body.contributionHash}|${body.fileHash}`),
  );
  if (lost.length === 0) return { lost };
  const keptAs = `${file}.lost-${new Date().toISOString().replace(/[-:]/g, '')}.json`;
  // Never over an earlier copy: that one holds acceptances lost before.
  await copyFile(file, keptAs, constants.COPYFILE_EXCL);
  return { lost, keptAs };
}
