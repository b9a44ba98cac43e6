/**
 * What a contributor hands to the receipt check, read strictly: one signed receipt
 * (`{body, signature}`, optionally with its `contributionId`), a list of them, the answer of
 * `GET /api/me/receipts` (`{receipts: […]}`), or the file the contribute page saves
 * (`{ceremony, coordinator, receiptPublicKey, signature, receipts: […]}`). Each receipt's body is
 * the exact JSON text the coordinator signed; it is parsed here only to know what to look for, and
 * the signature is checked over the text as given, never over a re-serialisation.
 * No imports beyond core's errors: the page and the CLI read receipts with this one module.
 */
import { CoordinatorError } from '../errors.ts';

/** What the coordinator signs for an accepted contribution (server/contributions/receipt-signer.ts). */
export interface ReceiptBody {
  ceremony: string;
  circuit: string;
  /** Position of the contribution in its circuit's chain (1 for the first after the initial key). */
  index: number;
  contributor: string;
  contributionHash: string;
  fileHash: string;
  acceptedAt: string;
}

export interface SignedReceipt {
  /** 1-based position in the file, for messages. */
  position: number;
  contributionId?: string;
  /** The signed text, byte for byte as the coordinator produced it. */
  bodyText: string;
  /** Ed25519 signature over the UTF-8 bytes of bodyText, base64. */
  signature: string;
  body: ReceiptBody;
}

export interface ReceiptsFile {
  receipts: SignedReceipt[];
  /** The coordinator key the saved file names (the page saves it); compared with the published one. */
  receiptPublicKey?: string;
  /** The coordinator's address the saved file names. */
  coordinator?: string;
}

/** A receipts file is a few kilobytes per circuit; anything this large is not one (refused before it is read). */
export const MAX_RECEIPTS_FILE_BYTES = 8 * 1024 * 1024;
/** At most this many receipts in one file: a contributor has one per circuit. */
const MAX_RECEIPTS = 1000;
const HASH512 = /^[0-9a-f]{128}$/;
const BASE64_SIGNATURE = /^[A-Za-z0-9+/]{86}==$/;

function malformed(why: string): CoordinatorError {
  return new CoordinatorError('receipt.malformed', why);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function parseBody(text: string, where: string): ReceiptBody {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw malformed(`${where}: its body is not JSON`);
  }
  if (!isObject(raw)) throw malformed(`${where}: its body is not a JSON object`);
  const textField = (name: string): string => {
    const value = raw[name];
    if (typeof value !== 'string' || value.length === 0) throw malformed(`${where}: its body has no ${name}`);
    return value;
  };
  const hashField = (name: string): string => {
    const value = textField(name);
    if (!HASH512.test(value))
      throw malformed(`${where}: its ${name} is not a BLAKE2b-512 hash (128 lowercase hex digits)`);
    return value;
  };
  const indexField = (): number => {
    const index = raw.index;
    if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 1)
      throw malformed(`${where}: its index is not a position in a chain (1 or more)`);
    return index;
  };
  return {
    ceremony: textField('ceremony'),
    circuit: textField('circuit'),
    index: indexField(),
    contributor: textField('contributor'),
    contributionHash: hashField('contributionHash'),
    fileHash: hashField('fileHash'),
    acceptedAt: textField('acceptedAt'),
  };
}

function parseReceipt(value: unknown, position: number, single: boolean): SignedReceipt {
  const where = single ? 'the receipt' : `receipt ${position}`;
  if (!isObject(value)) throw malformed(`${where} is not a JSON object with a body and a signature`);
  const { body, signature, contributionId } = value;
  if (typeof body !== 'string') throw malformed(`${where} has no body (the signed JSON text)`);
  if (typeof signature !== 'string' || !BASE64_SIGNATURE.test(signature))
    throw malformed(`${where} has no Ed25519 signature (64 bytes, base64)`);
  if (contributionId !== undefined && typeof contributionId !== 'string')
    throw malformed(`${where}: its contributionId is not text`);
  return {
    position,
    bodyText: body,
    signature,
    body: parseBody(body, where),
    ...(contributionId === undefined ? {} : { contributionId }),
  };
}

/** Reads a parsed JSON value in any of the accepted shapes. */
export function parseReceiptsJson(value: unknown): ReceiptsFile {
  let list: unknown[];
  let single = false;
  const file: Omit<ReceiptsFile, 'receipts'> = {};
  if (Array.isArray(value)) {
    list = value;
  } else if (isObject(value) && Array.isArray(value.receipts)) {
    list = value.receipts;
    if (value.receiptPublicKey !== undefined) {
      if (typeof value.receiptPublicKey !== 'string') throw malformed('its receiptPublicKey is not a PEM text');
      file.receiptPublicKey = value.receiptPublicKey;
    }
    if (typeof value.coordinator === 'string') file.coordinator = value.coordinator;
  } else if (isObject(value) && 'body' in value) {
    list = [value];
    single = true;
  } else {
    throw malformed('expected a receipt ({body, signature}), a list of them, or a receipts file ({receipts: […]})');
  }
  if (list.length === 0) throw malformed('it holds no receipt');
  if (list.length > MAX_RECEIPTS)
    throw malformed(`it holds ${list.length} receipts; at most ${MAX_RECEIPTS} are checked at once`);
  return { ...file, receipts: list.map((item, i) => parseReceipt(item, i + 1, single)) };
}

/** Reads the text of a receipts file (or a pasted receipt). */
export function parseReceiptsText(text: string): ReceiptsFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw malformed('it is not JSON: paste the whole receipts file, or one receipt from it');
  }
  return parseReceiptsJson(value);
}
