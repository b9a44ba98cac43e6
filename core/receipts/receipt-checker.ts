/**
 * From a signed receipt to "included in the final key of circuit X at position N, checked", the
 * same in the page and in `ceremony verify-receipt`. Against the evidence of one ceremony (a
 * coordinator over HTTP, or a published folder), for each receipt, in this order:
 *
 *  1. it is a receipt of this ceremony (`receipt.other_ceremony`);
 *  2. its signature is the coordinator's published receipt key's (`receipt.bad_signature`);
 *  3. the public transcript, its hash chain recomputed, records that contribution at that position
 *     of that circuit with the same contribution hash, file hash and contributor
 *     (`receipt.not_in_transcript`);
 *  4. the final key of the circuit (before finalisation: the chain's head) holds together: its own
 *     contribution history, read by byte ranges, chains from its circuit hash as snarkjs requires,
 *     its header's δ is the last record's, and its circuit hash is the one the transcript's init
 *     entry records (`receipt.history_invalid`);
 *  5. that history lists the receipt's contribution hash at the receipt's position
 *     (`receipt.not_in_key`: the key descends from another head);
 *  6. and the history is the transcript's chain record for record, the beacon included
 *     (`receipt.history_invalid`).
 *
 * What it leaves to `ceremony audit`: the pairing checks of every record (each δ step made with the
 * secret its proof of knowledge shows) and every point of the key (that L, H and the rest match δ
 * and the circuit). The public key, the transcript and each key's history are fetched once per
 * checker, however many receipts share them.
 */
import { CoordinatorError, isCoordinatorError, type ErrorCode } from '../errors.ts';
import { checkPublicTranscript, type PublicChain, type PublicTranscript } from './public-transcript.ts';
import type { RangeSource } from './range-source.ts';
import { importReceiptKey, receiptSignatureValid, samePublicKey, type ReceiptKey } from './receipt-signature.ts';
import type { ReceiptsFile, SignedReceipt } from './receipts-file.ts';
import { checkZkeyHistory, readZkeyHistory, RECORD_TYPE, type HistoryRecord } from './zkey-history.ts';

/** Where a ceremony's public evidence comes from: a coordinator, or a published folder. */
export interface ReceiptEvidence {
  /** How messages name it: "the coordinator at https://…", "the publication ./ceremony". */
  readonly label: string;
  ceremonyId(): Promise<string>;
  receiptPublicKeyPem(): Promise<string>;
  /** The transcript's entries, parsed from JSON (checked here). */
  transcriptEntries(): Promise<unknown>;
  /** Byte ranges of the final key of `circuit`, or of contribution `index` of its chain. */
  keySource(circuit: string, key: { final: true } | { index: number }): RangeSource;
}

/** A key's history, checked, as the receipts of one circuit share it. */
export interface CheckedKeyHistory {
  circuit: string;
  /** `final` once the circuit is finalised; before that, the chain's head. */
  key: 'final' | 'head';
  /** Index of the head (key `head`), or of the beacon (key `final`). */
  index: number;
  /** Contribution hash of each record, in order (record n at [n - 1]). */
  contributionHashes: string[];
  records: HistoryRecord[];
  /** Why the history is not the transcript's chain, if it is not (reported after a receipt's own presence). */
  transcriptMismatch?: string;
  /** What reading it cost. */
  source: RangeSource;
}

export type ReceiptVerdict =
  | {
      ok: true;
      receipt: SignedReceipt;
      circuit: string;
      index: number;
      key: 'final' | 'head';
      keyIndex: number;
      message: string;
    }
  | { ok: false; receipt: SignedReceipt; code: ErrorCode; message: string };

export type ReceiptStep = 'signature' | 'transcript' | 'key';

export interface ReceiptCheckerOptions {
  /** Called as each check of a receipt passes, with what it established. */
  onStep?: (receipt: SignedReceipt, step: ReceiptStep, detail: string) => void;
}

const describeKey = (history: Pick<CheckedKeyHistory, 'key' | 'circuit' | 'index'>): string =>
  history.key === 'final'
    ? `the final key of ${history.circuit}`
    : `the current head of ${history.circuit} (contribution ${history.index})`;

/** The receipt's subject, for messages: "register #3 (alice)". */
/** "1 record", "3 records". */
const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;
/** The start of a hash, enough to tell hashes apart in a message. */
const short = (hash: string): string => `${hash.slice(0, 16)}…`;
const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

export function receiptSubject(receipt: SignedReceipt): string {
  return `${receipt.body.circuit} #${receipt.body.index} (${receipt.body.contributor})`;
}

function transcriptMismatch(
  chain: PublicChain,
  history: Omit<CheckedKeyHistory, 'transcriptMismatch'>,
): string | undefined {
  const expected = [...chain.contributions, ...(history.key === 'final' && chain.beacon ? [chain.beacon] : [])];
  const { records, contributionHashes } = history;
  for (let i = 0; i < Math.min(expected.length, records.length); i++) {
    const entry = expected[i]!;
    if (contributionHashes[i] !== entry.contributionHash) {
      const theirs = `the transcript's ${entry.type} ${i + 1} (${short(entry.contributionHash!)})`;
      return `its record ${i + 1} (contribution hash ${short(contributionHashes[i]!)}) is not ${theirs}`;
    }
    const wantType = entry.type === 'beacon' ? RECORD_TYPE.beacon : RECORD_TYPE.contribution;
    if (records[i]!.type !== wantType) {
      return `its record ${i + 1} is not a ${entry.type}, as the transcript's entry is`;
    }
  }
  if (records.length !== expected.length) {
    const andBeacon = history.key === 'final' ? ' and the beacon' : '';
    const chainHas = `${count(chain.contributions.length, 'contribution')}${andBeacon}`;
    return `it has ${count(records.length, 'record')}, the transcript's chain ${expected.length} (${chainHas})`;
  }
  if (history.key === 'final' && chain.beacon) {
    const beacon = records.at(-1)!;
    const beaconHex = beacon.beaconHash ? hex(beacon.beaconHash) : '';
    if (beaconHex !== chain.beacon.beacon || beacon.numIterationsExp !== chain.beacon.iterationsExp) {
      return 'its beacon record is not the beacon the transcript announces';
    }
  }
  return undefined;
}

export class ReceiptChecker {
  private receiptKey?: Promise<ReceiptKey>;
  private transcript?: Promise<PublicTranscript>;
  private ceremony?: Promise<string>;
  private readonly histories = new Map<string, Promise<CheckedKeyHistory>>();

  constructor(
    readonly evidence: ReceiptEvidence,
    private readonly options: ReceiptCheckerOptions = {},
  ) {}

  ceremonyId(): Promise<string> {
    return (this.ceremony ??= this.evidence.ceremonyId());
  }

  key(): Promise<ReceiptKey> {
    return (this.receiptKey ??= this.evidence
      .receiptPublicKeyPem()
      .then((pem) => importReceiptKey(pem, this.evidence.label)));
  }

  /** The transcript, its hash chain checked against the ceremony's genesis. */
  publicTranscript(): Promise<PublicTranscript> {
    return (this.transcript ??= (async () =>
      checkPublicTranscript(await this.ceremonyId(), await this.evidence.transcriptEntries(), this.evidence.label))());
  }

  /** The checked history of the final key of `circuit` (its head before finalisation), read once. */
  keyHistory(circuit: string): Promise<CheckedKeyHistory> {
    let history = this.histories.get(circuit);
    if (!history) {
      history = this.readKeyHistory(circuit);
      this.histories.set(circuit, history);
    }
    return history;
  }

  private async readKeyHistory(circuit: string): Promise<CheckedKeyHistory> {
    const transcript = await this.publicTranscript();
    const chain = transcript.chains.get(circuit);
    if (!chain?.init)
      throw new CoordinatorError(
        'receipt.not_in_transcript',
        `the transcript ${this.evidence.label} serves has no circuit ${circuit}`,
      );
    // Final keys are public once the ceremony is finalised (every circuit sealed); until then, and
    // while a finalisation is under way, the chain's head is the key contributions build on.
    const sealed = transcript.finalised ? chain.beacon : undefined;
    const key = sealed ? 'final' : 'head';
    const index = sealed ? sealed.index! : chain.contributions.length;
    const source = this.evidence.keySource(circuit, key === 'final' ? { final: true } : { index });
    const history = await readZkeyHistory(source);
    const contributionHashes = checkZkeyHistory(history);
    if (hex(history.csHash) !== chain.init.circuitHash) {
      throw new CoordinatorError(
        'receipt.history_invalid',
        `${source.label}: its circuit hash is not the one the transcript's initial entry of ${circuit} records ` +
          '(it is a key of another circuit)',
      );
    }
    const checked = { circuit, key, index, contributionHashes, records: history.records, source } as const;
    return { ...checked, transcriptMismatch: transcriptMismatch(chain, checked) };
  }

  /** One receipt's verdict; a refusal is a verdict (never thrown), so one receipt never stops the others. */
  async check(receipt: SignedReceipt, file?: Pick<ReceiptsFile, 'receiptPublicKey'>): Promise<ReceiptVerdict> {
    try {
      return await this.checkOrThrow(receipt, file);
    } catch (error) {
      if (isCoordinatorError(error)) return { ok: false, receipt, code: error.code, message: error.message };
      throw error;
    }
  }

  private async checkOrThrow(
    receipt: SignedReceipt,
    file?: Pick<ReceiptsFile, 'receiptPublicKey'>,
  ): Promise<ReceiptVerdict> {
    const { body } = receipt;
    const { label } = this.evidence;
    const step = (name: ReceiptStep, detail: string): void => this.options.onStep?.(receipt, name, detail);

    const ceremony = await this.ceremonyId();
    if (body.ceremony !== ceremony) {
      throw new CoordinatorError(
        'receipt.other_ceremony',
        `this receipt is for ceremony "${body.ceremony}"; ${label} is ceremony "${ceremony}"`,
      );
    }

    const key = await this.key();
    if (!(await receiptSignatureValid(key, receipt))) {
      const otherKey =
        file?.receiptPublicKey !== undefined &&
        !samePublicKey(file.receiptPublicKey, await this.evidence.receiptPublicKeyPem());
      throw new CoordinatorError(
        'receipt.bad_signature',
        `its signature is not the coordinator's: it does not verify against the receipt key ${label} publishes ` +
          `(SHA-256 ${short(key.fingerprint)}), so the receipt was altered or this coordinator did not sign it` +
          (otherKey ? '; the receipts file names another key than the published one' : ''),
      );
    }
    step('signature', `signed by the coordinator's receipt key (SHA-256 ${short(key.fingerprint)})`);

    const transcript = await this.publicTranscript();
    const chain = transcript.chains.get(body.circuit);
    if (!chain)
      throw new CoordinatorError(
        'receipt.not_in_transcript',
        `the transcript ${label} serves has no circuit ${body.circuit}`,
      );
    const entry = chain.contributions[body.index - 1];
    if (!entry) {
      throw new CoordinatorError(
        'receipt.not_in_transcript',
        `the transcript has no contribution ${body.index} of ${body.circuit}: ` +
          `its chain has ${chain.contributions.length}`,
      );
    }
    const differs = (['contributionHash', 'fileHash', 'contributor'] as const).filter(
      (field) => entry[field] !== body[field],
    );
    if (differs.length > 0) {
      throw new CoordinatorError(
        'receipt.not_in_transcript',
        `the transcript records another contribution as ${body.circuit} #${body.index}: ` +
          `its ${differs.join(', ')} ${differs.length === 1 ? 'differs' : 'differ'} from the receipt's ` +
          `(transcript: contribution hash ${short(entry.contributionHash!)} by ${entry.contributor}; ` +
          `receipt: ${short(body.contributionHash)} by ${body.contributor})`,
      );
    }
    step(
      'transcript',
      `recorded as contribution ${body.index} of ${body.circuit} ` +
        `(transcript entry ${entry.seq} of ${transcript.entries.length}, hash chain recomputed)`,
    );

    const history = await this.keyHistory(body.circuit);
    const where = describeKey(history);
    const found = history.contributionHashes.indexOf(body.contributionHash);
    if (found !== body.index - 1) {
      const records = history.contributionHashes.length;
      throw new CoordinatorError(
        'receipt.not_in_key',
        found >= 0
          ? `${where} lists this contribution at position ${found + 1}, not ${body.index}`
          : `${where} does not descend from this contribution: its own history of ${count(records, 'record')} ` +
              'does not list it' +
              (history.key === 'final'
                ? ' (the final key was made from another head than the chain the transcript records)'
                : ''),
      );
    }
    if (history.transcriptMismatch) {
      throw new CoordinatorError(
        'receipt.history_invalid',
        `${where} lists this contribution, but its history is not the transcript's chain: ` +
          history.transcriptMismatch,
      );
    }
    step(
      'key',
      `${where} lists it at position ${body.index} of ${history.contributionHashes.length}; its history chains ` +
        `from the circuit hash to the header's δ ` +
        `(${history.source.bytesRead} bytes of ${history.source.fileSize} read)`,
    );
    const message =
      history.key === 'final'
        ? `included in the final key of ${body.circuit} at position ${body.index}, checked`
        : `included in the current head of ${body.circuit} (contribution ${history.index}) ` +
          `at position ${body.index}, ` +
          `checked; ${body.circuit} is not finalised yet, so check again once it is`;
    return {
      ok: true,
      receipt,
      circuit: body.circuit,
      index: body.index,
      key: history.key,
      keyIndex: history.index,
      message,
    };
  }
}
