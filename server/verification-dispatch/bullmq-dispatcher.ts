/**
 * The verifier `ceremony serve` uses with REDIS_URL: verification jobs on a BullMQ queue, taken by
 * any number of `ceremony worker` processes (worker/verification-worker.ts) on any machine that
 * sees the data folder at the same paths.
 *
 * - One job per contribution: the job id is derived from the contributionId, so enqueueing the same
 *   contribution again (a double submit, a restart re-enqueueing what SQLite still marks as
 *   verifying) never queues it twice. A job that already finished is answered from its stored
 *   result (finished jobs are kept `keepFinishedSeconds`), except one that ended in 'error', which is
 *   removed and queued afresh: an error decided nothing about the contribution.
 * - A valid or invalid contribution is decided once. The worker returns 'valid' as the job's
 *   result and throws an UnrecoverableError for 'invalid' (so BullMQ never retries it), the refusal
 *   in its message (core/verifier-contract/refusal-encoding.ts). Any other failure (I/O) is retried
 *   `attempts` times with exponential backoff, then reported as 'error'.
 * - Outcomes come from QueueEvents; a periodic sweep of the requests still awaiting an outcome
 *   catches anything the event stream could not deliver (events sent while this process was
 *   connecting, a Redis restart that lost the job, which is then queued again).
 * - One rule decides what a failed job means, whichever path sees it (reconcileJob): a job that
 *   failed before this request was enqueued is another request's error and is queued afresh, once
 *   per enqueue; a job that failed after it (the request's own job, its attempts used up or lost
 *   twice by its worker) settles the request as 'invalid' or 'error'. A 'failed' event only
 *   prompts that check: events are read from a Redis stream, late, and one may belong to a job
 *   since removed and queued again under the same id, whose failure must not settle the new one.
 * - Redis being unreachable never loses a request: enqueue keeps it among the requests awaiting an
 *   outcome whether or not Redis answered, reports the failure on stderr and returns (after at most
 *   `enqueueTimeoutMs`: ioredis holds commands while it reconnects, for minutes). The caller has
 *   already recorded the contribution as verifying; the sweep queues the job once Redis is back.
 * - A head preparation (prepareHead) is a `prepare-head` job on the same queue, one per head file
 *   (job id `head-` and the file's hash), removed when done; nothing waits for it, and its events
 *   settle no request.
 */
import { Queue, QueueEvents, type Job, type JobsOptions } from 'bullmq';
import { CoordinatorError } from '../../core/errors.ts';
import {
  DEFAULT_VERIFICATION_QUEUE,
  PREPARE_HEAD_JOB_NAME,
  VERIFICATION_JOB_NAME,
  type HeadPreparationRequest,
  type HeadPreparationResult,
  type VerificationOutcome,
  type VerificationRequest,
} from '../../core/verifier-contract/verifier-contract.ts';
import { decodeRefusal } from '../../core/verifier-contract/refusal-encoding.ts';
import { notifyOutcome, type VerificationDispatcher } from './verification-dispatcher.ts';

export interface BullmqDispatcherOptions {
  /** redis:// or rediss:// URL of the Redis the workers listen on. */
  redisUrl: string;
  /**
   * Default 'ceremony-verification', the workers' default VERIFICATION_QUEUE. The coordinator always
   * uses the default (start-coordinator.ts passes none); another name is for tests with workers of their own.
   */
  queueName?: string;
  /** Tries per job when verification cannot be carried out (I/O); an invalid key is tried once. Default 3. */
  attempts?: number;
  /** Delay before the first retry, doubled for each further one. Default 1000 ms. */
  backoffMs?: number;
  /** How long finished jobs (and so their outcomes) stay in Redis. Default 7 days. */
  keepFinishedSeconds?: number;
  /** How often requests still awaiting an outcome are checked against Redis. Default 5000 ms. */
  reconcileIntervalMs?: number;
  /**
   * How long enqueue waits for Redis before returning anyway (the request stays pending and the
   * sweep queues it). Default 5000 ms.
   */
  enqueueTimeoutMs?: number;
}

type VerificationJob = Job<VerificationRequest, VerificationOutcome, typeof VERIFICATION_JOB_NAME>;

interface PendingRequest {
  request: VerificationRequest;
  /** True once the job under this request's id is known to be its own (see reconcileJob). */
  queued: boolean;
}

/**
 * BullMQ refuses custom ids that are integers or contain ':'; database ids are often both, so the
 * contribution id is prefixed and escaped.
 */
export function verificationJobId(contributionId: string): string {
  return `contribution-${encodeURIComponent(contributionId)}`;
}

function outcomeOfFailure(
  contributionId: string,
  failedReason: string | undefined,
  attemptsMade: number | undefined,
): VerificationOutcome {
  const refusal = decodeRefusal(failedReason);
  if (refusal) return { contributionId, status: 'invalid', ...refusal };
  const tries = attemptsMade === undefined ? '' : ` after ${attemptsMade} attempt(s)`;
  return {
    contributionId,
    status: 'error',
    message: `verification failed${tries}: ${failedReason ?? 'unknown reason'}`,
  };
}

function outcomeOfResult(contributionId: string, returnvalue: unknown): VerificationOutcome {
  const result = returnvalue as Partial<Extract<VerificationOutcome, { status: 'valid' }>> | null | undefined;
  if (result?.status === 'valid' && typeof result.contributionHash === 'string') {
    return result.recordedName === undefined
      ? { contributionId, status: 'valid', contributionHash: result.contributionHash }
      : {
          contributionId,
          status: 'valid',
          contributionHash: result.contributionHash,
          recordedName: result.recordedName,
        };
  }
  return {
    contributionId,
    status: 'error',
    message: `the worker returned an unexpected result: ${JSON.stringify(returnvalue)}`,
  };
}

/**
 * Runs `look(key)` for one key at a time. A call for a key already being looked at returns at once
 * (a sweep must not wait on an enqueue held by a Redis outage) and has the running look go once
 * more when it is done: it may have read a state the call's event has since made stale.
 */
function oneLookPerKey(look: (key: string) => Promise<void>): (key: string) => Promise<void> {
  const running = new Map<string, { again: boolean }>();
  return async (key) => {
    const current = running.get(key);
    if (current) {
      current.again = true;
      return;
    }
    const run = { again: true };
    running.set(key, run);
    try {
      while (run.again) {
        run.again = false;
        await look(key);
      }
    } finally {
      running.delete(key);
    }
  };
}

/** Whether `work` settles within `ms`; it goes on either way. */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work.then(() => true), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits for both connections; if Redis cannot be reached, closes them and says so. */
async function untilConnected(queue: Queue, events: QueueEvents): Promise<void> {
  try {
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
  } catch (error) {
    await Promise.allSettled([events.close(), queue.close()]);
    throw new CoordinatorError(
      'verification.unavailable',
      `cannot reach the verification queue on Redis: ${(error as Error).message}`,
    );
  }
}

/** Logs a queue's connection and command errors (ioredis reconnects by itself). */
function logError(error: Error): void {
  process.stderr.write(`verification queue: ${error.message}\n`);
}

export async function createBullmqDispatcher(options: BullmqDispatcherOptions): Promise<VerificationDispatcher> {
  const dispatcher = new BullmqDispatcher(options);
  await dispatcher.connect();
  return dispatcher;
}

type VerificationQueue = Queue<VerificationRequest, VerificationOutcome, typeof VERIFICATION_JOB_NAME>;
type HeadPreparationQueue = Queue<HeadPreparationRequest, HeadPreparationResult, typeof PREPARE_HEAD_JOB_NAME>;

/** The requests awaiting an outcome and their jobs; see the module comment for its semantics. */
class BullmqDispatcher implements VerificationDispatcher {
  private readonly queueName: string;
  private readonly connection: { url: string };
  /** Every verification job's: its tries, their backoff, how long it is kept once finished. */
  private readonly jobOptions: JobsOptions;
  private readonly reconcileIntervalMs: number;
  private readonly enqueueTimeoutMs: number;
  private readonly queue: VerificationQueue;
  private readonly events: QueueEvents;
  /**
   * The same queue, for head preparations: its own view, so each view's jobs keep their own types.
   * Opened by connect(), which createBullmqDispatcher awaits before handing the dispatcher out.
   */
  private heads: HeadPreparationQueue | undefined;
  private readonly listeners: Array<(outcome: VerificationOutcome) => void> = [];
  /**
   * Requests awaiting an outcome, by job id. `queued` turns true once the job in Redis is known to
   * be this request's own (queued by it, or found unfinished): from then on its failure is an answer.
   */
  private readonly pending = new Map<string, PendingRequest>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping = false;
  private closed = false;

  /**
   * Brings one pending request in line with its job: answers it if finished, queues it if lost.
   * One look per job at a time, so a sweep, an event and an enqueue never remove and re-add the
   * same job twice.
   */
  private readonly reconcile = oneLookPerKey(async (jobId) => {
    const entry = this.pending.get(jobId);
    if (entry && !this.closed) await this.reconcileJob(jobId, entry);
  });

  constructor(options: BullmqDispatcherOptions) {
    this.queueName = options.queueName ?? DEFAULT_VERIFICATION_QUEUE;
    const keepFinishedSeconds = options.keepFinishedSeconds ?? 7 * 24 * 3600;
    this.jobOptions = {
      attempts: options.attempts ?? 3,
      backoff: { type: 'exponential', delay: options.backoffMs ?? 1000 },
      removeOnComplete: { age: keepFinishedSeconds },
      removeOnFail: { age: keepFinishedSeconds },
    };
    this.reconcileIntervalMs = options.reconcileIntervalMs ?? 5000;
    this.enqueueTimeoutMs = options.enqueueTimeoutMs ?? 5000;
    this.connection = { url: options.redisUrl };
    this.queue = new Queue(this.queueName, { connection: this.connection });
    this.events = new QueueEvents(this.queueName, { connection: this.connection });
    // Without a listener an 'error' event would throw; ioredis reconnects by itself, and a request
    // that cannot reach Redis stays pending for the sweep, so connection trouble only needs to be visible.
    this.queue.on('error', logError);
    this.events.on('error', logError);
    // A completed job is never removed and queued again, so its event always answers its request.
    // A head preparation's job is no request's: nothing is pending under its id, so its events
    // (this one and 'failed') change nothing.
    this.events.on('completed', ({ jobId, returnvalue }) =>
      this.settle(jobId, (id) => outcomeOfResult(id, returnvalue)),
    );
    // 'failed' is only published once a job has no attempts left (or failed unrecoverably), but it
    // may be the late event of a job since replaced: the job's state in Redis says what it means.
    this.events.on('failed', ({ jobId }) => {
      if (this.pending.has(jobId)) void this.reconcile(jobId).catch((error: Error) => logError(error));
    });
  }

  /** Waits for Redis (closing both connections if it cannot be reached), then starts the sweep. */
  async connect(): Promise<void> {
    await untilConnected(this.queue, this.events);
    this.heads = new Queue(this.queueName, { connection: this.connection });
    this.heads.on('error', logError);
    this.sweepTimer = setInterval(() => this.sweep(), this.reconcileIntervalMs);
    this.sweepTimer.unref();
  }

  async enqueue(request: VerificationRequest): Promise<void> {
    if (this.closed) throw new Error('the verification dispatcher is closed');
    const jobId = verificationJobId(request.contributionId);
    if (this.pending.has(jobId)) return;
    // Pending first, so a 'completed' event arriving while we look at the job is not missed.
    // It stays pending if Redis cannot be reached: the caller has recorded the contribution as
    // verifying, and the sweep queues the job once Redis answers again.
    this.pending.set(jobId, { request: { ...request }, queued: false });
    const failed = (error: Error): void => {
      if (!this.closed)
        logError(
          new Error(
            `cannot queue the verification of ${request.contributionId} yet ` +
              `(retried every ${this.reconcileIntervalMs} ms): ${error.message}`,
          ),
        );
    };
    const attempt = this.reconcile(jobId).catch((error: Error) => failed(error));
    // ioredis holds commands while it reconnects (minutes before it gives up): do not hold the
    // caller that long. The attempt goes on; while it runs, the sweep leaves this job to it.
    if (!(await settlesWithin(attempt, this.enqueueTimeoutMs))) {
      failed(new Error(`Redis did not answer within ${this.enqueueTimeoutMs} ms`));
    }
  }

  prepareHead(request: HeadPreparationRequest): void {
    if (this.closed) return;
    // One job per head file: a second start while it waits adds nothing. Removed when done, so
    // a later start may ask again (the worker finds the entry and does nothing) or retry a
    // failure; its outcome is the worker's to log, since nothing here waits for it.
    const jobId = `head-${request.headFileHash}`;
    this.heads!.add(PREPARE_HEAD_JOB_NAME, request, {
      jobId,
      attempts: 3,
      removeOnComplete: true,
      removeOnFail: true,
    }).catch((error: Error) => logError(new Error(`cannot ask for ${request.circuit}'s head: ${error.message}`)));
  }

  onOutcome(listener: (outcome: VerificationOutcome) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweepTimer);
    this.pending.clear();
    await Promise.allSettled([this.events.close(), this.queue.close(), this.heads?.close()]);
  }

  private settle(jobId: string, outcome: (contributionId: string) => VerificationOutcome): void {
    const entry = this.pending.get(jobId);
    if (!entry || this.closed) return;
    this.pending.delete(jobId);
    notifyOutcome(this.listeners, outcome(entry.request.contributionId));
  }

  /** Every request still awaiting an outcome, looked at in turn; one sweep at a time. */
  private sweep(): void {
    if (this.sweeping || this.closed) return;
    this.sweeping = true;
    void (async () => {
      for (const jobId of [...this.pending.keys()]) {
        if (this.closed) break;
        await this.reconcile(jobId).catch((error: Error) => logError(error));
      }
    })().finally(() => (this.sweeping = false));
  }

  private add(jobId: string, request: VerificationRequest): Promise<unknown> {
    return this.queue.add(VERIFICATION_JOB_NAME, request, { jobId, ...this.jobOptions });
  }

  private async reconcileJob(jobId: string, entry: PendingRequest): Promise<void> {
    // Settled meanwhile (by an event), or settled and enqueued anew: then this look is out of date.
    const superseded = (): boolean => this.pending.get(jobId) !== entry;
    // The state first, the job's data after: a job read while it was still running carries no
    // result, and reading its state a moment later as 'completed' would pair that state with a
    // null result (seen: a valid contribution answered "unexpected result: null"). A job's result
    // or failure is written together with its final state, so data read after that state is final.
    const state = await this.queue.getJobState(jobId);
    if (superseded()) return;
    if (state === 'unknown') return this.requeueLost(jobId, entry);
    if (state !== 'completed' && state !== 'failed') {
      // Waiting, delayed, active: this request's job; its event will come (or a sweep sees it finished).
      entry.queued = true;
      return;
    }
    const job = (await this.queue.getJob(jobId)) as VerificationJob | undefined;
    if (superseded()) return;
    if (!job) return this.requeueLost(jobId, entry);
    if (state === 'completed') return this.settle(jobId, (id) => outcomeOfResult(id, job.returnvalue));
    await this.answerFailedJob(jobId, entry, job);
  }

  /** Never queued (Redis was down at enqueue) or lost from Redis (a restart without persistence). */
  private async requeueLost(jobId: string, entry: PendingRequest): Promise<void> {
    await this.add(jobId, entry.request);
    entry.queued = true;
  }

  private async answerFailedJob(jobId: string, entry: PendingRequest, job: VerificationJob): Promise<void> {
    const outcome = outcomeOfFailure(entry.request.contributionId, job.failedReason, job.attemptsMade);
    if (outcome.status === 'invalid' || entry.queued) {
      // A refusal is an answer whenever it was given; an error is one when this request's own
      // job ran out of attempts. Queuing that job again would retry it for ever.
      this.settle(jobId, () => outcome);
    } else {
      // The error of an earlier request (before a coordinator restart, say) decided nothing
      // about the contribution: this request asks for the verification again, once.
      await job.remove();
      await this.add(jobId, entry.request);
      entry.queued = true;
    }
  }
}
