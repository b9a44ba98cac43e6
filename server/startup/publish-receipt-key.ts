/**
 * The start-up policy for the receipt key: the public half of the coordinator's signing key is
 * published beside the ceremony's public files (`ceremony publish` copies it, so receipts can be
 * checked offline), but never over another key.
 *
 * A lost or replaced state/ folder makes a new signing key; publishing its half over the old one
 * would silently make every receipt already handed out fail to verify. So a published key that is
 * not this coordinator's refuses the start (`config.invalid`), and leaves the file as it was: the
 * operator decides, by restoring state/'s key or by moving the published one aside, before
 * anything is started. The message names the file, never a path.
 */
import {
  readReceiptPublicKey,
  RECEIPT_PUBLIC_KEY_FILE,
  writeReceiptPublicKey,
} from '../../core/receipts/receipt-public-key-file.ts';
import { samePublicKey } from '../../core/receipts/receipt-signature.ts';
import { CoordinatorError } from '../../core/errors.ts';

/** Publishes `publicKeyPem` in `dataDir`, unless another key is published there (then throws). */
export async function publishReceiptKey(dataDir: string, publicKeyPem: string): Promise<void> {
  const published = await readReceiptPublicKey(dataDir);
  if (published !== undefined && !samePublicKey(published, publicKeyPem)) {
    throw new CoordinatorError(
      'config.invalid',
      `the receipt signing key in the state folder is not the one published in ${RECEIPT_PUBLIC_KEY_FILE}, ` +
        'and receipts already handed out verify only against the published one: restore the state folder’s ' +
        `receipt key, or move ${RECEIPT_PUBLIC_KEY_FILE} aside to start with a new key`,
    );
  }
  await writeReceiptPublicKey(dataDir, publicKeyPem);
}
