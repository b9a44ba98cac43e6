/**
 * A verification worker process (`ceremony worker`, or `tsx worker/main.ts`): configuration from
 * the environment, a BullMQ worker until SIGTERM or SIGINT, then a graceful stop: the running
 * verifications finish, Redis connections close and the curve's threads stop, so the process exits
 * by itself. A second signal stops at once (the interrupted job is retried by another worker).
 */
import { pathToFileURL } from 'node:url';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { nodeEndOfLifeWarning } from '../core/runtime/node-support.ts';
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';
import { PREPARE_HEAD_JOB_NAME } from '../core/verifier-contract/verifier-contract.ts';
import { loadWorkerConfig, type WorkerConfig } from './worker-config.ts';
import { startVerificationWorker } from './verification-worker.ts';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

function jobLabel(job: { id?: string; data: unknown } | undefined): string {
  const data = job?.data as { contributionId?: unknown; circuit?: unknown } | undefined;
  if (typeof data?.contributionId === 'string') return `contribution ${data.contributionId}`;
  // A head preparation names its circuit.
  return typeof data?.circuit === 'string' ? `${data.circuit}'s head` : `job ${job?.id}`;
}

/** What the worker's 'failed' event reports: the job after the attempt was counted, and its error. */
export interface FailedAttempt {
  id?: string;
  data: unknown;
  attemptsMade: number;
  opts: { attempts?: number };
}

/**
 * The operator's line for one failed attempt: which job, which attempt of how many, whether BullMQ
 * tries it again, and the error with its code (an errno such as ENOENT, or a stable ceremony code).
 * A refusal's message is its `{"code","message"}` payload. Error messages of the verifier never
 * carry the challenge seed or a combination derived from it (core/link-check/link-challenge.ts), and
 * the job's data (paths) is not printed beyond the contribution id.
 */
function failedAttemptLine(job: FailedAttempt | undefined, error: Error & { code?: unknown }): string {
  const attempts = job?.opts.attempts ?? 1;
  const made = job?.attemptsMade ?? 0;
  const fate =
    error.name === 'UnrecoverableError' ? 'not retried' : made < attempts ? 'will be retried' : 'no attempts left';
  const code = typeof error.code === 'string' ? `${error.code}: ` : '';
  return (
    `${jobLabel(job)} (job ${job?.id ?? '?'}): attempt ${made} of ` +
    `${attempts} failed, ${fate}: ${code}${error.message}`
  );
}

/** Runs a worker with `config` until a stop signal; resolves once it has shut down. */
export async function runVerificationWorker(
  config: WorkerConfig,
  signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'],
): Promise<void> {
  const worker = startVerificationWorker(config);
  worker.on('active', (job) =>
    log(`${jobLabel(job)}: ${job.name === PREPARE_HEAD_JOB_NAME ? "caching the head's combination" : 'verifying'}`),
  );
  worker.on('completed', (job, done) =>
    log(`${jobLabel(job)}: ${'status' in done ? done.status : `head combination ${done.result} (${done.ms} ms)`}`),
  );
  worker.on('failed', (job, error) => log(failedAttemptLine(job, error)));
  // A job whose worker stopped renewing its lock (died, or its event loop was blocked for longer
  // than the lock lasts) goes back to the queue; the second time it fails ('job stalled more than
  // allowable limit'), so a stall must be visible where it happens.
  worker.on('stalled', (jobId) =>
    log(`job ${jobId}: stalled (its lock expired), queued again or failed if it stalled before`),
  );

  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    for (const signal of signals) process.once(signal, () => resolve(signal));
  });
  await worker.waitUntilReady();
  log(`verification worker ${config.name} ready on queue ${config.queueName} (concurrency ${config.concurrency})`);
  const endOfLife = nodeEndOfLifeWarning(process.version, new Date());
  if (endOfLife) log(`warning: ${endOfLife}`);

  const signal = await stopped;
  log(`${signal}: finishing running verifications`);
  for (const again of signals) process.once(again, () => process.exit(1));
  await worker.close();
  await releaseBn128();
  log('verification worker stopped');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  silenceSnarkjsHandleWarnings();
  await runVerificationWorker(loadWorkerConfig(process.env));
}
