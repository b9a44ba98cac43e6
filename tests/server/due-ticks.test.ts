/**
 * The coordinator ticks when the lobby's next lapse is due, not only on its interval: with the
 * interval at a minute, a turn not taken passes on TAKE_TURN_MS after it was granted (real time,
 * real HTTP), so a lapse costs a circuit its rule's time and not up to a tick more.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';

const TAKE = 1500;
let coordinator: TestCoordinator;

before(async () => {
  coordinator = await startTestCoordinator({ env: { TAKE_TURN_MS: String(TAKE) }, tickIntervalMs: 60_000 });
});

after(async () => {
  await coordinator?.close();
});

test('an untaken turn passes on when its time to be taken runs out, with the interval tick a minute away', async () => {
  const absent = new ContributorClient(coordinator.url);
  const present = new ContributorClient(coordinator.url);
  await absent.signInDemo('absent');
  await present.signInDemo('present');
  await absent.join(); // granted at once, and never taken
  const turn = coordinator.lobby.status('demo:absent').circuits[0]!; // read by the lobby: no poll of theirs
  assert.equal(turn.state, 'turn');
  const grantedAt = turn.state === 'turn' ? turn.startedAt : 0; // the coordinator's clock is this machine's
  await present.join();
  let passedAt: number | undefined;
  while (passedAt === undefined && Date.now() - grantedAt < 20_000) {
    if ((await present.progress('register')).state === 'turn') passedAt = Date.now();
    else await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(passedAt !== undefined, 'the turn reached the next in line');
  const waited = passedAt - grantedAt;
  assert.ok(waited >= TAKE && waited < TAKE + 1500, `passed on after ${waited} ms (its time: ${TAKE} ms)`);
});
