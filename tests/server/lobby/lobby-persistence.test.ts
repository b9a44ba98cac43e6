/** The lobby lives in SQLite only: a restart continues exactly, and 10,000 waiting stay cheap to read. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ManualClock } from '../../../server/clock.ts';
import { openDatabase } from '../../../server/store/database.ts';
import { acceptedVerdict, contributeAccepted, makeLobby, MINUTE } from './lobby-helpers.ts';

test(
  'a new Lobby on the same database file after a restart continues ' + 'exactly, and the deadline still fires',
  async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'lobby-'));
    try {
      const file = path.join(dir, 'coordinator.db');
      const clock = new ManualClock();
      const before = makeLobby({}, openDatabase(file), clock);
      for (const id of ['alice', 'bob', 'carol']) before.lobby.join(id);
      before.lobby.tick();
      contributeAccepted(before, 'alice', 'register', 1);
      before.lobby.tick(); // bob: register, alice: transact2
      before.lobby.markSubmitted('alice', 'transact2', 'a2');
      clock.advance(3 * MINUTE);
      before.lobby.heartbeat('bob', 'register');
      const statuses = ['alice', 'bob', 'carol'].map((id) => before.lobby.status(id));
      const queues = before.lobby.queueLengths();
      const turns = before.lobby.activeTurns();
      before.db.close();

      const after = makeLobby({}, openDatabase(file), clock);
      assert.deepEqual(
        ['alice', 'bob', 'carol'].map((id) => after.lobby.status(id)),
        statuses,
      );
      assert.deepEqual(after.lobby.queueLengths(), queues);
      assert.deepEqual(after.lobby.activeTurns(), turns);

      clock.advance(10 * MINUTE);
      const events = after.lobby.tick();
      assert.deepEqual(
        events.map(({ type, contributorId }) => [type, contributorId]),
        [
          ['turn_missed', 'bob'],
          ['turn_granted', 'carol'],
        ],
      );
      assert.equal(after.lobby.recordVerdict('a2', acceptedVerdict('h2')), true);
      assert.equal(after.lobby.status('alice').circuits[1]?.state, 'accepted');
      after.db.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

test('with 10,000 contributors waiting, status of the last one and queueLengths stay cheap', () => {
  const { lobby, db, open } = makeLobby();
  open.value = false;
  const count = 10_000;
  db.transaction(() => {
    for (let i = 0; i < count; i += 1) lobby.join(`contributor-${i}`);
  })();
  const last = `contributor-${count - 1}`;
  lobby.status(last); // warm the statement caches
  const timed = <T>(run: () => T): { result: T; ms: number } => {
    const started = performance.now();
    const result = run();
    return { result, ms: performance.now() - started };
  };
  const status = timed(() => lobby.status(last));
  const lengths = timed(() => lobby.queueLengths());
  assert.deepEqual(status.result.circuits[0], {
    circuit: 'register',
    state: 'waiting',
    position: count,
    etaMs: (count - 1) * 3 * MINUTE,
  });
  assert.deepEqual(lengths.result, { register: count, transact2: 0, transact21: 0 });
  // A sanity bound, not a benchmark: both are a few index reads (typically well under 5 ms).
  assert.ok(status.ms < 50, `status took ${status.ms.toFixed(2)} ms`);
  assert.ok(lengths.ms < 50, `queueLengths took ${lengths.ms.toFixed(2)} ms`);
  open.value = true;
  const granted = timed(() => lobby.tick());
  assert.equal(granted.result.length, 1);
  assert.ok(granted.ms < 50, `tick took ${granted.ms.toFixed(2)} ms`);
});
