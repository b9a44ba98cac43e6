/**
 * Deadlines on a clock the test controls: a missed turn frees the circuit for the next in line
 * and puts the late contributor back in the queue after a cooldown — not a ban; heartbeats keep
 * a turn alive; an upload after the deadline is refused. Verification runs in the embedded
 * verifier process here (the default, no Redis).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { ContributorClient, HttpError } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { ManualClock } from '../../server/clock.ts';

const TURN = 60_000;
const COOLDOWN = 120_000;
const clock = new ManualClock(Date.now());
let coordinator: TestCoordinator;

before(async () => {
  coordinator = await startTestCoordinator({
    env: {
      TURN_TIMEOUT_MS: String(TURN),
      HEARTBEAT_EXTENSION_MS: String(TURN),
      COOLDOWN_MS: String(COOLDOWN),
      // Presence off: the clock jumps minutes between polls (tests/server/presence.test.ts has it on).
      PRESENCE_MS: '0',
      TAKE_TURN_MS: '0',
    },
    clock,
    tickIntervalMs: 60_000,
  });
});

after(() => coordinator?.close());

test('a missed deadline passes the turn on, and the late contributor comes back after the cooldown', async () => {
  const late = new ContributorClient(coordinator.url);
  const next = new ContributorClient(coordinator.url);
  await late.signInDemo('late');
  await next.signInDemo('next');
  await late.join();
  await next.join();
  const turn = await late.progress('register');
  assert.equal(turn.state, 'turn');
  assert.equal(turn.deadline, clock.now() + TURN);

  // A heartbeat keeps the turn alive past its first deadline.
  clock.advance(TURN - 1_000);
  const { deadline } = await late.request<{ deadline: number }>('POST', '/api/circuits/register/heartbeat');
  assert.equal(deadline, clock.now() + TURN);
  clock.advance(30_000);
  coordinator.service.tick();
  assert.equal((await late.progress('register')).state, 'turn', 'the heartbeat extended the deadline');

  // Then the contributor goes silent, an upload begun: the deadline fires on the next tick.
  const { file } = await late.makeContribution('register');
  const lateUpload = await createUpload(late, 'register', (await stat(file)).size);
  clock.advance(TURN);
  coordinator.service.tick();
  assert.equal((await next.progress('register')).state, 'turn', 'the circuit went to the next in line');
  const missed = await late.progress('register');
  assert.equal(missed.state, 'waiting', 'a missed turn is not a ban: back in the queue');
  await assert.rejects(late.upload('register', file), /response code: 409[\s\S]*lobby\.not_your_turn/);
  await assert.rejects(
    late.request('POST', '/api/circuits/register/heartbeat'),
    (e: unknown) => e instanceof HttpError && e.code === 'lobby.not_your_turn',
  );
  // The new turn holder cannot take over (and finish under its own name) the upload late began: it went with
  // late's turn.
  const takeover = await fetch(lateUpload, { method: 'HEAD', headers: next.tusHeaders() });
  assert.equal(takeover.status, 404);
  const append = await next.refusal(await next.patch(lateUpload, 0, new Uint8Array(16)));
  assert.deepEqual([append.status, append.code], [404, 'upload.not_found']);

  // next contributes; the late one is still cooling down, then gets a new turn.
  await next.upload('register', (await next.makeContribution('register')).file);
  await next.waitFor((m) => m.status.circuits[0]!.state === 'accepted', 'next accepted');
  coordinator.service.tick();
  assert.equal((await late.progress('register')).state, 'waiting', 'still in its cooldown');
  clock.advance(COOLDOWN);
  coordinator.service.tick();
  assert.equal((await late.progress('register')).state, 'turn', 'after the cooldown the turn comes back');
  await late.upload('register', (await late.makeContribution('register')).file);
  const me = await late.waitFor((m) => m.status.circuits[0]!.state === 'accepted', 'late accepted');
  assert.equal(me.status.circuits[0]!.index, 2);
});

/**
 * Creates an empty tus upload of `length` bytes on the circuit (as a client does before sending data); returns its
 * URL.
 */
async function createUpload(client: ContributorClient, circuit: string, length: number): Promise<string> {
  const response = await client.createUpload(circuit, { length });
  assert.equal(response.status, 201, await response.text());
  return client.uploadUrl(response);
}
