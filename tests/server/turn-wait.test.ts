/**
 * `GET /api/me?turnWaitMs=N` and standby over HTTP, on the real clock: a contributor waiting in a
 * queue holds its poll, and hears of a standby offer (TAKE_PRIORITY_MS after a grant its holder
 * did not take) as it happens, not a poll later; its first download of the head then takes the turn.
 * Each contributor holds at most two polls at once (me.too_many_held_polls, 429), and only within
 * HOLD_TURN_WAIT_WITHIN of a queue's front: further back a poll is answered at once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { MeView } from '../../core/coordinator-api/api-types.ts';
import { ContributorClient, HttpError } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { HOLD_TURN_WAIT_WITHIN } from '../../core/coordinator-api/lobby-status.ts';

const PRIORITY = 600;
let coordinator: TestCoordinator;

before(async () => {
  coordinator = await startTestCoordinator({
    env: { TAKE_TURN_MS: '20000', TAKE_PRIORITY_MS: String(PRIORITY), PRESENCE_MS: '60000' },
  });
});

after(() => coordinator?.close());

const turnWait = (client: ContributorClient, ms: number): Promise<MeView> =>
  client.request<MeView>('GET', `/api/me?turnWaitMs=${ms}`);

test('a held poll hears of a standby offer when it is made; the download that follows takes the turn', async () => {
  const holder = await ContributorClient.contributed(coordinator.url, 'never-takes');
  assert.equal((await holder.progress('register')).state, 'turn', 'the first to join is granted the turn');
  // When the coordinator granted it (its clock is this machine's), not when its answer came back: on a
  // busy machine that round trip alone ate the 50 ms margin below.
  const turn = coordinator.lobby.status('demo:never-takes').circuits[0]!;
  const grantedAt = turn.state === 'turn' ? turn.startedAt : Date.now();
  const ready = await ContributorClient.contributed(coordinator.url, 'ready');

  const me = await turnWait(ready, 10_000);
  const heardAt = Date.now();
  const progress = me.status.circuits.find((c) => c.circuit === 'register')!;
  assert.equal(progress.state, 'waiting');
  assert.ok(progress.state === 'waiting' && progress.standbyUntil !== undefined, 'offered on standby');
  assert.ok(heardAt - grantedAt >= PRIORITY - 50, `heard after ${heardAt - grantedAt} ms, not before the priority`);
  assert.ok(heardAt - grantedAt < PRIORITY + 800, `heard ${heardAt - grantedAt} ms after the grant`);

  await ready.takeByDownload('register');
  assert.equal((await ready.progress('register')).state, 'turn', 'the download took the turn');
  const holderProgress = await holder.progress('register');
  assert.equal(holderProgress.state, 'waiting', 'the grantee is back in line, a missed turn');
});

test('two held polls per contributor at most; a wait not a number, or nobody waiting, answers at once', async () => {
  await ContributorClient.contributed(coordinator.url, 'busy-line'); // first in line: the next one waits
  const waiter = await ContributorClient.contributed(coordinator.url, 'many-polls');
  const held = [turnWait(waiter, 1500), turnWait(waiter, 1500)];
  await new Promise((resolve) => setTimeout(resolve, 200));
  await assert.rejects(
    turnWait(waiter, 1500),
    (error: unknown) => error instanceof HttpError && error.status === 429 && error.code === 'me.too_many_held_polls',
  );
  await Promise.all(held);
  await turnWait(waiter, 10); // the two answered: a slot is free again

  for (const bad of ['soon', '-1', '1.5'])
    await assert.rejects(
      waiter.request('GET', `/api/me?turnWaitMs=${bad}`),
      (error: unknown) => error instanceof HttpError && error.status === 400 && error.code === 'request.invalid',
    );
  const outside = new ContributorClient(coordinator.url);
  await outside.signInDemo('not-in-line');
  const started = Date.now();
  await turnWait(outside, 5000);
  assert.ok(Date.now() - started < 1000, `not waiting: answered after ${Date.now() - started} ms`);
});

test('a turn wait further back than the entries a standby offer can reach is answered at once', async () => {
  // Entries behind which the poller waits: each held poll re-reads its status at every tick.
  for (let i = 0; i < HOLD_TURN_WAIT_WITHIN; i++) coordinator.lobby.join(`filler-${i}`);
  const deep = await ContributorClient.contributed(coordinator.url, 'far-back');
  const progress = await deep.progress('register');
  assert.ok(progress.state === 'waiting' && (progress.position ?? 0) > HOLD_TURN_WAIT_WITHIN, 'behind the reach');
  const started = Date.now();
  await turnWait(deep, 5000);
  assert.ok(Date.now() - started < 1000, `far back: answered after ${Date.now() - started} ms`);
});

test('asking for the inputs at their moving URL takes a standby offer, a HEAD as well as a GET', async () => {
  const own = await startTestCoordinator({
    env: { TAKE_TURN_MS: '20000', TAKE_PRIORITY_MS: String(PRIORITY), PRESENCE_MS: '60000' },
  });
  try {
    const holder = await ContributorClient.contributed(own.url, 'never-takes');
    const ready = await ContributorClient.contributed(own.url, 'ready');
    const progress = (await turnWait(ready, 10_000)).status.circuits.find((c) => c.circuit === 'register')!;
    assert.ok(progress.state === 'waiting' && progress.standbyUntil !== undefined, 'offered on standby');
    // The redirect not followed: the moving URL alone takes it, a hop before the inputs' own URL.
    const asked = await fetch(`${own.url}/api/circuits/register/contribution-inputs`, {
      method: 'HEAD',
      headers: ready.sessionHeaders('GET'),
      redirect: 'manual',
    });
    assert.equal(asked.status, 302);
    assert.equal((await ready.progress('register')).state, 'turn', 'the HEAD took the turn');
    assert.equal((await holder.progress('register')).state, 'waiting', 'the grantee is back in line, a missed turn');
  } finally {
    await own.close();
  }
});
