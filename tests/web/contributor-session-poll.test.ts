/**
 * The page's poll pace (web/src/contribute/contributor-session.ts): while its contribution is
 * being checked it asks for the verdict every VERDICT_POLL_MS, and a poll asked for while another
 * is under way (an upload that completed meanwhile) is made as soon as that one ends, not a whole
 * interval later. Driven by mocked timers and an API whose answers the test releases.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ContributorSession } from '../../web/src/contribute/contributor-session.ts';
import type { ApiClient } from '../../client/api-client.ts';
import type { MeView } from '../../web/src/api/api-types.ts';
import { ACTIVE_POLL_MS, VERDICT_POLL_MS } from '../../client/queue-poll-pace.ts';

type State = 'waiting' | 'verifying' | 'accepted';

function meView(state: State): MeView {
  return {
    principal: { id: 'demo:ada', kind: 'demo', displayName: 'ada' },
    now: Date.now(),
    phase: 'open',
    status: {
      contributorId: 'demo:ada',
      done: false,
      // Beyond the first 24, whose polls are held (GET /api/me?turnWaitMs): these are timed.
      circuits: [{ circuit: 'c1', state, position: 30 }],
    },
    contributions: [],
  } as unknown as MeView;
}

/** An API whose `GET /api/me` answers are held until the test releases them. */
function heldApi(): { api: ApiClient; gets: Array<(state: State) => void> } {
  const gets: Array<(state: State) => void> = [];
  const api = {
    get: (route: string) => {
      assert.equal(route, '/api/me');
      return new Promise<MeView>((resolve) => gets.push((state) => resolve(meView(state))));
    },
  } as unknown as ApiClient;
  return { api, gets };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A session started on a held API, with timers mocked; stopped when the test ends. */
function startedSession(t: TestContext): { session: ContributorSession; gets: Array<(state: State) => void> } {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { api, gets } = heldApi();
  const session = new ContributorSession({ api, ceremonyId: 'x', takeTypedEntropy: () => '', onChange: () => {} });
  t.after(() => session.stop());
  void session.start();
  return { session, gets };
}

test('a contribution being checked is polled for its verdict every VERDICT_POLL_MS', async (t) => {
  const { gets } = startedSession(t);
  assert.equal(gets.length, 1);
  gets[0]!('verifying');
  await settle();
  t.mock.timers.tick(VERDICT_POLL_MS - 1);
  assert.equal(gets.length, 1, 'not before the pause');
  t.mock.timers.tick(1);
  assert.equal(gets.length, 2, 'polled again after VERDICT_POLL_MS');
  assert.ok(VERDICT_POLL_MS < ACTIVE_POLL_MS);
});

test('a poll asked for while one is under way is made as soon as that one answers', async (t) => {
  const { session, gets } = startedSession(t);
  // The upload ends while the poll is out; its answer was made before (still waiting).
  void session.poll();
  assert.equal(gets.length, 1, 'one request at a time');
  gets[0]!('waiting');
  await settle();
  assert.equal(gets.length, 2, 'the second poll went out without waiting for the timer');
  gets[1]!('accepted');
  await settle();
  assert.equal(gets.length, 2, 'and no more than one');
});
