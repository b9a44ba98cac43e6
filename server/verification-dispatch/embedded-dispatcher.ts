/**
 * The verifier `ceremony serve` uses when there is no Redis: an in-memory queue feeding one child
 * process (worker/embedded-verifier.ts, forked by the path the verifier contract gives, never
 * imported), so verifications never block the HTTP event loop and get every core for their
 * multi-exponentiations.
 *
 * Semantics match the BullMQ dispatcher, so the server does not care which one it has:
 *  - enqueue is idempotent per contributionId while the request is queued, running or waiting
 *    for a retry; once its outcome has been emitted, enqueueing it again verifies it again;
 *  - an invalid contribution is an outcome, never retried;
 *  - a verification that could not be carried out (a missing or unreadable file, a verifier that
 *    died) is retried with exponential backoff, and after `attempts` tries becomes an 'error'
 *    outcome;
 *  - nothing survives close() or a crash: the queue lives in memory, and after a restart the server
 *    re-enqueues whatever SQLite still marks as verifying;
 *  - a head preparation (prepareHead) is a 'prepare-head' message to the verifier, never retried:
 *    how it ended reaches onHeadPrepared, unless the dispatcher was closed meanwhile or the
 *    verifier died with it (close() kills a verifier still preparing a head at the close timeout,
 *    as it kills one still verifying); the coordinator's next start asks again.
 *
 * The verifier is forked at once, not on the first upload, so its curve is built while nobody
 * waits; one that dies is replaced when the next request needs it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import {
  EMBEDDED_VERIFIER_ENTRY,
  type FromEmbeddedVerifier,
  type HeadPreparationRequest,
  type ToEmbeddedVerifier,
  type VerificationOutcome,
  type VerificationRequest,
} from '../../core/verifier-contract/verifier-contract.ts';
import { notifyOutcome, type HeadPreparationReport, type VerificationDispatcher } from './verification-dispatcher.ts';

export interface EmbeddedDispatcherOptions {
  /** Verifications running at once (they share the process and its curve). Default 1. */
  concurrency?: number;
  /** Tries per request when verification cannot be carried out (I/O); not for invalid keys. Default 3. */
  attempts?: number;
  /** Delay before the first retry, doubled for each further one. Default 1000 ms. */
  backoffMs?: number;
  /** How long close() lets running verifications finish before killing the verifier. Default 10000 ms. */
  closeTimeoutMs?: number;
  /** Called with the verifier's pid each time one is ready (its curve built): logs, benchmarks. */
  onVerifierReady?: (pid: number) => void;
  /** Called when a head preparation (prepareHead) ended: its result, or why it failed. */
  onHeadPrepared?: (report: HeadPreparationReport) => void;
}

interface Tracked {
  request: VerificationRequest;
  /** 1 for the first try. */
  attempt: number;
  state: 'queued' | 'running' | 'backoff';
  retryTimer?: NodeJS.Timeout;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

export function createEmbeddedDispatcher(options: EmbeddedDispatcherOptions = {}): VerificationDispatcher {
  return new EmbeddedDispatcher(options);
}

/** The queue, its retries and the one verifier process it feeds; see the module comment for its semantics. */
class EmbeddedDispatcher implements VerificationDispatcher {
  private readonly options: EmbeddedDispatcherOptions;
  private readonly concurrency: number;
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly closeTimeoutMs: number;
  private readonly tracked = new Map<string, Tracked>();
  /** Contribution ids in the order they are to run (an entry no longer queued is skipped). */
  private readonly waiting: string[] = [];
  private readonly listeners: Array<(outcome: VerificationOutcome) => void> = [];
  private verifier: ChildProcess | undefined;
  private running = 0;
  private closed = false;

  constructor(options: EmbeddedDispatcherOptions) {
    this.options = options;
    this.concurrency = positiveInteger('concurrency', options.concurrency ?? 1);
    this.attempts = positiveInteger('attempts', options.attempts ?? 3);
    this.backoffMs = options.backoffMs ?? 1000;
    this.closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
    this.verifier = this.startVerifier();
  }

  async enqueue(request: VerificationRequest): Promise<void> {
    if (this.closed) throw new Error('the verification dispatcher is closed');
    if (this.tracked.has(request.contributionId)) return;
    this.tracked.set(request.contributionId, { request: { ...request }, attempt: 1, state: 'queued' });
    this.waiting.push(request.contributionId);
    this.pump();
  }

  prepareHead(request: HeadPreparationRequest): void {
    if (this.closed) return;
    this.verifier ??= this.startVerifier();
    this.verifier.send({ type: 'prepare-head', request } satisfies ToEmbeddedVerifier, (error) => {
      if (error) this.options.onHeadPrepared?.({ circuit: request.circuit, failed: error.message });
    });
  }

  onOutcome(listener: (outcome: VerificationOutcome) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const entry of this.tracked.values()) if (entry.retryTimer) clearTimeout(entry.retryTimer);
    this.tracked.clear();
    this.waiting.length = 0;
    const stopping = this.verifier;
    this.verifier = undefined;
    if (stopping) await this.stopVerifier(stopping);
  }

  /** Asks the verifier to leave once its work is done; kills it if that takes over closeTimeoutMs. */
  private async stopVerifier(stopping: ChildProcess): Promise<void> {
    if (stopping.exitCode !== null || stopping.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => stopping.once('exit', () => resolve()));
    if (stopping.connected) stopping.send({ type: 'shutdown' } satisfies ToEmbeddedVerifier, () => {});
    else stopping.kill('SIGKILL');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), this.closeTimeoutMs)),
    );
    if ((await Promise.race([exited, timedOut])) === 'timeout') {
      stopping.kill('SIGKILL');
      await exited;
    }
    clearTimeout(timer);
  }

  private finish(outcome: VerificationOutcome): void {
    const entry = this.tracked.get(outcome.contributionId);
    if (!entry || entry.state !== 'running') return;
    this.tracked.delete(outcome.contributionId);
    this.running--;
    notifyOutcome(this.listeners, outcome);
    this.pump();
  }

  /** A try that could not be carried out: retried after a backoff, or an 'error' once out of attempts. */
  private fail(contributionId: string, message: string): void {
    const entry = this.tracked.get(contributionId);
    if (!entry || entry.state !== 'running') return;
    this.running--;
    if (entry.attempt >= this.attempts) {
      this.tracked.delete(contributionId);
      notifyOutcome(this.listeners, {
        contributionId,
        status: 'error',
        message: `verification failed after ${entry.attempt} attempt(s): ${message}`,
      });
    } else {
      this.scheduleRetry(contributionId, entry);
    }
    this.pump();
  }

  private scheduleRetry(contributionId: string, entry: Tracked): void {
    entry.state = 'backoff';
    entry.retryTimer = setTimeout(
      () => {
        entry.retryTimer = undefined;
        entry.attempt++;
        entry.state = 'queued';
        this.waiting.push(contributionId);
        this.pump();
      },
      this.backoffMs * 2 ** (entry.attempt - 1),
    );
  }

  private onVerifierMessage(from: ChildProcess, message: FromEmbeddedVerifier): void {
    if (this.closed || from !== this.verifier) return;
    // A process that sends a message was spawned, so it has its pid.
    if (message.type === 'ready') this.options.onVerifierReady?.(from.pid!);
    else if (message.type === 'outcome') this.finish(message.outcome);
    else if (message.type === 'failure') this.fail(message.contributionId, message.message);
    else if (message.type === 'head-prepared') this.options.onHeadPrepared?.(message.prepared);
    else this.options.onHeadPrepared?.({ circuit: message.circuit, failed: message.message });
  }

  // A verifier that dies takes its running verifications with it: they count as failed tries
  // (retried like an I/O error), and the next request starts a fresh verifier.
  private onVerifierDeath(dead: ChildProcess, reason: string): void {
    if (this.verifier !== dead) return;
    this.verifier = undefined;
    if (this.closed) return;
    for (const [contributionId, entry] of this.tracked) {
      if (entry.state === 'running') this.fail(contributionId, reason);
    }
  }

  private startVerifier(): ChildProcess {
    // No inherited execArgv: the entry registers TypeScript itself if it needs it, and a parent's
    // --inspect or test-runner flags would only get in the way.
    const child = fork(EMBEDDED_VERIFIER_ENTRY, [], {
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (message) => this.onVerifierMessage(child, message as FromEmbeddedVerifier));
    child.once('error', (error) => this.onVerifierDeath(child, `the verifier process failed: ${error.message}`));
    child.once('exit', (code, signal) =>
      this.onVerifierDeath(child, `the verifier process exited (${signal ?? `code ${code}`})`),
    );
    return child;
  }

  private send(contributionId: string, message: ToEmbeddedVerifier): void {
    this.verifier ??= this.startVerifier();
    this.verifier.send(message, (error) => {
      if (error) this.fail(contributionId, `could not reach the verifier process: ${error.message}`);
    });
  }

  /** Starts queued requests while fewer than `concurrency` run. */
  private pump(): void {
    while (!this.closed && this.running < this.concurrency) {
      const contributionId = this.waiting.shift();
      if (contributionId === undefined) break;
      const entry = this.tracked.get(contributionId);
      if (!entry || entry.state !== 'queued') continue;
      entry.state = 'running';
      this.running++;
      this.send(contributionId, { type: 'verify', request: entry.request });
    }
  }
}
