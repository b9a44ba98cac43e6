/** The page's time left in a streamed turn: the slowest of download, compute and upload at its rate so far. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { streamedTimeLeftMs } from '../../web/src/contribute/turn-eta.ts';

test('the time left is the slowest part’s, once every part has a rate', () => {
  const startedAt = 0;
  const parts = {
    startedAt,
    down: { done: 50, total: 100 },
    scaled: { done: 10, total: 100 },
    up: { done: 0, total: 100 },
  };
  assert.equal(streamedTimeLeftMs(parts, 10_000), undefined, 'no rate yet for the upload');
  parts.up.done = 5;
  // down: 50 left at 5/s = 10 s; scaled: 90 left at 1/s = 90 s; up: 95 left at 0.5/s = 190 s.
  assert.equal(streamedTimeLeftMs(parts, 10_000), 190_000);
  parts.up.done = 100;
  assert.equal(streamedTimeLeftMs(parts, 10_000), 90_000, 'a finished part no longer counts');
});
