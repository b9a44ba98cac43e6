/**
 * The audit's check that turns went in the order the rules promise: it replays the published
 * queue log (core/queue-log/queue-log-entry.ts), its hash chain checked, step by step, keeping each
 * circuit's queue and turn as the lobby kept them, and at every turn granted asks the lobby's own
 * rule (core/queue-log/turn-order.ts, firstInLine) who was first in line, or, for a turn taken on
 * standby, whom the standby rule offered it to (standbyDepth, mayTakeOnStandby). It fails, naming
 * the entries, on:
 *  - `audit.turn_out_of_order`: a turn granted to another than the one the rules put first (FIFO,
 *    away and cooling-down entries passed over), or while the circuit's turn was held; a turn taken
 *    on standby by an entry the rule did not offer it to (turn-order.ts mayTakeOnStandby, over the
 *    queue as it was before the lapse: too far behind the grantee for the time passed, by the stated
 *    takePriorityMs and standbyStepMs, away, or cooling down);
 *  - `audit.queue_rule_broken`: a step the rules do not allow: an acceptance or a refusal with no
 *    turn in the log, a turn passed on before its time to be taken or missed before its deadline
 *    (or, ended for its client's silence or its upload's want of progress, before that period ran
 *    out), an entry marked away before the presence period ran out, a missed turn not counted (a
 *    turn not taken, left, or refused: every turn ended without a contribution counts, and joining
 *    again resets nothing), a requeue, a removal or a join's first eligible time other than the
 *    rules give (back in place only after a first untaken turn, else at the back after the
 *    cooldown, out at the missed-turn limit, a join past the limit after the doubled cooldown), a
 *    step by someone not where the log put them; a turn taken over on standby (`takenOverBy`)
 *    under rules without standby, before its grantee's priority (takePriorityMs) ran out, after
 *    its time to be taken, once taken, or not followed at once (the same time, nothing in between
 *    but the grantee's requeue or removal, then the `skipped` entry of each entry offered the turn
 *    before the taker, in order, each followed by its own requeue or removal as the rules give) by
 *    the taker's `granted` (its deadline by the rules, no time to be taken: it is taken at once)
 *    and `taken`. An entry back in its place after a turn
 *    it did not take is granted again before the circuit's next turn ended only when nobody else
 *    could be (`audit.turn_out_of_order` otherwise): the loop of two accounts that pass their
 *    turns to each other fails here;
 *  - `audit.queue_log_mismatch`: the log and the transcript disagree: an acceptance naming no link
 *    of the transcript (or another circuit's, position, contributor), a link named twice, a link
 *    with no acceptance (but the last of a chain whose turn is still open at the log's end: its
 *    verdict is recorded just after the transcript commits it).
 * What it cannot see: whether a contributor marked away was really gone (the coordinator's word,
 * with the time it last saw them in the entry), heartbeats and upload bytes (a missed turn is only
 * checked not to end before its first deadline, or, ended for silence or a stalled upload, before
 * the period from the time the coordinator says it last heard from the client or saw progress,
 * itself no earlier than the turn was taken), and whether an `error` verdict was the upload's doing
 * (counted as a missed turn when the entry says so).
 *
 * The coordinator writes the log the auditor replays, so what a crafted one can cost is bounded:
 * the log is read as a stream, a line at most 1 MiB (queue-log-file.ts), and each step costs
 * O(log n) in the queue's length (queue-replay.ts over waiting-line.ts's index; the standby checks,
 * queue-replay-standby.ts, walk no further than the `skipped` entries that must follow).
 */
import { open } from 'node:fs/promises';
import path from 'node:path';
import type { CeremonyConfig } from '../config/ceremony-config.ts';
import { ceremonyPaths } from '../data-folder/ceremony-paths.ts';
import { CoordinatorError, isCoordinatorError, type ErrorCode } from '../errors.ts';
import { QUEUE_LOG_FILE, type QueueLogEntry } from '../queue-log/queue-log-entry.ts';
import { Transcript, type TranscriptEntry } from '../transcript/transcript.ts';
import { replayQueueLogFile } from './queue-log-file.ts';
import { Replay } from './queue-replay.ts';
import { clip, type Contribution } from './queue-replay-state.ts';

export interface QueueFairnessResult {
  ok: boolean;
  summary: string;
  code?: ErrorCode;
}

/** The longest finding a failure gives: its message quotes the log, whose coordinator may have crafted it. */
const FINDING_MAX = 2000;

function startReplay(config: { circuits: ReadonlyArray<{ name: string }> }, transcript: readonly TranscriptEntry[]) {
  const links = new Map<string, Contribution>();
  for (const entry of transcript) if (entry.type === 'contribution') links.set(entry.hash, entry);
  return new Replay(
    config.circuits.map((c) => c.name),
    links,
  );
}

/** After the last entry: the transcript cross-check, then what was checked, in words. */
function finishReplay(
  config: { circuits: ReadonlyArray<{ name: string }> },
  replay: Replay,
  transcript: readonly TranscriptEntry[],
  steps: number,
): string {
  replay.finish();
  const open = replay.openTurns();
  const chains = new Map<string, Contribution[]>(config.circuits.map((c) => [c.name, []]));
  for (const e of transcript) if (e.type === 'contribution') chains.get(e.circuit)?.push(e);
  for (const circuit of config.circuits) {
    const chain = chains.get(circuit.name)!;
    for (const [i, link] of chain.entries()) {
      if (replay.accepted.has(link.hash)) continue;
      if (i === chain.length - 1 && open.has(circuit.name)) continue; // its verdict follows the commit
      throw new CoordinatorError(
        'audit.queue_log_mismatch',
        `the transcript's ${circuit.name} #${link.index} (entry ${link.seq}, by ${clip(link.contributor)}) has no ` +
          'acceptance in the queue log',
      );
    }
  }
  return (
    `${steps} entries, hash chain intact; ${replay.grants} turns granted, each to the first in line by the ` +
    'rules (FIFO per circuit, away and cooling-down entries passed over)' +
    (replay.standbyGrants > 0
      ? ` or, ${replay.standbyGrants} of them, taken on standby by an entry the standby rule offered it to ` +
        `(at most ${replay.standbyFurthest} behind its grantee, by the stated takePriorityMs and standbyStepMs, ` +
        'a step of takePriorityMs where none is stated)'
      : '') +
    `, ${replay.accepted.size} acceptances ` +
    'matching the transcript, every turn ended without a contribution counted as missed; presence, heartbeats ' +
    'and upload progress are the coordinator’s word (each away entry says when it last saw them)'
  );
}

/**
 * Replays `log` against `transcript` (both already hash-checked) and the ceremony's circuits;
 * throws the first problem (see the header). Returns what it checked, in words.
 */
export function checkQueueFairness(
  config: { circuits: ReadonlyArray<{ name: string }> },
  log: Iterable<QueueLogEntry>,
  transcript: readonly TranscriptEntry[],
): string {
  const replay = startReplay(config, transcript);
  let steps = 0;
  for (const entry of log) {
    replay.apply(entry);
    steps++;
  }
  return finishReplay(config, replay, transcript, steps);
}

/**
 * The audit's finding on the queue log of the ceremony in `config.dataDir` (its published
 * transcript/queue-log.jsonl, checked against the transcript there). A publication without it fails
 * (`audit.queue_log_missing`): the order of turns is not checked on the coordinator's say-so, only
 * when the auditor states the ceremony had no lobby (`noQueueLog`), and the finding then says the
 * order was NOT checked. Never throws: a failure is the finding. The log is read as a stream
 * (queue-log-file.ts), replayed as it is read.
 */
export async function queueLogFinding(
  config: CeremonyConfig,
  { noQueueLog = false }: { noQueueLog?: boolean } = {},
): Promise<{ subject: string; ok: boolean; summary: string; code?: ErrorCode }> {
  const subject = 'queue log';
  const failed = (code: ErrorCode, message: string) => ({
    subject,
    ok: false,
    summary: `[${code}] ${clip(message, FINDING_MAX)}`,
    code,
  });
  let handle;
  try {
    handle = await open(path.join(config.dataDir, QUEUE_LOG_FILE), 'r');
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    if (why !== 'ENOENT') return failed('queue_log.corrupt', `${QUEUE_LOG_FILE} could not be read (${why})`);
    if (noQueueLog)
      return {
        subject,
        ok: true,
        summary:
          `no ${QUEUE_LOG_FILE} published, and --no-queue-log says the ceremony had none (made without the ` +
          "coordinator's lobby): the order of turns is NOT checked",
      };
    return failed(
      'audit.queue_log_missing',
      `no ${QUEUE_LOG_FILE} published: the order of turns cannot be checked. A ceremony run by the coordinator ` +
        'has one; for a ceremony made without its lobby, say so with --no-queue-log',
    );
  }
  try {
    return { subject, ok: true, summary: await replayFile(config, handle) };
  } catch (error) {
    if (!isCoordinatorError(error)) throw error;
    return failed(error.code, error.message);
  } finally {
    await handle.close();
  }
}

/** The transcript first (the replay needs its links), its failure ranked after the log's own (queue-log-file.ts). */
async function replayFile(config: CeremonyConfig, handle: Awaited<ReturnType<typeof open>>): Promise<string> {
  let transcript: Transcript;
  try {
    transcript = await Transcript.load(ceremonyPaths(config.dataDir).transcriptPath, config.id);
  } catch (unreplayable) {
    await replayQueueLogFile(handle, config.id, QUEUE_LOG_FILE, { unreplayable });
    throw unreplayable;
  }
  const replay = startReplay(config, transcript.entries);
  const steps = await replayQueueLogFile(handle, config.id, QUEUE_LOG_FILE, (entry) => replay.apply(entry));
  return finishReplay(config, replay, transcript.entries, steps);
}
