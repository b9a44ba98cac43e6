/**
 * `GET /api/me?verdictWaitMs=N`, the terminal client's wait for its verdict: held while one of the
 * contributor's contributions is being verified, answered as soon as its verdict is recorded (not a
 * poll later) or after N ms; answered at once with nothing being verified; N checked. The job waits
 * in Redis until the test starts a worker, so the request is held before the verdict exists.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { MeView } from '../../core/coordinator-api/api-types.ts';
import { ContributorClient, HttpError } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';

let coordinator: TestCoordinator;

before(async () => {
  coordinator = await startTestCoordinator({ redis: true, tickIntervalMs: 100 });
});

after(() => coordinator?.close());

const heldMe = (client: ContributorClient, ms: number): Promise<MeView> =>
  client.request<MeView>('GET', `/api/me?verdictWaitMs=${ms}`);

test('with nothing being verified the answer comes at once; a wait that is not a number is refused', async () => {
  const bob = new ContributorClient(coordinator.url);
  await bob.signInDemo('bob');
  const started = Date.now();
  await heldMe(bob, 5000);
  assert.ok(Date.now() - started < 2000, `answered after ${Date.now() - started} ms`);
  for (const bad of ['soon', '-1', '1.5'])
    await assert.rejects(
      bob.request('GET', `/api/me?verdictWaitMs=${bad}`),
      (error: unknown) => error instanceof HttpError && error.status === 400 && error.code === 'request.invalid',
    );
});

test('a held request is answered as soon as the verdict is recorded', async () => {
  const alice = await ContributorClient.awaitingVerdict(coordinator.url, 'alice'); // no worker yet

  const asked = Date.now();
  const held = await heldMe(alice, 400);
  assert.ok(Date.now() - asked >= 350, `held ${Date.now() - asked} ms, not the 400 asked`);
  assert.equal(held.contributions[0]!.status, 'verifying');

  const worker = coordinator.startWorker();
  let me: MeView;
  let answeredAt: number;
  do {
    me = await heldMe(alice, 10_000);
    answeredAt = Date.now();
  } while (me.contributions[0]!.status === 'verifying');
  await worker;
  assert.equal(me.contributions[0]!.status, 'accepted');
  const recordedAt = me.contributions[0]!.finishedAt!;
  assert.ok(answeredAt - recordedAt < 200, `answered ${answeredAt - recordedAt} ms after the verdict was recorded`);
});
