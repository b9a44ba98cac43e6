/**
 * A contributor's choice of circuits (join with `circuits`) and leaving the lobby (`leave`): from a
 * queue, from a turn, and while a contribution is being verified, whose verdict then queues them
 * nowhere; and what a later join undoes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Lobby } from '../../../server/lobby/lobby.ts';
import { openDatabase } from '../../../server/store/database.ts';
import { ManualClock } from '../../../server/clock.ts';
import {
  acceptedVerdict,
  assertRefused,
  CEREMONY_ID,
  contributeAccepted,
  makeLobby,
  positionOf,
  progressOf,
} from './lobby-helpers.ts';

/** The state of each circuit in a contributor's status, in ceremony order. */
const states = (status: ReturnType<Lobby['status']>) => status.circuits.map((c) => c.state);

/** `contributor` joins, takes the register turn at the next tick (nobody before them) and submits `submission`. */
function submitRegister(lobby: Lobby, contributor: string, submission: string): void {
  lobby.join(contributor);
  lobby.tick();
  lobby.markSubmitted(contributor, 'register', submission);
}

test('joining with a choice of circuits queues only those, in ceremony order; done after the last of them', () => {
  const fixture = makeLobby();
  const { lobby } = fixture;
  // Named out of order: the ceremony's order decides.
  const status = lobby.join('alice', ['transact21', 'transact2']);
  assert.deepEqual(status.chosenCircuits, ['transact2', 'transact21']);
  assert.deepEqual(states(status), ['pending', 'waiting', 'pending'], 'register is skipped');
  lobby.tick();
  contributeAccepted(fixture, 'alice', 'transact2', 1);
  lobby.tick();
  assert.equal(progressOf(lobby, 'alice', 'transact21').state, 'turn');
  contributeAccepted(fixture, 'alice', 'transact21', 1);
  const after = lobby.status('alice');
  assert.deepEqual(states(after), ['pending', 'accepted', 'accepted'], 'nothing is queued after the chosen circuits');
  assert.equal(after.done, false, '`done` still means every circuit of the ceremony');
  assert.deepEqual(lobby.queueLengths(), { register: 0, transact2: 0, transact21: 0 });
  // A later join without a choice takes the rest.
  assert.equal(lobby.join('alice').chosenCircuits, undefined);
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'waiting');
});

test('a choice of circuits is checked: unknown names and an empty choice are refused, changing nothing', () => {
  const { lobby } = makeLobby();
  assertRefused(() => lobby.join('alice', ['register', 'transact9']), 'circuit.unknown', /"transact9"/);
  assertRefused(() => lobby.join('alice', []), 'request.invalid');
  assert.deepEqual(states(lobby.status('alice')), ['pending', 'pending', 'pending']);
});

test('joining again keeps the place, unless the new choice leaves out the circuit waited for', () => {
  const { lobby, open } = makeLobby();
  open.value = false;
  lobby.join('bob');
  lobby.join('alice', ['register', 'transact2']);
  assert.equal(positionOf(lobby, 'alice', 'register'), 2);
  lobby.join('alice', ['register', 'transact21']);
  assert.equal(positionOf(lobby, 'alice', 'register'), 2, 'same circuit: the place is kept');
  assert.deepEqual(lobby.status('alice').chosenCircuits, ['register', 'transact21']);
  lobby.join('alice', ['transact21']);
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'pending');
  assert.equal(positionOf(lobby, 'alice', 'transact21'), 1, 'moved to the first circuit of the new choice');
});

test('leaving a queue drops the entry; leaving again, or when not in the lobby, changes nothing', () => {
  const { lobby, open } = makeLobby();
  open.value = false;
  lobby.join('alice');
  lobby.join('bob');
  assert.deepEqual(lobby.leave('alice'), { left: 'waiting', circuit: 'register' });
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'pending');
  assert.equal(positionOf(lobby, 'bob', 'register'), 1, 'the one behind moves up');
  assert.deepEqual(lobby.leave('alice'), { left: 'nothing' });
  assert.deepEqual(lobby.leave('nobody'), { left: 'nothing' });
  assert.deepEqual(lobby.queueLengths(), { register: 1, transact2: 0, transact21: 0 });
});

test('leaving during a turn gives it up to the next in line; the turn is recorded as discarded', () => {
  const { lobby, db } = makeLobby();
  lobby.join('alice');
  lobby.join('bob');
  lobby.tick();
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'turn');
  assert.deepEqual(lobby.leave('alice'), { left: 'turn', circuit: 'register' });
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'pending');
  assertRefused(() => lobby.requireTurn('alice', 'register'), 'lobby.not_your_turn', /not in the queue/);
  assert.deepEqual(
    lobby.tick().map((e) => [e.type, e.contributorId]),
    [['turn_granted', 'bob']],
  );
  const history = db.prepare("SELECT contributor_id, outcome FROM lobby_turn_history WHERE circuit = 'register'").all();
  assert.deepEqual(history, [{ contributor_id: 'alice', outcome: 'discarded' }]);
  assert.equal(lobby.status('alice').removed, undefined, 'leaving is no removal: nothing to explain');
});

test('leaving while verifying: the verdict still comes, but queues them nowhere (accepted or refused)', () => {
  const fixture = makeLobby();
  const { lobby } = fixture;
  submitRegister(lobby, 'alice', 'a1');
  assert.deepEqual(lobby.leave('alice'), { left: 'after_verdict', circuit: 'register' });
  assert.equal(lobby.status('alice').leaving, true);
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'verifying', 'the submission stays');
  lobby.recordVerdict('a1', acceptedVerdict('h1'));
  const status = lobby.status('alice');
  assert.deepEqual(states(status), ['accepted', 'pending', 'pending'], 'not queued for the next circuit');
  assert.equal(status.leaving, undefined, 'the flag goes with the verdict');

  submitRegister(lobby, 'bob', 'b1');
  lobby.leave('bob');
  lobby.recordVerdict('b1', { status: 'refused', code: 'contribution.l_section_invalid', message: 'bad L' });
  const bob = lobby.status('bob');
  assert.equal(progressOf(lobby, 'bob', 'register').state, 'pending', 'not put back in the queue');
  assert.equal(bob.lastRefusal?.code, 'contribution.l_section_invalid', 'the refusal is still shown');
});

test('joining again after leaving while verifying undoes the leave: the verdict then queues as usual', () => {
  const fixture = makeLobby();
  const { lobby } = fixture;
  submitRegister(lobby, 'alice', 'a1');
  lobby.leave('alice');
  lobby.join('alice');
  assert.equal(lobby.status('alice').leaving, undefined);
  lobby.recordVerdict('a1', acceptedVerdict('h1'));
  assert.equal(progressOf(lobby, 'alice', 'transact2').state, 'waiting');
});

test('the choice and a pending leave survive a restart (a new Lobby on the same database)', () => {
  const db = openDatabase(':memory:');
  const clock = new ManualClock();
  const first = makeLobby({}, db, clock);
  first.lobby.join('alice', ['transact2']);
  submitRegister(first.lobby, 'bob', 'b1');
  first.lobby.leave('bob');
  const second = new Lobby(
    db,
    { circuits: ['register', 'transact2', 'transact21'], ceremonyId: CEREMONY_ID, isOpen: () => true },
    clock,
  );
  assert.deepEqual(second.status('alice').chosenCircuits, ['transact2']);
  assert.equal(second.status('bob').leaving, true);
  second.recordVerdict('b1', acceptedVerdict('h'));
  assert.equal(progressOf(second, 'bob', 'transact2').state, 'pending');
});

test('a refusal after a join that left its circuit out queues for a chosen circuit, not the refused one', () => {
  const fixture = makeLobby();
  const { lobby } = fixture;
  submitRegister(lobby, 'alice', 'a1');
  // While register is being verified, alice asks for transact2 only (a terminal rerun with a circuit named).
  assert.deepEqual(lobby.join('alice', ['transact2']).chosenCircuits, ['transact2']);
  lobby.recordVerdict('a1', { status: 'refused', code: 'contribution.l_section_invalid', message: 'bad L' });
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'pending', 'not back in a queue she left out');
  assert.equal(progressOf(lobby, 'alice', 'transact2').state, 'waiting', 'queued for the circuit she chose');
  assert.equal(lobby.status('alice').lastRefusal?.code, 'contribution.l_section_invalid', 'the refusal is shown');
});
