/**
 * The held `GET /api/me` polls' bounds (server/routes/held-polls.ts): two per contributor (a third is
 * me.too_many_held_polls), a total beyond which a poll is answered at once, each slot released once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isCoordinatorError } from '../../core/errors.ts';
import { HeldPolls } from '../../server/routes/held-polls.ts';

test('two held polls per contributor; past the total a poll is not held; a release counts once', () => {
  const polls = new HeldPolls(3);
  const first = polls.take('a')!;
  polls.take('a');
  assert.throws(
    () => polls.take('a'),
    (error: unknown) => isCoordinatorError(error) && error.code === 'me.too_many_held_polls',
  );
  assert.ok(polls.take('b'), 'another contributor, within the total');
  assert.equal(polls.take('c'), undefined, 'the total reached: answered at once, no error');
  first();
  first(); // a second release frees nothing more
  assert.ok(polls.take('c'), 'one slot freed');
  assert.equal(polls.take('d'), undefined, 'and only one');
  assert.equal(polls.take('a'), undefined, 'a, below its own two again, meets the total');
});
