/**
 * The verifier `ceremony serve` uses when there is no Redis: an in-memory queue feeding one worker
 * thread (worker/verification-thread.ts), so verifications never block the HTTP event loop.
 *
 * Semantics match the BullMQ dispatcher, so the server does not care which one it has:
 *  - enqueue is idempotent per contributionId while the request is queued, running or waiting
 *    for a retry; once its outcome has been emitted, enqueueing it again verifies it again;
 *  - an invalid contribution is an outcome, never retried;
 *  - a verification that could not be carried out (a missing or unreadable file, a crashed thread)
 *    is retried with exponential backoff, and after `attempts` tries becomes an 'error' outcome;
 *  - nothing survives close() or a crash: the queue lives in memory, and after a restart the server
 *    re-enqueues whatever SQLite still marks as verifying.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { FromVerificationThread, ToVerificationThread } from '../../worker/verification-thread.ts';
import type { VerificationDispatcher, VerificationOutcome, VerificationRequest } from './verification-job.ts';

export interface InProcessDispatcherOptions {
  /** Verifications running at once (they share the thread and its curve). Default 1. */
  concurrency?: number;
  /** Tries per request when verification cannot be carried out (I/O); not for invalid keys. Default 3. */
  attempts?: number;
  /** Delay before the first retry, doubled for each further one. Default 1000 ms. */
  backoffMs?: number;
  /** How long close() lets running verifications finish before terminating the thread. Default 10000 ms. */
  closeTimeoutMs?: number;
}

const THREAD_ENTRY = new URL('../../worker/verification-thread-entry.js', import.meta.url);
/**
 * What snarkjs's `web-worker` dependency expects to find in any non-main thread (it treats the
 * thread as one of its own and loads `mod`): an empty module. It also listens on parentPort, so
 * requests travel on a MessagePort of their own. See worker/verification-thread.ts.
 */
const THREAD_WORKER_DATA = { mod: 'data:text/javascript,', name: 'ceremony-verification', type: 'module' };

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

export function createInProcessDispatcher(options: InProcessDispatcherOptions = {}): VerificationDispatcher {
  const concurrency = positiveInteger('concurrency', options.concurrency ?? 1);
  const attempts = positiveInteger('attempts', options.attempts ?? 3);
  const backoffMs = options.backoffMs ?? 1000;
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;

  const tracked = new Map<string, Tracked>();
  const waiting: string[] = [];
  const listeners: Array<(outcome: VerificationOutcome) => void> = [];
  let thread: { worker: Worker; port: MessagePort } | undefined;
  let running = 0;
  let closed = false;

  const emit = (outcome: VerificationOutcome): void => {
    for (const listener of listeners) {
      try {
        const result: unknown = listener(outcome);
        if (result instanceof Promise) result.catch(reportListenerError);
      } catch (error) {
        reportListenerError(error);
      }
    }
  };

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
      emit({ contributionId, status: 'error', message: `verification failed after ${entry.attempt} attempt(s): ${message}` });
    } else {
      entry.state = 'backoff';
      entry.retryTimer = setTimeout(() => {
        entry.retryTimer = undefined;
        entry.attempt++;
        entry.state = 'queued';
        waiting.push(contributionId);
        pump();
      }, backoffMs * 2 ** (entry.attempt - 1));
    }
    pump();
  };

  const onThreadMessage = (message: FromVerificationThread): void => {
    if (closed) return;
    if (message.type === 'outcome') finish(message.outcome);
    else fail(message.contributionId, message.message);
  };

  // A thread that dies takes its running verifications with it: they count as failed tries
  // (retried like an I/O error), and the next request starts a fresh thread.
  const onThreadDeath = (dead: Worker, reason: string): void => {
    if (thread?.worker !== dead) return;
    thread.port.close();
    thread = undefined;
    if (closed) return;
    for (const [contributionId, entry] of tracked) {
      if (entry.state === 'running') fail(contributionId, reason);
    }
  };

  const startThread = (): { worker: Worker; port: MessagePort } => {
    const channel = new MessageChannel();
    const started = new Worker(THREAD_ENTRY, { workerData: { ...THREAD_WORKER_DATA, port: channel.port2 }, transferList: [channel.port2] });
    channel.port1.on('message', onThreadMessage);
    started.on('error', (error) => onThreadDeath(started, `verification thread crashed: ${error.message}`));
    started.on('exit', (code) => onThreadDeath(started, `verification thread exited (code ${code})`));
    return { worker: started, port: channel.port1 };
  };

  function pump(): void {
    while (!closed && running < concurrency && waiting.length > 0) {
      const contributionId = waiting.shift()!;
      const entry = tracked.get(contributionId);
      if (!entry || entry.state !== 'queued') continue;
      entry.state = 'running';
      running++;
      thread ??= startThread();
      thread.port.postMessage({ type: 'verify', request: entry.request } satisfies ToVerificationThread);
    }
  }

  return {
    async enqueue(request) {
      if (closed) throw new Error('the verification dispatcher is closed');
      if (tracked.has(request.contributionId)) return;
      tracked.set(request.contributionId, { request: { ...request }, attempt: 1, state: 'queued' });
      waiting.push(request.contributionId);
      pump();
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
      const stopping = thread;
      thread = undefined;
      if (!stopping) return;
      const exited = new Promise<void>((resolve) => stopping.worker.once('exit', () => resolve()));
      stopping.port.postMessage({ type: 'shutdown' } satisfies ToVerificationThread);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), closeTimeoutMs)));
      if ((await Promise.race([exited, timedOut])) === 'timeout') await stopping.worker.terminate();
      clearTimeout(timer);
      stopping.port.close();
    },
  };
}

function reportListenerError(error: unknown): void {
  process.stderr.write(`verification outcome listener failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
}
