/**
 * The BullMQ side of verification: a Worker that takes 'verify' jobs from the queue the
 * coordinator fills (server/verification-dispatch/bullmq-dispatcher.ts) and runs verifyRequest on them,
 * and 'prepare-head' jobs (a head's combination into the link cache, worker/prepare-head.ts), whose
 * result nobody waits for.
 *
 * What a job ends as, which the dispatcher relies on:
 *  - valid: the job completes with the 'valid' outcome as its return value;
 *  - invalid: the job fails with an UnrecoverableError whose message is the encoded refusal
 *    (core/verifier-contract/refusal-encoding.ts), so BullMQ never retries it;
 *  - a malformed job (data that does not parse, for 'verify' or 'prepare-head', or a name of
 *    neither): an UnrecoverableError too, since retrying it cannot help; for 'verify' the
 *    coordinator reads it as an 'error' outcome;
 *  - anything else (a file missing or unreadable): an ordinary failure, retried with the job's own
 *    attempts and backoff.
 * A worker that dies mid-job (kill -9, a lost machine) stops renewing its lock; after
 * `lockDurationMs` another worker's stalled-job check (every `stalledIntervalMs`) puts the job back
 * in the queue and it is verified again, by whichever worker takes it.
 */
import { hostname } from 'node:os';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import {
  DEFAULT_VERIFICATION_QUEUE,
  PREPARE_HEAD_JOB_NAME,
  VERIFICATION_JOB_NAME,
  parseHeadPreparationRequest,
  parseVerificationRequest,
  type HeadPreparationRequest,
  type HeadPreparationResult,
  type VerificationOutcome,
  type VerificationRequest,
} from '../core/verifier-contract/verifier-contract.ts';
import { boundedText } from '../core/bounded-text.ts';
import { encodeRefusal } from '../core/verifier-contract/refusal-encoding.ts';
import { prepareHead } from './prepare-head.ts';
import { verifyRequest } from './verify-request.ts';

export interface VerificationWorkerOptions {
  redisUrl: string;
  /** Default 'ceremony-verification' (the coordinator's default queue). */
  queueName?: string;
  /** Jobs verified at once by this process. Default 1. */
  concurrency?: number;
  /**
   * How long a job stays locked to this worker without a renewal (renewed every half of it while
   * the job runs). After a crash, its job waits at least this long before another worker retries
   * it. Default 30000 ms (BullMQ's); a verification must not block the event loop for this long.
   */
  lockDurationMs?: number;
  /** How often this worker looks for jobs whose worker died. Default 30000 ms. */
  stalledIntervalMs?: number;
  /** How many times a job may be recovered from a dead worker before it fails. Default 1. */
  maxStalledCount?: number;
  /** Recorded on each job it processes (job.processedBy). Default `<hostname>:<pid>`. */
  name?: string;
  /** Connection and processing errors (ioredis reconnects by itself). Default: a line on stderr. */
  onError?: (error: Error) => void;
}

type VerificationJob = Job<unknown, VerificationOutcome | HeadPreparationResult, string>;

/** A head preparation: the head's combination into the coordinator's cache (worker/prepare-head.ts). */
async function processHeadPreparation(job: VerificationJob): Promise<HeadPreparationResult> {
  let request: HeadPreparationRequest;
  try {
    request = parseHeadPreparationRequest(job.data);
  } catch (error) {
    throw new UnrecoverableError((error as Error).message);
  }
  return prepareHead(request);
}

async function processVerification(job: VerificationJob): Promise<VerificationOutcome | HeadPreparationResult> {
  if (job.name === PREPARE_HEAD_JOB_NAME) return processHeadPreparation(job);
  if (job.name !== VERIFICATION_JOB_NAME) throw new UnrecoverableError(`unknown job type "${job.name}"`);
  let request: VerificationRequest;
  try {
    request = parseVerificationRequest(job.data);
  } catch (error) {
    // Retrying a malformed job cannot help; the coordinator sees it as an 'error' outcome.
    throw new UnrecoverableError((error as Error).message);
  }
  const outcome = await verifyRequest(request).catch((error: unknown) => {
    // Retried, then read by the coordinator as the failure's reason and kept in Redis (with its stack): bounded,
    // whatever it quotes; its class and code stay.
    if (error instanceof Error && boundedText(error.message) !== error.message) {
      error.message = boundedText(error.message);
      error.stack = `${error.name}: ${error.message}`;
    }
    throw error;
  });
  if (outcome.status === 'invalid') {
    throw new UnrecoverableError(encodeRefusal(outcome));
  }
  return outcome;
}

/** Starts a worker on the queue; it runs until `close()`d. */
export function startVerificationWorker(
  options: VerificationWorkerOptions,
): Worker<unknown, VerificationOutcome | HeadPreparationResult, string> {
  const worker = new Worker<unknown, VerificationOutcome | HeadPreparationResult, string>(
    options.queueName ?? DEFAULT_VERIFICATION_QUEUE,
    processVerification,
    {
      connection: { url: options.redisUrl },
      name: options.name ?? `${hostname()}:${process.pid}`,
      concurrency: options.concurrency ?? 1,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? 30_000,
      maxStalledCount: options.maxStalledCount ?? 1,
    },
  );
  worker.on(
    'error',
    options.onError ?? ((error) => void process.stderr.write(`verification worker: ${error.message}\n`)),
  );
  return worker;
}
