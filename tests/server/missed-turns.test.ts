/**
 * Stuck contributors, on a clock the test controls, over HTTP against the real coordinator:
 * after MAX_MISSED_TURNS missed turns in a circuit the entry leaves the queue with a reason the
 * contributor sees in GET /api/me (joining again is allowed, the count kept: the next turn there
 * comes after the cooldown), and the coordinator can take an
 * entry out of the lobby from the console's admin route (coordinator session + CSRF token).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ContributorClient, HttpError, type CircuitProgressView, type MeView } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { ManualClock } from '../../server/clock.ts';

const TURN = 60_000;
const COOLDOWN = 30_000;
const TOKEN = 'coordinator-token-for-missed-turns';
const clock = new ManualClock(Date.now());
let coordinator: TestCoordinator;

type Removed = { circuit: string; reason: string; message: string; at: number };
const removedOf = (me: MeView) => (me.status as MeView['status'] & { removed?: Removed }).removed;

before(async () => {
  coordinator = await startTestCoordinator({
    env: {
      TURN_TIMEOUT_MS: String(TURN),
      COOLDOWN_MS: String(COOLDOWN),
      MAX_MISSED_TURNS: '2',
      COORDINATOR_TOKEN: TOKEN,
      // Presence off: these contributors never poll, and each turn counts as taken when granted
      // (tests/server/presence.test.ts has presence on).
      PRESENCE_MS: '0',
      TAKE_TURN_MS: '0',
    },
    clock,
    tickIntervalMs: 60_000,
  });
});

after(() => coordinator?.close());

/** Lets the turn of whoever holds it pass its deadline, then the cooldown. */
function missTurn(): void {
  clock.advance(TURN + 1);
  coordinator.service.tick();
  clock.advance(COOLDOWN);
  coordinator.service.tick();
}

test('after MAX_MISSED_TURNS missed turns the entry leaves the queue with a reason; a new join waits', async () => {
  const absent = new ContributorClient(coordinator.url);
  const present = new ContributorClient(coordinator.url);
  await absent.signInDemo('absent');
  await absent.join();
  await present.signInDemo('present');
  await present.join();
  assert.equal((await absent.progress('register')).state, 'turn');

  missTurn();
  assert.equal((await present.progress('register')).state, 'turn', 'the first miss passes the turn on');
  assert.equal((await absent.progress('register')).state, 'waiting', 'one miss: back in the queue');
  assert.equal(removedOf(await absent.me()), undefined);
  missTurn(); // present misses once, then absent gets the turn back
  assert.equal((await absent.progress('register')).state, 'turn');

  missTurn();
  const me = await absent.me();
  assert.equal(me.status.circuits[0]!.state, 'pending', 'out of the queue');
  const removed = removedOf(me);
  assert.equal(removed?.circuit, 'register');
  assert.equal(removed?.reason, 'missed_turns');
  assert.match(removed!.message, /2 missed turns/);
  assert.equal((await present.progress('register')).state, 'turn', 'the circuit went on to the next in line');
  assert.equal(coordinator.lobby.queueLengths().register, 0);

  // Back again: no reason shown any more, but the misses still count: eligible after the cooldown.
  const rejoined = await absent.join();
  assert.equal(removedOf(rejoined), undefined);
  const waiting = rejoined.status.circuits[0]! as CircuitProgressView & { eligibleAt?: number };
  assert.equal(waiting.state, 'waiting');
  assert.equal(waiting.eligibleAt, clock.now() + COOLDOWN);
});

test(
  'the coordinator removes a queue entry (coordinator session and CSRF ' + 'token required); the contributor sees why',
  async () => {
    const admin = new ContributorClient(coordinator.url);
    await admin.signInCoordinator(TOKEN);
    const queue = await admin.request<{
      entries: Array<{ circuit: string; contributorId: string; position: number; missedTurns: number }>;
    }>('GET', '/api/admin/queue');
    const entry = queue.entries.find((e) => e.contributorId === 'demo:absent');
    assert.deepEqual(entry && { circuit: entry.circuit, position: entry.position, missedTurns: entry.missedTurns }, {
      circuit: 'register',
      position: 1,
      missedTurns: 2, // joining again resets nothing
    });

    const remove = (client: ContributorClient, csrf = true) =>
      fetch(`${coordinator.url}/api/admin/queue/remove`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          cookie: client.cookie,
          ...(csrf ? { 'x-csrf-token': client.csrfToken } : {}),
        },
        body: JSON.stringify({ contributorId: 'demo:absent' }),
      });
    const contributor = new ContributorClient(coordinator.url);
    await contributor.signInDemo('absent');
    const notCoordinator = await remove(contributor);
    assert.equal(notCoordinator.status, 403);
    assert.equal(((await notCoordinator.json()) as { error: { code: string } }).error.code, 'auth.not_coordinator');
    const noCsrf = await remove(admin, false);
    assert.equal(noCsrf.status, 403);
    assert.equal(((await noCsrf.json()) as { error: { code: string } }).error.code, 'auth.csrf');
    assert.equal((await contributor.progress('register')).state, 'waiting', 'refused removals changed nothing');

    const removed = await remove(admin);
    assert.equal(removed.status, 200, await removed.clone().text());
    const me = await contributor.me();
    assert.equal(me.status.circuits[0]!.state, 'pending');
    assert.equal(removedOf(me)?.reason, 'coordinator');
    assert.match(removedOf(me)!.message, /coordinator removed/);

    const again = await remove(admin);
    assert.equal(again.status, 404);
    assert.equal(((await again.json()) as { error: { code: string } }).error.code, 'lobby.not_queued');
    await assert.rejects(
      admin.request('POST', '/api/admin/queue/remove', { contributorId: 42 }),
      (e: unknown) => e instanceof HttpError && e.status === 400 && e.code === 'request.invalid',
    );
  },
);

test('removing the holder of a turn hands the circuit to the next in line', async () => {
  const admin = new ContributorClient(coordinator.url);
  await admin.signInCoordinator(TOKEN);
  const present = new ContributorClient(coordinator.url);
  await present.signInDemo('present');
  const waiting = new ContributorClient(coordinator.url);
  await waiting.signInDemo('waiting');
  await waiting.join();
  assert.equal((await present.progress('register')).state, 'turn');
  await admin.request('POST', '/api/admin/queue/remove', { contributorId: 'demo:present' });
  assert.equal(removedOf(await present.me())?.reason, 'coordinator');
  assert.equal((await waiting.progress('register')).state, 'turn');
});
