/**
 * The step receipts of a receipts file's text (step-receipt.ts), checked for `ceremony verify-receipt`
 * against the queue log of the same evidence the acceptance receipts are checked against: the
 * published folder's transcript/queue-log.jsonl, or a coordinator's `GET /api/queue-log` read page
 * by page from the start; its hash chain is recomputed either way, and the ceremony id and receipt
 * key are the evidence's own.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CoordinatorError } from '../errors.ts';
import { checkQueueLog, parseQueueLogText, QUEUE_LOG_FILE, type QueueLogEntry } from '../queue-log/queue-log-entry.ts';
import type { ReceiptEvidence } from './receipt-checker.ts';
import { importReceiptKey } from './receipt-signature.ts';
import { isStepReceiptText, parseStepReceipts, checkStepReceipt, type StepReceiptVerdict } from './step-receipt.ts';

const PAGE = 1000;

export interface StepReceiptsOfFile {
  verdicts: StepReceiptVerdict[];
  /** The file holds acceptance receipts too (the acceptance check reads those). */
  hasAcceptances: boolean;
}

/** Where the queue log is read: a published folder, or a coordinator's base URL. */
export type QueueLogSource = { dir: string } | { baseUrl: string };

async function readQueueLog(ceremonyId: string, source: QueueLogSource, label: string): Promise<QueueLogEntry[]> {
  if ('dir' in source) {
    const text = await readFile(path.join(source.dir, QUEUE_LOG_FILE), 'utf8').catch(() => {
      throw new CoordinatorError('receipt.source_unavailable', `${label} has no ${QUEUE_LOG_FILE}`);
    });
    return parseQueueLogText(ceremonyId, text, label);
  }
  const entries: unknown[] = [];
  for (let after = -1; ;) {
    let page: { entries?: unknown };
    try {
      const response = await fetch(`${source.baseUrl}/api/queue-log?limit=${PAGE}&after=${after}`, {
        cache: 'no-store',
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      page = (await response.json()) as { entries?: unknown };
    } catch (error) {
      throw new CoordinatorError(
        'receipt.source_unavailable',
        `cannot fetch the queue log from ${label}: ${(error as Error).message}`,
      );
    }
    if (!Array.isArray(page.entries)) throw new CoordinatorError('queue_log.corrupt', `${label} serves no queue log`);
    entries.push(...(page.entries as unknown[]));
    if (page.entries.length < PAGE) break;
    after = entries.length - 1;
  }
  return checkQueueLog(ceremonyId, entries, label);
}

/**
 * Reads the step receipts of a receipts file's `text` and checks each against `evidence` and the
 * queue log at `source`. None in the file: no verdicts, and nothing is fetched.
 */
export async function checkStepReceiptsOfText(
  text: string,
  evidence: ReceiptEvidence,
  source: QueueLogSource,
): Promise<StepReceiptsOfFile> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { verdicts: [], hasAcceptances: true }; // the acceptance check says what is wrong with it
  }
  const receipts = parseStepReceipts(value);
  const record = value as { receipts?: unknown; body?: unknown };
  const hasAcceptances = Array.isArray(value)
    ? true
    : Array.isArray(record.receipts)
      ? record.receipts.length > 0
      : !isStepReceiptText(record.body);
  if (receipts.length === 0) return { verdicts: [], hasAcceptances };
  const ceremonyId = await evidence.ceremonyId();
  const key = await importReceiptKey(await evidence.receiptPublicKeyPem(), evidence.label);
  const log = await readQueueLog(ceremonyId, source, evidence.label);
  const verdicts: StepReceiptVerdict[] = [];
  for (const receipt of receipts)
    verdicts.push(await checkStepReceipt(receipt, { ceremonyId, key, log, label: evidence.label }));
  return { verdicts, hasAcceptances };
}
