/**
 * The page's side of resending a Semaphore proof refused for load (web/src/sign-in/semaphore-sign-in.ts
 * sends `api.signIn` through client/proof-resend.ts): its ApiError carries the
 * coordinator's Retry-After, so the page waits what it says, and the same body is sent again. The page
 * itself proves in a browser; the rule is tested in tests/core/proof-resend.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiClient, apiErrorFromBody } from '../../client/api-client.ts';
import { resendWhileProofChecksBusy } from '../../client/proof-resend.ts';

test('a proof refused 503 auth.proof_checks_busy is sent again, the same, after its Retry-After', async (t) => {
  const sent: string[] = [];
  const answers = [
    new Response(JSON.stringify({ error: { code: 'auth.proof_checks_busy', message: 'busy' } }), {
      status: 503,
      headers: { 'content-type': 'application/json', 'retry-after': '2' },
    }),
    new Response(JSON.stringify({ principal: { id: 'semaphore:1' }, csrfToken: 'token' }), { status: 200 }),
  ];
  t.mock.method(globalThis, 'fetch', (_route: string, init: RequestInit) => {
    sent.push(String(init.body));
    return Promise.resolve(answers.shift());
  });
  const api = new ApiClient();
  const pauses: number[] = [];
  const session = await resendWhileProofChecksBusy(() => api.signIn('/auth/semaphore', { proof: { message: '7' } }), {
    pause: (ms) => {
      pauses.push(ms);
      return Promise.resolve();
    },
    random: () => 0,
  });
  assert.equal(session.csrfToken, 'token');
  assert.equal(api.csrfToken, 'token');
  assert.deepEqual(pauses, [2000], 'the Retry-After of 2 s, not the shortest pause');
  assert.equal(sent.length, 2);
  assert.equal(sent[1], sent[0]);
});

test("the page's refusals carry a Retry-After in seconds, none for a missing or dated one", () => {
  const body = JSON.stringify({ error: { code: 'rate.limited', message: 'slow down' } });
  assert.equal(apiErrorFromBody(429, body, '30').retryAfterSeconds, 30);
  assert.equal(apiErrorFromBody(503, 'Service Unavailable', '5').retryAfterSeconds, 5, "a proxy's page too");
  assert.equal(apiErrorFromBody(429, body, null).retryAfterSeconds, undefined);
  assert.equal(apiErrorFromBody(429, body).retryAfterSeconds, undefined);
  assert.equal(apiErrorFromBody(429, body, 'Wed, 21 Oct 2026 07:28:00 GMT').retryAfterSeconds, undefined);
  assert.equal(apiErrorFromBody(429, body, '0').retryAfterSeconds, undefined);
});
