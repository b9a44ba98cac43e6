/**
 * Signed receipts for accepted contributions. The coordinator holds an Ed25519 key (created on
 * first start in the state folder, never in git); its public key is published at
 * /api/receipt-key, in /api/ceremony and as receipt-public-key.pem of the data folder (which
 * `ceremony publish` copies), so a contributor can prove later that the coordinator accepted their
 * contribution, and check with core/receipts/ that the final keys descend from it.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../../core/fs/atomic-write.ts';
import type { ReceiptBody } from '../../core/receipts/receipts-file.ts';
import type { StepReceiptBody } from '../../core/receipts/step-receipt.ts';
import type { Receipt } from './contribution-store.ts';

export type { ReceiptBody };

export class ReceiptSigner {
  private constructor(
    private readonly privateKey: KeyObject,
    readonly publicKeyPem: string,
  ) {}

  /**
   * Loads the key at `keyFile`, creating it (mode 0600, in a 0700 folder, written and flushed
   * through a temporary file) when absent. Coordinators starting together on one state folder
   * agree on one key, the first written (`keepExisting`): a receipt signed by either verifies
   * against the key every later start publishes.
   */
  static async fromKeyFile(keyFile: string): Promise<ReceiptSigner> {
    const existing = await readFile(keyFile).catch((error: NodeJS.ErrnoException) =>
      error.code === 'ENOENT' ? undefined : Promise.reject(error),
    );
    if (existing === undefined) {
      const { privateKey } = generateKeyPairSync('ed25519');
      await writeFileAtomic(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), {
        mode: 0o600,
        directoryMode: 0o700,
        keepExisting: true,
      });
    }
    const privateKey = createPrivateKey(existing ?? (await readFile(keyFile)));
    return new ReceiptSigner(
      privateKey,
      createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString(),
    );
  }

  /** Signs a receipt's body (an acceptance's ReceiptBody, or a queue step's: core/receipts/step-receipt.ts). */
  sign(body: ReceiptBody | StepReceiptBody): Receipt {
    const text = JSON.stringify(body);
    return { body: text, signature: sign(null, Buffer.from(text), this.privateKey).toString('base64') };
  }
}

/** Checks a receipt against a published public key (PEM). */
export function verifyReceipt(receipt: Receipt, publicKeyPem: string): boolean {
  return verify(
    null,
    Buffer.from(receipt.body),
    createPublicKey(publicKeyPem),
    Buffer.from(receipt.signature, 'base64'),
  );
}
