/** Turns: deadlines that fire, cooldown without a ban, heartbeats, and every requireTurn refusal. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertRefused, contributeAccepted, makeLobby, MINUTE, positionOf, progressOf } from './lobby-helpers.ts';

test(
  'a missed deadline frees the circuit for the next in line; the late ' +
    'one waits out the cooldown, then gets a turn again',
  () => {
    const fixture = makeLobby();
    const { lobby, clock } = fixture;
    lobby.join('alice');
    lobby.join('bob');
    const granted = lobby.tick();
    const start = clock.now();
    assert.deepEqual(granted, [
      { type: 'turn_granted', circuit: 'register', contributorId: 'alice', at: start, deadline: start + 10 * MINUTE },
    ]);

    clock.advance(10 * MINUTE);
    assert.deepEqual(lobby.tick(), [], 'at the deadline itself the turn is still live');
    lobby.requireTurn('alice', 'register');

    clock.advance(1);
    assertRefused(() => lobby.requireTurn('alice', 'register'), 'lobby.not_your_turn', /expired/);
    const now = clock.now();
    assert.deepEqual(lobby.tick(), [
      {
        type: 'turn_missed',
        circuit: 'register',
        contributorId: 'alice',
        at: now,
        deadline: start + 10 * MINUTE,
        eligibleAt: now + 5 * MINUTE,
      },
      { type: 'turn_granted', circuit: 'register', contributorId: 'bob', at: now, deadline: now + 10 * MINUTE },
    ]);
    const late = progressOf(lobby, 'alice', 'register');
    assert.deepEqual(late, {
      circuit: 'register',
      state: 'waiting',
      position: 1,
      etaMs: 5 * MINUTE,
      eligibleAt: now + 5 * MINUTE,
    });
    assert.equal(lobby.status('alice').done, false);
    assertRefused(() => lobby.requireTurn('alice', 'register'), 'lobby.not_your_turn', /missed turn/);

    // bob leaves at once: the circuit is free, but alice is still cooling down.
    contributeAccepted(fixture, 'bob', 'register', 1);
    clock.advance(5 * MINUTE - 1);
    assert.deepEqual(
      lobby.tick().filter((event) => event.circuit === 'register'),
      [],
    );
    assert.equal(progressOf(lobby, 'alice', 'register').state, 'waiting');

    clock.advance(1);
    assert.deepEqual(
      lobby.tick().map(({ type, contributorId, circuit }) => [type, contributorId, circuit]),
      [['turn_granted', 'alice', 'register']],
    );
    lobby.requireTurn('alice', 'register');
  },
);

test('a cooling-down contributor is skipped in favour of those behind; re-queued contributors go to the back', () => {
  const { lobby, clock } = makeLobby();
  const turnEvents = () => lobby.tick().map(({ type, contributorId }) => [type, contributorId]);
  lobby.join('alice');
  lobby.tick();
  clock.advance(11 * MINUTE);
  assert.deepEqual(turnEvents(), [['turn_missed', 'alice']], 'nobody else waiting, alice is cooling down');
  lobby.join('bob');
  assert.deepEqual(turnEvents(), [['turn_granted', 'bob']], 'bob, behind alice, gets the turn while she cools down');
  lobby.join('carol');
  assert.equal(positionOf(lobby, 'alice', 'register'), 1);
  assert.equal(positionOf(lobby, 'carol', 'register'), 2);

  clock.advance(11 * MINUTE);
  assert.deepEqual(
    turnEvents(),
    [
      ['turn_missed', 'bob'],
      ['turn_granted', 'alice'],
    ],
    'alice is eligible again and first',
  );
  assert.equal(positionOf(lobby, 'carol', 'register'), 1);
  assert.equal(positionOf(lobby, 'bob', 'register'), 2, 'bob went to the back, behind carol');
  clock.advance(11 * MINUTE);
  assert.deepEqual(turnEvents(), [
    ['turn_missed', 'alice'],
    ['turn_granted', 'carol'],
  ]);
  assert.deepEqual(lobby.queueLengths(), { register: 2, transact2: 0, transact21: 0 }, 'nobody is banned');
});

test('heartbeats extend the deadline, never past startedAt + maxTurn', () => {
  const { lobby, clock } = makeLobby();
  lobby.join('alice');
  lobby.tick();
  const start = clock.now();
  assert.deepEqual(
    lobby.heartbeat('alice', 'register'),
    { deadline: start + 10 * MINUTE, heartbeatEveryMs: 30_000 },
    'never shortens the deadline',
  );
  clock.advance(9 * MINUTE);
  assert.deepEqual(lobby.heartbeat('alice', 'register'), { deadline: start + 11 * MINUTE, heartbeatEveryMs: 30_000 });
  for (let minute = 10; minute < 59; minute += 1) {
    clock.set(start + minute * MINUTE);
    lobby.heartbeat('alice', 'register');
  }
  assert.deepEqual(
    lobby.heartbeat('alice', 'register'),
    { deadline: start + 60 * MINUTE, heartbeatEveryMs: 30_000 },
    'capped by maxTurnMs',
  );
  assert.deepEqual(progressOf(lobby, 'alice', 'register'), {
    circuit: 'register',
    state: 'turn',
    startedAt: start,
    deadline: start + 60 * MINUTE,
  });
  clock.set(start + 60 * MINUTE + 1);
  assertRefused(() => lobby.heartbeat('alice', 'register'), 'lobby.not_your_turn', /expired/);
  assert.deepEqual(
    lobby.tick().map((event) => event.type),
    ['turn_missed'],
  );
  assertRefused(() => lobby.heartbeat('alice', 'register'), 'lobby.not_your_turn');
});

test('requireTurn and heartbeat refuse everyone but the holder of the live turn of that circuit', () => {
  const fixture = makeLobby();
  const { lobby, clock } = fixture;
  lobby.join('alice');
  lobby.join('bob');
  lobby.tick();
  assertRefused(() => lobby.requireTurn('alice', 'nope'), 'circuit.unknown');
  assertRefused(
    () => lobby.requireTurn('bob', 'register'),
    'lobby.not_your_turn',
    /not your turn on register yet: position 1/,
  );
  assertRefused(() => lobby.heartbeat('bob', 'register'), 'lobby.not_your_turn');
  assertRefused(() => lobby.markSubmitted('bob', 'register', 'forged'), 'lobby.not_your_turn');
  assertRefused(() => lobby.requireTurn('mallory', 'register'), 'lobby.not_your_turn', /not in the queue/);
  assertRefused(
    () => lobby.requireTurn('alice', 'transact2'),
    'lobby.not_your_turn',
    /your turn is on register, not transact2/,
  );
  assertRefused(() => lobby.requireTurn('bob', 'transact2'), 'lobby.not_your_turn', /waiting for register/);

  contributeAccepted(fixture, 'alice', 'register', 1);
  lobby.tick();
  assertRefused(() => lobby.requireTurn('alice', 'register'), 'lobby.already_contributed');
  assertRefused(
    () => lobby.requireTurn('alice', 'transact21'),
    'lobby.not_your_turn',
    /your turn is on transact2, not transact21/,
  );
  lobby.requireTurn('alice', 'transact2');

  clock.advance(10 * MINUTE + 1);
  assertRefused(() => lobby.requireTurn('alice', 'transact2'), 'lobby.not_your_turn', /expired/);
  assertRefused(() => lobby.markSubmitted('alice', 'transact2', 'late'), 'lobby.not_your_turn', /expired/);
});

test('markSubmitted turns the live turn into a verifying submission, once per contribution id', () => {
  const { lobby, clock } = makeLobby();
  lobby.join('alice');
  lobby.tick();
  lobby.markSubmitted('alice', 'register', 'c1');
  lobby.markSubmitted('alice', 'register', 'c1'); // a repeated completion notice is harmless
  assertRefused(() => lobby.markSubmitted('alice', 'register', 'c2'), 'lobby.not_your_turn', /being verified/);
  clock.advance(2 * 60 * MINUTE);
  assert.deepEqual(lobby.tick(), []);
  lobby.recordVerdict('c1', { status: 'refused', code: 'zkey.malformed', message: 'not a zkey' });
  lobby.tick();
  assertRefused(() => lobby.markSubmitted('alice', 'register', 'c1'), 'request.invalid', /already used/);
});
