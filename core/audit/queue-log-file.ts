/**
 * The published queue log read as a stream for the audit (check-queue-fairness.ts): line by line,
 * each line at most QUEUE_LOG_LINE_MAX bytes and QUEUE_LOG_MAX_ENTRIES lines at most (beyond
 * either it fails closed, `queue_log.corrupt`), each entry checked (its shape, its link in the
 * hash chain) and handed to the replay as it comes, so the auditor's memory holds one line and the
 * replay's state, never the file: the coordinator publishes the log, and a multi-GB one must not
 * exhaust the auditor's machine. The verdict is the one parseQueueLogText and then the replay give
 * over the whole text (a line not JSON first, then an entry of the wrong shape, then a broken
 * chain, then the replay's first failure): each is remembered, the reading goes on as far as a
 * higher one could still be found, and the first of the highest is the verdict.
 */
import type { FileHandle } from 'node:fs/promises';
import { CoordinatorError, isCoordinatorError } from '../errors.ts';
import {
  QUEUE_LOG_MAX_ENTRIES,
  queueLogEntryProblem,
  queueLogGenesisHash,
  type QueueLogEntry,
} from '../queue-log/queue-log-entry.ts';
import { linkBreak } from '../transcript/hash-chain.ts';

/** The longest line read (an honest entry is under 2 KiB): beyond it the log is refused, not read on. */
export const QUEUE_LOG_LINE_MAX = 1 << 20;
const CHUNK = 1 << 20;

/**
 * Calls `onLine` with each line of the file (its number from 1), as `text.split('\n')` without a
 * last empty line would give them, holding one line at most; throws `queue_log.corrupt` at a line
 * longer than QUEUE_LOG_LINE_MAX bytes. `onLine` returns false to stop reading.
 */
async function forEachLine(
  handle: FileHandle,
  source: string,
  onLine: (line: string, number: number) => boolean,
): Promise<void> {
  const chunk = Buffer.allocUnsafe(CHUNK);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let number = 0;
  const tooLong = () =>
    new CoordinatorError(
      'queue_log.corrupt',
      `the queue log ${source} has a line ${number + 1} longer than ${QUEUE_LOG_LINE_MAX} bytes`,
    );
  const emit = (tail: Buffer): boolean => {
    const line = pending.length === 0 ? tail : Buffer.concat([...pending, tail]);
    pending = [];
    pendingBytes = 0;
    return onLine(line.toString('utf8'), ++number);
  };
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, CHUNK, null).catch((error: NodeJS.ErrnoException) => {
      throw new CoordinatorError('queue_log.corrupt', `${source} could not be read (${error.code ?? 'unreadable'})`);
    });
    if (bytesRead === 0) break;
    const data = chunk.subarray(0, bytesRead);
    let start = 0;
    for (let nl = data.indexOf(10, start); nl >= 0; nl = data.indexOf(10, start)) {
      if (pendingBytes + nl - start > QUEUE_LOG_LINE_MAX) throw tooLong();
      if (!emit(data.subarray(start, nl))) return;
      start = nl + 1;
    }
    pendingBytes += bytesRead - start;
    if (pendingBytes > QUEUE_LOG_LINE_MAX) throw tooLong();
    // A copy: the chunk is read into again.
    if (start < bytesRead) pending.push(Buffer.from(data.subarray(start)));
  }
  if (pendingBytes > 0) emit(Buffer.alloc(0));
}

/** The log's entries checked one at a time, remembering the first failure of each kind (see the header). */
class EntryChecks {
  private notJson: CoordinatorError | undefined;
  private badShape: CoordinatorError | undefined;
  private badChain: CoordinatorError | undefined;
  private prevHash: string;

  constructor(
    ceremonyId: string,
    private readonly source: string,
  ) {
    this.prevHash = queueLogGenesisHash(ceremonyId);
  }

  private corrupt(why: string): CoordinatorError {
    return new CoordinatorError('queue_log.corrupt', `the queue log ${this.source} ${why}`);
  }

  /** Whether a line not JSON ends the reading: nothing after it can change the verdict. */
  get done(): boolean {
    return this.notJson !== undefined;
  }

  /** The first failure by parseQueueLogText's order, if any. */
  get failure(): CoordinatorError | undefined {
    return this.notJson ?? this.badShape ?? this.badChain;
  }

  /** The entry of line `number`, when it may be replayed: every entry up to it holds. */
  check(line: string, number: number): QueueLogEntry | undefined {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      this.notJson = this.corrupt(`has a line ${number} that is not JSON`);
      return undefined;
    }
    if (this.badShape) return undefined;
    const seq = number - 1;
    const problem = queueLogEntryProblem(raw);
    if (problem) {
      this.badShape = this.corrupt(`has an entry ${seq} that is not a queue-log entry: ${problem}`);
      return undefined;
    }
    if (this.badChain) return undefined;
    const entry = raw as QueueLogEntry;
    const why = linkBreak(entry, seq, this.prevHash);
    if (why !== undefined) {
      this.badChain = this.corrupt(`breaks its hash chain at entry ${seq}: ${why}`);
      return undefined;
    }
    this.prevHash = entry.hash;
    return entry;
  }
}

/**
 * Reads the queue log open at `handle` (of ceremony `ceremonyId`, named `source` in messages),
 * handing each entry to `replay` while every entry before it holds; throws the verdict's failure,
 * `unreplayable` (a failure found before the replay could start, ranked after the log's own) when
 * there is one, or the replay's first. Returns the number of entries.
 */
export async function replayQueueLogFile(
  handle: FileHandle,
  ceremonyId: string,
  source: string,
  replay: ((entry: QueueLogEntry) => void) | { unreplayable: unknown },
): Promise<number> {
  const checks = new EntryChecks(ceremonyId, source);
  let replayFailure: unknown = typeof replay === 'function' ? undefined : replay.unreplayable;
  let entries = 0;
  await forEachLine(handle, source, (line, number) => {
    if (number > QUEUE_LOG_MAX_ENTRIES)
      throw new CoordinatorError(
        'queue_log.corrupt',
        `the queue log ${source} has more than ${QUEUE_LOG_MAX_ENTRIES} entries, far beyond any ceremony's: ` +
          'it is not read on',
      );
    entries = number;
    const entry = checks.check(line, number);
    if (entry && !replayFailure && typeof replay === 'function') {
      try {
        replay(entry);
      } catch (error) {
        if (!isCoordinatorError(error)) throw error;
        replayFailure = error;
      }
    }
    return !checks.done;
  });
  if (checks.failure) throw checks.failure;
  if (replayFailure !== undefined) throw replayFailure;
  return entries;
}
