/**
 * The coordinator's receipt public key as a public file of the data folder,
 * `receipt-public-key.pem`: the coordinator writes it at start-up (its private key stays in
 * state/, which nothing public reads), `ceremony publish` copies it, and `ceremony verify-receipt`
 * checks receipts against it offline. Written through a temporary file and a rename, and only
 * when it changes; a change is reported, since receipts signed by the old key then no longer
 * verify against the published one. Node only (the page fetches `GET /api/receipt-key`).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { CoordinatorError } from '../errors.ts';
import { publicKeyDer, samePublicKey } from './receipt-signature.ts';

export const RECEIPT_PUBLIC_KEY_FILE = 'receipt-public-key.pem';

function receiptPublicKeyPath(dataDir: string): string {
  return path.join(dataDir, RECEIPT_PUBLIC_KEY_FILE);
}

/** Makes `dataDir`/receipt-public-key.pem hold `pem`; says whether it was new, the same, or another key. */
export async function writeReceiptPublicKey(
  dataDir: string,
  pem: string,
): Promise<'written' | 'unchanged' | 'replaced'> {
  const file = receiptPublicKeyPath(dataDir);
  const existing = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) =>
    error.code === 'ENOENT' ? undefined : Promise.reject(error),
  );
  if (existing !== undefined && samePublicKey(existing, pem)) return 'unchanged';
  await writeFileAtomic(file, pem);
  return existing === undefined ? 'written' : 'replaced';
}

/**
 * The receipt public key published in a folder, checked to be a PEM public key (never a private
 * one): undefined when the folder has none (a ceremony run without a coordinator signs no receipts).
 */
export async function readReceiptPublicKey(dir: string): Promise<string | undefined> {
  const file = receiptPublicKeyPath(dir);
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) =>
    error.code === 'ENOENT' ? undefined : Promise.reject(error),
  );
  if (text === undefined) return undefined;
  if (!publicKeyDer(text))
    throw new CoordinatorError('receipt.key_unavailable', `${RECEIPT_PUBLIC_KEY_FILE} is not a PEM public key`);
  return text;
}
