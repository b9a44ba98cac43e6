/**
 * The contributor driver (client/contributor-driver.ts) on a clock the test moves by hand, against
 * a scripted lobby (tests/helpers/scripted-lobby.ts): the terminal's options (join at the start,
 * steady, turns awaited) and the page's (join when asked, polls during turns). Against a real
 * coordinator: contributor-driver-coordinator.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunFailure } from '../../client/contributor-driver-parts.ts';
import { ApiError } from '../../client/api-client.ts';
import { HELD_POLL_EVERY_MS, TURN_WAIT_MS, VERDICT_POLL_MS, waitingPollMs } from '../../client/queue-poll-pace.ts';
import { driverFor, ManualClock, ScriptedLobby, takingTheFirstTurn } from '../helpers/scripted-lobby.ts';

test('a whole run: joined, paced polls in line, a turn between heartbeats, verifying, accepted', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const { driver, taken, told } = driverFor(clock, lobby, 'terminal');
  const run = driver.run();
  await clock.advance(0);
  assert.deepEqual(lobby.requests, ['me', 'join'], 'asked where it stands, then joined');
  await clock.advance(waitingPollMs(2) - 1);
  assert.equal(lobby.count('me'), 1, 'no poll before the pace for 2nd in line');
  await clock.advance(1);
  assert.equal(lobby.count('me'), 2, 'polled at the pace');
  lobby.grant();
  await clock.advance(waitingPollMs(2));
  assert.equal(taken.length, 1, 'the turn was taken');
  assert.equal(taken[0]!.turn.headIndex, 0);
  assert.equal(lobby.count('heartbeat'), 1, 'a heartbeat as the turn starts');
  const polls = lobby.count('me');
  await clock.advance(20_000);
  assert.equal(lobby.count('heartbeat'), 2, 'the next at the pace the coordinator asked for');
  assert.equal(lobby.count('me'), polls, 'the terminal does not poll during its turn');
  taken[0]!.turn.onHash('h1');
  lobby.progress = { circuit: 'c1', state: 'verifying', contributionId: 'k1' };
  taken[0]!.upload();
  await clock.advance(0);
  assert.equal(lobby.count('me'), polls + 1, 'polled at once after the upload');
  assert.deepEqual(lobby.holds, [], 'that poll, made while the turn was still shown, asks for no hold');
  lobby.verdict('accepted');
  await clock.advance(VERDICT_POLL_MS);
  await run;
  assert.deepEqual(lobby.holds, [10_000], 'verifying, nothing in line: the next poll is held for the verdict');
  assert.deepEqual(told.verdicts, [['accepted', 0]]);
  assert.equal(driver.localHash('c1'), 'h1');
  await clock.advance(60_000);
  assert.equal(lobby.count('heartbeat'), 2, 'no heartbeat after the turn');
});

/** The first turn's upload refused: said, one attempt counted, and the turn granted again is taken again. */
async function refusedThenTakenAgain(
  turn: Pick<Awaited<ReturnType<typeof takingTheFirstTurn>>, 'clock' | 'lobby' | 'taken' | 'told'>,
): Promise<void> {
  const { clock, lobby, taken, told } = turn;
  lobby.progress = { circuit: 'c1', state: 'verifying', contributionId: 'k1' };
  taken[0]!.upload();
  await clock.advance(0);
  lobby.verdict('refused');
  await clock.advance(VERDICT_POLL_MS);
  assert.deepEqual(told.verdicts, [['refused', 1]], 'the refusal said, one attempt counted');
  lobby.grant();
  await clock.advance(waitingPollMs(1));
  assert.equal(taken.length, 2, 'the turn granted again is taken again');
}

test('a refusal is counted and said, and the next turn is taken again', async () => {
  const turn = await takingTheFirstTurn('terminal');
  const { clock, lobby, taken, told, run } = turn;
  await refusedThenTakenAgain(turn);
  lobby.progress = { circuit: 'c1', state: 'verifying', contributionId: 'k2' };
  taken[1]!.upload();
  await clock.advance(0);
  lobby.verdict('accepted');
  await clock.advance(VERDICT_POLL_MS);
  await run;
  assert.deepEqual(told.verdicts, [
    ['refused', 1],
    ['accepted', 1],
  ]);
});

test('a refused upload counts as an attempt; the turn is taken again after the pause', async () => {
  const { clock, driver, taken, told, run } = await takingTheFirstTurn('terminal');
  taken[0]!.fail(new ApiError(413, 'upload.too_large', 'too large'));
  await clock.advance(0);
  assert.deepEqual(
    told.failures.map((f) => [f.kind, f.attempts]),
    [['refused', 1]],
  );
  await clock.advance(1999);
  assert.equal(taken.length, 1, 'not before the pause');
  await clock.advance(1);
  assert.equal(taken.length, 2, 'taken again after it');
  driver.stop(new Error('left'));
  await assert.rejects(run, /left/);
});

test('the page: each new place told as it moves, every turn beating, a refusal then the next turn taken', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  lobby.joinedAt = 3;
  const { driver, taken, told } = driverFor(clock, lobby, 'page');
  const run = driver.run().catch((error: unknown) => error);
  await clock.advance(0);
  await driver.join();
  await clock.advance(waitingPollMs(3));
  lobby.wait(2);
  await clock.advance(waitingPollMs(3));
  lobby.wait(1);
  await clock.advance(waitingPollMs(2));
  assert.deepEqual([...new Set(told.seen)], ['pending', 'waiting@3', 'waiting@2', 'waiting@1'], 'the place moves');
  lobby.grant();
  await clock.advance(waitingPollMs(1));
  assert.equal(taken.length, 1);
  assert.equal(lobby.count('heartbeat'), 1, 'the turn beats as it starts');
  await refusedThenTakenAgain({ clock, lobby, taken, told });
  const beats = lobby.count('heartbeat');
  await clock.advance(20_000);
  assert.ok(lobby.count('heartbeat') > beats, 'and beats at the pace the coordinator asked for');
  lobby.progress = { circuit: 'c1', state: 'verifying', contributionId: 'k2' };
  taken[1]!.upload();
  await clock.advance(0);
  lobby.verdict('accepted');
  await clock.advance(VERDICT_POLL_MS);
  assert.deepEqual(told.verdicts, [
    ['refused', 1],
    ['accepted', 1],
  ]);
  assert.deepEqual(told.seen.slice(-2), ['verifying', 'accepted'], 'verifying, then accepted');
  driver.stop();
  await run;
});

test('a missed turn (the terminal): the heartbeat refused, the work stopped, the next turn taken', async () => {
  const { clock, lobby, driver, taken, told, run } = await takingTheFirstTurn('terminal');
  lobby.wait(1, clock.now() + 30_000);
  lobby.heartbeatRefusal = new ApiError(409, 'lobby.not_your_turn', 'the turn passed');
  await clock.advance(20_000);
  assert.equal(taken[0]!.turn.signal.aborted, true, 'the work on the lost turn stopped');
  assert.deepEqual(
    told.failures.map((f) => f.kind),
    ['lost'],
  );
  lobby.heartbeatRefusal = undefined;
  lobby.grant();
  await clock.advance(5000);
  assert.equal(taken.length, 2, 'the next turn is taken');
  driver.stop(new Error('left'));
  await assert.rejects(run, /left/);
});

test('a missed turn (the page): the poll says waiting, the work is dropped', async () => {
  const { clock, lobby, driver, taken, told, run } = await takingTheFirstTurn('page');
  lobby.wait(1, clock.now() + 30_000);
  await clock.advance(1000);
  assert.equal(taken[0]!.turn.signal.aborted, true);
  assert.equal(told.dropped, 1);
  assert.deepEqual(told.failures, [], 'a turn taken back is no failure');
  driver.stop();
  await run;
});

test('a coordinator restart: the page polls on through it; a steady run asks again through a busy one', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const page = driverFor(clock, lobby, 'page');
  lobby.wait(30);
  const run = page.driver.run().catch((error: unknown) => error);
  await clock.advance(0);
  lobby.down = new ApiError(0, 'network', 'connect ECONNREFUSED');
  await clock.advance(3 * waitingPollMs(30));
  assert.equal(page.told.unanswered, 3, 'each poll without an answer told, and polled again');
  lobby.down = undefined;
  lobby.grant();
  await clock.advance(waitingPollMs(30));
  assert.equal(page.taken.length, 1, 'back: the turn granted meanwhile is taken');
  page.driver.stop();
  await run;

  const busyLobby = new ScriptedLobby(clock);
  const terminal = driverFor(clock, busyLobby, 'terminal');
  busyLobby.wait(30);
  const steady = terminal.driver.run().catch((error: unknown) => error);
  await clock.advance(0);
  busyLobby.down = new ApiError(503, 'verification.unavailable', 'busy');
  await clock.advance(waitingPollMs(30) + 1000 + 2000);
  busyLobby.down = undefined;
  await clock.advance(4000);
  assert.deepEqual(terminal.told.notes, [
    'the coordinator is busy (busy); asking again',
    'the coordinator answers again',
  ]);
  busyLobby.down = new ApiError(0, 'network', 'no answer');
  await clock.advance(waitingPollMs(30));
  const failure = await steady;
  assert.ok(failure instanceof RunFailure && failure.code === 'network', 'no answer past the ride-out ends it');
});

test('leaving mid-wait: the run ends with the reason, and nothing more is asked', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const { driver } = driverFor(clock, lobby, 'terminal');
  const run = driver.run();
  await clock.advance(waitingPollMs(2) + 1);
  const asked = lobby.requests.length;
  driver.stop(new DOMException('interrupted', 'AbortError'));
  await assert.rejects(run, /interrupted/);
  await clock.advance(600_000);
  assert.equal(lobby.requests.length, asked);
});

test('standby: an offered turn is taken as a granted one; heartbeats once the download took it', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const { driver, taken, told } = driverFor(clock, lobby, 'terminal');
  lobby.offer();
  const run = driver.run();
  await clock.advance(0);
  assert.equal(taken.length, 1, 'the offered turn is started');
  assert.deepEqual(told.started, [true], 'on standby');
  assert.equal(taken[0]!.turn.standby, true);
  assert.equal(lobby.count('ceremony'), 1, 'the head looked up as for a granted turn');
  assert.equal(lobby.count('heartbeat'), 0, 'no heartbeat before the download took the turn');
  lobby.grant(); // the turn's first download took it
  const polls = lobby.count('me');
  await taken[0]!.turn.taken();
  assert.equal(lobby.count('me'), polls + 1, 'one GET /api/me confirms it');
  assert.equal(lobby.count('heartbeat'), 1, 'then it beats as a granted turn');
  await taken[0]!.turn.taken();
  assert.equal(lobby.count('me'), polls + 1, 'confirmed once');
  lobby.progress = { circuit: 'c1', state: 'verifying', contributionId: 'k1' };
  taken[0]!.upload();
  await clock.advance(0);
  lobby.verdict('accepted');
  await clock.advance(VERDICT_POLL_MS);
  await run;
  assert.deepEqual(told.verdicts, [['accepted', 0]]);
  assert.deepEqual(told.failures, []);
});

test('a standby offer is taken at once, not after the ceremony view came in', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  let answer!: () => void;
  lobby.ceremonyAnswered = new Promise((resolve) => (answer = resolve));
  const { driver, taken } = driverFor(clock, lobby, 'page');
  lobby.offer();
  const run = driver.run().catch((error: unknown) => error);
  await clock.advance(0);
  assert.equal(lobby.count('take'), 1, 'the offer is taken as the answer that made it comes in');
  assert.equal(lobby.requests.indexOf('take') < lobby.requests.indexOf('ceremony'), true, 'before the view is asked');
  assert.equal(taken.length, 0, 'the turn itself waits for the view, as before');
  answer();
  await clock.advance(0);
  assert.equal(taken.length, 1);
  assert.equal(lobby.count('take'), 1, 'taken once');
  driver.stop(new Error('left'));
  await run;
});

test('standby taken by another entry first: back to waiting quietly, no upload, an offer taken up once', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const { driver, taken, told } = driverFor(clock, lobby, 'terminal');
  lobby.offer(2, clock.now() + 60_000);
  const run = driver.run();
  await clock.advance(0);
  assert.equal(taken.length, 1);
  lobby.wait(2); // another entry took it: the confirm shows waiting
  await assert.rejects(taken[0]!.turn.taken(), { name: 'AbortError' });
  assert.equal(taken[0]!.turn.signal.aborted, true, 'the work stops before computing');
  await clock.advance(0);
  assert.deepEqual(told.failures, [], 'no failure of theirs');
  assert.equal(told.elsewhere, 1, 'said calmly');
  assert.equal(lobby.count('heartbeat'), 0);
  const offer = clock.now() + 30_000;
  lobby.offer(2, offer);
  await clock.advance(waitingPollMs(2));
  assert.equal(taken.length, 2, 'a new offer is taken up at the next poll, no pause after the first');
  lobby.offer(2, offer); // the download did not take it, yet it is still offered
  await assert.rejects(taken[1]!.turn.taken());
  await clock.advance(10 * waitingPollMs(2));
  assert.equal(taken.length, 2, 'the same offer is not downloaded again and again');
  // Not confirmed (a caller that uploads straight away): the refusal as not this turn is quiet too.
  lobby.offer(2, clock.now() + 20_000);
  await clock.advance(waitingPollMs(2));
  assert.equal(taken.length, 3);
  taken[2]!.fail(new ApiError(409, 'lobby.not_your_turn', 'not your turn'));
  await clock.advance(0);
  assert.deepEqual(told.failures, []);
  assert.equal(told.elsewhere, 3);
  driver.stop(new Error('left'));
  await assert.rejects(run, /left/);
});

test('standby interrupted (the download broke off): a failure as any; the offer taken up after the pause', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const { driver, taken, told } = driverFor(clock, lobby, 'terminal');
  lobby.offer();
  const run = driver.run();
  await clock.advance(0);
  taken[0]!.fail(new ApiError(0, 'network', 'the download broke off'));
  await clock.advance(0);
  assert.deepEqual(
    told.failures.map((f) => f.kind),
    ['interrupted'],
  );
  assert.equal(told.elsewhere, 0);
  await clock.advance(2000 + waitingPollMs(2));
  assert.equal(taken.length, 2, 'still offered: taken up again once the pause is over');
  driver.stop(new Error('left'));
  await assert.rejects(run, /left/);
});

test('standby on the page: a poll that no longer offers the turn drops its work, no failure', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const { driver, taken, told } = driverFor(clock, lobby, 'page');
  lobby.offer(3);
  const run = driver.run().catch((error: unknown) => error);
  await clock.advance(0);
  assert.equal(taken.length, 1);
  await clock.advance(waitingPollMs(3));
  assert.equal(taken[0]!.turn.signal.aborted, false, 'still offered: the turn is being taken');
  lobby.wait(3);
  await clock.advance(waitingPollMs(3));
  assert.equal(taken[0]!.turn.signal.aborted, true);
  assert.deepEqual([told.dropped, told.elsewhere, told.failures.length], [1, 1, 0]);
  driver.stop();
  await run;
});

test('next in line, polls are held for a turn (turnWaitMs), one at a time, and a grant is taken at once', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  lobby.holdsTurnPolls = true;
  const { driver, taken } = driverFor(clock, lobby, 'terminal');
  lobby.wait(3);
  const run = driver.run();
  await clock.advance(0);
  assert.deepEqual(lobby.turnWaits, [undefined], 'the first poll, not knowing where it stands, is not held');
  await clock.advance(HELD_POLL_EVERY_MS);
  assert.deepEqual(lobby.turnWaits, [undefined, TURN_WAIT_MS], 'then held, at the pace of the timed polls');
  await clock.advance(TURN_WAIT_MS - 1);
  assert.equal(lobby.count('me'), 2, 'nothing asked while the poll is held');
  lobby.wait(1);
  await clock.advance(0);
  assert.equal(lobby.count('me'), 3, 'a new place answers it; the next is held at once (its pace has passed)');
  await clock.advance(TURN_WAIT_MS);
  assert.equal(lobby.count('me'), 4, 'a held poll with nothing new ends after turnWaitMs, and the next goes out');
  lobby.grant();
  await clock.advance(0);
  assert.equal(taken.length, 1, 'the grant is seen within the round trip');
  assert.equal(lobby.mostHeldAtOnce, 1, 'never two held at once');
  assert.deepEqual(lobby.turnWaits.slice(1), [TURN_WAIT_MS, TURN_WAIT_MS, TURN_WAIT_MS]);
  driver.stop(new Error('left'));
  await assert.rejects(run, /left/);
});

test('a held poll the page asks to repeat is asked again at once, unheld; far in line, polls are timed', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  lobby.holdsTurnPolls = true;
  const { driver } = driverFor(clock, lobby, 'page');
  lobby.wait(30);
  const run = driver.run().catch((error: unknown) => error);
  await clock.advance(3 * waitingPollMs(30));
  assert.deepEqual(lobby.turnWaits, [undefined, undefined, undefined, undefined], 'not next in line: timed');
  lobby.wait(2);
  await clock.advance(waitingPollMs(30));
  assert.equal(lobby.heldNow, 1, 'next in line: held, at once after the answer that moved the place');
  await driver.pollNow();
  await clock.advance(0);
  assert.equal(lobby.heldNow, 0, 'the held poll given up');
  assert.deepEqual(lobby.turnWaits.slice(-2), [TURN_WAIT_MS, undefined], 'and asked again unheld, once');
  assert.equal(lobby.mostHeldAtOnce, 1);
  driver.stop();
  await clock.advance(0);
  await run;
});

for (const [refusal, timedFor] of [
  [new ApiError(400, 'request.invalid', 'unknown turnWaitMs'), Infinity],
  [new ApiError(429, 'me.too_many_held_polls', 'two polls held already'), 60_000],
] as const) {
  test(`a held poll refused (${refusal.status} ${refusal.code}) is asked again unheld, then timed polls`, async () => {
    const clock = new ManualClock();
    const lobby = new ScriptedLobby(clock);
    lobby.holdsTurnPolls = true;
    lobby.turnWaitRefusal = refusal;
    const { driver, told } = driverFor(clock, lobby, 'terminal');
    lobby.wait(1);
    const run = driver.run();
    await clock.advance(HELD_POLL_EVERY_MS);
    assert.deepEqual(lobby.turnWaits, [undefined, TURN_WAIT_MS, undefined], 'refused, then asked unheld at once');
    lobby.turnWaitRefusal = undefined;
    await clock.advance(10 * waitingPollMs(1));
    assert.equal(lobby.count('me'), 13, 'timed polls at the pace of next in line');
    assert.equal(lobby.turnWaits.filter((w) => w !== undefined).length, 1, 'none held');
    assert.deepEqual(told.notes, [], 'no busy coordinator said');
    await clock.advance(60_000);
    const held = lobby.turnWaits.filter((w) => w !== undefined).length;
    if (timedFor === Infinity) assert.equal(held, 1, 'an older coordinator: timed polls for the run');
    else assert.ok(held > 1, 'too many held: held again after a while');
    driver.stop(new Error('left'));
    await assert.rejects(run, /left/);
  });
}
