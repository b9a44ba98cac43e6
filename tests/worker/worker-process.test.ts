/**
 * `ceremony worker` as a real process: its command line, a graceful stop on SIGTERM, and a worker
 * killed with SIGKILL in the middle of a job, whose job another worker then completes (BullMQ's
 * stalled-job recovery, with short lock settings).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Queue, QueueEvents } from 'bullmq';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { createBullmqDispatcher, verificationJobId } from '../../server/verification-dispatch/bullmq-dispatcher.ts';
import type { VerificationOutcome } from '../../core/verifier-contract/verifier-contract.ts';
import { startVerificationWorker } from '../../worker/verification-worker.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { runCli } from '../helpers/run-cli.ts';
import { startWorkerProcess, type WorkerProcess, type WorkerProcessOptions } from '../helpers/worker-process.ts';
import {
  outcomeCollector,
  validOutcome,
  verificationFixture,
  type VerificationFixture,
} from './verification-fixture.ts';

const workers: WorkerProcess[] = [];

/** `ceremony worker` on the test's Redis, stopped (its whole group) by the file's after hook. */
async function startWorker(options: Omit<WorkerProcessOptions, 'redisUrl'> = {}): Promise<WorkerProcess> {
  const worker = await startWorkerProcess({ ...options, redisUrl: redis.url });
  workers.push(worker);
  return worker;
}

let redis: RedisServer;
let fixture: VerificationFixture;
const closers: Array<() => Promise<unknown>> = [];

before(async () => {
  [redis, fixture] = await Promise.all([startRedisServer(), verificationFixture(['transact84'])]);
});

after(async () => {
  for (const worker of workers) await worker.stop('SIGKILL');
  for (const close of closers.reverse()) await close().catch(() => {});
  await redis?.stop();
  await fixture?.cleanup();
  await releaseBn128();
});

test('`ceremony worker --help` documents its options and environment; `ceremony --help` lists it', async () => {
  const help = await runCli(['worker', '--help']);
  assert.equal(help.code, 0);
  for (const text of [
    '--redis <url>',
    '--concurrency <n>',
    'REDIS_URL',
    'VERIFICATION_QUEUE',
    'WORKER_CONCURRENCY',
    'WORKER_LOCK_DURATION_MS',
  ]) {
    assert.ok(help.stdout.includes(text), `--help lacks ${text}`);
  }
  const top = await runCli(['--help']);
  assert.equal(top.code, 0);
  assert.match(top.stdout, /^\s+worker\s+run a verification worker/m);
});

test('`ceremony worker` refuses a missing Redis URL or a bad setting, naming it', async () => {
  // No REDIS_URL leaking in from CI.
  const noRedis = await runCli(['worker'], { env: { REDIS_URL: undefined } });
  assert.equal(noRedis.code, 1);
  assert.match(noRedis.stderr, /config\.invalid.*REDIS_URL/);
  const badConcurrency = await runCli(['worker', '--redis', redis.url, '--concurrency', 'many']);
  assert.equal(badConcurrency.code, 2);
  assert.match(badConcurrency.stderr, /usage\.invalid_arguments.*--concurrency/);
  const badEnvironment = await runCli(['worker', '--redis', redis.url], { env: { WORKER_LOCK_DURATION_MS: 'soon' } });
  assert.equal(badEnvironment.code, 1);
  assert.match(badEnvironment.stderr, /config\.invalid.*WORKER_LOCK_DURATION_MS/);
});

test('SIGTERM stops a worker gracefully: it exits by itself with status 0', async () => {
  const worker = await startWorker({ queueName: 'graceful-test' });
  await worker.waitFor(/ready on queue graceful-test/);
  worker.child.kill('SIGTERM');
  const started = Date.now();
  assert.deepEqual(await worker.exited, { code: 0, signal: null });
  assert.ok(Date.now() - started < 10_000);
  assert.match(worker.output(), /verification worker stopped/);
});

test('a worker killed with SIGKILL mid-job: another worker completes the job', async (t) => {
  const queueName = 'kill-test';
  const lockSettings = { WORKER_LOCK_DURATION_MS: '2000', WORKER_STALLED_INTERVAL_MS: '1000' };
  const dispatcher = await createBullmqDispatcher({ redisUrl: redis.url, queueName });
  closers.push(() => dispatcher.close());
  const outcomes = outcomeCollector<VerificationOutcome>();
  dispatcher.onOutcome(outcomes.listener);
  const queue = new Queue(queueName, { connection: { url: redis.url } });
  closers.push(() => queue.close());
  const events = new QueueEvents(queueName, { connection: { url: redis.url } });
  closers.push(() => events.close());
  await events.waitUntilReady();

  const doomed = await startWorker({ env: lockSettings, queueName, name: 'doomed' });
  await doomed.waitFor(/ready on queue kill-test/);

  // The doomed worker's first job also builds the curve (its first verification ever): about half
  // a second of real work, so the kill lands mid-job. Asserted below rather than assumed.
  const jobId = verificationJobId('k1');
  const taken = new Promise<void>((resolve) => events.on('active', ({ jobId: id }) => id === jobId && resolve()));
  const candidate = await fixture.candidate('transact84', 'heidi');
  await dispatcher.enqueue(fixture.request('k1', 'transact84', candidate.path));
  await taken;
  doomed.child.kill('SIGKILL');
  assert.equal((await doomed.exited).signal, 'SIGKILL');

  const job = await queue.getJob(jobId);
  assert.equal(await job!.getState(), 'active', 'the job finished before the kill; the test proves nothing');
  assert.equal(job!.processedBy, 'doomed');

  const killedAt = Date.now();
  const rescuer = startVerificationWorker({
    redisUrl: redis.url,
    queueName,
    name: 'rescuer',
    lockDurationMs: 2000,
    stalledIntervalMs: 500,
  });
  closers.push(() => rescuer.close());
  assert.deepEqual(await outcomes.next('k1', 20_000), validOutcome('k1', candidate));
  const finished = await queue.getJob(jobId);
  assert.equal(finished!.processedBy, 'rescuer');
  assert.equal(finished!.attemptsStarted, 2);
  assert.equal(outcomes.all.length, 1);
  t.diagnostic(`job recovered ${Date.now() - killedAt} ms after the kill`);
});

test('every failed attempt is logged on stderr with its job, attempt, fate and error code', async () => {
  const queueName = 'failure-log-test';
  const dispatcher = await createBullmqDispatcher({ redisUrl: redis.url, queueName, attempts: 2, backoffMs: 50 });
  closers.push(() => dispatcher.close());
  const outcomes = outcomeCollector<VerificationOutcome>();
  dispatcher.onOutcome(outcomes.listener);
  const worker = await startWorker({ queueName, echo: 'none' });
  await worker.waitFor(/ready on queue failure-log-test/);

  await dispatcher.enqueue(fixture.request('gone', 'transact84', fixture.missingPath('gone')));
  assert.equal((await outcomes.next('gone')).status, 'error');
  const jobId = verificationJobId('gone');
  await worker.waitFor(/attempt 2 of 2 failed/);
  const lines = worker
    .output()
    .split('\n')
    .filter((line) => line.includes(`(job ${jobId})`));
  assert.equal(lines.length, 2, worker.output());
  assert.match(
    lines[0]!,
    new RegExp(
      '^contribution gone \\(job contribution-gone\\): attempt 1 of 2 failed, ' +
        'will be retried: input\\.file_not_found: cannot open the uploaded key: ENOENT$',
    ),
  );
  assert.match(
    lines[1]!,
    new RegExp(
      '^contribution gone \\(job contribution-gone\\): attempt 2 of 2 failed, ' +
        'no attempts left: input\\.file_not_found: cannot open the uploaded key: ENOENT$',
    ),
  );
  worker.child.kill('SIGTERM');
  await worker.exited;
});
