/**
 * Presence, on a clock the test controls: an entry not seen for PRESENCE_MS keeps its place but is
 * passed over, and is eligible again once seen; a turn not taken within TAKE_TURN_MS passes on, a
 * missed turn, and (the first time) its entry goes back to its place, away; a taken turn that
 * lapses is missed too, and goes to the back. Each move is in the queue log, hash-chained, with
 * signed receipts for joins, refusals and removals, and the order is the one the pure rules
 * (core/queue-log/turn-order.ts) give.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { checkQueueLog, type QueueLogEntry } from '../../../core/queue-log/queue-log-entry.ts';
import {
  CEREMONY_ID,
  contributeAccepted,
  makeLobby,
  positionOf,
  progressOf,
  TRANSCRIPT_HASH,
} from './lobby-helpers.ts';

const SECOND = 1000;
const PRESENCE = 60 * SECOND;
const TAKE = 30 * SECOND;
const PRESENCE_ON = { presenceMs: PRESENCE, takeTurnMs: TAKE };

/** The log's steps as [type, contributor, circuit] (rules entries left out). */
function steps(entries: readonly QueueLogEntry[]): Array<[string, string, string]> {
  return entries.flatMap((e) =>
    e.type === 'rules' ? [] : [[e.type, e.contributor, e.circuit] as [string, string, string]],
  );
}

test('an entry not seen for PRESENCE_MS keeps its place but is passed over, and is eligible again once seen', () => {
  const fixture = makeLobby(PRESENCE_ON);
  const { lobby, clock, open } = fixture;
  open.value = false;
  lobby.join('alice');
  lobby.join('bob');
  clock.advance(PRESENCE);
  lobby.seen('bob');
  clock.advance(1);
  open.value = true;
  const granted = lobby.tick();
  assert.deepEqual(
    granted.map((e) => [e.type, e.contributorId]),
    [['turn_granted', 'bob']],
    'alice, not seen for more than PRESENCE_MS, is passed over',
  );
  assert.equal(positionOf(lobby, 'alice', 'register'), 1, 'she keeps her place');
  assert.equal(lobby.queueEntries()[0]!.away, true, 'the console shows her away');
  contributeAccepted(fixture, 'bob', 'register', 1);
  assert.deepEqual(
    lobby.tick().filter((e) => e.circuit === 'register'),
    [],
    'still away: the circuit waits for her',
  );

  lobby.seen('alice');
  assert.equal(lobby.queueEntries().find((e) => e.contributorId === 'alice')!.away, undefined);
  assert.deepEqual(
    lobby.tick().map((e) => [e.type, e.contributorId, e.circuit]),
    [['turn_granted', 'alice', 'register']],
    'seen again, she gets the turn at once',
  );
  const log = checkQueueLog(CEREMONY_ID, lobby.queueLog.entries(), 'of the test');
  assert.deepEqual(
    steps(log).filter(([type]) => type === 'away' || type === 'back'),
    [
      ['away', 'alice', 'register'],
      ['back', 'alice', 'register'],
    ],
  );
  const away = log.find((e) => e.type === 'away')!;
  assert.equal(away.type === 'away' && away.seenAt, new Date(clock.now() - PRESENCE - 1).toISOString());
});

test(
  'a contributor who closes the page while waiting costs the circuit TAKE_TURN_MS when their turn comes, ' +
    'and takes their turn when they come back',
  () => {
    const fixture = makeLobby(PRESENCE_ON);
    const { lobby, clock } = fixture;
    lobby.join('alice'); // then closes the page: never seen again until she comes back
    lobby.join('bob');
    const grantedAt = clock.now();
    assert.deepEqual(
      lobby.tick().map((e) => [e.type, e.contributorId]),
      [['turn_granted', 'alice']],
    );
    const turn = progressOf(lobby, 'alice', 'register');
    assert.equal(turn.state === 'turn' && turn.takeBy, grantedAt + TAKE);

    clock.advance(TAKE);
    lobby.seen('bob');
    assert.deepEqual(lobby.tick(), [], 'at TAKE_TURN_MS itself the turn is still hers');
    clock.advance(1);
    const passed = lobby.tick();
    assert.deepEqual(
      passed.map((e) => [e.type, e.contributorId]),
      [
        ['turn_passed_on', 'alice'],
        ['turn_granted', 'bob'],
      ],
    );
    const idle = passed[1]!.at - grantedAt;
    assert.ok(idle <= TAKE + 1, `the circuit waited ${idle} ms for nobody`);
    assert.equal(positionOf(lobby, 'alice', 'register'), 1, 'back in her place, not at the back');
    assert.equal(lobby.queueEntries()[0]!.missedTurns, 1, 'a missed turn, her first: the place is kept');
    assert.equal(lobby.status('alice').removed, undefined);

    // A download or heartbeat after the turn passed on does not take it back.
    lobby.takeTurn('alice', 'register');
    assert.equal(progressOf(lobby, 'bob', 'register').state, 'turn');

    lobby.heartbeat('bob', 'register');
    contributeAccepted(fixture, 'bob', 'register', 1);
    assert.deepEqual(
      lobby.tick().filter((e) => e.circuit === 'register'),
      [],
      'alice is away: not granted',
    );
    clock.advance(10 * 60 * SECOND);
    lobby.seen('alice'); // she opens the page again
    assert.deepEqual(
      lobby
        .tick()
        .filter((e) => e.circuit === 'register')
        .map((e) => [e.type, e.contributorId]),
      [['turn_granted', 'alice']],
    );
    lobby.takeTurn('alice', 'register'); // her page downloads the head
    const taken = progressOf(lobby, 'alice', 'register');
    assert.equal(taken.state === 'turn' && taken.takeBy, undefined, 'taken: no time to be taken any more');
    contributeAccepted(fixture, 'alice', 'register', 2);

    const log = checkQueueLog(CEREMONY_ID, lobby.queueLog.entries(), 'of the test');
    assert.deepEqual(
      steps(log).filter(([, , circuit]) => circuit === 'register'),
      [
        ['join', 'alice', 'register'],
        ['join', 'bob', 'register'],
        ['granted', 'alice', 'register'],
        ['lapsed', 'alice', 'register'], // not taken: back in her place, away
        ['granted', 'bob', 'register'],
        ['taken', 'bob', 'register'],
        ['accepted', 'bob', 'register'],
        ['back', 'alice', 'register'],
        ['granted', 'alice', 'register'],
        ['taken', 'alice', 'register'],
        ['accepted', 'alice', 'register'],
      ],
    );
    const lapse = log.find((e) => e.type === 'lapsed');
    assert.equal(lapse?.type === 'lapsed' && lapse.taken, false);
    const acceptance = log.find((e) => e.type === 'accepted');
    assert.equal(acceptance?.type === 'accepted' && acceptance.transcriptHash, TRANSCRIPT_HASH);
  },
);

test('a taken turn that lapses is a missed turn: back of the queue after the cooldown, out at the limit', () => {
  const { lobby, clock } = makeLobby({ ...PRESENCE_ON, maxMissedTurns: 2, turnTimeoutMs: 60 * SECOND });
  lobby.join('alice');
  lobby.tick();
  lobby.takeTurn('alice', 'register'); // taken (its first download)
  lobby.heartbeat('alice', 'register');
  clock.advance(2 * 60 * SECOND + 1); // past the heartbeat's extension too
  lobby.seen('alice');
  const missed = lobby.tick();
  assert.deepEqual(
    missed.map((e) => e.type),
    ['turn_missed'],
  );
  const waiting = progressOf(lobby, 'alice', 'register');
  assert.equal(waiting.state === 'waiting' && waiting.eligibleAt, clock.now() + 5 * 60 * SECOND);
  clock.advance(5 * 60 * SECOND);
  lobby.seen('alice');
  lobby.tick();
  lobby.takeTurn('alice', 'register');
  clock.advance(61 * SECOND);
  assert.deepEqual(
    lobby.tick().map((e) => e.type),
    ['turn_missed', 'entry_removed'],
  );
  assert.equal(lobby.status('alice').removed?.reason, 'missed_turns');
  const log = lobby.queueLog.entries();
  const lapses = log.flatMap((e) => (e.type === 'lapsed' ? [[e.taken, e.missedTurns]] : []));
  assert.deepEqual(lapses, [
    [true, 1],
    [true, 2],
  ]);
  const requeue = log.find((e) => e.type === 'join' && e.via === 'missed');
  assert.ok(requeue?.type === 'join' && requeue.eligibleAt, 'the requeue after a miss states its cooldown');
  assert.equal(log.at(-1)?.type, 'removed');
});

test('joins, refusals and removals each get a receipt signed by the receipt key, naming their log entry', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const fixture = makeLobby({
    queueLog: {
      sign: (body) => {
        const text = JSON.stringify(body);
        return { body: text, signature: sign(null, Buffer.from(text), privateKey).toString('base64') };
      },
    },
  });
  const { lobby } = fixture;
  lobby.join('semaphore:nullifier-of-alice', undefined, 'anonymous');
  lobby.join('github:42', undefined, 'bob');
  lobby.tick();
  lobby.markSubmitted('semaphore:nullifier-of-alice', 'register', 'c1');
  lobby.recordVerdict('c1', { status: 'refused', code: 'contribution.invalid_proof_of_knowledge', message: 'no' });
  lobby.removeEntry('github:42');

  const log = checkQueueLog(CEREMONY_ID, lobby.queueLog.entries(), 'of the test');
  const anonymous = log.find((e) => e.type === 'join')!;
  assert.ok(anonymous.type === 'join');
  assert.match(anonymous.contributor, /^anonymous:[0-9a-f]{16}$/, 'a pseudonym, not the nullifier');
  assert.equal(anonymous.name, 'anonymous');
  assert.ok(!JSON.stringify(log).includes('nullifier'), 'the nullifier is nowhere in the log');

  const receipts = lobby.queueLog.stepReceiptsFor('semaphore:nullifier-of-alice');
  assert.deepEqual(
    receipts.map((r) => JSON.parse(r.body).step),
    ['join', 'refusal', 'join'],
  );
  for (const receipt of [...receipts, ...lobby.queueLog.stepReceiptsFor('github:42')]) {
    assert.ok(verify(null, Buffer.from(receipt.body), publicKey, Buffer.from(receipt.signature, 'base64')));
    const body = JSON.parse(receipt.body);
    const entry = log[body.queueLog.seq]!;
    assert.equal(entry.hash, body.queueLog.hash);
    assert.equal(receipt.seq, entry.seq);
  }
  const refusal = JSON.parse(receipts[1]!.body);
  assert.equal(refusal.code, 'contribution.invalid_proof_of_knowledge');
  const removal = JSON.parse(lobby.queueLog.stepReceiptsFor('github:42').at(-1)!.body);
  assert.deepEqual([removal.step, removal.reason, removal.name], ['removal', 'coordinator', 'bob']);
});

test('after a restart every waiting entry counts as seen at the start; away entries stay away until seen', () => {
  const first = makeLobby(PRESENCE_ON);
  first.open.value = false;
  first.lobby.join('alice');
  first.lobby.join('bob');
  first.lobby.join('carol');
  first.clock.advance(PRESENCE + 1);
  first.lobby.seen('carol');
  first.open.value = true;
  first.lobby.tick(); // alice and bob are marked away, carol gets the turn
  first.lobby.seen('bob');
  first.clock.advance(PRESENCE); // nobody polls across the restart
  const second = makeLobby(PRESENCE_ON, first.db, first.clock);
  second.lobby.leave('carol');
  assert.deepEqual(
    second.lobby.tick().map((e) => [e.type, e.contributorId]),
    [['turn_granted', 'bob']],
    'alice is still away (logged so); bob counts as seen at the restart',
  );
  const log = checkQueueLog(CEREMONY_ID, second.lobby.queueLog.entries(), 'of the test');
  assert.equal(log.filter((e) => e.type === 'rules').length, 1, 'the same rules are not stated twice');
});
