/**
 * Signed receipts for accepted contributions. The coordinator holds an Ed25519 key (created on
 * first start in the state folder, never in git); its public key is published at /api/ceremony,
 * so a contributor can prove later that the coordinator accepted their contribution.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import type { Receipt } from './contribution-store.ts';

export interface ReceiptBody {
  ceremony: string;
  circuit: string;
  index: number;
  contributor: string;
  contributionHash: string;
  fileHash: string;
  acceptedAt: string;
}

export class ReceiptSigner {
  private constructor(
    private readonly privateKey: KeyObject,
    readonly publicKeyPem: string,
  ) {}

  /** Loads the key at `keyFile`, creating it (mode 0600, atomically) when absent. */
  static fromKeyFile(keyFile: string): ReceiptSigner {
    if (!existsSync(keyFile)) {
      mkdirSync(path.dirname(keyFile), { recursive: true });
      const { privateKey } = generateKeyPairSync('ed25519');
      const temp = `${keyFile}.${process.pid}.tmp`;
      writeFileSync(temp, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
      renameSync(temp, keyFile);
    }
    const privateKey = createPrivateKey(readFileSync(keyFile));
    return new ReceiptSigner(privateKey, createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString());
  }

  sign(body: ReceiptBody): Receipt {
    const text = JSON.stringify(body);
    return { body: text, signature: sign(null, Buffer.from(text), this.privateKey).toString('base64') };
  }
}

/** Checks a receipt against a published public key (PEM). */
export function verifyReceipt(receipt: Receipt, publicKeyPem: string): boolean {
  return verify(null, Buffer.from(receipt.body), createPublicKey(publicKeyPem), Buffer.from(receipt.signature, 'base64'));
}
