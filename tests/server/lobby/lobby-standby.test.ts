/**
 * Standby (issue 62, core/queue-log/turn-order.ts standbyDepth / mayTakeOnStandby), on a clock the
 * test controls: a turn its grantee does not take is theirs alone for TAKE_PRIORITY_MS; then the
 * entry next in line may take it (its first download, Lobby.takeTurn), and one more entry every
 * further standby step (STANDBY_STEP_MS; the lobby's default step is its priority). The grant is
 * then the grantee's missed turn, not taken. Every log the lobby writes here passes the audit's
 * replay (check-queue-fairness.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkQueueFairness } from '../../../core/audit/check-queue-fairness.ts';
import { isCoordinatorError } from '../../../core/errors.ts';
import { checkQueueLog, type QueueLogEntry } from '../../../core/queue-log/queue-log-entry.ts';
import { loadServerConfig } from '../../../server/config/server-config.ts';
import type { Lobby, LobbyOptions } from '../../../server/lobby/lobby.ts';
import { STANDBY_SCAN_ROWS } from '../../../server/lobby/lobby-rules.ts';
import { CEREMONY_ID, CIRCUITS, makeLobby, progressOf } from './lobby-helpers.ts';

const SECOND = 1000;
const PRIORITY = 5 * SECOND;
const TAKE = 30 * SECOND;
const RULES: Partial<LobbyOptions> = {
  presenceMs: 60 * SECOND,
  takeTurnMs: TAKE,
  takePriorityMs: PRIORITY,
  turnSilenceMs: 2 * 60 * SECOND,
  maxMissedTurns: 3,
};
const config = { circuits: CIRCUITS.map((name) => ({ name })) };

function auditedLog(lobby: Lobby): QueueLogEntry[] {
  const log = checkQueueLog(CEREMONY_ID, lobby.queueLog.entries(), 'of the test');
  checkQueueFairness(config, log, []);
  return log;
}

/** hostile holds register's turn, granted and not taken; alice, then bob, then carol wait behind. */
function hostileHoldsTheTurn(overrides: Partial<LobbyOptions> = {}) {
  const fixture = makeLobby({ ...RULES, ...overrides });
  const { lobby } = fixture;
  for (const who of ['hostile', 'alice', 'bob', 'carol']) lobby.join(who);
  lobby.tick();
  assert.equal(progressOf(lobby, 'hostile', 'register').state, 'turn');
  const seenAll = (): void => ['alice', 'bob', 'carol'].forEach((who) => lobby.seen(who));
  return { ...fixture, seenAll };
}

/** `who` downloads register's head: the events of what that took, as [type, contributor]. */
const takenBy = (lobby: Lobby, who: string): string[][] =>
  lobby.takeTurn(who, 'register').map((e) => [e.type, e.contributorId]);

/** bob takes hostile's turn on standby after alice was offered it first: she let it pass. */
const BOB_PAST_ALICE = [
  ['turn_passed_on', 'hostile'],
  ['standby_let_pass', 'alice'],
  ['turn_granted', 'bob'],
];

const standbyOf = (lobby: Lobby, who: string): number | undefined => {
  const progress = progressOf(lobby, who, 'register');
  return progress.state === 'waiting' ? progress.standbyUntil : undefined;
};

test('an untaken turn is its grantee’s alone for TAKE_PRIORITY_MS, then the next in line takes it by a fetch', () => {
  const { lobby, clock } = hostileHoldsTheTurn();
  const granted = clock.now();
  clock.advance(PRIORITY - 1);
  assert.equal(standbyOf(lobby, 'alice'), undefined, 'within the priority nobody else is offered it');
  assert.deepEqual(lobby.takeTurn('alice', 'register'), [], 'a download within the priority takes nothing');
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'waiting');

  clock.advance(1);
  assert.equal(standbyOf(lobby, 'alice'), granted + TAKE, 'offered until the grant’s time to be taken');
  assert.equal(standbyOf(lobby, 'bob'), undefined, 'one entry at first');
  const events = lobby.takeTurn('alice', 'register');
  assert.deepEqual(
    events.map((e) => [e.type, e.contributorId]),
    [
      ['turn_passed_on', 'hostile'],
      ['turn_granted', 'alice'],
    ],
  );
  assert.equal(events[0]!.type === 'turn_passed_on' && events[0]!.takenOverBy, 'alice');
  const turn = progressOf(lobby, 'alice', 'register');
  assert.equal(turn.state, 'turn');
  assert.equal(turn.state === 'turn' && turn.takeBy, undefined, 'taken at once: no time to be taken');
  assert.equal(progressOf(lobby, 'hostile', 'register').state, 'waiting', 'the first miss keeps its place');

  const log = auditedLog(lobby);
  const last = log.slice(-3).map((e) => [e.type, e.type === 'rules' ? '' : e.contributor]);
  assert.deepEqual(last, [
    ['lapsed', 'hostile'],
    ['granted', 'alice'],
    ['taken', 'alice'],
  ]);
  const lapsed = log.at(-3) as Extract<QueueLogEntry, { type: 'lapsed' }>;
  assert.equal(lapsed.taken, false);
  assert.equal(lapsed.takenOverBy, 'alice');
  assert.equal(lapsed.missedTurns, 1);
  assert.equal((log.at(-2) as Extract<QueueLogEntry, { type: 'granted' }>).takeBy, undefined);
  assert.equal((log[0] as Extract<QueueLogEntry, { type: 'rules' }>).takePriorityMs, PRIORITY, 'the rules say so');
});

test('one more entry is offered the turn every TAKE_PRIORITY_MS; an entry further back takes nothing', () => {
  const { lobby, clock, seenAll } = hostileHoldsTheTurn();
  clock.advance(PRIORITY);
  seenAll();
  assert.deepEqual(lobby.takeTurn('bob', 'register'), [], 'bob is second: not offered at one priority');
  assert.deepEqual(lobby.takeTurn('carol', 'register'), []);
  clock.advance(PRIORITY);
  assert.notEqual(standbyOf(lobby, 'bob'), undefined, 'two entries at two priorities');
  assert.equal(standbyOf(lobby, 'carol'), undefined);
  assert.deepEqual(lobby.takeTurn('carol', 'register'), []);
  assert.deepEqual(takenBy(lobby, 'bob'), BOB_PAST_ALICE, 'bob takes it; alice, offered it first, let it pass');
  assert.equal(progressOf(lobby, 'bob', 'register').state, 'turn');
  const alice = progressOf(lobby, 'alice', 'register');
  assert.equal(alice.state === 'waiting' && alice.position, 2, 'a first miss: alice keeps her place');
  const log = auditedLog(lobby);
  const skipped = log.find((e) => e.type === 'skipped');
  assert.deepEqual(skipped && { who: skipped.contributor, by: skipped.takenOverBy, missed: skipped.missedTurns }, {
    who: 'alice',
    by: 'bob',
    missed: 1,
  });
});

test('an entry that lets standby turns pass twice goes to the back of the queue, as a grantee would', () => {
  const { lobby, clock, seenAll } = hostileHoldsTheTurn();
  clock.advance(2 * PRIORITY);
  seenAll();
  lobby.takeTurn('bob', 'register'); // alice lets it pass: her first miss, place kept, passed on
  lobby.leave('bob'); // his turn ends (a miss of his own): the entries passed on are eligible again
  seenAll();
  lobby.seen('hostile');
  lobby.tick();
  const holder = lobby.activeTurns().find((turn) => turn.circuit === 'register')!.contributorId;
  assert.equal(holder, 'hostile', 'the turn that ended released the passed-on entries: hostile is first again');
  clock.advance(2 * PRIORITY);
  seenAll();
  lobby.takeTurn('carol', 'register');
  const missedBy = Object.fromEntries(lobby.queueEntries().map((e) => [e.contributorId, e.missedTurns]));
  assert.deepEqual(missedBy, { alice: 2, hostile: 2 }, 'both let it pass a second time');
  assert.deepEqual(
    lobby.queueEntries().map((e) => e.contributorId),
    ['hostile', 'alice'],
    'both at the back of the queue: the grantee first, then the entries in the order they were offered it',
  );
  assert.ok(
    lobby.queueEntries().every((e) => e.eligibleAt !== undefined),
    'each after the cooldown',
  );
  auditedLog(lobby);
});

test('an entry that is away, or cooling down, is passed over when the offer is counted', () => {
  // alice, last seen at her join, is away once PRESENCE_MS passed; bob, seen, is then first.
  const { lobby: other, clock: otherClock } = hostileHoldsTheTurn({ presenceMs: 3 * SECOND });
  otherClock.advance(PRIORITY);
  other.seen('bob');
  assert.equal(standbyOf(other, 'alice'), undefined, 'alice is away (unseen for PRESENCE_MS)');
  assert.notEqual(standbyOf(other, 'bob'), undefined, 'bob is the first present entry behind the grantee');
  assert.equal(other.takeTurn('bob', 'register').length, 2);
  const log = auditedLog(other);
  assert.ok(
    log.some((e) => e.type === 'away' && e.contributor === 'alice'),
    'the entry passed over is logged away before the takeover',
  );
});

test('once taken on standby the turn is the taker’s: a later download by another entry takes nothing', () => {
  const { lobby, clock, seenAll } = hostileHoldsTheTurn();
  clock.advance(2 * PRIORITY);
  seenAll();
  assert.equal(lobby.takeTurn('alice', 'register').length, 2);
  const logged = lobby.queueLog.entries().length;
  assert.deepEqual(lobby.takeTurn('bob', 'register'), [], 'bob, offered it too, came second');
  assert.equal(progressOf(lobby, 'bob', 'register').state, 'waiting');
  assert.equal(standbyOf(lobby, 'bob'), undefined, 'a taken turn is offered to nobody');
  assert.equal(lobby.queueLog.entries().length, logged, 'and nothing is written');
  assert.equal(lobby.queueEntries().find((e) => e.contributorId === 'bob')?.missedTurns, 0, 'nor counted');
});

test('an offer is read in the first STANDBY_SCAN_ROWS of a queue only: behind as many away entries, none', () => {
  const { lobby, clock } = makeLobby({ ...RULES, presenceMs: 3 * SECOND });
  lobby.join('grantee');
  lobby.tick();
  const away = Array.from({ length: STANDBY_SCAN_ROWS }, (_, i) => `away${i}`);
  for (const who of [...away, 'late']) lobby.join(who);
  clock.advance(TAKE - 1); // everyone but `late` unseen past PRESENCE_MS: away
  lobby.seen('late');
  assert.equal(standbyOf(lobby, 'late'), undefined, 'the status does not read past the bound');
  assert.deepEqual(lobby.takeTurn('late', 'register'), [], 'and a download takes nothing');
  assert.equal(progressOf(lobby, 'grantee', 'register').state, 'turn');
});

test('a taken turn, a turn past its time to be taken, standby off or the ceremony closed: nothing to take', () => {
  const taken = hostileHoldsTheTurn();
  taken.lobby.takeTurn('hostile', 'register');
  taken.clock.advance(PRIORITY * 3);
  taken.seenAll();
  assert.deepEqual(taken.lobby.takeTurn('alice', 'register'), [], 'taken by its grantee');
  assert.equal(standbyOf(taken.lobby, 'alice'), undefined);

  const late = hostileHoldsTheTurn();
  late.clock.advance(TAKE + 1);
  late.seenAll();
  assert.deepEqual(late.lobby.takeTurn('alice', 'register'), [], 'past takeBy the tick passes it on, as before');
  assert.equal(late.lobby.tick()[0]!.type, 'turn_passed_on');

  const off = hostileHoldsTheTurn({ takePriorityMs: 0 });
  off.clock.advance(TAKE - 1);
  off.seenAll();
  assert.equal(standbyOf(off.lobby, 'alice'), undefined);
  assert.deepEqual(off.lobby.takeTurn('alice', 'register'), []);
  assert.equal(
    (auditedLog(off.lobby)[0] as Extract<QueueLogEntry, { type: 'rules' }>).takePriorityMs,
    undefined,
    'off: the rules entry does not state it',
  );

  const closed = hostileHoldsTheTurn();
  closed.open.value = false;
  closed.clock.advance(PRIORITY);
  closed.seenAll();
  assert.deepEqual(closed.lobby.takeTurn('alice', 'register'), [], 'no turn starts while the ceremony is closed');
});

test('a ceremony closed between the offer’s read and the take’s transaction: the take writes nothing', () => {
  // The phase is stored, so another process (a finalise) may close the ceremony between the read
  // outside the transaction and the transaction itself: the first ask says open, every later closed.
  let asked = 0;
  const { lobby, clock, seenAll } = hostileHoldsTheTurn({ isOpen: () => asked++ === 0 });
  clock.advance(PRIORITY);
  seenAll();
  asked = 0;
  const logged = lobby.queueLog.entries().length;
  assert.deepEqual(lobby.takeTurn('alice', 'register'), []);
  assert.ok(asked >= 2, 'asked again inside the transaction');
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'waiting');
  assert.equal(lobby.queueLog.entries().length, logged, 'nothing logged');
});

test('nextDueAt names each moment one more entry is offered the turn, up to its time to be taken', () => {
  const { lobby, clock } = hostileHoldsTheTurn({ takePriorityMs: 12 * SECOND });
  const granted = clock.now();
  assert.equal(lobby.nextDueAt(), granted + 12 * SECOND);
  clock.advance(12 * SECOND);
  assert.equal(lobby.nextDueAt(), granted + 24 * SECOND);
  clock.advance(12 * SECOND);
  assert.equal(lobby.nextDueAt(), granted + TAKE + 1, 'the next offer would come after takeBy: takeBy’s moment');
});

test('the m1/m2 loop, honest contributors ready: a hostile grant costs TAKE_PRIORITY_MS, not TAKE_TURN_MS', () => {
  const { lobby, clock } = makeLobby(RULES);
  for (const who of ['m1', 'm2', 'h1', 'h2', 'h3']) lobby.join(who);
  let hostileTime = 0;
  for (let step = 0; step < 40; step++) {
    lobby.tick();
    const holder = lobby.activeTurns().find((turn) => turn.circuit === 'register');
    if (!holder) break;
    if (holder.contributorId.startsWith('m')) {
      // The hostile account never takes it; the honest one next in line does at the first offer.
      const next = lobby.queueEntries().find((e) => e.circuit === 'register' && !e.contributorId.startsWith('m'));
      if (!next) break;
      // Offered one more entry a priority: the other hostile account may stand between.
      do {
        clock.advance(PRIORITY);
        hostileTime += PRIORITY;
        for (const who of ['m1', 'm2', 'h1', 'h2', 'h3']) lobby.seen(who);
      } while (standbyOf(lobby, next.contributorId) === undefined);
      const events = lobby.takeTurn(next.contributorId, 'register');
      assert.deepEqual(events.at(-1) && [events.at(-1)!.type, events.at(-1)!.contributorId], [
        'turn_granted',
        next.contributorId,
      ]);
      continue;
    }
    lobby.takeTurn(holder.contributorId, 'register');
    lobby.markSubmitted(holder.contributorId, 'register', `${holder.contributorId}-${step}`);
    lobby.recordVerdict(`${holder.contributorId}-${step}`, {
      status: 'accepted',
      chainIndex: step + 1,
      contributionHash: 'ab'.repeat(32),
      transcriptHash: (step + 1).toString(16).padStart(128, '0'),
    });
    clock.advance(SECOND);
    for (const who of ['m1', 'm2', 'h1', 'h2', 'h3']) lobby.seen(who);
  }
  for (const who of ['h1', 'h2', 'h3']) assert.equal(progressOf(lobby, who, 'register').state, 'accepted');
  // Each account is granted twice at most while someone honest waits (its first miss keeps its
  // place, passed on once; its second sends it to the back, behind the cooldown), and each grant
  // costs a priority for each hostile entry standing before the honest one: here at most 2.
  assert.ok(hostileTime <= 8 * PRIORITY, `the two hostile accounts cost ${hostileTime} ms, at most 8 priorities`);
  assert.ok(hostileTime >= PRIORITY, 'they were granted turns');
});

const STEP = PRIORITY / 4;

test('with a standby step the entry two behind the grantee may take the turn at priority + 1 step, not before', () => {
  const { lobby, clock, seenAll } = hostileHoldsTheTurn({ standbyStepMs: STEP });
  const granted = clock.now();
  assert.equal(lobby.nextDueAt(), granted + PRIORITY, 'the grantee keeps its whole priority');
  clock.advance(PRIORITY);
  seenAll();
  assert.notEqual(standbyOf(lobby, 'alice'), undefined, 'at the priority: the next in line');
  assert.equal(lobby.nextDueAt(), granted + PRIORITY + STEP, 'the next tick is a step later, not a priority');
  clock.advance(STEP - 1);
  seenAll();
  assert.equal(standbyOf(lobby, 'bob'), undefined, 'a millisecond before the step: bob is not offered it');
  assert.deepEqual(lobby.takeTurn('bob', 'register'), [], 'and a download takes nothing');
  clock.advance(1);
  assert.equal(standbyOf(lobby, 'carol'), undefined, 'carol, third, a step later still');
  assert.equal(lobby.nextDueAt(), granted + PRIORITY + 2 * STEP);
  assert.deepEqual(
    takenBy(lobby, 'bob'),
    BOB_PAST_ALICE,
    'at priority + 1 step bob takes it; alice, offered it first, let it pass',
  );
  const rules = auditedLog(lobby)[0] as Extract<QueueLogEntry, { type: 'rules' }>;
  assert.deepEqual([rules.takePriorityMs, rules.standbyStepMs], [PRIORITY, STEP], 'the rules state the step');
});

test('a step equal to the priority is the rule before the step: the rules entry states none, as before', () => {
  const { lobby } = hostileHoldsTheTurn({ standbyStepMs: PRIORITY });
  const rules = auditedLog(lobby)[0] as Extract<QueueLogEntry, { type: 'rules' }>;
  assert.equal(rules.takePriorityMs, PRIORITY);
  assert.equal('standbyStepMs' in rules, false);
  for (const standbyStepMs of [0, PRIORITY + 1, 1.5])
    assert.throws(
      () => makeLobby({ ...RULES, standbyStepMs }),
      (e: unknown) => isCoordinatorError(e, 'config.invalid') && /standbyStepMs/.test(e.message),
      `standbyStepMs ${standbyStepMs}`,
    );
  makeLobby({ ...RULES, takePriorityMs: 0, standbyStepMs: 0 }); // standby off: no step to check
});

test('STANDBY_STEP_MS: 1.25 s unset, never over TAKE_PRIORITY_MS unset, refused over it or 0 when set', () => {
  const lobbyOf = (env: Record<string, string>) => loadServerConfig(env).lobby;
  assert.equal(lobbyOf({}).standbyStepMs, 1250);
  assert.equal(lobbyOf({ TAKE_PRIORITY_MS: '600' }).standbyStepMs, 600, 'a priority set under 1.25 s still starts');
  assert.equal(lobbyOf({ TAKE_PRIORITY_MS: '400', STANDBY_STEP_MS: '100' }).standbyStepMs, 100);
  assert.equal(lobbyOf({ TAKE_PRIORITY_MS: '0', STANDBY_STEP_MS: '9000' }).takePriorityMs, 0, 'standby off');
  for (const env of [{ STANDBY_STEP_MS: '5001' }, { STANDBY_STEP_MS: '0' }, { STANDBY_STEP_MS: '1.5' }])
    assert.throws(
      () => loadServerConfig(env),
      (e: unknown) => isCoordinatorError(e, 'config.invalid') && e.message.includes('STANDBY_STEP_MS'),
      JSON.stringify(env),
    );
});
