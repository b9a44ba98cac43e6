/**
 * Signed receipts for the steps of a contributor through the lobby that an acceptance receipt does
 * not cover: a join (in line for a circuit at a position), a refusal (with its code) and a removal
 * (with its reason). The coordinator signs each with its receipt key in the same transaction that
 * appends the step to the public queue log (server/lobby/queue-log-store.ts), and the receipt names
 * that entry by its place and hash, so a contributor can show what happened to them, and anyone
 * can check it against the published log: the signature, the log's hash chain, and the entry at
 * that place being that step (`receipt.not_in_queue_log` when the published log lacks it).
 * Isomorphic: the check runs in `ceremony verify-receipt` and could run in the page.
 */
import { CoordinatorError, isErrorCode, type ErrorCode } from '../errors.ts';
import type { QueueLogEntry, StepEntry } from '../queue-log/queue-log-entry.ts';
import { receiptSignatureValid, type ReceiptKey } from './receipt-signature.ts';
import type { SignedReceipt } from './receipts-file.ts';

/** The `kind` of a step receipt's body: acceptance receipts have none. */
const STEP_RECEIPT_KIND = 'queue-step';

export type ReceiptedStep = 'join' | 'refusal' | 'removal';

/** What the coordinator signs for a step. */
export interface StepReceiptBody {
  kind: typeof STEP_RECEIPT_KIND;
  ceremony: string;
  step: ReceiptedStep;
  circuit: string;
  /** The contributor's public id in the queue log. */
  contributor: string;
  name: string;
  /** The entry's time. */
  at: string;
  /** The queue-log entry of the step: its place (seq) and hash. */
  queueLog: { seq: number; hash: string };
  /** join: the place in the circuit's queue (1 = next). */
  position?: number;
  /** refusal: the code of the verdict. */
  code?: ErrorCode;
  /** removal: why. */
  reason?: 'missed_turns' | 'coordinator';
}

export interface SignedStepReceipt {
  /** 1-based place in the file, for messages. */
  position: number;
  bodyText: string;
  signature: string;
  body: StepReceiptBody;
}

const STEP_OF_ENTRY: Partial<Record<QueueLogEntry['type'], ReceiptedStep>> = {
  join: 'join',
  refused: 'refusal',
  removed: 'removal',
};

/** The receipt body of a queue-log entry, or undefined when its step gets no receipt. */
export function stepReceiptBody(ceremony: string, entry: StepEntry): StepReceiptBody | undefined {
  const step = STEP_OF_ENTRY[entry.type];
  if (step === undefined) return undefined;
  return {
    kind: STEP_RECEIPT_KIND,
    ceremony,
    step,
    circuit: entry.circuit,
    contributor: entry.contributor,
    name: entry.name,
    at: entry.time,
    queueLog: { seq: entry.seq, hash: entry.hash },
    ...(entry.type === 'join' ? { position: entry.position } : {}),
    ...(entry.type === 'refused' ? { code: entry.code } : {}),
    ...(entry.type === 'removed' ? { reason: entry.reason } : {}),
  };
}

const HASH512 = /^[0-9a-f]{128}$/;
const BASE64_SIGNATURE = /^[A-Za-z0-9+/]{86}==$/;
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const malformed = (why: string): CoordinatorError => new CoordinatorError('receipt.malformed', why);

/** Whether a receipt's body text is a step receipt's (its `kind`), without judging the rest. */
export function isStepReceiptText(bodyText: unknown): boolean {
  if (typeof bodyText !== 'string') return false;
  try {
    const body = JSON.parse(bodyText) as unknown;
    return isObject(body) && body.kind === STEP_RECEIPT_KIND;
  } catch {
    return false;
  }
}

function parseStepBody(text: string, where: string): StepReceiptBody {
  const raw = JSON.parse(text) as Record<string, unknown>;
  const textField = (name: string): string => {
    const value = raw[name];
    if (typeof value !== 'string' || value.length === 0) throw malformed(`${where}: its body has no ${name}`);
    return value;
  };
  const step = raw.step;
  if (step !== 'join' && step !== 'refusal' && step !== 'removal') throw malformed(`${where}: its step is unknown`);
  const place = raw.queueLog;
  if (
    !isObject(place) ||
    typeof place.seq !== 'number' ||
    !Number.isSafeInteger(place.seq) ||
    place.seq < 0 ||
    typeof place.hash !== 'string' ||
    !HASH512.test(place.hash)
  )
    throw malformed(`${where}: it names no queue-log entry (seq and BLAKE2b-512 hash)`);
  const body: StepReceiptBody = {
    kind: STEP_RECEIPT_KIND,
    ceremony: textField('ceremony'),
    step,
    circuit: textField('circuit'),
    contributor: textField('contributor'),
    name: textField('name'),
    at: textField('at'),
    queueLog: { seq: place.seq, hash: place.hash },
  };
  if (step === 'join') {
    if (typeof raw.position !== 'number' || !Number.isSafeInteger(raw.position) || raw.position < 1)
      throw malformed(`${where}: a join receipt without a position in line`);
    body.position = raw.position;
  }
  if (step === 'refusal') {
    if (!isErrorCode(raw.code)) throw malformed(`${where}: a refusal receipt without a known code`);
    body.code = raw.code;
  }
  if (step === 'removal') {
    if (raw.reason !== 'missed_turns' && raw.reason !== 'coordinator')
      throw malformed(`${where}: a removal receipt without a known reason`);
    body.reason = raw.reason;
  }
  return body;
}

/**
 * The step receipts a receipts file holds: its `steps` list (the answer of `GET /api/me/receipts`,
 * the file the page or `--receipts` saves), or the file itself when it is one step receipt. Acceptance
 * receipts are left to receipts-file.ts. Throws `receipt.malformed` for a step receipt that is not one.
 */
export function parseStepReceipts(value: unknown): SignedStepReceipt[] {
  const list: unknown[] = isObject(value) && Array.isArray(value.steps) ? value.steps : [];
  if (isObject(value) && isStepReceiptText(value.body)) list.push(value);
  return list.map((item, i) => {
    const where = `step receipt ${i + 1}`;
    if (!isObject(item) || typeof item.body !== 'string' || !isStepReceiptText(item.body))
      throw malformed(`${where} is not a signed step receipt ({body, signature})`);
    if (typeof item.signature !== 'string' || !BASE64_SIGNATURE.test(item.signature))
      throw malformed(`${where} has no Ed25519 signature (64 bytes, base64)`);
    return { position: i + 1, bodyText: item.body, signature: item.signature, body: parseStepBody(item.body, where) };
  });
}

/** "join register, position 3 (github:42)": how messages name a step receipt. */
export function stepReceiptSubject(receipt: SignedStepReceipt): string {
  const { body } = receipt;
  const detail =
    body.step === 'join'
      ? `, position ${body.position}`
      : body.step === 'refusal'
        ? ` [${body.code}]`
        : ` (${body.reason})`;
  return `${body.step} ${body.circuit}${detail} (${body.contributor})`;
}

export type StepReceiptVerdict =
  | { ok: true; receipt: SignedStepReceipt; message: string }
  | { ok: false; receipt: SignedStepReceipt; code: ErrorCode; message: string };

/** The entry's own account of the step, compared field by field with the receipt's. */
function differences(body: StepReceiptBody, entry: QueueLogEntry): string[] {
  const expected = entry.type === 'rules' ? undefined : stepReceiptBody(body.ceremony, entry);
  if (!expected) return [`the entry is a ${entry.type} entry`];
  return (['step', 'circuit', 'contributor', 'name', 'at', 'position', 'code', 'reason'] as const).filter(
    (field) => expected[field] !== body[field],
  );
}

/**
 * One step receipt against a ceremony's published (or served) queue log, already checked
 * (checkQueueLog), and its receipt key: the ceremony, the signature, and the entry it names.
 */
export async function checkStepReceipt(
  receipt: SignedStepReceipt,
  evidence: { ceremonyId: string; key: ReceiptKey; log: readonly QueueLogEntry[]; label: string },
): Promise<StepReceiptVerdict> {
  const { body } = receipt;
  const fail = (code: ErrorCode, message: string): StepReceiptVerdict => ({ ok: false, receipt, code, message });
  if (body.ceremony !== evidence.ceremonyId)
    return fail(
      'receipt.other_ceremony',
      `this receipt is for ceremony "${body.ceremony}"; ${evidence.label} is ceremony "${evidence.ceremonyId}"`,
    );
  // receiptSignatureValid reads the signed text and the signature only.
  if (!(await receiptSignatureValid(evidence.key, receipt as unknown as SignedReceipt)))
    return fail(
      'receipt.bad_signature',
      `its signature is not the coordinator's: it does not verify against the receipt key ${evidence.label} publishes`,
    );
  const { seq, hash } = body.queueLog;
  const entry = evidence.log[seq];
  if (!entry)
    return fail(
      'receipt.not_in_queue_log',
      `the queue log ${evidence.label} publishes has ${evidence.log.length} entries, not the entry ${seq} ` +
        'this receipt names: the step it records is not in the published log',
    );
  if (entry.hash !== hash)
    return fail(
      'receipt.not_in_queue_log',
      `entry ${seq} of the queue log ${evidence.label} publishes is not the entry this receipt names ` +
        '(another hash): the log was rewritten after the receipt was signed',
    );
  const differ = differences(body, entry);
  if (differ.length > 0)
    return fail(
      'receipt.not_in_queue_log',
      `entry ${seq} of the queue log does not record this step: its ${differ.join(', ')} differ from the receipt's`,
    );
  return {
    ok: true,
    receipt,
    message: `recorded as entry ${seq} of ${evidence.log.length} of the queue log (hash chain recomputed)`,
  };
}
