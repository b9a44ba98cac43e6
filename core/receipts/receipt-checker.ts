/**
 * From a signed receipt to "included in the final key of circuit X at position N", with what was
 * proven, the same in the page and in `ceremony verify-receipt`. Against the evidence of one
 * ceremony (a coordinator over HTTP, or a published folder), for each receipt, in this order:
 *
 *  1. it is a receipt of this ceremony (`receipt.other_ceremony`);
 *  2. its signature is the coordinator's published receipt key's (`receipt.bad_signature`);
 *  3. the public transcript, its hash chain recomputed, records that contribution at that position
 *     of that circuit with the same contribution hash, file hash and contributor
 *     (`receipt.not_in_transcript`);
 *  4. the final key of the circuit (before finalisation: the chain's head) is read by range: the
 *     bytes read (sections 1, 2, 3, 10) are the ones its transcript entry's section hashes name
 *     (`receipt.served_bytes_mismatch`); its history chains from its circuit hash as snarkjs
 *     requires, its header's δ is the last record's, and its circuit hash is the transcript's
 *     (`receipt.history_invalid`);
 *  5. that history lists the receipt's contribution hash at the receipt's position
 *     (`receipt.not_in_key`), and is the transcript's chain record for record, the beacon included
 *     (`receipt.history_invalid`);
 *  6. every later record's proof of knowledge and δ step verify, and e(δ1, g2) = e(g1, δ2)
 *     (receipt-pairings.ts: `receipt.proof_invalid`, `receipt.delta_mismatch`);
 *  7. the key's sections no contribution changes (1, 3–7) and its header's α, β, γ are contribution
 *     0's, by the transcript's section hashes and contribution 0's header read by range
 *     (key-sections.ts: `receipt.sections_changed`);
 *  8. any further check the caller adds (`extraKeyChecks`, once per circuit, e.g. the deployed
 *     verifier against the key's verification key).
 *
 * A receipt is honoured when the contributor's record is in the checked key's history, every later
 * record verified up to its δ: the same reasoning as the audit's default check of the final key
 * against contribution 0 (docs/audit.md), which needs nothing of the keys between. No receipt check
 * reads the L and H of any key, the contributor's own included. What it leaves to `ceremony audit`
 * (RESTS_ON_AUDIT, which every verdict carries): that contribution 0 is the key the circuit and the
 * powers of tau give, that the checked key's L and H are contribution 0's scaled to its δ (the
 * audit's default check; those of the contributor's own key, a key between, only `--every-link`
 * checks, and no verdict rests on them), and that the published files are byte for byte what the
 * transcript names. A transcript with format-1 entries (no section
 * hashes) is refused (`transcript.legacy_format`, `transcript.mixed_format`: steps 4's byte check and
 * 7 could not run) unless the caller allows it (`allowLegacyTranscript`, the CLI's
 * --allow-legacy-transcript; never the page), and then each verdict says what stayed unproven. With
 * `identifier`, a transcript whose last entry's hash is another is refused
 * (`transcript.identifier_mismatch`). The public key, the transcript and each key's reads and checks
 * happen once per checker, however many receipts share them.
 */
import { CoordinatorError, isCoordinatorError, type ErrorCode } from '../errors.ts';
import { checkPublicTranscript, type PublicChain, type PublicTranscript } from './public-transcript.ts';
import type { RangeSource } from './range-source.ts';
import { importReceiptKey, receiptSignatureValid, samePublicKey, type ReceiptKey } from './receipt-signature.ts';
import type { ReceiptsFile, SignedReceipt } from './receipts-file.ts';
import type * as ReceiptPairings from './receipt-pairings.ts';
import { checkFixedSections, checkServedSections, hasSectionHashes } from './key-sections.ts';
import {
  checkZkeyHistory,
  readZkeyHeader,
  readZkeyHistory,
  RECORD_TYPE,
  type HistoryRecord,
  type ZkeyHistory,
} from './zkey-history.ts';
import type { PublicTranscriptEntry } from './public-transcript.ts';
import { refuseLegacyTranscript } from '../transcript/legacy-transcript.ts';
import { checkCeremonyIdentifier } from '../transcript/ceremony-identifier.ts';
import { verificationKeyConstants, type VerificationKeyConstants } from './verification-key.ts';

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
  /**
   * Why the ceremony is a test network's (its keys then guard nothing), or undefined: what a check of
   * the deployed verifiers must say beside a match.
   */
  testNetwork?(): Promise<string | undefined>;
  /**
   * The bytes of `final/compiler.json` (how the verifiers compile; the `finalised` entry commits its
   * hash), undefined when there is none: what `--deployment` recompiles the verifiers with.
   */
  compilerRecord?(): Promise<Uint8Array | undefined>;
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
  /** The key's transcript entry (its beacon, or the head's), and contribution 0's. */
  entry: PublicTranscriptEntry;
  initEntry: PublicTranscriptEntry;
  /** The key as read: its sections 1, 2, 3 (with α, β, γ, δ and IC: its whole verification key) and 10. */
  read: ZkeyHistory;
  /** True when the bytes read were checked against the transcript's section hashes (format 2). */
  bytesBound: boolean;
  /** The key's verification key (α1, β2, γ2, δ2, IC) from the bytes read, in snarkjs's form. */
  verificationKey(): VerificationKeyConstants;
}

/**
 * A check the caller adds, run once per circuit after the key's own (`--deployment` plugs in here:
 * the deployed verifier against `key.verificationKey()`, read with the key and held to the transcript).
 * Resolves with what it established; throws a CoordinatorError for a verdict.
 */
export interface ExtraKeyCheck {
  /** Its step's name, e.g. "deployment". */
  step: string;
  /** What a passing verdict lists as proven, e.g. "the deployed verifier carries this key". */
  proves: string;
  run(key: CheckedKeyHistory): Promise<string>;
}

/** What no receipt check proves and the audit does (`ceremony audit DIR`, once, by anyone). */
export const RESTS_ON_AUDIT: readonly string[] = [
  "that contribution 0 is the key the circuit's r1cs and the pinned powers of tau give",
  "that the key's L and H (sections 8, 9) are contribution 0's scaled to its δ (the audit's default check; " +
    'the L and H of the key your own contribution made, a key between, only `ceremony audit --every-link` checks, ' +
    'and this verdict does not rest on them)',
  'that every published key file is, byte for byte, the one the transcript names',
];
/** What a format-1 transcript entry (whole-file hashes only) leaves to the audit besides: the key's… */
const UNBOUND_BYTES =
  'that the bytes this check read are the ones the coordinator recorded (a format-1 transcript entry has no ' +
  'section hashes to check them against)';
/** …and its or contribution 0's. */
const UNCHECKED_SECTIONS =
  "that the key's sections other than δ, L, H and its history, and its α, β, γ, are contribution 0's (a format-1 " +
  'transcript entry has no section hashes to compare)';

export type ReceiptVerdict =
  | {
      ok: true;
      receipt: SignedReceipt;
      circuit: string;
      index: number;
      key: 'final' | 'head';
      keyIndex: number;
      message: string;
      /** What this check proved, one phrase each. */
      proven: string[];
      /** What it leaves to the audit. */
      restsOnAudit: readonly string[];
      /** What a legacy transcript (allowed with allowLegacyTranscript) kept it from proving, if anything. */
      unproven?: string[];
    }
  | { ok: false; receipt: SignedReceipt; code: ErrorCode; message: string };

/** The checker's own steps; an extra check reports under its own step name. */
export type ReceiptStep = 'signature' | 'transcript' | 'key' | 'proofs' | 'sections';

export interface ReceiptCheckerOptions {
  /** Called as each check of a receipt passes, with what it established. */
  onStep?: (receipt: SignedReceipt, step: ReceiptStep | string, detail: string) => void;
  /** Checks added after the checker's own, once per circuit (see ExtraKeyCheck). */
  extraKeyChecks?: ExtraKeyCheck[];
  /**
   * Read a transcript with format-1 entries (whole-file hashes only) rather than refuse it; each verdict
   * then says what stayed unproven. The CLI's --allow-legacy-transcript; the page never sets it.
   */
  allowLegacyTranscript?: boolean;
  /** The ceremony identifier the reader compared out of band (parseIdentifier's): any other transcript is refused. */
  identifier?: string;
}

/** How to check a legacy transcript anyway: the same words on the page and in the terminal. */
const LEGACY_REMEDY =
  'To check it with what format 1 can prove, run `ceremony verify-receipt RECEIPTS.json DIR ' +
  '--allow-legacy-transcript` from your own checkout: its verdict says what stays unproven.';

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

/** The pairings run on ffjavascript's curve: loaded only once a receipt gets that far (the page splits it off). */
const pairings = (): Promise<typeof ReceiptPairings> => import('./receipt-pairings.ts');

/** How a check reports a step it passed (ReceiptCheckerOptions.onStep, for one receipt). */
type ReceiptStepReport = (name: ReceiptStep | string, detail: string) => void;

export class ReceiptChecker {
  private receiptKey?: Promise<ReceiptKey>;
  private transcript?: Promise<PublicTranscript>;
  private checkedTranscript?: Promise<PublicTranscript>;
  private ceremony?: Promise<string>;
  private readonly histories = new Map<string, Promise<CheckedKeyHistory>>();
  /** Per circuit and receipt position: how many later records verified; per circuit: δ2, sections, extras. */
  private readonly laterRecords = new Map<string, Promise<number>>();
  private readonly deltaPairs = new Map<string, Promise<void>>();
  private readonly fixedSections = new Map<string, Promise<string>>();
  private readonly extras = new Map<string, Promise<string>>();
  /** Contribution 0's reads, by circuit (its header, for the fixed sections' check). */
  private readonly initialSources = new Map<string, RangeSource>();

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

  /**
   * The transcript, its hash chain checked against the ceremony's genesis, held to the identifier
   * given and refused if it has format-1 entries (unless allowed): what every verdict rests on.
   */
  publicTranscript(): Promise<PublicTranscript> {
    return (this.checkedTranscript ??= (async () => {
      const transcript = await this.hashChainedTranscript();
      const source = `the transcript ${this.evidence.label} serves`;
      if (this.options.identifier !== undefined)
        checkCeremonyIdentifier(transcript.entries, this.options.identifier, source);
      refuseLegacyTranscript(transcript.entries, this.options.allowLegacyTranscript === true, source, LEGACY_REMEDY);
      return transcript;
    })());
  }

  /**
   * The transcript, its hash chain checked, whatever its format: what the page's search lists (which
   * proves only that the transcript records an entry). No verdict about a key rests on it alone.
   */
  hashChainedTranscript(): Promise<PublicTranscript> {
    return (this.transcript ??= (async () =>
      checkPublicTranscript(await this.ceremonyId(), await this.evidence.transcriptEntries(), this.evidence.label))());
  }

  /** The checked history of the final key of `circuit` (its head before finalisation), read once. */
  keyHistory(circuit: string): Promise<CheckedKeyHistory> {
    return once(this.histories, circuit, () => this.readKeyHistory(circuit));
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
    const key: CheckedKeyHistory['key'] = sealed ? 'final' : 'head';
    const index = sealed ? sealed.index! : chain.contributions.length;
    const entry = sealed ?? chain.contributions.at(-1) ?? chain.init;
    const source = this.evidence.keySource(circuit, key === 'final' ? { final: true } : { index });
    const read = await readZkeyHistory(source);
    // The bytes read must be those the transcript commits to before anything is concluded from them.
    const bytesBound = hasSectionHashes(entry);
    if (bytesBound) checkServedSections(read.sections, entry, describeKey({ key, circuit, index }), entryName(entry));
    const contributionHashes = checkZkeyHistory(read);
    if (hex(read.csHash) !== chain.init.circuitHash) {
      throw new CoordinatorError(
        'receipt.history_invalid',
        `${source.label}: its circuit hash is not the one the transcript's initial entry of ${circuit} records ` +
          '(it is a key of another circuit)',
      );
    }
    const checked = {
      ...{ circuit, key, index, contributionHashes, records: read.records, source },
      ...{ entry, initEntry: chain.init, read, bytesBound },
      verificationKey: () => verificationKeyConstants(read.sections.get(2)!, read.sections.get(3)!),
    };
    return { ...checked, transcriptMismatch: transcriptMismatch(chain, checked) };
  }

  /**
   * What checking `circuit` has read so far of its keys (the key's ranges and contribution 0's), and
   * the key's size: the page shows it, the tests and the bench measure it.
   */
  async readCost(circuit: string): Promise<{ bytesRead: number; requests: number; keySize: number } | undefined> {
    const history = await this.histories.get(circuit)?.catch(() => undefined);
    if (!history) return undefined;
    const initial = this.initialSources.get(circuit);
    return {
      bytesRead: history.source.bytesRead + (initial?.bytesRead ?? 0),
      requests: history.source.requests + (initial?.requests ?? 0),
      keySize: history.source.fileSize ?? 0,
    };
  }

  /** Every record after position `from` of the key of `circuit`: proofs of knowledge and δ steps. */
  private recordsAfter(history: CheckedKeyHistory, from: number): Promise<number> {
    return once(this.laterRecords, `${history.circuit}\0${from}`, async () =>
      (await pairings()).checkRecordsAfter(history.records, from, history.source.label),
    );
  }

  private deltaPair(history: CheckedKeyHistory): Promise<void> {
    return once(this.deltaPairs, history.circuit, async () =>
      (await pairings()).checkDeltaPair(history.read.headerDelta1, history.read.headerDelta2, history.source.label),
    );
  }

  /** The key's fixed sections and α, β, γ against contribution 0's; what was read, or why it could not run. */
  private sectionsAsInitial(history: CheckedKeyHistory): Promise<string> {
    return once(this.fixedSections, history.circuit, async () => {
      const { entry, initEntry, circuit } = history;
      if (!history.bytesBound || !hasSectionHashes(initEntry) || !hasSectionHashes(entry)) return 'format 1';
      const source = this.evidence.keySource(circuit, { index: 0 });
      this.initialSources.set(circuit, source);
      const initHeader = await readZkeyHeader(source);
      checkServedSections(new Map([[2, initHeader]]), initEntry, `contribution 0 of ${circuit}`, entryName(initEntry));
      const keyHeader = history.read.sections.get(2)!;
      checkFixedSections(entry, initEntry, keyHeader, initHeader, describeKey(history));
      return `${history.source.bytesRead + source.bytesRead} bytes read in all`;
    });
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
    const step: ReceiptStepReport = (name, detail) => this.options.onStep?.(receipt, name, detail);

    await this.checkSigned(receipt, file, step);
    await this.checkInTranscript(body, step);

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
        `from the circuit hash to the header's δ` +
        (history.bytesBound ? ", and the bytes read are the ones the transcript's section hashes name" : '') +
        ` (${history.source.bytesRead} bytes of ${history.source.fileSize} read)`,
    );
    const { proven, sectionsChecked } = await this.beyondHistory(history, body.index, step);
    const head = `the current head of ${body.circuit} (contribution ${history.index})`;
    const unproven = [
      ...(history.bytesBound ? [] : ['the bytes read NOT held to the transcript']),
      ...(sectionsChecked ? [] : ["the key's fixed sections and α, β, γ NOT checked against contribution 0's"]),
    ];
    const message =
      (history.key === 'final'
        ? `included in the final key of ${body.circuit} at position ${body.index}`
        : `included in ${head} at position ${body.index}; ` +
          `${body.circuit} is not finalised yet, so check again once it is`) +
      (unproven.length === 0
        ? ''
        : ` (LEGACY transcript, allowed: ${unproven.join('; ')}: format-1 entries hash whole files only)`);
    return {
      ok: true,
      receipt,
      circuit: body.circuit,
      index: body.index,
      key: history.key,
      keyIndex: history.index,
      message,
      proven: [
        "the coordinator's signature",
        'the transcript entry (hash chain recomputed)',
        "the contribution's record at its position in the key's own history, which is the transcript's chain",
        ...proven,
      ],
      restsOnAudit: [
        ...RESTS_ON_AUDIT,
        ...(history.bytesBound ? [] : [UNBOUND_BYTES]),
        ...(sectionsChecked ? [] : [UNCHECKED_SECTIONS]),
      ],
      ...(unproven.length === 0 ? {} : { unproven }),
    };
  }

  /** The receipt is for this ceremony and signed by the key it publishes. */
  private async checkSigned(
    receipt: SignedReceipt,
    file: Pick<ReceiptsFile, 'receiptPublicKey'> | undefined,
    step: ReceiptStepReport,
  ): Promise<void> {
    const { label } = this.evidence;
    const ceremony = await this.ceremonyId();
    if (receipt.body.ceremony !== ceremony) {
      throw new CoordinatorError(
        'receipt.other_ceremony',
        `this receipt is for ceremony "${receipt.body.ceremony}"; ${label} is ceremony "${ceremony}"`,
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
  }

  /** The transcript the coordinator serves records the receipt's contribution at its position. */
  private async checkInTranscript(body: SignedReceipt['body'], step: ReceiptStepReport): Promise<void> {
    const { label } = this.evidence;
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
  }

  /** Steps 6 to 8 of the header for a receipt at `position` of `history`; what each proved. */
  private async beyondHistory(
    history: CheckedKeyHistory,
    position: number,
    step: (name: ReceiptStep | string, detail: string) => void,
  ): Promise<{ proven: string[]; sectionsChecked: boolean }> {
    const where = describeKey(history);
    const later = await this.recordsAfter(history, position);
    await this.deltaPair(history);
    const records = later === 0 ? 'no record after it' : `records ${position + 1} to ${position + later}`;
    step(
      'proofs',
      `${records}: ${later === 0 ? '' : 'every proof of knowledge and δ step verified (pairings), so '}` +
        `the key's δ carries this contribution's secret; e(δ1, g2) = e(g1, δ2)`,
    );
    const proven = [
      "every later record's proof of knowledge and δ step, up to the key's δ (which so carries this contribution's " +
        'secret), and its δ in G2 paired with its δ in G1',
    ];
    const sections = await this.sectionsAsInitial(history);
    if (sections === 'format 1') {
      step('sections', 'not checked: the transcript is of format 1 (no section hashes); left to the audit');
    } else {
      step(
        'sections',
        `${where}: sections 1, 3–7 (IC, coefficients, A, B1, B2) and α, β, γ are contribution 0's ` +
          `(transcript section hashes, the bytes read checked against them; ${sections})`,
      );
      proven.push(
        "the key's IC, α, β, γ and other sections no contribution changes (1, 3–7) as contribution 0's, by the " +
          "transcript's section hashes, with the bytes read checked against them",
      );
    }
    for (const extra of this.options.extraKeyChecks ?? []) {
      step(extra.step, await once(this.extras, `${history.circuit}\0${extra.step}`, () => extra.run(history)));
      proven.push(extra.proves);
    }
    return { proven, sectionsChecked: sections !== 'format 1' };
  }
}

/** The promise `map` holds under `key`, made by `make` the first time (so work shared by receipts runs once). */
function once<T>(map: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let promise = map.get(key);
  if (!promise) {
    promise = make();
    map.set(key, promise);
  }
  return promise;
}

/** How messages name a transcript entry: "its beacon entry (entry 41)". */
const entryName = (entry: PublicTranscriptEntry): string =>
  `${entry.type === 'init' ? 'initial' : entry.type} entry (entry ${entry.seq})`;
