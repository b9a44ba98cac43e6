/**
 * The coordinator ticks when the lobby's next lapse is due, not only on its interval: with the
 * interval at a minute, a turn not taken passes on TAKE_TURN_MS after it was granted, and one whose
 * holder's presence stream closed passes on when DISCONNECT_GRACE_MS runs out (real time, real
 * HTTP), so a lapse costs a circuit its rule's time and not up to a tick more.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fetchedPresence, PresenceHolder, terminalReopenPauseMs } from '../../client/presence-holder.ts';
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

/** Polls `present`'s register state every 50 ms from `from` until its turn (20 s at most): when it came. */
async function turnReached(present: ContributorClient, from: number): Promise<number | undefined> {
  while (Date.now() - from < 20_000) {
    if ((await present.progress('register')).state === 'turn') return Date.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
}

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
  const passedAt = await turnReached(present, grantedAt);
  assert.ok(passedAt !== undefined, 'the turn reached the next in line');
  const waited = passedAt - grantedAt;
  assert.ok(waited >= TAKE && waited < TAKE + 1500, `passed on after ${waited} ms (its time: ${TAKE} ms)`);
});

test('a turn whose holder closed its presence stream passes on when the grace runs out, not at a tick', async () => {
  const GRACE = 800;
  // Standby off and a long time to be taken: only the closed stream's grace can end the turn.
  const env = { TAKE_TURN_MS: '30000', TAKE_PRIORITY_MS: '0', DISCONNECT_GRACE_MS: String(GRACE) };
  const graced = await startTestCoordinator({ env, tickIntervalMs: 60_000 });
  try {
    const gone = new ContributorClient(graced.url);
    const present = new ContributorClient(graced.url);
    await gone.signInDemo('gone');
    await present.signInDemo('present');
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const connect = fetchedPresence(gone);
    const hold = new PresenceHolder({
      connect: (stream) => connect({ ...stream, opened: () => (stream.opened(), opened()) }),
      reopenPauseMs: terminalReopenPauseMs,
    });
    hold.hold(true);
    await open;
    await gone.join();
    await present.join();
    assert.equal(graced.lobby.status('demo:gone').circuits[0]!.state, 'turn', 'the first to join holds the turn');
    // The coordinator hears the close within milliseconds of the stop (loopback).
    const stoppedAt = Date.now();
    await hold.stop();
    const passedAt = await turnReached(present, stoppedAt);
    assert.ok(passedAt !== undefined, 'the turn reached the next in line');
    const waited = passedAt - stoppedAt;
    assert.ok(waited >= GRACE - 50 && waited < GRACE + 600, `passed on ${waited} ms after the close (grace ${GRACE})`);
  } finally {
    await graced.close();
  }
});
