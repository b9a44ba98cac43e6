/** Queues, positions, progress through the circuits, verification outcomes and the ETA. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  acceptedVerdict,
  assertRefused,
  CIRCUITS,
  contributeAccepted,
  makeLobby,
  MINUTE,
  positionOf,
  progressOf,
} from './lobby-helpers.ts';

test('queues are FIFO with stable positions, and join is idempotent', () => {
  const { lobby, open } = makeLobby();
  open.value = false;
  for (const id of ['alice', 'bob', 'carol']) lobby.join(id);
  assert.deepEqual(
    ['alice', 'bob', 'carol'].map((id) => positionOf(lobby, id, 'register')),
    [1, 2, 3],
  );
  const again = lobby.join('alice');
  assert.deepEqual(again, lobby.status('alice'));
  assert.equal(positionOf(lobby, 'alice', 'register'), 1, 'joining again keeps the place');
  assert.deepEqual(lobby.queueLengths(), { register: 3, transact2: 0, transact21: 0 });
  assert.deepEqual(
    lobby.status('bob').circuits.map((entry) => entry.state),
    ['waiting', 'pending', 'pending'],
  );
  assert.deepEqual(lobby.status('nobody'), {
    contributorId: 'nobody',
    circuits: CIRCUITS.map((circuit) => ({ circuit, state: 'pending' })),
    done: false,
    presence: { awayAfterMs: 0, takeTurnWithinMs: 0, silentTurnAfterMs: 0, goneAfterDisconnectMs: 0 },
  });
});

test('a turn is granted only while the ceremony is open', () => {
  const { lobby, open } = makeLobby();
  open.value = false;
  lobby.join('alice');
  assert.deepEqual(lobby.tick(), []);
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'waiting');
  open.value = true;
  const events = lobby.tick();
  assert.deepEqual(
    events.map((event) => [event.type, event.contributorId, event.circuit]),
    [['turn_granted', 'alice', 'register']],
  );
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'turn');
});

test('waiting contributors move up as the one ahead finishes: a third sees position 2, then 1', () => {
  const fixture = makeLobby();
  const { lobby } = fixture;
  for (const id of ['alice', 'bob', 'carol']) lobby.join(id);
  lobby.tick();
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'turn');
  assert.equal(positionOf(lobby, 'bob', 'register'), 1);
  assert.equal(positionOf(lobby, 'carol', 'register'), 2);

  contributeAccepted(fixture, 'alice', 'register', 1);
  lobby.tick();
  assert.equal(progressOf(lobby, 'bob', 'register').state, 'turn');
  assert.equal(positionOf(lobby, 'carol', 'register'), 1);
  assert.equal(progressOf(lobby, 'alice', 'transact2').state, 'turn', 'alice moved on to the next circuit');
});

test('accepted moves the contributor to the next circuit in order, and after the last one they are done', () => {
  const fixture = makeLobby();
  const { lobby } = fixture;
  lobby.join('alice');
  CIRCUITS.forEach((circuit, i) => {
    lobby.tick();
    lobby.requireTurn('alice', circuit);
    contributeAccepted(fixture, 'alice', circuit, i + 1);
  });
  const status = lobby.status('alice');
  assert.equal(status.done, true);
  assert.deepEqual(status.circuits[0], {
    circuit: 'register',
    state: 'accepted',
    contributionId: 'alice-register-1',
    index: 1,
    contributionHash: 'hash-alice-register-1',
  });
  assert.ok(status.circuits.every((entry) => entry.state === 'accepted'));
  assert.equal(lobby.join('alice').done, true, 'a done contributor stays done');
  assert.deepEqual(lobby.queueLengths(), { register: 0, transact2: 0, transact21: 0 });
  assert.deepEqual(lobby.tick(), []);
  assertRefused(() => lobby.requireTurn('alice', 'register'), 'lobby.already_contributed');
});

test(
  'a refused contribution frees the circuit and puts the contributor at ' +
    'the back of its queue, with the reason shown',
  () => {
    const { lobby, clock } = makeLobby();
    lobby.join('alice');
    lobby.join('bob');
    lobby.tick();
    lobby.markSubmitted('alice', 'register', 'c1');
    assert.deepEqual(progressOf(lobby, 'alice', 'register'), {
      circuit: 'register',
      state: 'verifying',
      contributionId: 'c1',
    });
    assert.equal(
      lobby.recordVerdict('c1', {
        status: 'refused',
        code: 'contribution.invalid_proof_of_knowledge',
        message: 'bad proof',
      }),
      true,
    );
    assert.equal(
      lobby.recordVerdict('c1', {
        status: 'refused',
        code: 'contribution.invalid_proof_of_knowledge',
        message: 'bad proof',
      }),
      false,
      'a repeated outcome changes nothing',
    );
    const status = lobby.status('alice');
    assert.deepEqual(status.lastRefusal, {
      circuit: 'register',
      code: 'contribution.invalid_proof_of_knowledge',
      message: 'bad proof',
      at: clock.now(),
    });
    assert.equal(positionOf(lobby, 'alice', 'register'), 2, 'behind bob');
    assert.equal(status.done, false);
    const granted = lobby.tick();
    assert.deepEqual(
      granted.map((event) => event.contributorId),
      ['bob'],
    );
    lobby.markSubmitted('bob', 'register', 'c2');
    assert.equal(
      lobby.recordVerdict('c2', { status: 'discarded', code: 'contribution.not_next', message: 'the head moved' }),
      true,
    );
    assert.equal(lobby.status('bob').lastRefusal, undefined, 'a discarded result shows no reason');
    assert.equal(positionOf(lobby, 'bob', 'register'), 2, 'discarded goes to the back too');
    assert.deepEqual(
      lobby.tick().map((event) => event.contributorId),
      ['alice'],
      'a refused contributor is eligible at once',
    );
    assertRefused(() => lobby.recordVerdict('never-submitted', acceptedVerdict('x')), 'not_found');
  },
);

test(
  'a contributor holds one turn at a time across circuits; each circuit ' + 'has one turn or verifying submission',
  () => {
    const fixture = makeLobby();
    const { lobby } = fixture;
    lobby.join('alice');
    lobby.join('bob');
    lobby.tick();
    contributeAccepted(fixture, 'alice', 'register', 1);
    lobby.tick();
    assert.deepEqual(
      lobby
        .activeTurns()
        .map(({ circuit, contributorId, state }) => [circuit, contributorId, state])
        .sort(),
      [
        ['register', 'bob', 'turn'],
        ['transact2', 'alice', 'turn'],
      ],
    );
    lobby.markSubmitted('alice', 'transact2', 'a2');
    lobby.join('alice');
    lobby.tick();
    assert.deepEqual(
      lobby.queueLengths(),
      { register: 0, transact2: 0, transact21: 0 },
      'alice is not queued anywhere while verifying',
    );
    assert.deepEqual(
      lobby.activeTurns().find((turn) => turn.contributorId === 'alice'),
      { circuit: 'transact2', contributorId: 'alice', state: 'verifying' },
    );
    assertRefused(() => lobby.requireTurn('alice', 'transact21'), 'lobby.not_your_turn', /being verified/);

    // A verifying submission has no deadline and keeps its circuit busy: bob, done with register
    // meanwhile, waits for transact2 however long the verification takes.
    contributeAccepted(fixture, 'bob', 'register', 2);
    fixture.clock.advance(3 * 60 * MINUTE);
    assert.deepEqual(lobby.tick(), []);
    assert.equal(positionOf(lobby, 'bob', 'transact2'), 1);
    assert.deepEqual(lobby.activeTurns(), [{ circuit: 'transact2', contributorId: 'alice', state: 'verifying' }]);
    lobby.recordVerdict('a2', acceptedVerdict('h'));
    assert.deepEqual(
      lobby.tick().map(({ circuit, contributorId }) => [circuit, contributorId]),
      [
        ['transact2', 'bob'],
        ['transact21', 'alice'],
      ],
    );
  },
);

test('the ETA is position × the measured average turn, plus what is left of the turn in progress', () => {
  const fixture = makeLobby();
  const { lobby, clock } = fixture;
  for (const id of ['alice', 'bob', 'carol', 'dave']) lobby.join(id);
  assert.deepEqual(
    progressOf(lobby, 'bob', 'register'),
    { circuit: 'register', state: 'waiting', position: 2, etaMs: 3 * MINUTE },
    'default estimate, circuit free',
  );

  lobby.tick();
  clock.advance(MINUTE);
  // alice's turn started a minute ago and is expected to last the default 3 min: 2 min left.
  assert.deepEqual(progressOf(lobby, 'bob', 'register'), {
    circuit: 'register',
    state: 'waiting',
    position: 1,
    etaMs: 2 * MINUTE,
  });
  assert.deepEqual(progressOf(lobby, 'carol', 'register'), {
    circuit: 'register',
    state: 'waiting',
    position: 2,
    etaMs: 2 * MINUTE + 3 * MINUTE,
  });

  clock.advance(3 * MINUTE); // alice's turn: 4 min
  contributeAccepted(fixture, 'alice', 'register', 1);
  lobby.tick();
  clock.advance(6 * MINUTE); // bob's turn: 6 min
  contributeAccepted(fixture, 'bob', 'register', 2);
  lobby.tick();
  // Measured average 5 min; carol's turn has just started; dave is next: 5 min left of carol's.
  assert.deepEqual(progressOf(lobby, 'dave', 'register'), {
    circuit: 'register',
    state: 'waiting',
    position: 1,
    etaMs: 5 * MINUTE,
  });
  lobby.join('erin');
  clock.advance(2 * MINUTE);
  assert.deepEqual(progressOf(lobby, 'erin', 'register'), {
    circuit: 'register',
    state: 'waiting',
    position: 2,
    etaMs: 3 * MINUTE + 5 * MINUTE,
  });
  // A turn running longer than the average leaves nothing of it to count.
  clock.advance(6 * MINUTE);
  assert.equal(progressOf(lobby, 'carol', 'register').state, 'turn');
  assert.equal((progressOf(lobby, 'erin', 'register') as { etaMs: number }).etaMs, 5 * MINUTE);
});
