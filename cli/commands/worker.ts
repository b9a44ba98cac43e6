/** `ceremony worker`: a BullMQ verification worker (worker/main.ts) configured from the environment. */
import { Command } from 'commander';
import { CoordinatorError } from '../../core/errors.ts';
import { loadWorkerConfig } from '../../worker/worker-config.ts';
import { runVerificationWorker } from '../../worker/main.ts';

export function workerCommand(): Command {
  return new Command('worker')
    .description("run a verification worker on the coordinator's Redis queue (until SIGTERM)")
    .option('--redis <url>', 'Redis URL (default: $REDIS_URL)')
    .option('--concurrency <n>', 'verifications run at once (default: $WORKER_CONCURRENCY or 1)')
    .addHelpText(
      'after',
      '\nEnvironment:\n' +
        '  REDIS_URL                   Redis of the coordinator (required unless --redis)\n' +
        '  VERIFICATION_QUEUE          queue name (default ceremony-verification, the only one `ceremony serve`\n' +
        '                              queues on: leave it unset for a coordinator; for tests on a shared Redis)\n' +
        '  WORKER_CONCURRENCY          as --concurrency (default 1)\n' +
        '  WORKER_LOCK_DURATION_MS     a job of a crashed worker is retried after this long (default 30000)\n' +
        '  WORKER_STALLED_INTERVAL_MS  how often to look for such jobs (default 30000)\n' +
        '  WORKER_NAME                 recorded on each job processed (default <hostname>:<pid>)\n' +
        'The data folder must be mounted at the same path as on the coordinator.',
    )
    .action(async (options: { redis?: string; concurrency?: string }) => {
      if (options.concurrency !== undefined && !/^[1-9][0-9]*$/.test(options.concurrency)) {
        throw new CoordinatorError(
          'usage.invalid_arguments',
          `--concurrency must be a positive integer, got "${options.concurrency}"`,
        );
      }
      await runVerificationWorker(
        loadWorkerConfig(process.env, { redisUrl: options.redis, concurrency: options.concurrency }),
      );
    });
}
