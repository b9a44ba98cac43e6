/**
 * The rule both contributor clients resend a Semaphore proof refused for load by
 * (client/proof-resend.ts): only `auth.proof_checks_busy` is resent, the same proof,
 * after Retry-After doubling, held between 1 and 10 s and lengthened at random, for a bounded time and
 * within the address's sign-in attempts. A fake clock and pause: no test here waits. The terminal
 * client against a coordinator held busy: tests/cli/semaphore-proof-resend.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  PROOF_CHECKS_BUSY,
  PROOF_RESEND_WINDOW_MS,
  proofChecksBusy,
  proofResendPauseMs,
  resendWhileProofChecksBusy,
  type ProofResend,
} from '../../client/proof-resend.ts';
import { RATE_LIMIT_DEFAULTS } from '../../server/http/rate-limits.ts';

class Refusal extends Error {
  constructor(
    readonly code: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(code);
  }
}

/** A clock moved only by the pauses the rule asks for, which are recorded. */
function fakeTime(): { now: () => number; pause: (ms: number) => Promise<void>; pauses: number[] } {
  let at = 1_000_000;
  const pauses: number[] = [];
  return {
    now: () => at,
    pause: (ms) => {
      pauses.push(ms);
      at += ms;
      return Promise.resolve();
    },
    pauses,
  };
}

test('the pause is Retry-After doubling at each resend, held between 1 and 10 s, lengthened by up to a half', () => {
  assert.equal(
    proofResendPauseMs(1, 1, () => 0),
    1000,
  );
  assert.equal(
    proofResendPauseMs(1, 1, () => 0.999),
    1500,
  );
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 50].map((attempt) => proofResendPauseMs(1, attempt, () => 0)),
    [1000, 2000, 4000, 8000, 10_000, 10_000, 10_000],
  );
  assert.equal(
    proofResendPauseMs(3, 1, () => 0.5),
    3750,
  );
  assert.equal(
    proofResendPauseMs(undefined, 1, () => 0),
    1000,
    'no Retry-After: a second',
  );
  assert.equal(
    proofResendPauseMs(0, 2, () => 0),
    2000,
  );
  assert.equal(
    proofResendPauseMs(Number.NaN, 1, () => 0),
    1000,
  );
  assert.equal(
    proofResendPauseMs(3600, 1, () => 0),
    10_000,
    "a proxy's hour is held to 10 s",
  );
  for (let i = 0; i < 200; i++) {
    const pause = proofResendPauseMs(1, 1);
    assert.ok(pause >= 1000 && pause <= 1500, String(pause));
  }
});

test('only the refusal for load is recognised, from either client’s error', () => {
  assert.equal(proofChecksBusy(new Refusal(PROOF_CHECKS_BUSY, 1)), true);
  assert.equal(proofChecksBusy({ code: 'auth.proof_checks_busy' }), true);
  for (const other of ['auth.challenge_unknown', 'auth.invalid_proof', 'auth.unknown_root', 'http.503', 'network'])
    assert.equal(proofChecksBusy(new Refusal(other, 1)), false, other);
  assert.equal(proofChecksBusy(undefined), false);
  assert.equal(proofChecksBusy('auth.proof_checks_busy'), false);
});

test('a busy refusal is answered by sending again after the asked pause, doubling, until the answer', async () => {
  const time = fakeTime();
  const resends: ProofResend[] = [];
  let sends = 0;
  const answer = await resendWhileProofChecksBusy(
    () => {
      sends++;
      return sends < 4 ? Promise.reject(new Refusal(PROOF_CHECKS_BUSY, 3)) : Promise.resolve('signed in');
    },
    { now: time.now, pause: time.pause, random: () => 0, onResend: (resend) => resends.push(resend) },
  );
  assert.equal(answer, 'signed in');
  assert.equal(sends, 4);
  assert.deepEqual(time.pauses, [3000, 6000, 10_000], 'the Retry-After of 3 s, doubled, held to 10 s');
  assert.deepEqual(
    resends.map((r) => [r.attempt, r.inMs, r.busyForMs]),
    [
      [1, 3000, 0],
      [2, 6000, 3000],
      [3, 10_000, 9000],
    ],
  );
});

test('any other refusal is final at once, also after busy ones', async () => {
  const time = fakeTime();
  let sends = 0;
  await assert.rejects(
    resendWhileProofChecksBusy(
      () => {
        sends++;
        return Promise.reject(new Refusal(sends === 1 ? PROOF_CHECKS_BUSY : 'auth.challenge_unknown'));
      },
      { now: time.now, pause: time.pause },
    ),
    /auth\.challenge_unknown/,
  );
  assert.equal(sends, 2);
  await assert.rejects(
    resendWhileProofChecksBusy(() => Promise.reject(new Refusal('http.503', 1)), { now: time.now, pause: time.pause }),
    /http\.503/,
  );
  assert.equal(time.pauses.length, 1);
});

test('the resending is bounded: a coordinator busy past the window gets the refusal as before', async () => {
  const time = fakeTime();
  const sentAt: number[] = [];
  const refusal = new Refusal(PROOF_CHECKS_BUSY, 1);
  await assert.rejects(
    resendWhileProofChecksBusy(
      () => {
        sentAt.push(time.now());
        return Promise.reject(refusal);
      },
      { now: time.now, pause: time.pause, random: () => 0 },
    ),
    (error) => error === refusal,
  );
  // Sent at 0, 1, 3, 7 and 15 s, then every 10 s to 115 s: the next would come after the two minutes.
  assert.equal(sentAt.length, 15);
  assert.equal(sentAt.at(-1)! - sentAt[0]!, 115_000);
  assert.ok(sentAt.at(-1)! - sentAt[0]! <= PROOF_RESEND_WINDOW_MS);
});

test("one client's resends, at their quickest, spend under half the address's sign-in attempts a minute", async () => {
  const time = fakeTime();
  const sentAt: number[] = [];
  await assert.rejects(
    resendWhileProofChecksBusy(
      () => {
        sentAt.push(time.now());
        return Promise.reject(new Refusal(PROOF_CHECKS_BUSY, 1));
      },
      { now: time.now, pause: time.pause, random: () => 0 },
    ),
  );
  // Every sending counts, refused or not: at a steady second, 20 would be spent in 20 s (429 rate.limited).
  const window = RATE_LIMIT_DEFAULTS.windowMs;
  const busiest = Math.max(...sentAt.map((start) => sentAt.filter((t) => t >= start && t < start + window).length));
  assert.equal(busiest, 9);
  assert.ok(busiest <= RATE_LIMIT_DEFAULTS.signIn / 2, `${busiest} of ${RATE_LIMIT_DEFAULTS.signIn}`);
});

test('an abort ends the waiting with the refusal', async () => {
  const controller = new AbortController();
  let sends = 0;
  const started = Date.now();
  await assert.rejects(
    resendWhileProofChecksBusy(
      () => {
        sends++;
        return Promise.reject(new Refusal(PROOF_CHECKS_BUSY, 10));
      },
      { signal: controller.signal, onResend: () => controller.abort() },
    ),
    /proof_checks_busy/,
  );
  assert.equal(sends, 1);
  assert.ok(Date.now() - started < 1000, 'the real 10 s pause was cut short');
});
