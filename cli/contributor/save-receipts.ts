/**
 * `--receipts FILE`: the coordinator's signed receipts of this contributor's accepted
 * contributions and of their steps through the queue (joins, refusals, removals: the queue log's
 * receipts, core/receipts/step-receipt.ts), saved as exactly the JSON `GET /api/me/receipts`
 * answers (what `ceremony verify-receipt` and the page take), written atomically (temporary file,
 * flush, rename), so an interrupted save leaves the previous file or the new one. Each signature is
 * checked first against the receipt key the coordinator publishes (GET /api/ceremony).
 */
import { writeFileAtomic } from '../../core/fs/atomic-write.ts';
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
