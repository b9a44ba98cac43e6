/**
 * The audit's check that turns went in the order the rules promise: it replays the published
 * queue log (core/queue-log/queue-log-entry.ts), its hash chain checked, step by step, keeping each
 * circuit's queue and turn as the lobby kept them, and at every turn granted asks the lobby's own
 * rule (core/queue-log/turn-order.ts, firstInLine) who was first in line. It fails, naming the
 * entries, on:
 *  - `audit.turn_out_of_order`: a turn granted to another than the one the rules put first (FIFO,
 *    away and cooling-down entries passed over), or while the circuit's turn was held;
 *  - `audit.queue_rule_broken`: a step the rules do not allow: an acceptance or a refusal with no
 *    turn in the log, a turn passed on before its time to be taken or missed before its deadline
 *    (or, ended for its client's silence, before the silence period from when it was last heard), an
 *    entry marked away before the presence period ran out, a requeue or removal after a missed turn
 *    other than the rules give (cooldown, missed-turn limit), a step by someone not where the log
 *    put them;
 *  - `audit.queue_log_mismatch`: the log and the transcript disagree: an acceptance naming no link
 *    of the transcript (or another circuit's, position, contributor), a link named twice, a link
 *    with no acceptance (but the last of a chain whose turn is still open at the log's end: its
 *    verdict is recorded just after the transcript commits it).
 * What it cannot see: whether a contributor marked away was really gone (the coordinator's word,
 * with the time it last saw them in the entry), and heartbeats (a missed turn is only checked not
 * to end before its first deadline, or, ended for silence, before the silence period from the time
 * the coordinator says it last heard from the client, itself no earlier than the turn was taken).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CeremonyConfig } from '../config/ceremony-config.ts';
import { ceremonyPaths } from '../data-folder/ceremony-paths.ts';
import { CoordinatorError, isCoordinatorError, type ErrorCode } from '../errors.ts';
import {
  describeEntry,
  parseQueueLogText,
  QUEUE_LOG_FILE,
  type QueueLogEntry,
  type QueueRules,
  type StepEntry,
} from '../queue-log/queue-log-entry.ts';
import { afterLapse, firstInLine, type LapseConsequence } from '../queue-log/turn-order.ts';
import { Transcript, type TranscriptEntry } from '../transcript/transcript.ts';

interface Waiting {
  contributor: string;
  /** The seq of the join that put the entry in line: its place. */
  joinedAt: number;
  away: boolean;
  eligibleAt: number;
}

interface Turn {
  contributor: string;
  granted: Extract<QueueLogEntry, { type: 'granted' }>;
  /** The entry as it waited, for its place when an untaken turn puts it back. */
  entry: Waiting;
  taken: boolean;
  /** When it was taken (ms): its grant when the rules have no time to be taken. */
  takenAt?: number;
}

type Contribution = Extract<TranscriptEntry, { type: 'contribution' }>;
/** The log entry of one step type. */
type EntryOf<T extends StepEntry['type']> = Extract<StepEntry, { type: T }>;

export interface QueueFairnessResult {
  ok: boolean;
  summary: string;
  code?: ErrorCode;
}

const ms = (time: string): number => Date.parse(time);

class Replay {
  private rules: QueueRules | undefined;
  private readonly queues = new Map<string, Waiting[]>();
  private readonly turns = new Map<string, Turn>();
  /** Where each contributor waits, by circuit. */
  private readonly waitingIn = new Map<string, string>();
  private readonly missed = new Map<string, number>();
  /** What a taken turn's lapse leads to, checked at the contributor's next step. */
  private readonly afterMiss = new Map<string, { consequence: LapseConsequence; lapse: StepEntry }>();
  /** Transcript links named by an acceptance: hash → entry. */
  readonly accepted = new Map<string, QueueLogEntry>();
  grants = 0;

  constructor(
    private readonly circuits: readonly string[],
    private readonly transcript: ReadonlyMap<string, Contribution>,
  ) {}

  private broken(entry: QueueLogEntry, why: string): CoordinatorError {
    return new CoordinatorError('audit.queue_rule_broken', `${describeEntry(entry)}: ${why}`);
  }

  apply(entry: QueueLogEntry): void {
    if (entry.type === 'rules') {
      const unknown = entry.circuits.filter((c) => !this.circuits.includes(c));
      if (unknown.length > 0 || entry.circuits.length !== this.circuits.length)
        throw new CoordinatorError(
          'audit.queue_log_mismatch',
          `${describeEntry(entry)} states the circuits ${entry.circuits.join(', ')}; ` +
            `the ceremony has ${this.circuits.join(', ')}`,
        );
      this.rules = entry;
      return;
    }
    if (!this.rules) throw this.broken(entry, 'no rules entry states the rules before it');
    const expected = this.afterMiss.get(entry.contributor);
    if (expected) {
      this.afterMiss.delete(entry.contributor);
      this.checkAfterMiss(entry, expected.consequence, expected.lapse);
    }
    this.step(entry, this.rules, ms(entry.time));
  }

  private checkAfterMiss(entry: StepEntry, consequence: LapseConsequence, lapse: StepEntry): void {
    const requeued = entry.type === 'join' && entry.via === 'missed' && entry.circuit === lapse.circuit;
    const removed = entry.type === 'removed' && entry.reason === 'missed_turns' && entry.circuit === lapse.circuit;
    if (consequence.kind === 'removed' && !removed)
      throw this.broken(entry, `after ${describeEntry(lapse)} the rules take the entry out of the queue`);
    if (consequence.kind === 'back_of_queue') {
      if (!requeued) throw this.broken(entry, `after ${describeEntry(lapse)} the rules put the entry back in line`);
      const eligibleAt = entry.eligibleAt === undefined ? ms(entry.time) : ms(entry.eligibleAt);
      if (eligibleAt !== consequence.eligibleAt)
        throw this.broken(
          entry,
          `eligible at ${entry.eligibleAt ?? entry.time}, not at the end of the cooldown ` +
            `(${new Date(consequence.eligibleAt).toISOString()})`,
        );
    }
  }

  private queue(circuit: string): Waiting[] {
    let queue = this.queues.get(circuit);
    if (!queue) this.queues.set(circuit, (queue = []));
    return queue;
  }

  private waitingEntry(entry: StepEntry): Waiting {
    const found =
      this.waitingIn.get(entry.contributor) === entry.circuit
        ? this.queue(entry.circuit).find((w) => w.contributor === entry.contributor)
        : undefined;
    if (!found) throw this.broken(entry, `${entry.contributor} is not waiting for ${entry.circuit}`);
    return found;
  }

  private dequeue(waiting: Waiting, circuit: string): void {
    const queue = this.queue(circuit);
    queue.splice(queue.indexOf(waiting), 1);
    this.waitingIn.delete(waiting.contributor);
  }

  private heldTurn(entry: StepEntry, what: string): Turn {
    const turn = this.turns.get(entry.circuit);
    if (!turn || turn.contributor !== entry.contributor)
      throw this.broken(entry, `${what} with no turn of ${entry.contributor} on ${entry.circuit} in the log`);
    return turn;
  }

  private holdsAnything(contributor: string): boolean {
    return this.waitingIn.has(contributor) || [...this.turns.values()].some((t) => t.contributor === contributor);
  }

  /** A taken turn ended for silence: the rules have the period, and it ran out after the turn was taken. */
  private checkSilence(entry: StepEntry, silentSince: string, turn: Turn, rules: QueueRules, at: number): void {
    const silenceMs = rules.turnSilenceMs ?? 0;
    if (silenceMs === 0) throw this.broken(entry, 'a turn ended for silence, which the rules in force do not have');
    if (ms(silentSince) < (turn.takenAt ?? Infinity))
      throw this.broken(entry, `it was last heard from (${silentSince}) before the turn was taken`);
    if (at <= ms(silentSince) + silenceMs)
      throw this.broken(entry, `a turn ended for silence before ${silenceMs} ms had passed since ${silentSince}`);
  }

  /**
   * Passed over, or a turn passed on, because the contributor's presence stream closed at
   * `disconnectedAt`: the rules have the grace, and it ran out. When the stream closed is the
   * coordinator's word, as when a client was last heard from.
   */
  private checkDisconnect(entry: StepEntry, disconnectedAt: string, rules: QueueRules, at: number): void {
    const graceMs = rules.disconnectGraceMs ?? 0;
    if (graceMs === 0)
      throw this.broken(entry, 'it names a closed presence stream, which the rules in force do not count');
    if (at <= ms(disconnectedAt) + graceMs)
      throw this.broken(entry, `it came before ${graceMs} ms had passed since the stream closed (${disconnectedAt})`);
  }

  private step(entry: StepEntry, rules: QueueRules, at: number): void {
    if (!rules.circuits.includes(entry.circuit))
      throw this.broken(entry, `${entry.circuit} is not a circuit of the ceremony`);
    switch (entry.type) {
      case 'join':
        this.onJoin(entry, at);
        return;
      case 'away':
        this.onAway(entry, rules, at);
        return;
      case 'back':
        this.onBack(entry);
        return;
      case 'granted':
        this.onGranted(entry, rules, at);
        return;
      case 'taken':
        this.onTaken(entry, at);
        return;
      case 'lapsed':
        this.onLapsed(entry, rules, at);
        return;
      case 'refused':
        this.onRefused(entry);
        return;
      case 'accepted':
        this.onAccepted(entry);
        return;
      case 'left':
        this.onLeft(entry);
        return;
      case 'removed':
        this.onRemoved(entry);
        return;
    }
  }

  private onJoin(entry: EntryOf<'join'>, at: number): void {
    if (this.holdsAnything(entry.contributor))
      throw this.broken(entry, `${entry.contributor} joins while already in line or holding a turn`);
    if (entry.via === 'join') {
      for (const key of [...this.missed.keys()]) if (key.startsWith(`${entry.contributor}\n`)) this.missed.delete(key);
    }
    const queue = this.queue(entry.circuit);
    queue.push({
      contributor: entry.contributor,
      joinedAt: entry.seq,
      away: false,
      eligibleAt: entry.eligibleAt === undefined ? at : ms(entry.eligibleAt),
    });
    this.waitingIn.set(entry.contributor, entry.circuit);
    if (entry.position !== queue.length)
      throw this.broken(entry, `it gives position ${entry.position}; the log puts the entry at ${queue.length}`);
  }

  private onAway(entry: EntryOf<'away'>, rules: QueueRules, at: number): void {
    const waiting = this.waitingEntry(entry);
    if (entry.disconnectedAt !== undefined) this.checkDisconnect(entry, entry.disconnectedAt, rules, at);
    else if (rules.presenceMs === 0 || at - ms(entry.seenAt) <= rules.presenceMs)
      throw this.broken(
        entry,
        `marked away when last seen ${at - ms(entry.seenAt)} ms before, not more than the presence period ` +
          `(${rules.presenceMs} ms)`,
      );
    waiting.away = true;
  }

  private onBack(entry: EntryOf<'back'>): void {
    this.waitingEntry(entry).away = false;
  }

  private onGranted(entry: EntryOf<'granted'>, rules: QueueRules, at: number): void {
    const held = this.turns.get(entry.circuit);
    if (held)
      throw new CoordinatorError(
        'audit.turn_out_of_order',
        `${describeEntry(entry)} grants ${entry.circuit} while ${held.contributor} holds its turn ` +
          `(${describeEntry(held.granted)})`,
      );
    const waiting = this.waitingEntry(entry);
    const first = firstInLine(this.queue(entry.circuit), at);
    if (first !== waiting) {
      const who = first
        ? `${first.contributor} (in line since entry ${first.joinedAt}, present and eligible) was first in line`
        : `${entry.contributor} was not eligible (away, or cooling down until ` +
          `${new Date(waiting.eligibleAt).toISOString()})`;
      throw new CoordinatorError(
        'audit.turn_out_of_order',
        `${describeEntry(entry)} gives the turn to ${entry.contributor}, but ${who}`,
      );
    }
    const deadline = at + Math.min(rules.turnTimeoutMs, rules.maxTurnMs);
    const takeBy = rules.takeTurnMs > 0 ? at + rules.takeTurnMs : undefined;
    if (ms(entry.deadline) !== deadline || (entry.takeBy === undefined ? undefined : ms(entry.takeBy)) !== takeBy)
      throw this.broken(entry, 'its deadline or time to be taken is not what the rules give');
    this.dequeue(waiting, entry.circuit);
    this.turns.set(entry.circuit, {
      contributor: entry.contributor,
      granted: entry,
      entry: waiting,
      taken: !takeBy,
      ...(takeBy ? {} : { takenAt: at }),
    });
    this.grants++;
  }

  private onTaken(entry: EntryOf<'taken'>, at: number): void {
    const turn = this.heldTurn(entry, 'taken');
    if (turn.taken) throw this.broken(entry, 'the turn was already taken');
    if (turn.granted.takeBy !== undefined && at > ms(turn.granted.takeBy))
      throw this.broken(entry, `taken after its time to be taken (${turn.granted.takeBy})`);
    turn.taken = true;
    turn.takenAt = at;
  }

  /** A turn ended unused: passed on if never taken (its holder back in line), else a missed turn. */
  private onLapsed(entry: EntryOf<'lapsed'>, rules: QueueRules, at: number): void {
    const turn = this.heldTurn(entry, 'a lapse');
    this.turns.delete(entry.circuit);
    if (entry.taken !== turn.taken)
      throw this.broken(entry, `it says the turn was ${entry.taken ? '' : 'not '}taken; the log says otherwise`);
    if (!entry.taken) {
      const due = Math.min(ms(turn.granted.takeBy ?? turn.granted.deadline), ms(turn.granted.deadline));
      if (entry.disconnectedAt !== undefined) this.checkDisconnect(entry, entry.disconnectedAt, rules, at);
      else if (at <= due) throw this.broken(entry, `the turn passed on before its time to be taken ran out`);
      // Back in its place, away until seen.
      const queue = this.queue(entry.circuit);
      const place = queue.findIndex((w) => w.joinedAt > turn.entry.joinedAt);
      turn.entry.away = true;
      turn.entry.eligibleAt = at;
      queue.splice(place < 0 ? queue.length : place, 0, turn.entry);
      this.waitingIn.set(entry.contributor, entry.circuit);
      return;
    }
    if (entry.disconnectedAt !== undefined) this.checkDisconnect(entry, entry.disconnectedAt, rules, at);
    else if (entry.silentSince !== undefined) this.checkSilence(entry, entry.silentSince, turn, rules, at);
    else if (at <= ms(turn.granted.deadline)) throw this.broken(entry, 'a missed turn before its deadline');
    const key = `${entry.contributor}\n${entry.circuit}`;
    const missed = (this.missed.get(key) ?? 0) + 1;
    this.missed.set(key, missed);
    if (entry.missedTurns !== missed)
      throw this.broken(entry, `it counts ${entry.missedTurns} missed turns; the log counts ${missed}`);
    this.afterMiss.set(entry.contributor, { consequence: afterLapse(true, missed, at, rules), lapse: entry });
  }

  private onRefused(entry: EntryOf<'refused'>): void {
    this.heldTurn(entry, 'a refusal');
    this.turns.delete(entry.circuit);
  }

  private onAccepted(entry: EntryOf<'accepted'>): void {
    this.heldTurn(entry, 'an acceptance');
    this.turns.delete(entry.circuit);
    const link = this.transcript.get(entry.transcriptHash);
    const mismatch = !link
      ? 'names no contribution of the transcript'
      : link.circuit !== entry.circuit || link.index !== entry.index
        ? `names the transcript's ${link.circuit} #${link.index}, not ${entry.circuit} #${entry.index}`
        : link.contributor !== entry.name
          ? `names a contribution the transcript gives to ${link.contributor}, not ${entry.name}`
          : this.accepted.has(entry.transcriptHash)
            ? `names the link ${describeEntry(this.accepted.get(entry.transcriptHash)!)} already names`
            : undefined;
    if (mismatch) throw new CoordinatorError('audit.queue_log_mismatch', `${describeEntry(entry)} ${mismatch}`);
    this.accepted.set(entry.transcriptHash, entry);
  }

  private onLeft(entry: EntryOf<'left'>): void {
    if (entry.from === 'waiting') this.dequeue(this.waitingEntry(entry), entry.circuit);
    else if (entry.from === 'turn') {
      this.heldTurn(entry, 'leaving a turn');
      this.turns.delete(entry.circuit);
    } else this.heldTurn(entry, 'leaving after the verdict');
  }

  private onRemoved(entry: EntryOf<'removed'>): void {
    if (this.waitingIn.get(entry.contributor) === entry.circuit) {
      this.dequeue(this.waitingEntry(entry), entry.circuit);
    } else if (this.turns.get(entry.circuit)?.contributor === entry.contributor) {
      this.turns.delete(entry.circuit);
    } else if (entry.reason !== 'missed_turns') {
      throw this.broken(entry, `${entry.contributor} is neither waiting for nor holding ${entry.circuit}`);
    }
  }

  /** The circuits whose turn is still held at the end of the log. */
  openTurns(): Set<string> {
    return new Set(this.turns.keys());
  }
}

/**
 * Replays `log` against `transcript` (both already hash-checked) and the ceremony's circuits;
 * throws the first problem (see the header). Returns what it checked, in words.
 */
export function checkQueueFairness(
  config: { circuits: ReadonlyArray<{ name: string }> },
  log: readonly QueueLogEntry[],
  transcript: readonly TranscriptEntry[],
): string {
  const links = new Map<string, Contribution>();
  for (const entry of transcript) if (entry.type === 'contribution') links.set(entry.hash, entry);
  const replay = new Replay(
    config.circuits.map((c) => c.name),
    links,
  );
  for (const entry of log) replay.apply(entry);
  const open = replay.openTurns();
  for (const circuit of config.circuits) {
    const chain = transcript.filter((e): e is Contribution => e.type === 'contribution' && e.circuit === circuit.name);
    for (const [i, link] of chain.entries()) {
      if (replay.accepted.has(link.hash)) continue;
      if (i === chain.length - 1 && open.has(circuit.name)) continue; // its verdict follows the commit
      throw new CoordinatorError(
        'audit.queue_log_mismatch',
        `the transcript's ${circuit.name} #${link.index} (entry ${link.seq}, by ${link.contributor}) has no ` +
          'acceptance in the queue log',
      );
    }
  }
  const steps = log.length;
  return (
    `${steps} entries, hash chain intact; ${replay.grants} turns granted, each to the first in line by the ` +
    `rules (FIFO per circuit, away and cooling-down entries passed over), ${replay.accepted.size} acceptances ` +
    'matching the transcript; presence is the coordinator’s word (each away entry says when it last saw them)'
  );
}

/**
 * The audit's finding on the queue log of the ceremony in `config.dataDir` (its published
 * transcript/queue-log.jsonl, checked against the transcript there). Never throws: a failure is
 * the finding.
 */
export async function queueLogFinding(
  config: CeremonyConfig,
): Promise<{ subject: string; ok: boolean; summary: string; code?: ErrorCode }> {
  const subject = 'queue log';
  let text: string;
  try {
    text = await readFile(path.join(config.dataDir, QUEUE_LOG_FILE), 'utf8');
  } catch {
    return {
      subject,
      ok: true,
      summary:
        `no ${QUEUE_LOG_FILE} published (a ceremony made without the coordinator's lobby): ` +
        'the order of turns is NOT checked',
    };
  }
  try {
    const log = parseQueueLogText(config.id, text, QUEUE_LOG_FILE);
    const transcript = await Transcript.load(ceremonyPaths(config.dataDir).transcriptPath, config.id);
    return { subject, ok: true, summary: checkQueueFairness(config, log, transcript.entries) };
  } catch (error) {
    if (!isCoordinatorError(error)) throw error;
    return { subject, ok: false, summary: `[${error.code}] ${error.message}`, code: error.code };
  }
}
