/**
 * The presence holder (client/presence-holder.ts) with a stream and a pause the test controls: a
 * stream that ends is opened again after the side's pause (the terminal's 2 s, or a minute after a
 * refusal that is not a restart; the page's growing from 2 s to a minute, back to 2 s once one
 * opened), and letting go closes the stream and opens no other.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  growingReopenPause,
  PresenceHolder,
  terminalReopenPauseMs,
  type PresenceConnect,
} from '../../client/presence-holder.ts';
import { ApiError } from '../../client/api-client.ts';

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Streams the test ends one by one, and the pauses the holder asked for (each ended by the test). */
function scripted(): {
  connect: PresenceConnect;
  streams: Array<{ signal: AbortSignal; open: () => void; end: (error?: unknown) => void }>;
  pauses: Array<{ ms: number; over: () => void }>;
  pause: (ms: number, signal: AbortSignal) => Promise<void>;
} {
  const streams: Array<{ signal: AbortSignal; open: () => void; end: (error?: unknown) => void }> = [];
  const pauses: Array<{ ms: number; over: () => void }> = [];
  const connect: PresenceConnect = ({ signal, opened }) =>
    new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => resolve(), { once: true });
      streams.push({ signal, open: opened, end: (error) => (error ? reject(error) : resolve()) });
    });
  const pause = (ms: number, signal: AbortSignal): Promise<void> =>
    new Promise((resolve) => {
      signal.addEventListener('abort', () => resolve(), { once: true });
      pauses.push({ ms, over: resolve });
    });
  return { connect, streams, pauses, pause };
}

test('the terminal: opened again 2 s after an end or a restart, a minute after a refusal; stop closes it', async () => {
  const { connect, streams, pauses, pause } = scripted();
  const holder = new PresenceHolder({ connect, reopenPauseMs: terminalReopenPauseMs, pause });
  holder.hold(true);
  holder.hold(true);
  assert.equal(streams.length, 1, 'holding twice opens one stream');
  streams[0]!.end();
  await settle();
  assert.deepEqual(
    pauses.map((p) => p.ms),
    [2000],
  );
  pauses[0]!.over();
  await settle();
  streams[1]!.end(new ApiError(502, 'http.502', 'bad gateway'));
  await settle();
  pauses[1]!.over();
  await settle();
  streams[2]!.end(new ApiError(429, 'presence.too_many_streams', 'too many'));
  await settle();
  assert.deepEqual(
    pauses.map((p) => p.ms),
    [2000, 2000, 60_000],
  );
  pauses[2]!.over();
  await settle();
  await holder.stop();
  assert.equal(streams[3]!.signal.aborted, true, 'the stream is closed');
  assert.equal(streams.length, 4, 'and no other opened');
});

test('the page: the pause grows from 2 s to a minute, and starts again once a stream opened', () => {
  const pace = growingReopenPause();
  const ended = { opened: false, failed: false, failure: undefined };
  const first = [1, 2, 3, 4, 5, 6, 7].map(() => pace(ended));
  assert.deepEqual(first, [2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
  assert.equal(pace({ ...ended, opened: true }), 2000);
  assert.equal(pace(ended), 4000);
});
