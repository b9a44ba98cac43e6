/**
 * A taken turn whose client falls silent, on a clock the test controls: with TURN_SILENCE_MS set,
 * nothing heard from the holder (no heartbeat, download or upload request) for that long ends the
 * turn as missed at once, not at its deadline, and the circuit goes to the next in line in the same
 * tick; the queue log says when the client was last heard from. Heartbeats, downloads and upload
 * requests are each heard; a restart counts every taken turn as heard at the start.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkQueueLog } from '../../../core/queue-log/queue-log-entry.ts';
import { CEREMONY_ID, makeLobby, progressOf } from './lobby-helpers.ts';

const SECOND = 1000;
const SILENCE = 120 * SECOND;
/** Presence and the time to take a turn as in production; the silence period as its default. */
// Standby off: its moments would come first in nextDueAt (lobby-standby.test.ts has them).
const RULES = { presenceMs: 60 * SECOND, takeTurnMs: 30 * SECOND, takePriorityMs: 0, turnSilenceMs: SILENCE };

/** alice holds register's turn, taken, with bob waiting behind her (kept seen by `keepBobSeen`). */
function aliceHoldsTheTurn(overrides = {}) {
  const fixture = makeLobby({ ...RULES, ...overrides });
  const { lobby, clock } = fixture;
  lobby.join('alice');
  lobby.join('bob');
  lobby.tick();
  lobby.takeTurn('alice', 'register');
  const keepBobSeen = (ms: number): void => {
    for (let left = ms; left > 0; left -= 30 * SECOND) {
      clock.advance(Math.min(left, 30 * SECOND));
      lobby.seen('bob');
    }
  };
  return { ...fixture, keepBobSeen };
}

test('a taken turn silent for TURN_SILENCE_MS is missed then, and the next in line gets it at once', () => {
  const { lobby, clock, keepBobSeen } = aliceHoldsTheTurn();
  const takenAt = clock.now();
  keepBobSeen(SILENCE);
  assert.deepEqual(lobby.tick(), [], 'silent for exactly the period: still hers');
  keepBobSeen(1);
  const events = lobby.tick();
  assert.deepEqual(
    events.map((e) => [e.type, e.contributorId]),
    [
      ['turn_missed', 'alice'],
      ['turn_granted', 'bob'],
    ],
    'the turn ends long before its 10-minute deadline, and bob has it in the same tick',
  );
  const missed = events[0]!;
  assert.equal(missed.type === 'turn_missed' && missed.silentSince, takenAt);
  const waiting = progressOf(lobby, 'alice', 'register');
  assert.equal(waiting.state, 'waiting', 'a missed turn: alice is back in line, after the cooldown');
  const log = checkQueueLog(CEREMONY_ID, lobby.queueLog.entries(), 'of the test');
  const lapse = log.find((e) => e.type === 'lapsed');
  assert.ok(lapse?.type === 'lapsed');
  assert.deepEqual([lapse.taken, lapse.missedTurns, lapse.silentSince], [true, 1, new Date(takenAt).toISOString()]);
  const rules = log.find((e) => e.type === 'rules');
  assert.equal(rules?.type === 'rules' && rules.turnSilenceMs, SILENCE, 'the rules entry states the period');
});

test('heartbeats, downloads and upload requests are each heard: the turn lives on until its deadline', () => {
  const { lobby, keepBobSeen } = aliceHoldsTheTurn();
  const signs = [
    () => lobby.heartbeat('alice', 'register'),
    () => lobby.takeTurn('alice', 'register'), // a later download of the head
    () => lobby.requireTurn('alice', 'register'), // an upload's request
  ];
  for (let i = 0; i < 4; i++) {
    keepBobSeen(SILENCE - SECOND);
    signs[i % signs.length]!();
    assert.deepEqual(lobby.tick(), [], `heard after ${i + 1} × almost the silence period`);
  }
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'turn');
  keepBobSeen(3 * 60 * SECOND);
  const events = lobby.tick();
  assert.deepEqual(
    events.map((e) => [e.type, e.contributorId]),
    [
      ['turn_missed', 'alice'],
      ['turn_granted', 'bob'],
    ],
  );
  assert.equal(events[0]!.type === 'turn_missed' && events[0]!.silentSince, undefined, 'ended by its deadline');
});

test('a heartbeat asks for the next one within a quarter of the silence period, 30 s at most', () => {
  assert.equal(aliceHoldsTheTurn().lobby.heartbeat('alice', 'register').heartbeatEveryMs, 30 * SECOND);
  const short = aliceHoldsTheTurn({ turnSilenceMs: 6 * SECOND }).lobby;
  assert.equal(short.heartbeat('alice', 'register').heartbeatEveryMs, 1500);
  const off = aliceHoldsTheTurn({ turnSilenceMs: 0, heartbeatExtensionMs: 40 * SECOND }).lobby;
  assert.equal(off.heartbeat('alice', 'register').heartbeatEveryMs, 10 * SECOND, 'off: paced by the extension');
});

test('with TURN_SILENCE_MS 0 a silent taken turn runs to its deadline', () => {
  const { lobby, keepBobSeen } = aliceHoldsTheTurn({ turnSilenceMs: 0 });
  keepBobSeen(10 * 60 * SECOND);
  assert.deepEqual(lobby.tick(), []);
  keepBobSeen(1);
  assert.deepEqual(
    lobby.tick().map((e) => e.type),
    ['turn_missed', 'turn_granted'],
  );
});

test('after a restart every taken turn counts as heard at the start', () => {
  const first = aliceHoldsTheTurn();
  first.keepBobSeen(SILENCE - SECOND);
  const second = makeLobby(RULES, first.db, first.clock);
  const keepBobSeen = (ms: number) => {
    first.clock.advance(ms);
    second.lobby.seen('bob');
  };
  keepBobSeen(30 * SECOND);
  assert.deepEqual(second.lobby.tick(), [], 'silent across the restart, but heard at the start');
  keepBobSeen(30 * SECOND);
  keepBobSeen(30 * SECOND);
  keepBobSeen(30 * SECOND + 1);
  assert.deepEqual(
    second.lobby.tick().map((e) => [e.type, e.contributorId]),
    [
      ['turn_missed', 'alice'],
      ['turn_granted', 'bob'],
    ],
  );
});

test('nextDueAt names the moment the next lapse or cooldown is due, so the server ticks then', () => {
  const { lobby, clock } = makeLobby({ ...RULES, cooldownMs: 5 * 60 * SECOND });
  assert.equal(lobby.nextDueAt(), undefined, 'nothing held, nothing cooling: no moment');
  lobby.join('alice');
  lobby.join('bob');
  lobby.tick();
  const granted = clock.now();
  assert.equal(lobby.nextDueAt(), granted + RULES.takeTurnMs + 1, 'untaken: the moment after its time to be taken');
  clock.advance(10 * SECOND);
  lobby.takeTurn('alice', 'register');
  assert.equal(lobby.nextDueAt(), clock.now() + SILENCE + 1, 'taken: the moment after its silence period');
  clock.advance(SILENCE + 1);
  lobby.seen('bob');
  lobby.tick(); // alice missed it, bob has it, alice cools down for 5 min
  const heardBob = clock.now();
  lobby.takeTurn('bob', 'register');
  assert.equal(lobby.nextDueAt(), heardBob + SILENCE + 1);
  lobby.markSubmitted('bob', 'register', 'b1');
  assert.equal(lobby.nextDueAt(), heardBob + 5 * 60 * SECOND, 'verifying: only alice’s cooldown is due');
});
