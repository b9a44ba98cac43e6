/** `ceremony worker`: a BullMQ verification worker (worker/main.ts) configured from the environment. */
import { Command, Option } from 'commander';
import { helpExamples, helpItems, helpNotes } from './command-help.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { loadWorkerConfig } from '../../worker/worker-config.ts';

export function workerCommand(): Command {
  return new Command('worker')
    .description("run a verification worker on the coordinator's Redis queue (until SIGTERM)")
    .addOption(new Option('--redis <url>', 'Redis URL of the coordinator').default(undefined, '$REDIS_URL'))
    .addOption(
      new Option('--concurrency <n>', 'verifications run at once').default(undefined, '$WORKER_CONCURRENCY, else 1'),
    )
    .addHelpText(
      'after',
      helpItems('Environment:', [
        ['REDIS_URL', 'Redis of the coordinator (required unless --redis)'],
        [
          'VERIFICATION_QUEUE',
          'queue name (default: ceremony-verification, the only one `ceremony serve` queues on: leave it unset ' +
            'for a coordinator; for tests on a shared Redis)',
        ],
        ['WORKER_CONCURRENCY', 'as --concurrency (default: 1)'],
        ['WORKER_LOCK_DURATION_MS', 'a job of a crashed worker is retried after this long (default: 30000)'],
        ['WORKER_STALLED_INTERVAL_MS', 'how often to look for such jobs (default: 30000)'],
        ['WORKER_NAME', 'recorded on each job processed (default: <hostname>:<pid>)'],
      ]),
    )
    .addHelpText('after', helpNotes('The data folder must be mounted at the same path as on the coordinator.'))
    .addHelpText(
      'after',
      helpExamples([
        'two verifications at once for the coordinator on this machine',
        'REDIS_URL=redis://127.0.0.1:6379 ceremony worker --concurrency 2',
      ]),
    )
    .action(async (options: { redis?: string; concurrency?: string }) => {
      if (options.concurrency !== undefined && !/^[1-9][0-9]*$/.test(options.concurrency)) {
        throw new CoordinatorError(
          'usage.invalid_arguments',
          `--concurrency must be a positive integer, got "${options.concurrency}"`,
        );
      }
      // Loaded here, not at the top: `ceremony worker --help` needs none of BullMQ, Redis or snarkjs.
      const { runVerificationWorker } = await import('../../worker/main.ts');
      await runVerificationWorker(
        loadWorkerConfig(process.env, { redisUrl: options.redis, concurrency: options.concurrency }),
      );
    });
}
