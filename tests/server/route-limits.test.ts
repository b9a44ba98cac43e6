/**
 * Limits of the routes a signed-in contributor or anyone calls over and over, on a real coordinator:
 *  - GET /api/me, presence streams opened and heartbeats together, per contributor
 *    (`429 rate.contributor_requests` with Retry-After), another contributor untouched, leaving
 *    never limited;
 *  - GET /api/me/receipts per contributor (`429 rate.receipt_reads`);
 *  - GET /healthz works out the uploads' disk at most once per few seconds, however many call it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { newCeremonyDir, copyCeremony } from '../fixtures/ceremony-fixture.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { waitUntil } from '../helpers/wait-until.ts';
import { ApiError } from '../../client/api-client.ts';

let dataDir: string;
const running: TestCoordinator[] = [];
const copies: string[] = [];

async function start(options: Parameters<typeof startTestCoordinator>[0]): Promise<TestCoordinator> {
  const folder = await copyCeremony(dataDir);
  copies.push(folder);
  const coordinator = await startTestCoordinator({ dataDir: folder, tickIntervalMs: 60_000, ...options });
  running.push(coordinator);
  return coordinator;
}

const refusedWith =
  (status: number, code: string) =>
  (error: unknown): boolean =>
    error instanceof ApiError && error.status === status && error.code === code && (error.retryAfterSeconds ?? 0) > 0;

before(async () => {
  dataDir = await newCeremonyDir({ init: true });
});

after(async () => {
  for (const coordinator of running) await coordinator.close();
  await cleanUp(dataDir, ...copies);
});

test('a contributor’s view, presence streams and heartbeats share a limit; leaving is never limited', async () => {
  const coordinator = await start({ env: { RATE_LIMIT_CONTRIBUTOR_REQUESTS: '4' } });
  const alice = new ContributorClient(coordinator.url);
  await alice.signInDemo('alice');
  await alice.join(); // joins have their own limit
  await alice.me();
  const stream = await alice.fetch('GET', '/api/me/presence');
  await stream.body?.cancel();
  await alice.request('POST', '/api/circuits/register/heartbeat');
  await alice.me();
  await assert.rejects(alice.me(), refusedWith(429, 'rate.contributor_requests'));
  await assert.rejects(alice.fetch('GET', '/api/me/presence'), refusedWith(429, 'rate.contributor_requests'));
  await assert.rejects(
    alice.request('POST', '/api/circuits/register/heartbeat'),
    refusedWith(429, 'rate.contributor_requests'),
  );
  await alice.request('POST', '/api/me/leave');

  const bob = new ContributorClient(coordinator.url);
  await bob.signInDemo('bob');
  await bob.me();
});

test('receipts are limited per contributor', async () => {
  const coordinator = await start({ env: { RATE_LIMIT_RECEIPTS: '2' } });
  const alice = new ContributorClient(coordinator.url);
  await alice.signInDemo('alice');
  for (let i = 0; i < 2; i++) await alice.request('GET', '/api/me/receipts');
  await assert.rejects(alice.request('GET', '/api/me/receipts'), refusedWith(429, 'rate.receipt_reads'));
  await alice.me();
});

test('/healthz works out the uploads’ disk once for many calls, and still says whether uploads are taken', async () => {
  let statfsCalls = 0;
  let free = 1024 ** 4;
  const coordinator = await start({
    freeDiskBytes: async () => {
      statfsCalls++;
      return free;
    },
  });
  const health = async () => (await (await fetch(`${coordinator.url}/healthz`)).json()) as Record<string, unknown>;
  const first = await health();
  assert.deepEqual(first.uploads, { accepting: true });
  const before = statfsCalls;
  const answers = await Promise.all(Array.from({ length: 50 }, () => health()));
  for (let i = 0; i < 50; i++) await health();
  assert.ok(statfsCalls - before <= 1, `${statfsCalls - before} disk checks for 100 calls`);
  assert.ok(answers.every((answer) => answer.ok === true && answer.phase === 'open'));
  // A full disk shows within the few seconds an answer is kept.
  free = 0;
  await waitUntil(
    async () => ((await health()).uploads as { accepting: boolean }).accepting === false,
    'the full disk reported',
    15_000,
  );
});
