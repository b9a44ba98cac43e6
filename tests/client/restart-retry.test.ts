/**
 * The rules both contributor clients ride out a coordinator restart by
 * (client/restart-retry.ts): which requests are sent again, which failures look like a
 * restart, and that the retrying is bounded, paced and stops on an answer or an abort. The clients
 * themselves against a coordinator killed at each step: tests/cli/contribute-remote-restarts.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  looksLikeRestart,
  RESTART_RIDE_OUT_MS,
  restartRetryDelaysMs,
  rideOutRestart,
  safeToResend,
} from '../../client/restart-retry.ts';

test('only requests whose second copy does what the first did are sent again', () => {
  for (const [method, route] of [
    ['GET', '/api/me'],
    ['GET', '/api/me/receipts?x=1'],
    ['HEAD', '/api/circuits/register/contributions/abc'],
    ['POST', '/api/me/join'],
    ['POST', '/api/me/leave'],
    ['POST', '/api/circuits/register/heartbeat'],
    ['POST', '/auth/demo'],
    ['POST', '/auth/github/device'],
    ['POST', '/auth/semaphore/challenge'],
  ])
    assert.equal(safeToResend(method!, route!), true, `${method} ${route}`);
  for (const [method, route] of [
    ['POST', '/auth/semaphore'],
    ['POST', '/auth/github/device/poll'],
    ['POST', '/api/admin/finalise'],
    ['POST', '/api/admin/phase'],
    ['POST', '/api/circuits/register/contributions'],
    ['PATCH', '/api/circuits/register/contributions/abc'],
    ['DELETE', '/api/circuits/register/contributions/abc'],
    ['POST', '/api/me/join/extra'],
  ])
    assert.equal(safeToResend(method!, route!), false, `${method} ${route}`);
});

test("a restart is no answer or a gateway's page, never one of the coordinator's own refusals", () => {
  assert.equal(looksLikeRestart(0, 'network'), true);
  assert.equal(looksLikeRestart(502, 'http.502'), true);
  assert.equal(looksLikeRestart(503, 'http.503'), true);
  assert.equal(looksLikeRestart(504, 'http.504'), true);
  assert.equal(looksLikeRestart(503, 'presence.streams_full'), false);
  assert.equal(looksLikeRestart(503, 'verification.unavailable'), false);
  assert.equal(looksLikeRestart(502, 'auth.github_failed'), false);
  assert.equal(looksLikeRestart(500, 'http.500'), false);
  assert.equal(looksLikeRestart(429, 'rate.limited'), false);
});

test('tus is given pauses that cover the ride-out, growing to 30 s', () => {
  const delays = restartRetryDelaysMs();
  assert.equal(delays[0], 0);
  assert.deepEqual(delays.slice(1, 5), [500, 1000, 2000, 4000]);
  assert.equal(Math.max(...delays), 30_000);
  const total = delays.reduce((a, b) => a + b, 0);
  assert.ok(total >= RESTART_RIDE_OUT_MS && total < RESTART_RIDE_OUT_MS + 30_000, String(total));
});

/** A clock that moves only when the retry pauses (its pauses are real timers, shortened here). */
function fakeTime(): { now: () => number; advance: (ms: number) => void } {
  let at = 1_000_000;
  return { now: () => at, advance: (ms) => (at += ms) };
}

test('failures that look like a restart are tried again until an answer, which is returned', async () => {
  let calls = 0;
  const retries: number[] = [];
  let recovered: number | undefined;
  const answer = await rideOutRestart(
    () => {
      calls++;
      if (calls < 4) return Promise.reject(new Error('ECONNREFUSED'));
      return Promise.resolve('answer');
    },
    {
      restartReason: (error) => (error as Error).message,
      onRetry: (retry) => retries.push(retry.attempt),
      onRecovered: (ms) => (recovered = ms),
      random: () => 0,
      rideOutMs: 60_000,
    },
  );
  assert.equal(answer, 'answer');
  assert.equal(calls, 4);
  assert.deepEqual(retries, [1, 2, 3]);
  assert.equal(typeof recovered, 'number');
});

test('an answer that is a refusal is thrown at once, not sent again', async () => {
  let calls = 0;
  const refusal = new Error('lobby.not_your_turn');
  await assert.rejects(
    rideOutRestart(
      () => {
        calls++;
        return Promise.reject(refusal);
      },
      { restartReason: () => undefined },
    ),
    refusal,
  );
  assert.equal(calls, 1);
});

test('the ride-out is bounded: past it, the last failure is thrown', async () => {
  const time = fakeTime();
  let calls = 0;
  const pauses: number[] = [];
  await assert.rejects(
    rideOutRestart(
      () => {
        calls++;
        time.advance(60_000); // each try takes a minute (a connection timing out)
        return Promise.reject(new Error(`try ${calls}`));
      },
      {
        restartReason: () => 'timed out',
        onRetry: (retry) => pauses.push(retry.inMs),
        rideOutMs: 100_000,
        now: time.now,
        random: () => 0.5,
      },
    ),
    /try 3/,
  );
  // A minute a try: the first failure starts the clock, the third comes 120 s after it, past the 100 s.
  assert.equal(calls, 3);
  assert.deepEqual(pauses, [500, 1000], 'jitter centred on the step, the step doubling');
});

test('an abort ends the waiting at once with the last failure', async () => {
  const controller = new AbortController();
  const started = Date.now();
  const pending = rideOutRestart(() => Promise.reject(new Error('ECONNRESET')), {
    restartReason: () => 'reset',
    signal: controller.signal,
    onRetry: () => controller.abort(),
    rideOutMs: 600_000,
  });
  await assert.rejects(pending, /ECONNRESET/);
  assert.ok(Date.now() - started < 1000);
});
