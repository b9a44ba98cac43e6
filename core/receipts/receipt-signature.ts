/**
 * The coordinator's receipt signature, checked with WebCrypto's Ed25519 (the same API in the
 * browser and in Node, so the page and `ceremony verify-receipt` run this one code). A receipt
 * is valid when its body text, as UTF-8 bytes, carries an Ed25519 signature by the key the
 * coordinator publishes (`GET /api/receipt-key`, `receipt-public-key.pem` of a publication).
 * A browser without Ed25519 in WebCrypto is told so (`receipt.key_unavailable`) rather than
 * given a verdict it could not reach.
 */
import { CoordinatorError } from '../errors.ts';
import type { SignedReceipt } from './receipts-file.ts';

export interface ReceiptKey {
  /** The SubjectPublicKeyInfo bytes (DER) of the key, as published in PEM. */
  der: Uint8Array<ArrayBuffer>;
  key: CryptoKey;
  /** SHA-256 of the DER bytes, hex: how the page and the CLI name the key. */
  fingerprint: string;
}

const PEM_PUBLIC_KEY = /^-----BEGIN PUBLIC KEY-----\r?\n([A-Za-z0-9+/=\r\n]+)-----END PUBLIC KEY-----\s*$/;

const toHex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/\s+/g, ''));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The DER bytes of a PEM public key, or undefined when `pem` is not one (a private key is not). */
export function publicKeyDer(pem: string): Uint8Array<ArrayBuffer> | undefined {
  const match = PEM_PUBLIC_KEY.exec(pem.trim() + '\n');
  if (!match) return undefined;
  try {
    return base64Bytes(match[1]!);
  } catch {
    return undefined;
  }
}

/** True when two PEM texts hold the same public key (whatever their line breaks). */
export function samePublicKey(a: string, b: string): boolean {
  const [x, y] = [publicKeyDer(a), publicKeyDer(b)];
  return x !== undefined && y !== undefined && x.length === y.length && x.every((byte, i) => byte === y[i]);
}

/** Imports the receipt key `pem` published by `source` (named in messages). */
export async function importReceiptKey(pem: string, source: string): Promise<ReceiptKey> {
  const der = publicKeyDer(pem);
  if (!der)
    throw new CoordinatorError(
      'receipt.key_unavailable',
      `the receipt key ${source} publishes is not a PEM public key`,
    );
  const subtle = globalThis.crypto?.subtle;
  if (!subtle)
    throw new CoordinatorError(
      'receipt.key_unavailable',
      'this environment has no WebCrypto, so Ed25519 signatures cannot be checked here',
    );
  let key: CryptoKey;
  try {
    key = await subtle.importKey('spki', der, { name: 'Ed25519' }, false, ['verify']);
  } catch (error) {
    if ((error as Error).name === 'NotSupportedError') {
      throw new CoordinatorError(
        'receipt.key_unavailable',
        'this browser’s WebCrypto has no Ed25519, so the receipt’s signature cannot be checked here; ' +
          'use a current browser or `ceremony verify-receipt`',
      );
    }
    throw new CoordinatorError(
      'receipt.key_unavailable',
      `the receipt key ${source} publishes is not an Ed25519 public key`,
    );
  }
  const fingerprint = toHex(new Uint8Array(await subtle.digest('SHA-256', der)));
  return { der, key, fingerprint };
}

/** Whether `receipt`'s signature is `key`'s over its body text. */
export async function receiptSignatureValid(key: ReceiptKey, receipt: SignedReceipt): Promise<boolean> {
  const signature = base64Bytes(receipt.signature);
  return globalThis.crypto.subtle.verify(
    { name: 'Ed25519' },
    key.key,
    signature,
    new TextEncoder().encode(receipt.bodyText),
  );
}
