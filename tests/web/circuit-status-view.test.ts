/**
 * The contributor's circuit lines once the ceremony takes no more contributions: a wait that leads to
 * no turn says so, rather than counting down to a turn that will not come (the page's banner says
 * closed; the line said "your turn in 5 minutes").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CeremonyPhase, CircuitProgress, MeView } from '../../web/src/api/api-types.ts';
import { describeCircuits } from '../../web/src/contribute/circuit-status-view.ts';
import type { SessionSnapshot } from '../../web/src/contribute/contributor-session.ts';

const circuits: CircuitProgress[] = [
  { circuit: 'register', state: 'accepted', contributionId: 'c1', index: 3, contributionHash: 'ab'.repeat(32) },
  { circuit: 'transact', state: 'waiting', position: 2, etaMs: 300_000 },
  { circuit: 'withdraw', state: 'pending' },
];

function snapshotIn(phase: CeremonyPhase): SessionSnapshot {
  const me = { now: Date.now(), phase, contributions: [] } as unknown as MeView;
  return {
    me,
    clockOffsetMs: 0,
    activities: new Map(),
    deadlines: new Map(),
    localHashes: new Map(),
    connectionError: null,
  };
}

const details = (phase: CeremonyPhase) =>
  describeCircuits(circuits, snapshotIn(phase)).map((line) => [line.status, line.detail]);

test('open: the wait counts down to the turn, and later circuits follow', () => {
  const [accepted, waiting, pending] = details('open');
  assert.equal(accepted![0], 'accepted');
  assert.deepEqual(waiting, ['waiting', 'You are 2nd in line; your turn in about 5 min.']);
  assert.deepEqual(pending, ['pending', 'After transact.']);
});

test('closed, finalising, finalised: circuits not reached say the ceremony closed; the accepted one is kept', () => {
  for (const phase of ['closed', 'finalising', 'finalised'] as const) {
    const [accepted, waiting, pending] = details(phase);
    assert.equal(accepted![0], 'accepted', phase);
    for (const [status, detail] of [waiting!, pending!]) {
      assert.match(detail!, /^The ceremony closed before your turn here/, `${phase}, ${status}`);
      assert.doesNotMatch(detail!, /your turn in/);
    }
    assert.deepEqual([waiting![0], pending![0]], ['waiting', 'pending']);
  }
  assert.match(details('closed')[1]![1]!, /unless the coordinator reopens it/);
});

test('a standby turn being taken says a turn is free; offered but not being taken, the wait as usual', () => {
  const offered: CircuitProgress = {
    circuit: 'transact',
    state: 'waiting',
    position: 2,
    etaMs: 300_000,
    standbyUntil: 1,
  };
  const snapshot = snapshotIn('open');
  assert.deepEqual(
    describeCircuits([offered], snapshot).map((line) => line.detail),
    ['You are 2nd in line; your turn in about 5 min.'],
  );
  const taking = { ...snapshot, activities: new Map([['transact', { stage: 'preparing' as const }]]) };
  assert.deepEqual(
    describeCircuits([offered], taking).map((line) => [line.status, line.detail]),
    [['waiting', 'A turn is free on transact: taking it.']],
  );
});
