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
 *    re-enqueues whatever SQLite still marks as verifying.
 *
 * The verifier is forked at once, not on the first upload, so its curve is built while nobody
 * waits; one that dies is replaced when the next request needs it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import {
  EMBEDDED_VERIFIER_ENTRY,
  type FromEmbeddedVerifier,
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
  const concurrency = positiveInteger('concurrency', options.concurrency ?? 1);
  const attempts = positiveInteger('attempts', options.attempts ?? 3);
  const backoffMs = options.backoffMs ?? 1000;
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;

  const tracked = new Map<string, Tracked>();
  const waiting: string[] = [];
  const listeners: Array<(outcome: VerificationOutcome) => void> = [];
  let verifier: ChildProcess | undefined;
  let running = 0;
  let closed = false;

  const emit = (outcome: VerificationOutcome): void => notifyOutcome(listeners, outcome);

  const finish = (outcome: VerificationOutcome): void => {
    const entry = tracked.get(outcome.contributionId);
    if (!entry || entry.state !== 'running') return;
    tracked.delete(outcome.contributionId);
    running--;
    emit(outcome);
    pump();
  };

  const fail = (contributionId: string, message: string): void => {
    const entry = tracked.get(contributionId);
    if (!entry || entry.state !== 'running') return;
    running--;
    if (entry.attempt >= attempts) {
      tracked.delete(contributionId);
      emit({
        contributionId,
        status: 'error',
        message: `verification failed after ${entry.attempt} attempt(s): ${message}`,
      });
    } else {
      entry.state = 'backoff';
      entry.retryTimer = setTimeout(
        () => {
          entry.retryTimer = undefined;
          entry.attempt++;
          entry.state = 'queued';
          waiting.push(contributionId);
          pump();
        },
        backoffMs * 2 ** (entry.attempt - 1),
      );
    }
    pump();
  };

  const onVerifierMessage = (from: ChildProcess, message: FromEmbeddedVerifier): void => {
    if (closed || from !== verifier) return;
    // A process that sends a message was spawned, so it has its pid.
    if (message.type === 'ready') options.onVerifierReady?.(from.pid!);
    else if (message.type === 'outcome') finish(message.outcome);
    else if (message.type === 'failure') fail(message.contributionId, message.message);
    else if (message.type === 'head-prepared') options.onHeadPrepared?.(message.prepared);
    else options.onHeadPrepared?.({ circuit: message.circuit, failed: message.message });
  };

  // A verifier that dies takes its running verifications with it: they count as failed tries
  // (retried like an I/O error), and the next request starts a fresh verifier.
  const onVerifierDeath = (dead: ChildProcess, reason: string): void => {
    if (verifier !== dead) return;
    verifier = undefined;
    if (closed) return;
    for (const [contributionId, entry] of tracked) {
      if (entry.state === 'running') fail(contributionId, reason);
    }
  };

  const startVerifier = (): ChildProcess => {
    // No inherited execArgv: the entry registers TypeScript itself if it needs it, and a parent's
    // --inspect or test-runner flags would only get in the way.
    const child = fork(EMBEDDED_VERIFIER_ENTRY, [], {
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (message) => onVerifierMessage(child, message as FromEmbeddedVerifier));
    child.once('error', (error) => onVerifierDeath(child, `the verifier process failed: ${error.message}`));
    child.once('exit', (code, signal) =>
      onVerifierDeath(child, `the verifier process exited (${signal ?? `code ${code}`})`),
    );
    return child;
  };

  const send = (contributionId: string, message: ToEmbeddedVerifier): void => {
    verifier ??= startVerifier();
    verifier.send(message, (error) => {
      if (error) fail(contributionId, `could not reach the verifier process: ${error.message}`);
    });
  };

  function pump(): void {
    while (!closed && running < concurrency) {
      const contributionId = waiting.shift();
      if (contributionId === undefined) break;
      const entry = tracked.get(contributionId);
      if (!entry || entry.state !== 'queued') continue;
      entry.state = 'running';
      running++;
      send(contributionId, { type: 'verify', request: entry.request });
    }
  }

  verifier = startVerifier();

  return {
    async enqueue(request) {
      if (closed) throw new Error('the verification dispatcher is closed');
      if (tracked.has(request.contributionId)) return;
      tracked.set(request.contributionId, { request: { ...request }, attempt: 1, state: 'queued' });
      waiting.push(request.contributionId);
      pump();
    },

    prepareHead(request) {
      if (closed) return;
      verifier ??= startVerifier();
      verifier.send({ type: 'prepare-head', request } satisfies ToEmbeddedVerifier, (error) => {
        if (error) options.onHeadPrepared?.({ circuit: request.circuit, failed: error.message });
      });
    },

    onOutcome(listener) {
      listeners.push(listener);
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const entry of tracked.values()) if (entry.retryTimer) clearTimeout(entry.retryTimer);
      tracked.clear();
      waiting.length = 0;
      const stopping = verifier;
      verifier = undefined;
      if (!stopping || stopping.exitCode !== null || stopping.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => stopping.once('exit', () => resolve()));
      if (stopping.connected) stopping.send({ type: 'shutdown' } satisfies ToEmbeddedVerifier, () => {});
      else stopping.kill('SIGKILL');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>(
        (resolve) => (timer = setTimeout(() => resolve('timeout'), closeTimeoutMs)),
      );
      if ((await Promise.race([exited, timedOut])) === 'timeout') {
        stopping.kill('SIGKILL');
        await exited;
      }
      clearTimeout(timer);
    },
  };
}
