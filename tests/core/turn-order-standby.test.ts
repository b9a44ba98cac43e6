/**
 * The standby rule (issue 62: a turn its grantee never takes must cost the circuit almost nothing),
 * as the pure functions the lobby and the audit's replay share (core/queue-log/turn-order.ts):
 * standbyDepth, how many entries behind the grantee a turn not taken is offered to by now (one at
 * the grantee's priority, then one more every standby step), and mayTakeOnStandby / offeredBefore,
 * whether a given waiting entry is among them and who was offered it first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  mayTakeOnStandby,
  offeredBefore,
  standbyDepth,
  standbyReachedAt,
  statedStandby,
  type WaitingEntry,
} from '../../core/queue-log/turn-order.ts';

const NOW = 1_000_000;
const P = 10_000;

interface Named extends WaitingEntry {
  name: string;
}
const ready = (name: string, fields: Partial<WaitingEntry> = {}): Named => ({
  name,
  away: false,
  eligibleAt: NOW,
  passedOn: false,
  ...fields,
});
/** Whether `name` may take the turn on standby, `depth` entries being offered it. */
const may = (queue: Named[], name: string, depth: number): boolean =>
  mayTakeOnStandby(queue, (e) => e.name === name, depth, NOW);

test('standbyDepth, no step stated (older logs): off, 0 within the priority, then one more every priority', () => {
  const old = (takePriorityMs: number) => statedStandby({ takePriorityMs });
  assert.deepEqual(old(P), { takePriorityMs: P, standbyStepMs: P }, 'the step is the priority');
  assert.deepEqual(statedStandby({}), { takePriorityMs: 0, standbyStepMs: 0 }, 'no takePriorityMs: off');
  assert.equal(standbyDepth(0, 5 * P, old(0)), 0, 'takePriorityMs 0: standby off');
  assert.equal(standbyDepth(0, 5 * P, old(Number.NaN)), 0, 'not a period: off');
  assert.equal(standbyDepth(1000, 999, old(P)), 0, 'a time before the grant');
  assert.equal(standbyDepth(1000, 1000, old(P)), 0, 'at the grant');
  assert.equal(standbyDepth(1000, 1000 + P - 1, old(P)), 0, 'a millisecond before the priority runs out');
  assert.equal(standbyDepth(1000, 1000 + P, old(P)), 1, 'at takePriorityMs: the entry next in line');
  assert.equal(standbyDepth(1000, 1000 + 2 * P - 1, old(P)), 1);
  assert.equal(standbyDepth(1000, 1000 + 2 * P, old(P)), 2, 'at 2·takePriorityMs: one more');
  assert.equal(standbyDepth(1000, 1000 + 3 * P, old(P)), 3);
});

const STEP = P / 4;
const RULE = { takePriorityMs: P, standbyStepMs: STEP };

test('standbyDepth with a step: the grantee keeps its whole priority, then one more entry every step', () => {
  assert.equal(standbyDepth(1000, 1000 + STEP, RULE), 0, 'a step after the grant: still the grantee’s alone');
  assert.equal(standbyDepth(1000, 1000 + P - 1, RULE), 0, 'a millisecond before the priority runs out');
  assert.equal(standbyDepth(1000, 1000 + P, RULE), 1, 'at the priority: the entry next in line');
  assert.equal(standbyDepth(1000, 1000 + P + STEP - 1, RULE), 1, 'a millisecond before the first step');
  assert.equal(standbyDepth(1000, 1000 + P + STEP, RULE), 2, 'priority + 1 step: two entries');
  assert.equal(standbyDepth(1000, 1000 + P + 2 * STEP, RULE), 3);
  assert.equal(standbyDepth(1000, 1000 + 2 * P, RULE), 5, 'a second priority is four steps');
  assert.equal(standbyDepth(1000, 1000 + 5 * P, { takePriorityMs: 0, standbyStepMs: STEP }), 0, 'standby off');
  assert.equal(standbyDepth(1000, 1000 + 5 * P, { takePriorityMs: P, standbyStepMs: 0 }), 1, 'no step: no wider');
  assert.deepEqual(statedStandby(RULE), RULE, 'a stated step is the step');
});

test('standbyReachedAt is standbyDepth’s inverse: the moment each entry more is offered the turn', () => {
  assert.equal(standbyReachedAt(1000, 1, RULE), 1000 + P);
  assert.equal(standbyReachedAt(1000, 2, RULE), 1000 + P + STEP);
  assert.equal(standbyReachedAt(1000, 5, RULE), 1000 + P + 4 * STEP);
  for (const depth of [1, 2, 3, 7]) {
    const at = standbyReachedAt(1000, depth, RULE);
    assert.equal(standbyDepth(1000, at, RULE), depth, `at ${at - 1000} ms: ${depth}`);
    assert.equal(standbyDepth(1000, at - 1, RULE), depth - 1, `a millisecond before: ${depth - 1}`);
  }
  assert.equal(standbyReachedAt(1000, 3, statedStandby({ takePriorityMs: P })), 1000 + 3 * P, 'no step: priorities');
  assert.equal(standbyReachedAt(1000, 1, { takePriorityMs: 0, standbyStepMs: 0 }), Infinity, 'standby off');
});

test('offeredBefore with a step: the entry two behind the grantee is offered the turn at priority + 1 step', () => {
  const queue = ['a', 'b', 'c'].map((name) => ready(name));
  const offered = (name: string, after: number) =>
    offeredBefore(queue, (e) => e.name === name, standbyDepth(NOW - after, NOW, RULE), NOW)?.map((e) => e.name);
  assert.equal(offered('b', P + STEP - 1), undefined, 'b is second: not before the first step');
  assert.deepEqual(
    offered('b', P + STEP),
    ['a'],
    'at priority + 1 step b may take it; a, offered it first, let it pass',
  );
  assert.equal(offered('c', P + STEP), undefined, 'c is third: a step later');
  assert.deepEqual(offered('c', P + 2 * STEP), ['a', 'b']);
  assert.deepEqual(offered('a', P), [], 'the first behind the grantee at the priority, as before');
});

test('mayTakeOnStandby: plain FIFO, the first `depth` entries in line', () => {
  const queue = ['a', 'b', 'c'].map((name) => ready(name));
  assert.equal(may(queue, 'a', 0), false, 'depth 0: nobody');
  assert.equal(may(queue, 'a', 1), true);
  assert.equal(may(queue, 'b', 1), false, 'b is second');
  assert.equal(may(queue, 'b', 2), true);
  assert.equal(may(queue, 'c', 2), false);
  assert.equal(may(queue, 'c', 3), true);
  assert.equal(may(queue, 'c', 10), true, 'a depth beyond the queue');
  assert.equal(may(queue, 'z', 10), false, 'not in the queue');
  assert.equal(may([], 'a', 1), false, 'an empty queue');
});

test('mayTakeOnStandby: away and cooling-down entries are skipped, and may not take it themselves', () => {
  const queue = [ready('a', { away: true }), ready('b', { eligibleAt: NOW + 1 }), ready('c'), ready('d')];
  assert.equal(may(queue, 'c', 1), true, 'a (away) and b (cooling down) do not count ahead of c');
  assert.equal(may(queue, 'd', 1), false);
  assert.equal(may(queue, 'd', 2), true);
  assert.equal(may(queue, 'a', 4), false, 'away: not eligible, whatever the depth');
  assert.equal(may(queue, 'b', 4), false, 'cooling down: not eligible');
  assert.equal(may([ready('b', { eligibleAt: NOW })], 'b', 1), true, 'cooled down at now exactly');
});

test('mayTakeOnStandby: passed-on entries come after all the others', () => {
  const queue = [ready('a', { passedOn: true }), ready('b'), ready('c', { passedOn: true }), ready('d')];
  // Offered in firstInLine's order: b, d (not passed on, FIFO), then a, c (passed on, FIFO).
  assert.equal(may(queue, 'b', 1), true);
  assert.equal(may(queue, 'a', 1), false, 'a passed on: after b and d');
  assert.equal(may(queue, 'a', 2), false);
  assert.equal(may(queue, 'd', 2), true);
  assert.equal(may(queue, 'a', 3), true);
  assert.equal(may(queue, 'c', 3), false);
  assert.equal(may(queue, 'c', 4), true);
  // Passed-on entries that may not be granted do not count ahead of a passed-on candidate.
  const someAway = [ready('a', { passedOn: true, away: true }), ready('b'), ready('c', { passedOn: true })];
  assert.equal(may(someAway, 'c', 2), true);
  assert.equal(may(someAway, 'c', 1), false);
});

test('mayTakeOnStandby: a candidate that may not be granted is refused', () => {
  assert.equal(may([ready('a', { away: true, passedOn: true })], 'a', 5), false);
  assert.equal(may([ready('a', { eligibleAt: NOW + 1, passedOn: true })], 'a', 5), false);
});

test('mayTakeOnStandby reads the queue lazily: it stops as soon as the answer is known', () => {
  const read: string[] = [];
  const entries = ['a', 'b', 'c', 'd', 'e'].map((name) => ready(name));
  const cursor = function* (): Generator<Named> {
    for (const entry of entries) {
      read.push(entry.name);
      yield entry;
    }
  };
  assert.equal(
    mayTakeOnStandby(cursor(), (e) => e.name === 'b', 3, NOW),
    true,
  );
  assert.deepEqual(read, ['a', 'b'], 'found within the depth: no further');
  read.length = 0;
  assert.equal(
    mayTakeOnStandby(cursor(), (e) => e.name === 'e', 2, NOW),
    false,
  );
  assert.deepEqual(read, ['a', 'b'], 'the depth is used up ahead of the candidate: no further');
  read.length = 0;
  assert.equal(
    mayTakeOnStandby(
      cursor(),
      () => {
        throw new Error('not read at all');
      },
      0,
      NOW,
    ),
    false,
  );
  assert.deepEqual(read, [], 'depth 0: the queue is not read');
});
