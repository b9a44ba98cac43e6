/**
 * A verification worker process (`ceremony worker`, or `tsx worker/main.ts`): configuration from
 * the environment, a BullMQ worker until SIGTERM or SIGINT, then a graceful stop: the running
 * verifications finish, Redis connections close and the curve's threads stop, so the process exits
 * by itself. A second signal stops at once (the interrupted job is retried by another worker).
 */
import { pathToFileURL } from 'node:url';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';
import { loadWorkerConfig, type WorkerConfig } from './worker-config.ts';
import { startVerificationWorker } from './verification-worker.ts';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

function jobLabel(job: { id?: string; data: unknown } | undefined): string {
  const contributionId = (job?.data as { contributionId?: unknown } | undefined)?.contributionId;
  return typeof contributionId === 'string' ? `contribution ${contributionId}` : `job ${job?.id}`;
}

/** Runs a worker with `config` until a stop signal; resolves once it has shut down. */
export async function runVerificationWorker(config: WorkerConfig, signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT']): Promise<void> {
  const worker = startVerificationWorker(config);
  worker.on('active', (job) => log(`${jobLabel(job)}: verifying`));
  worker.on('completed', (job, outcome) => log(`${jobLabel(job)}: ${outcome.status}`));
  worker.on('failed', (job, error) => log(`${jobLabel(job)}: ${error.name === 'UnrecoverableError' ? 'not retried' : 'failed (retried while attempts remain)'}: ${error.message}`));

  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    for (const signal of signals) process.once(signal, () => resolve(signal));
  });
  await worker.waitUntilReady();
  log(`verification worker ${config.name} ready on queue ${config.queueName} (concurrency ${config.concurrency})`);

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
