/**
 * The embedded verifier of `ceremony serve` without Redis: real keys verified in a real worker
 * thread (TypeScript loaded inside it), outcomes, retries of I/O failures, and an HTTP-style event
 * loop that keeps ticking while keys are checked.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { createInProcessDispatcher } from '../../server/verification/in-process-dispatcher.ts';
import type { VerificationDispatcher, VerificationOutcome } from '../../server/verification/verification-job.ts';
import { outcomeCollector, verificationFixture, type VerificationFixture } from './verification-fixture.ts';

let fixture: VerificationFixture;
let dispatcher: VerificationDispatcher;
const outcomes = outcomeCollector<VerificationOutcome>();

before(async () => {
  fixture = await verificationFixture(['register', 'transact84']);
  dispatcher = createInProcessDispatcher({ backoffMs: 50 });
  dispatcher.onOutcome(outcomes.listener);
});

after(async () => {
  await dispatcher?.close();
  await fixture?.cleanup();
  await releaseBn128();
});

test('a valid contribution gives a valid outcome with the contribution hash snarkjs printed', async () => {
  const candidate = await fixture.candidate('register', 'carol');
  await dispatcher.enqueue(fixture.request('c-valid', 'register', candidate.path));
  assert.deepEqual(await outcomes.next('c-valid'), { contributionId: 'c-valid', status: 'valid', contributionHash: candidate.hash, recordedName: 'carol' });
});

test('an invalid contribution gives an invalid outcome with its code, at once', async () => {
  // The head itself carries no new contribution.
  await dispatcher.enqueue(fixture.request('c-head', 'register', fixture.headPath('register')));
  const outcome = await outcomes.next('c-head');
  assert.equal(outcome.status, 'invalid');
  assert.equal(outcome.status === 'invalid' && outcome.code, 'contribution.no_new_contribution');
});

test('a missing candidate is retried with backoff, then reported as an error', async () => {
  const started = Date.now();
  await dispatcher.enqueue(fixture.request('c-missing', 'register', fixture.missingPath('gone')));
  const outcome = await outcomes.next('c-missing');
  assert.equal(outcome.status, 'error');
  assert.match(outcome.status === 'error' ? outcome.message : '', /after 3 attempt\(s\): input\.file_not_found/);
  // Backoff 50 ms then 100 ms between the three tries.
  assert.ok(Date.now() - started >= 150, `retried too fast (${Date.now() - started} ms)`);
});

test('enqueueing the same contribution twice verifies it once', async () => {
  const candidate = await fixture.candidate('register', 'dave');
  const request = fixture.request('c-twice', 'register', candidate.path);
  await Promise.all([dispatcher.enqueue(request), dispatcher.enqueue(request)]);
  await outcomes.next('c-twice');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(outcomes.all.filter((o) => o.contributionId === 'c-twice').length, 1);
});

test('the event loop keeps ticking while contributions are verified', async () => {
  const candidates = await Promise.all([1, 2, 3, 4].map((n) => fixture.candidate('transact84', `erin${n}`)));
  const gaps: number[] = [];
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
  }, 5);
  try {
    const ids = candidates.map((_, n) => `c-loop-${n}`);
    await Promise.all(candidates.map((c, n) => dispatcher.enqueue(fixture.request(ids[n]!, 'transact84', c.path))));
    const results = await Promise.all(ids.map((id) => outcomes.next(id)));
    assert.deepEqual(results.map((r) => r.status), ['valid', 'valid', 'valid', 'valid']);
  } finally {
    clearInterval(ticker);
  }
  assert.ok(gaps.length >= 10, `only ${gaps.length} ticks during the verifications`);
  assert.ok(Math.max(...gaps) < 250, `the event loop stalled for ${Math.max(...gaps).toFixed(0)} ms`);
});

test('close() stops the thread; a closed dispatcher takes no more requests', async () => {
  const own = createInProcessDispatcher();
  const collected = outcomeCollector<VerificationOutcome>();
  own.onOutcome(collected.listener);
  const candidate = await fixture.candidate('register', 'frank');
  await own.enqueue(fixture.request('c-own', 'register', candidate.path));
  assert.equal((await collected.next('c-own')).status, 'valid');
  const workersBefore = process.getActiveResourcesInfo().filter((r) => r === 'MessagePort' || r === 'Worker').length;
  const started = Date.now();
  await own.close();
  assert.ok(Date.now() - started < 5000, 'close() waited for the thread to time out');
  const workersAfter = process.getActiveResourcesInfo().filter((r) => r === 'MessagePort' || r === 'Worker').length;
  assert.ok(workersAfter < workersBefore, `thread handles before close ${workersBefore}, after ${workersAfter}`);
  await assert.rejects(own.enqueue(fixture.request('c-late', 'register', candidate.path)), /closed/);
  await own.close();
});
