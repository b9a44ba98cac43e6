/**
 * The public queue log: every step of every contributor through the lobby (joins, presence, turns
 * granted, taken and lapsed, verdicts, leaves, removals), one JSON object a line, hash-chained as
 * the transcript is (core/transcript/hash-chain.ts, genesis kind `queue-log`). Its first entry
 * (and another after any change) states the rules the lobby applies, so an auditor can replay the
 * log and check that every turn went to the one the rules put first (check-queue-fairness.ts).
 *
 * Contributors are named by a public id that is stable within the ceremony: `github:<numeric id>`,
 * `demo:<name>`, or `anonymous:<16 hex digits>` for a Semaphore contributor: a pseudonym drawn at
 * random when the contributor first joins, kept by the coordinator only, so the log never ties an
 * anonymous contributor to their nullifier or to another ceremony. `name` is the name the
 * transcript gives them (a GitHub login; `anonymous`).
 *
 * Isomorphic (no `node:` imports): the coordinator, the audit, `verify-receipt` and the public
 * page read the log with this one module.
 */
import { CoordinatorError, isErrorCode, type ErrorCode } from '../errors.ts';
import { chainBreak, chainGenesisHash } from '../transcript/hash-chain.ts';

/** Where the log lives in a data folder and in a publication, beside the transcript. */
export const QUEUE_LOG_FILE = 'transcript/queue-log.jsonl';

/**
 * The most entries a queue log may have (370 contributions log a few thousand): `ceremony fetch`
 * downloads no more and the audit reads no more, so a log crafted by its coordinator cannot make
 * either hold or replay an unbounded one.
 */
export const QUEUE_LOG_MAX_ENTRIES = 1_000_000;

/**
 * The format of the entries, stated by every `rules` entry; a change that is not an addition bumps it.
 * 2: every turn ended without a contribution is a missed turn, counted for good (turn-order.ts).
 */
export const QUEUE_LOG_FORMAT_VERSION = 2;

/** How a contributor came to be at the back of a circuit's queue. */
export type JoinCause =
  /** The contributor joined (a new count of missed turns starts). */
  | 'join'
  /** A join with another choice of circuits took the entry out of its queue (`left`) for the first circuit it keeps. */
  | 'choice'
  /** Their contribution to the circuit before was accepted: on to the next circuit. */
  | 'accepted'
  /** Their contribution was refused (or could not be verified, or no longer fitted): in line again. */
  | 'refused'
  /** They missed a turn (not its first miss there, if never taken): in line again after the cooldown (`eligibleAt`). */
  | 'missed';

export interface QueueRules {
  /** Format version of the log (QUEUE_LOG_FORMAT_VERSION). */
  version: number;
  /** The circuits, in the order every contributor goes through them. */
  circuits: string[];
  /** A waiting entry not seen for this long is away (passed over, place kept); 0: presence is off. */
  presenceMs: number;
  /** A granted turn not taken within this passes on, a missed turn; 0: no such deadline. */
  takeTurnMs: number;
  /**
   * Standby (turn-order.ts standbyDepth): from this long after its grant, a turn not yet taken may
   * be taken by the entry next in line too, and by one more entry every further standbyStepMs; 0
   * or absent (logs written before this rule): a turn is its grantee's alone until takeTurnMs.
   */
  takePriorityMs?: number;
  /**
   * Standby's step (turn-order.ts statedStandby): from 1 ms to takePriorityMs. Absent (logs written
   * before the step, and a lobby whose step is its priority): takePriorityMs.
   */
  standbyStepMs?: number;
  turnTimeoutMs: number;
  /**
   * A taken turn whose client sends nothing (heartbeat, download, upload) for this long is missed,
   * before its deadline; 0 or absent (logs written before this rule): no such end.
   */
  turnSilenceMs?: number;
  /**
   * A contributor whose presence stream closed is gone this long after the close, unless seen
   * again; 0 or absent (logs written before this rule): a closed stream means nothing.
   */
  disconnectGraceMs?: number;
  /** A taken turn none of whose upload arrived within this of its grant is missed; 0: no such end. */
  uploadStartMs: number;
  /** A taken turn whose upload, once started, stops making progress for this long is missed; 0: no such end. */
  uploadStallMs: number;
  maxTurnMs: number;
  /** After a missed turn the entry is eligible again after this. */
  cooldownMs: number;
  /** Missed turns in one circuit after which the entry leaves the queue. */
  maxMissedTurns: number;
}

interface Chained {
  seq: number;
  /** ISO 8601 with milliseconds, the coordinator's clock. */
  time: string;
  prevHash: string;
  hash: string;
}

interface Step {
  circuit: string;
  /** The contributor's public id (see the module header). */
  contributor: string;
  /** The name the transcript gives the contributor. */
  name: string;
}

export type QueueLogEvent =
  | ({ type: 'rules' } & QueueRules)
  | ({ type: 'join'; position: number; via: JoinCause; eligibleAt?: string } & Step)
  /** disconnectedAt: passed over because their presence stream closed then (and they were not seen since). */
  | ({ type: 'away'; seenAt: string; disconnectedAt?: string } & Step)
  | ({ type: 'back' } & Step)
  | ({ type: 'granted'; deadline: string; takeBy?: string } & Step)
  | ({ type: 'taken' } & Step)
  /**
   * A turn ended unused, a missed turn (`missedTurns`: the holder's misses in the circuit, this one
   * included). silentSince: taken, its client silent since then; disconnectedAt: passed on (not
   * taken) or missed (taken) because its holder's presence stream closed then and they were not
   * seen again within the grace; uploadDue: taken, no byte of its upload arrived by then (its grant
   * + uploadStartMs); uploadStalledSince: taken, its upload made no progress since then;
   * takenOverBy: not taken, and taken on standby by that contributor (their public id), whose
   * `granted` and `taken` follow at the same time (turn-order.ts mayTakeOnStandby, over the queue
   * as it was before this entry), after the `skipped` entries of those offered it before them.
   */
  | ({
      type: 'lapsed';
      taken: boolean;
      missedTurns?: number;
      takenOverBy?: string;
      silentSince?: string;
      disconnectedAt?: string;
      uploadDue?: string;
      uploadStalledSince?: string;
    } & Step)
  /**
   * A waiting entry offered a turn on standby let it pass: the contributor `takenOverBy` (public
   * id), offered it after them, took it (turn-order.ts offeredBefore). A missed turn, not taken, of
   * theirs (`missedTurns`), with its consequence as for a grantee's: passed on in place the first
   * time (its `away` unchanged), else a `join` at the back or a `removed` follows. Logged right
   * after the grantee's `lapsed`, in the order the entries were offered the turn.
   */
  | ({ type: 'skipped'; takenOverBy: string; missedTurns: number } & Step)
  /** missedTurns: set when the verdict counts as a missed turn (a refusal, an error the upload caused). */
  | ({ type: 'refused'; code: ErrorCode; outcome: 'refused' | 'error' | 'discarded'; missedTurns?: number } & Step)
  | ({ type: 'accepted'; index: number; transcriptHash: string } & Step)
  /** missedTurns: set when a turn was left (a missed turn). */
  | ({ type: 'left'; from: 'waiting' | 'turn' | 'after_verdict'; missedTurns?: number } & Step)
  | ({ type: 'removed'; reason: 'missed_turns' | 'coordinator' } & Step);

export type QueueLogEntry = QueueLogEvent & Chained;
export type QueueLogEntryType = QueueLogEvent['type'];
export type StepEntry = Exclude<QueueLogEntry, { type: 'rules' }>;

export const QUEUE_LOG_ENTRY_TYPES = [
  'rules',
  'join',
  'away',
  'back',
  'granted',
  'taken',
  'lapsed',
  'skipped',
  'refused',
  'accepted',
  'left',
  'removed',
] as const satisfies readonly QueueLogEntryType[];

export function queueLogGenesisHash(ceremonyId: string): string {
  return chainGenesisHash('queue-log', ceremonyId);
}

const HASH512 = /^[0-9a-f]{128}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const text = (v: unknown): boolean => typeof v === 'string' && v.length > 0 && v.length <= 200;
const time = (v: unknown): boolean => typeof v === 'string' && ISO_TIME.test(v) && !Number.isNaN(Date.parse(v));
const count = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const oneOf =
  (...values: readonly unknown[]) =>
  (v: unknown): boolean =>
    values.includes(v);
const optional =
  (check: (v: unknown) => boolean) =>
  (v: unknown): boolean =>
    v === undefined || check(v);

const STEP = { circuit: text, contributor: text, name: text };
/** The fields of each type and what each must look like; no other field is allowed. */
const SHAPES: Record<QueueLogEntryType, Record<string, (v: unknown) => boolean>> = {
  rules: {
    version: (v) => v === QUEUE_LOG_FORMAT_VERSION,
    circuits: (v) => Array.isArray(v) && v.length > 0 && v.every(text),
    presenceMs: count,
    takeTurnMs: count,
    takePriorityMs: optional(count),
    standbyStepMs: optional((v) => count(v) && (v as number) >= 1),
    turnTimeoutMs: count,
    turnSilenceMs: optional(count),
    disconnectGraceMs: optional(count),
    uploadStartMs: count,
    uploadStallMs: count,
    maxTurnMs: count,
    cooldownMs: count,
    maxMissedTurns: (v) => count(v) && (v as number) >= 1,
  },
  join: {
    ...STEP,
    position: (v) => count(v) && (v as number) >= 1,
    via: oneOf('join', 'choice', 'accepted', 'refused', 'missed'),
    eligibleAt: optional(time),
  },
  away: { ...STEP, seenAt: time, disconnectedAt: optional(time) },
  back: STEP,
  granted: { ...STEP, deadline: time, takeBy: optional(time) },
  taken: STEP,
  lapsed: {
    ...STEP,
    taken: (v) => typeof v === 'boolean',
    missedTurns: optional(count),
    takenOverBy: optional(text),
    silentSince: optional(time),
    disconnectedAt: optional(time),
    uploadDue: optional(time),
    uploadStalledSince: optional(time),
  },
  skipped: { ...STEP, takenOverBy: STEP.contributor, missedTurns: (v) => count(v) && (v as number) >= 1 },
  refused: {
    ...STEP,
    code: isErrorCode,
    outcome: oneOf('refused', 'error', 'discarded'),
    missedTurns: optional(count),
  },
  accepted: {
    ...STEP,
    index: (v) => count(v) && (v as number) >= 1,
    transcriptHash: (v) => typeof v === 'string' && HASH512.test(v),
  },
  left: { ...STEP, from: oneOf('waiting', 'turn', 'after_verdict'), missedTurns: optional(count) },
  removed: { ...STEP, reason: oneOf('missed_turns', 'coordinator') },
};
const CHAINED = new Set(['seq', 'time', 'prevHash', 'hash', 'type']);

/** At most this much of a field's name or type is quoted: a crafted entry cannot make the message unbounded. */
const QUOTE_MAX = 100;
const quote = (v: unknown): string => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length <= QUOTE_MAX ? text : `${text.slice(0, QUOTE_MAX)}… (${text.length - QUOTE_MAX} more characters)`;
};

/** Why `raw` is not a queue-log entry (its shape only; the chain is checked by checkQueueLog), or undefined. */
export function queueLogEntryProblem(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'it is not a JSON object';
  const entry = raw as Record<string, unknown>;
  const type = entry.type as QueueLogEntryType;
  if (typeof type !== 'string' || !Object.hasOwn(SHAPES, type)) return `its type ${quote(entry.type)} is unknown`;
  if (!time(entry.time)) return 'its time is not an ISO time with milliseconds';
  if (typeof entry.hash !== 'string' || !HASH512.test(entry.hash)) return 'its hash is not a BLAKE2b-512 hash';
  if (type === 'rules' && typeof entry.version === 'number' && entry.version !== QUEUE_LOG_FORMAT_VERSION)
    return `it states format version ${entry.version}; this release reads version ${QUEUE_LOG_FORMAT_VERSION} only`;
  const shape = SHAPES[type];
  for (const [field, check] of Object.entries(shape)) {
    if (!check(entry[field])) return `its ${field} is missing or malformed (a ${type} entry)`;
  }
  const extra = Object.keys(entry).find((key) => !CHAINED.has(key) && !Object.hasOwn(shape, key));
  if (extra !== undefined) return `it has a field ${quote(extra)} a ${type} entry does not have`;
  // The lobby states no step longer than its priority, nor one without standby (takePriorityMs absent or 0).
  if (
    type === 'rules' &&
    entry.standbyStepMs !== undefined &&
    !((entry.standbyStepMs as number) <= (entry.takePriorityMs as number))
  )
    return 'its standbyStepMs is more than its takePriorityMs, or it states no takePriorityMs (a rules entry)';
  return undefined;
}

/**
 * Checks `rawEntries` (parsed from JSON, in order) as the queue log of ceremony `ceremonyId`: the
 * shape of every entry and the hash chain from the genesis. `source` names where the log came from
 * in messages. Throws `queue_log.corrupt` naming the first entry that fails.
 */
export function checkQueueLog(ceremonyId: string, rawEntries: unknown, source: string): QueueLogEntry[] {
  const corrupt = (why: string): CoordinatorError =>
    new CoordinatorError('queue_log.corrupt', `the queue log ${source} ${why}`);
  if (!Array.isArray(rawEntries)) throw corrupt('is not a list of entries');
  for (const [seq, raw] of rawEntries.entries()) {
    const problem = queueLogEntryProblem(raw);
    if (problem) throw corrupt(`has an entry ${seq} that is not a queue-log entry: ${problem}`);
  }
  const broken = chainBreak(rawEntries as QueueLogEntry[], queueLogGenesisHash(ceremonyId));
  if (broken) throw corrupt(`breaks its hash chain at entry ${broken.at}: ${broken.why}`);
  return rawEntries as QueueLogEntry[];
}

/** Parses the JSON-lines text of a queue log (as `ceremony publish` writes it), then checks it (checkQueueLog). */
export function parseQueueLogText(ceremonyId: string, text: string, source: string): QueueLogEntry[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const raw = lines.map((line, i) => {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      throw new CoordinatorError('queue_log.corrupt', `the queue log ${source} has a line ${i + 1} that is not JSON`);
    }
  });
  return checkQueueLog(ceremonyId, raw, source);
}

/** "entry 12 (granted register to github:42)": how messages name an entry. */
export function describeEntry(entry: QueueLogEntry): string {
  if (entry.type === 'rules') return `entry ${entry.seq} (rules)`;
  return `entry ${entry.seq} (${entry.type} ${entry.circuit}, ${entry.contributor})`;
}
