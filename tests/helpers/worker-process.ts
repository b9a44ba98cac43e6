/**
 * `ceremony worker` for a test: the real command (bin/ceremony.js) in its own process group on a
 * given Redis, resolved once it has printed its ready line, stopped with everything it started by
 * `stop()` (tests/helpers/process-group.ts). What it prints is kept (`output()`, `waitFor()`), and
 * its lines that report trouble reach the test's stderr as they come, so a verification that went
 * wrong shows why beside the verdict the test saw.
 *
 * Options of `startWorkerProcess(options)`:
 * - `redisUrl` (required): the Redis it takes jobs from (`--redis`).
 * - `queueName`: VERIFICATION_QUEUE (default: the worker's own default queue).
 * - `name`: WORKER_NAME (BullMQ's `processedBy`; default: the worker's host:pid).
 * - `concurrency`: `--concurrency` (default: the worker's, 1).
 * - `env`: more settings (e.g. WORKER_LOCK_DURATION_MS) over the test's environment. The worker's
 *   own variables are removed from the inherited environment first, so only the test sets them.
 * - `echo`: which lines go to the test's stderr: `'failures'` (default: failed attempts, stalls,
 *   errors, warnings), `'all'`, or `'none'`.
 * - `readyTimeoutMs`: how long to wait for the ready line (default 60 s); on a time-out or an early
 *   exit it rejects with the worker's output, and the group is stopped.
 * - `label`: the prefix of echoed lines and of error messages (default `ceremony worker`).
 */
import { startGroup, type GroupProcess } from './process-group.ts';
import { CEREMONY_BIN, environmentWith } from './run-cli.ts';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';

export interface WorkerProcessOptions {
  redisUrl: string;
  queueName?: string;
  name?: string;
  concurrency?: number;
  env?: Record<string, string>;
  echo?: 'failures' | 'all' | 'none';
  readyTimeoutMs?: number;
  label?: string;
}

/** The worker's process group (output, waitFor, exited, stop: SIGTERM to the group by default). */
export type WorkerProcess = GroupProcess;

/** What the worker reads from its environment (worker/worker-config.ts). */
const WORKER_VARIABLES = [
  'REDIS_URL',
  'VERIFICATION_QUEUE',
  'WORKER_CONCURRENCY',
  'WORKER_LOCK_DURATION_MS',
  'WORKER_STALLED_INTERVAL_MS',
  'WORKER_NAME',
];
const TROUBLE = /fail|stall|error|warn|unhandled/i;

export async function startWorkerProcess(options: WorkerProcessOptions): Promise<WorkerProcess> {
  const label = options.label ?? 'ceremony worker';
  const env = environmentWith({
    ...Object.fromEntries(WORKER_VARIABLES.map((name) => [name, undefined])),
    ...(options.queueName !== undefined ? { VERIFICATION_QUEUE: options.queueName } : {}),
    ...(options.name !== undefined ? { WORKER_NAME: options.name } : {}),
    ...options.env,
  });
  const args = [CEREMONY_BIN, 'worker', '--redis', options.redisUrl];
  if (options.concurrency !== undefined) args.push('--concurrency', String(options.concurrency));
  const worker = startGroup(process.execPath, args, { cwd: REPO_ROOT, env, label });
  echoLines(worker, label, options.echo ?? 'failures');
  try {
    await worker.waitFor(/ready on queue (\S+)/, options.readyTimeoutMs ?? 60_000);
  } catch (error) {
    await worker.stop('SIGKILL');
    throw error;
  }
  return worker;
}

function echoLines(worker: GroupProcess, label: string, echo: 'failures' | 'all' | 'none'): void {
  if (echo === 'none') return;
  for (const stream of [worker.child.stdout!, worker.child.stderr!]) {
    let partial = '';
    const print = (line: string): void => {
      if (line !== '' && (echo === 'all' || TROUBLE.test(line))) process.stderr.write(`${label}: ${line}\n`);
    };
    stream.on('data', (data: Buffer) => {
      const text = partial + data.toString();
      const complete = text.split('\n');
      partial = complete.pop()!;
      complete.forEach(print);
    });
    stream.on('end', () => print(partial));
  }
}
