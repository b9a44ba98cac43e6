/**
 * A contributor whose presence stream closed (a closed tab, a killed terminal), on a clock the test
 * controls: once DISCONNECT_GRACE_MS has passed and they were not seen since, their waiting entry is
 * passed over (place kept), a turn granted to them and not yet taken passes on, and a taken one is
 * missed, without waiting for PRESENCE_MS, TAKE_TURN_MS or TURN_SILENCE_MS; the queue log says when
 * the stream closed. Seen or heard again within the grace (a reload, a heartbeat), nothing happens;
 * with the grace at 0 a closed stream means nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkQueueLog } from '../../../core/queue-log/queue-log-entry.ts';
import { CEREMONY_ID, makeLobby, progressOf } from './lobby-helpers.ts';

const SECOND = 1000;
const GRACE = 10 * SECOND;
/** Presence and the time to take a turn as in production. */
const RULES = {
  presenceMs: 60 * SECOND,
  takeTurnMs: 30 * SECOND,
  // Standby off: its moments would come first in nextDueAt (lobby-standby.test.ts has them).
  takePriorityMs: 0,
  turnSilenceMs: 120 * SECOND,
  disconnectGraceMs: GRACE,
};

function logOf(lobby: ReturnType<typeof makeLobby>['lobby']) {
  return checkQueueLog(CEREMONY_ID, lobby.queueLog.entries(), 'of the test');
}

/** carol holds register's turn (taken); alice then bob wait behind her. */
function carolHoldsTheTurn(overrides = {}) {
  const fixture = makeLobby({ ...RULES, ...overrides });
  const { lobby } = fixture;
  for (const who of ['carol', 'alice', 'bob']) lobby.join(who);
  lobby.tick();
  lobby.takeTurn('carol', 'register');
  return fixture;
}

test('a waiting contributor whose stream closed is passed over once the grace has passed, place kept', () => {
  const { lobby, clock } = carolHoldsTheTurn();
  const closedAt = clock.now();
  lobby.streamClosed('alice');
  clock.advance(GRACE + 1);
  lobby.leave('carol');
  const events = lobby.tick();
  assert.deepEqual(
    events.map((e) => [e.type, e.contributorId]),
    [['turn_granted', 'bob']],
    'alice, gone 10 s after her stream closed, is passed over long before PRESENCE_MS (60 s)',
  );
  const away = logOf(lobby).filter((e) => e.type === 'away');
  assert.equal(away.length, 1, 'only alice was passed over');
  assert.equal(away[0]!.type === 'away' && away[0]!.disconnectedAt, new Date(closedAt).toISOString());
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'waiting', 'her place is kept');
  assert.equal(lobby.seen('alice'), true, 'seen again, she is back (and the caller ticks)');
  assert.equal(logOf(lobby).at(-1)?.type, 'back');
  const rules = logOf(lobby).find((e) => e.type === 'rules');
  assert.equal(rules?.type === 'rules' && rules.disconnectGraceMs, GRACE, 'the rules entry states the grace');
});

test('a closed stream within its grace, or re-opened, changes nothing', () => {
  const { lobby, clock } = carolHoldsTheTurn();
  lobby.streamClosed('alice');
  clock.advance(GRACE);
  lobby.leave('carol');
  assert.deepEqual(
    lobby.tick().map((e) => [e.type, e.contributorId]),
    [['turn_granted', 'alice']],
    'exactly the grace: still there',
  );
  const second = carolHoldsTheTurn();
  second.lobby.streamClosed('alice');
  second.clock.advance(SECOND);
  second.lobby.seen('alice'); // the page reloaded: its new stream (or a poll) is seen
  second.clock.advance(GRACE);
  second.lobby.leave('carol');
  assert.deepEqual(
    second.lobby.tick().map((e) => [e.type, e.contributorId]),
    [['turn_granted', 'alice']],
  );
});

test('a granted turn not taken passes on when its holder is gone, before its time to be taken', () => {
  const { lobby, clock } = makeLobby(RULES);
  lobby.join('alice');
  lobby.join('bob');
  lobby.tick(); // alice's, to be taken within 30 s
  clock.advance(2 * SECOND);
  const closedAt = clock.now();
  lobby.streamClosed('alice');
  assert.equal(lobby.nextDueAt(), closedAt + GRACE + 1, 'the server ticks when the grace runs out');
  clock.advance(GRACE);
  assert.deepEqual(lobby.tick(), [], 'within the grace: still hers');
  clock.advance(1);
  lobby.seen('bob');
  const events = lobby.tick();
  assert.deepEqual(
    events.map((e) => [e.type, e.contributorId]),
    [
      ['turn_passed_on', 'alice'],
      ['turn_granted', 'bob'],
    ],
    'passed on 12 s after the grant, not at 30 s, and bob has it in the same tick',
  );
  const lapse = logOf(lobby).find((e) => e.type === 'lapsed');
  assert.ok(lapse?.type === 'lapsed');
  assert.deepEqual([lapse.taken, lapse.disconnectedAt], [false, new Date(closedAt).toISOString()]);
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'waiting');
  const entry = lobby.queueEntries().find((e) => e.contributorId === 'alice');
  assert.deepEqual(
    [entry?.position, entry?.missedTurns, entry?.away],
    [1, 1, true],
    'a missed turn, her first: place kept',
  );
});

test('a taken turn whose holder is gone is missed after the grace, not after TURN_SILENCE_MS', () => {
  const { lobby, clock } = carolHoldsTheTurn();
  const closedAt = clock.now();
  lobby.streamClosed('carol');
  assert.equal(lobby.nextDueAt(), closedAt + GRACE + 1);
  clock.advance(GRACE);
  lobby.seen('alice');
  assert.deepEqual(lobby.tick(), [], 'within the grace: still hers');
  clock.advance(1);
  assert.deepEqual(
    lobby.tick().map((e) => [e.type, e.contributorId]),
    [
      ['turn_missed', 'carol'],
      ['turn_granted', 'alice'],
    ],
    'missed 10 s after the close instead of after the 2-minute silence period',
  );
  const lapse = logOf(lobby).find((e) => e.type === 'lapsed');
  assert.ok(lapse?.type === 'lapsed');
  assert.deepEqual([lapse.taken, lapse.missedTurns, lapse.disconnectedAt], [true, 1, new Date(closedAt).toISOString()]);
});

test('a heartbeat or upload request after the close keeps a taken turn: the client is there', () => {
  const { lobby, clock } = carolHoldsTheTurn();
  lobby.streamClosed('carol');
  clock.advance(SECOND);
  lobby.heartbeat('carol', 'register');
  clock.advance(GRACE + SECOND);
  lobby.seen('alice');
  assert.deepEqual(lobby.tick(), []);
  assert.equal(progressOf(lobby, 'carol', 'register').state, 'turn');
});

test('with the grace at 0 a closed stream means nothing', () => {
  const { lobby, clock } = carolHoldsTheTurn({ disconnectGraceMs: 0 });
  lobby.streamClosed('alice');
  clock.advance(30 * SECOND);
  lobby.leave('carol');
  assert.deepEqual(
    lobby.tick().map((e) => [e.type, e.contributorId]),
    [['turn_granted', 'alice']],
  );
});
