/**
 * The Redis path: the coordinator's BullMQ dispatcher and a verification worker against a real
 * redis-server. Each test uses its own queue so their jobs never meet.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, renameSync } from 'node:fs';
import { Queue, QueueEvents, Worker as BullWorker, type Worker } from 'bullmq';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import {
  createBullmqDispatcher,
  verificationJobId,
  type BullmqDispatcherOptions,
} from '../../server/verification-dispatch/bullmq-dispatcher.ts';
import { PREPARE_HEAD_JOB_NAME, type VerificationOutcome } from '../../core/verifier-contract/verifier-contract.ts';
import type { VerificationDispatcher } from '../../server/verification-dispatch/verification-dispatcher.ts';
import { startVerificationWorker, type VerificationWorkerOptions } from '../../worker/verification-worker.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { circuitChallengeKey, linkChallengeSeed, stateDirFor } from '../../core/link-check/link-challenge.ts';
import { LINK_CACHE_DIR, readCachedCombination } from '../../core/link-check/link-combination-cache.ts';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { linkCombinationOf } from '../../core/link-check/verify-link-from-head.ts';
import { startRedisServer, startRedisServerOnPort, type RedisServer } from '../helpers/redis-server.ts';
import { waitUntil } from '../helpers/wait-until.ts';
import {
  outcomeCollector,
  placeFile,
  validOutcome,
  verificationFixture,
  type VerificationFixture,
} from './verification-fixture.ts';

let redis: RedisServer;
let fixture: VerificationFixture;
const closers: Array<() => Promise<unknown>> = [];
let queues = 0;

before(async () => {
  [redis, fixture] = await Promise.all([startRedisServer(), verificationFixture(['register'])]);
});

after(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
  await redis?.stop();
  await fixture?.cleanup();
  await releaseBn128();
});

interface Setup {
  queueName: string;
  dispatcher: VerificationDispatcher;
  outcomes: ReturnType<typeof outcomeCollector<VerificationOutcome>>;
  queue: Queue;
  startWorker(options?: Partial<VerificationWorkerOptions>): Worker;
  /** How many times each job id was taken up by a worker. */
  starts: Map<string, number>;
}

/** `options.redisUrl` puts the dispatcher, the queue and the workers on another Redis than the shared one. */
async function setup(options: Partial<BullmqDispatcherOptions> = {}): Promise<Setup> {
  const queueName = `verification-test-${++queues}`;
  const redisUrl = options.redisUrl ?? redis.url;
  const dispatcher = await createBullmqDispatcher({ redisUrl, queueName, backoffMs: 100, ...options });
  closers.push(() => dispatcher.close());
  const outcomes = outcomeCollector<VerificationOutcome>();
  dispatcher.onOutcome(outcomes.listener);
  const queue = new Queue(queueName, { connection: { url: redisUrl } });
  queue.on('error', () => {});
  closers.push(() => queue.close());
  const starts = new Map<string, number>();
  const startWorker = (overrides: Partial<VerificationWorkerOptions> = {}): Worker => {
    const worker = startVerificationWorker({ redisUrl, queueName, ...overrides });
    worker.on('active', (job) => starts.set(job.id!, (starts.get(job.id!) ?? 0) + 1));
    closers.push(() => worker.close());
    return worker;
  };
  return { queueName, dispatcher, outcomes, queue, startWorker, starts };
}

test('valid and invalid contributions through a worker; an invalid one is tried exactly once', async () => {
  const { dispatcher, outcomes, queue, startWorker, starts } = await setup();
  startWorker();
  const candidate = await fixture.candidate('register', 'carol');
  await dispatcher.enqueue(fixture.request('1', 'register', candidate.path));
  await dispatcher.enqueue(fixture.request('2', 'register', fixture.headPath('register')));

  assert.deepEqual(await outcomes.next('1'), validOutcome('1', candidate));
  const invalid = await outcomes.next('2');
  assert.equal(invalid.status, 'invalid');
  assert.equal(invalid.status === 'invalid' && invalid.code, 'contribution.no_new_contribution');
  assert.match(invalid.status === 'invalid' ? invalid.message : '', /contribution/);

  const job = await queue.getJob(verificationJobId('2'));
  assert.equal(await job!.getState(), 'failed');
  assert.equal(job!.attemptsMade, 1, 'an invalid contribution must not be retried');
  assert.equal(starts.get(verificationJobId('2')), 1);
});

test('an I/O failure is retried, and succeeds once the file is there', async () => {
  const { dispatcher, outcomes, queue, startWorker, starts } = await setup({ attempts: 3, backoffMs: 200 });
  const worker = startWorker();
  const candidate = await fixture.candidate('register', 'dave');
  const uploadPath = fixture.missingPath('late-upload');
  // The first try finds no file; the file lands before the retry (synchronously, so however slow
  // the disk, it is there before the 200 ms backoff ends and the second try is the last).
  worker.once('failed', () => {
    copyFileSync(candidate.path, `${uploadPath}.part`);
    renameSync(`${uploadPath}.part`, uploadPath);
  });
  await dispatcher.enqueue(fixture.request('late', 'register', uploadPath));

  assert.deepEqual(await outcomes.next('late'), validOutcome('late', candidate));
  const job = await queue.getJob(verificationJobId('late'));
  assert.equal(job!.attemptsMade, 2);
  assert.equal(starts.get(verificationJobId('late')), 2);
});

test('an I/O failure that persists ends as an error; enqueueing it again verifies it again', async () => {
  const { dispatcher, outcomes, startWorker, starts } = await setup({ attempts: 2, backoffMs: 50 });
  startWorker();
  const uploadPath = fixture.missingPath('never');
  const request = fixture.request('gone', 'register', uploadPath);
  await dispatcher.enqueue(request);
  const error = await outcomes.next('gone');
  assert.equal(error.status, 'error');
  assert.match(error.status === 'error' ? error.message : '', /cannot open/);
  assert.equal(starts.get(verificationJobId('gone')), 2);

  const candidate = await fixture.candidate('register', 'erin');
  await placeFile(candidate.path, uploadPath);
  await dispatcher.enqueue(request);
  assert.equal((await outcomes.next('gone')).status, 'valid');
  assert.equal(starts.get(verificationJobId('gone')), 3);
});

test("a late 'failed' event of a replaced job does not settle the request its replacement serves", async () => {
  // Events come from a Redis stream and are read late: a job that failed, was removed and queued
  // again under the same id (an enqueue after an error) can still have its old 'failed' event
  // delivered while the new job waits. Here that event is written to the stream by hand.
  const { queueName, dispatcher, outcomes, queue, startWorker } = await setup();
  const candidate = await fixture.candidate('register', 'ivan');
  await dispatcher.enqueue(fixture.request('replaced', 'register', candidate.path));
  const jobId = verificationJobId('replaced');
  assert.equal(await (await queue.getJob(jobId))!.getState(), 'waiting');

  // From the stream's start: a reader that begins at '$' misses what is written before its first read.
  const events = new QueueEvents(queueName, { connection: { url: redis.url }, lastEventId: '0-0' });
  closers.push(() => events.close());
  await events.waitUntilReady();
  const delivered = new Promise<void>((resolve) => events.on('failed', ({ jobId: id }) => id === jobId && resolve()));
  const client = await queue.backend.client;
  await client.xadd(queue.keys.events!, '*', {
    event: 'failed',
    jobId,
    failedReason: 'ENOENT: the earlier job lost its file',
    prev: 'active',
  });
  await delivered;
  // Give the dispatcher's own reader the same chance to see it before the worker starts.
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(outcomes.all, [], 'a stale event settled the request');

  startWorker();
  assert.deepEqual(await outcomes.next('replaced'), validOutcome('replaced', candidate));
});

test('a job that runs out of attempts is answered once as an error and not queued again by the sweep', async () => {
  // The sweep sees the failed job too (every 50 ms here): it must agree with the event, not
  // queue the job again, which would verify it again and again.
  const { dispatcher, outcomes, queue, queueName, starts } = await setup({
    attempts: 2,
    backoffMs: 50,
    reconcileIntervalMs: 50,
  });
  const worker = new BullWorker(
    queueName,
    async () => {
      throw new Error('EIO: the disk failed');
    },
    { connection: { url: redis.url } },
  );
  worker.on('active', (job) => starts.set(job.id!, (starts.get(job.id!) ?? 0) + 1));
  closers.push(() => worker.close());
  await dispatcher.enqueue(fixture.request('exhausted', 'register', fixture.missingPath('exhausted')));
  const error = await outcomes.next('exhausted');
  assert.equal(error.status, 'error');
  assert.match(error.status === 'error' ? error.message : '', /after 2 attempt\(s\): EIO/);

  await new Promise((resolve) => setTimeout(resolve, 500));
  const jobId = verificationJobId('exhausted');
  assert.equal(starts.get(jobId), 2, 'the job was queued again after its attempts ran out');
  assert.equal(await (await queue.getJob(jobId))!.getState(), 'failed');
  assert.equal(outcomes.all.length, 1);
});

test('the same contribution enqueued twice, and again after a coordinator restart, is verified once', async () => {
  const { queueName, dispatcher, outcomes, startWorker, starts } = await setup();
  const candidate = await fixture.candidate('register', 'frank');
  const request = fixture.request('twice', 'register', candidate.path);
  await Promise.all([dispatcher.enqueue(request), dispatcher.enqueue(request)]);
  await dispatcher.enqueue(request);
  startWorker();
  assert.equal((await outcomes.next('twice')).status, 'valid');

  // A restarted coordinator re-enqueues what SQLite still marks as verifying: the stored result answers.
  await dispatcher.close();
  const restarted = await createBullmqDispatcher({ redisUrl: redis.url, queueName });
  closers.push(() => restarted.close());
  const afterRestart = outcomeCollector<VerificationOutcome>();
  restarted.onOutcome(afterRestart.listener);
  await restarted.enqueue(request);
  assert.deepEqual(await afterRestart.next('twice'), validOutcome('twice', candidate));

  // A job enqueued after all of these, and finished: the queue is FIFO, so a second verification
  // of 'twice' would have been taken up before it.
  await restarted.enqueue(fixture.request('barrier', 'register', fixture.headPath('register')));
  assert.equal((await afterRestart.next('barrier')).status, 'invalid');
  assert.equal(starts.get(verificationJobId('barrier')), 1);
  assert.equal(starts.get(verificationJobId('twice')), 1, 'verified more than once');
  assert.equal(outcomes.all.length, 1);
  assert.deepEqual(
    afterRestart.all.map((o) => o.contributionId),
    ['twice', 'barrier'],
  );
});

test('a job lost from Redis is queued again by the sweep', async () => {
  const { dispatcher, outcomes, queue, startWorker } = await setup({ reconcileIntervalMs: 200 });
  const candidate = await fixture.candidate('register', 'grace');
  await dispatcher.enqueue(fixture.request('lost', 'register', candidate.path));
  await (await queue.getJob(verificationJobId('lost')))!.remove();
  startWorker();
  assert.equal((await outcomes.next('lost')).status, 'valid');
});

test('an upload completed while Redis is down is queued once Redis is back', async () => {
  let ownRedis = await startRedisServer();
  closers.push(() => ownRedis.stop());
  const { dispatcher, outcomes, startWorker } = await setup({
    redisUrl: ownRedis.url,
    reconcileIntervalMs: 200,
    enqueueTimeoutMs: 500,
  });
  startWorker({ onError: () => {} });
  const candidate = await fixture.candidate('register', 'heidi');
  await ownRedis.stop();

  // The coordinator has already recorded the contribution as verifying: enqueue must not fail
  // (nor hang for the minutes ioredis keeps retrying), and must not forget the request.
  const started = Date.now();
  await dispatcher.enqueue(fixture.request('outage', 'register', candidate.path));
  assert.ok(Date.now() - started < 3000, `enqueue took ${Date.now() - started} ms with Redis down`);

  ownRedis = await startRedisServerOnPort(ownRedis.port);
  assert.deepEqual(await outcomes.next('outage'), validOutcome('outage', candidate));
});

test("a head preparation job caches the head's combination, and leaves no job behind", async () => {
  const { dispatcher, queue, startWorker } = await setup();
  const head = (await openCeremony(fixture.dataDir)).chains.get('register')!.head!;
  const stateDir = stateDirFor(fixture.dataDir);
  const key = circuitChallengeKey(await linkChallengeSeed(stateDir), 'register');
  const headZkeyPath = fixture.headPath('register');
  // The fixture's local contribution cached its head: this test starts from no entry.
  await rm(path.join(stateDir, LINK_CACHE_DIR), { recursive: true, force: true });
  assert.equal(await readCachedCombination(stateDir, key, head.fileHash), undefined);
  const worker = startWorker();
  const done = new Promise<unknown>((resolve) => worker.on('completed', (_job, result) => resolve(result)));
  dispatcher.prepareHead({ circuit: 'register', headZkeyPath, stateDir, headFileHash: head.fileHash });
  assert.equal(((await done) as { result?: string }).result, 'computed');
  assert.deepEqual(
    await readCachedCombination(stateDir, key, head.fileHash),
    await linkCombinationOf(headZkeyPath, key),
  );
  // Removed once done, so a later start of the coordinator may ask again.
  assert.equal(await queue.getJob(`head-${head.fileHash}`), undefined);
});

test('a malformed head preparation job fails once, unretried, and the worker goes on verifying', async () => {
  const { dispatcher, outcomes, queue, startWorker, starts } = await setup();
  const worker = startWorker();
  const head = (await openCeremony(fixture.dataDir)).chains.get('register')!.head!;
  const stateDir = stateDirFor(fixture.dataDir);
  const headZkeyPath = fixture.headPath('register');
  const malformed: Array<[string, Record<string, unknown>, RegExp]> = [
    ['head-no-path', { circuit: 'register', stateDir, headFileHash: head.fileHash }, /headZkeyPath/],
    ['head-no-hash', { circuit: 'register', headZkeyPath, stateDir }, /headFileHash/],
    [
      'head-wrong-types',
      { circuit: 7, headZkeyPath: 'chains/register_0001.zkey', stateDir, headFileHash: 42 },
      /circuit: .*headZkeyPath: .*headFileHash: /,
    ],
  ];
  const failures = new Map<string, Error>();
  worker.on('failed', (job, error) => void (job?.id && failures.set(job.id, error)));
  // Put on the queue as any client could, with attempts and a long backoff: a retried job would
  // sit 'delayed' for a minute instead of ending 'failed'.
  for (const [jobId, data] of malformed) {
    await queue.add(PREPARE_HEAD_JOB_NAME, data, { jobId, attempts: 3, backoff: { type: 'fixed', delay: 60_000 } });
  }
  await waitUntil(() => malformed.every(([jobId]) => failures.has(jobId)), 'the malformed jobs to fail');

  for (const [jobId, , fields] of malformed) {
    assert.equal(failures.get(jobId)!.name, 'UnrecoverableError', jobId);
    const job = (await queue.getJob(jobId))!;
    assert.equal(await job.getState(), 'failed', `${jobId} is to be retried`);
    assert.equal(job.attemptsMade, 1, jobId);
    assert.equal(starts.get(jobId), 1, jobId);
    assert.match(job.failedReason, /^malformed head preparation request: /, jobId);
    assert.match(job.failedReason, fields, jobId);
  }

  // The same worker verifies what comes next, and the head jobs' failures settled no request.
  const candidate = await fixture.candidate('register', 'judy');
  await dispatcher.enqueue(fixture.request('after-heads', 'register', candidate.path));
  assert.deepEqual(await outcomes.next('after-heads'), validOutcome('after-heads', candidate));
  assert.deepEqual(outcomes.all, [validOutcome('after-heads', candidate)]);
});
