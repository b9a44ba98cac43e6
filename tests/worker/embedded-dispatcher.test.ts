/**
 * The embedded verifier of `ceremony serve` without Redis: real keys verified in a real child
 * process (TypeScript loaded inside it), outcomes, retries of I/O failures, a verifier killed
 * mid-verification and replaced, and several requests queued at once verified in order (the
 * worst event-loop gap meanwhile is reported, not asserted).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants as fsConstants, openSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { createEmbeddedDispatcher } from '../../server/verification-dispatch/embedded-dispatcher.ts';
import type { VerificationOutcome } from '../../core/verifier-contract/verifier-contract.ts';
import type {
  HeadPreparationReport,
  VerificationDispatcher,
} from '../../server/verification-dispatch/verification-dispatcher.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { circuitChallengeKey, linkChallengeSeed, stateDirFor } from '../../core/link-check/link-challenge.ts';
import { LINK_CACHE_DIR, readCachedCombination } from '../../core/link-check/link-combination-cache.ts';
import { linkCombinationOf } from '../../core/link-check/verify-link-from-head.ts';
import {
  type Candidate,
  outcomeCollector,
  validOutcome,
  verificationFixture,
  type VerificationFixture,
} from './verification-fixture.ts';
import { waitUntil } from '../helpers/wait-until.ts';

let fixture: VerificationFixture;
let dispatcher: VerificationDispatcher;
const outcomes = outcomeCollector<VerificationOutcome>();
/** The pid of each verifier process of `dispatcher`, as it became ready. */
const verifierPids: number[] = [];
const headReports: HeadPreparationReport[] = [];
/**
 * Valid keys made once and verified again by later tests under other contribution ids (a snarkjs
 * contribution costs more than its verification): carol's on register, the four queued on OTHER.
 */
let carol: Candidate;
let queued: Candidate[] = [];

/**
 * The circuit besides register: its head is contribution 0, which no test verifies against before the
 * head preparation's test, and its keys are the queued and killed verifications'. The second smallest
 * test circuit: what these tests show does not depend on the key's size, its snarkjs contributions and
 * verifications do.
 */
const OTHER = 'transact21';

before(async () => {
  fixture = await verificationFixture(['register', OTHER]);
  dispatcher = createEmbeddedDispatcher({
    backoffMs: 50,
    onVerifierReady: (pid) => verifierPids.push(pid),
    onHeadPrepared: (report) => headReports.push(report),
  });
  dispatcher.onOutcome(outcomes.listener);
});

after(async () => {
  await dispatcher?.close();
  await fixture?.cleanup();
  await releaseBn128();
});

test('a valid contribution gives a valid outcome with the contribution hash snarkjs printed', async () => {
  const candidate = (carol = await fixture.candidate('register', 'carol'));
  await dispatcher.enqueue(fixture.request('c-valid', 'register', candidate.path));
  assert.deepEqual(await outcomes.next('c-valid'), validOutcome('c-valid', candidate));
});

test("a head preparation caches contribution 0's combination once, and a second finds it there", async () => {
  const head = (await openCeremony(fixture.dataDir)).chains.get(OTHER)!.head!;
  const stateDir = stateDirFor(fixture.dataDir);
  const request = {
    circuit: OTHER,
    headZkeyPath: fixture.headPath(OTHER),
    stateDir,
    headFileHash: head.fileHash,
  };
  const key = circuitChallengeKey(await linkChallengeSeed(stateDir), OTHER);
  assert.equal(await readCachedCombination(stateDir, key, head.fileHash), undefined);
  dispatcher.prepareHead(request);
  await waitUntil(() => headReports.length === 1, 'the head prepared');
  assert.deepEqual(headReports[0], { ...headReports[0], circuit: OTHER, result: 'computed' });
  // The entry is the head's combination under the circuit key, the one a verification would have computed.
  assert.deepEqual(
    await readCachedCombination(stateDir, key, head.fileHash),
    await linkCombinationOf(fixture.headPath(OTHER), key),
  );
  dispatcher.prepareHead(request);
  await waitUntil(() => headReports.length === 2, 'the head prepared again');
  assert.equal('result' in headReports[1]! && headReports[1].result, 'cached');
  // A head that cannot be read is reported (in the coordinator's own log), not retried.
  dispatcher.prepareHead({ ...request, headZkeyPath: fixture.missingPath('no-head'), headFileHash: 'ab'.repeat(32) });
  await waitUntil(() => headReports.length === 3, 'the failure reported');
  assert.ok('failed' in headReports[2]! && /ENOENT/.test(headReports[2].failed), JSON.stringify(headReports[2]));
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
  // A request is known by its contribution id, not its file: carol's key serves under other ids.
  const request = fixture.request('c-twice', 'register', carol.path);
  await Promise.all([dispatcher.enqueue(request), dispatcher.enqueue(request)]);
  // Concurrency 1, first in first out: once a request enqueued after the duplicates has its
  // outcome, a second verification of c-twice would already have reported.
  await dispatcher.enqueue(fixture.request('c-twice-next', 'register', carol.path));
  assert.equal((await outcomes.next('c-twice-next')).status, 'valid');
  assert.equal(outcomes.all.filter((o) => o.contributionId === 'c-twice').length, 1);
});

test('several contributions queued at once are all verified, in order', async (t) => {
  const candidates = (queued = await Promise.all([1, 2, 3, 4].map((n) => fixture.candidate(OTHER, `erin${n}`))));
  const gaps: number[] = [];
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
  }, 5);
  try {
    const ids = candidates.map((_, n) => `c-loop-${n}`);
    await Promise.all(candidates.map((c, n) => dispatcher.enqueue(fixture.request(ids[n]!, OTHER, c.path))));
    const results = await Promise.all(ids.map((id) => outcomes.next(id)));
    assert.deepEqual(
      results.map((r) => r.status),
      ['valid', 'valid', 'valid', 'valid'],
    );
    // One verifier, first in first out: the outcomes arrive in the order of the requests.
    assert.deepEqual(
      outcomes.all.map((o) => o.contributionId).filter((id) => ids.includes(id)),
      ids,
    );
  } finally {
    clearInterval(ticker);
  }
  // For information only: the test circuits are too small to stall the loop, and a wall-clock
  // limit would only flake on a loaded runner.
  t.diagnostic(
    `${gaps.length} ticks of 5 ms during the verifications; worst gap ` +
      `${gaps.length ? Math.max(...gaps).toFixed(0) : '-'} ms`,
  );
});

test('a verifier killed mid-verification is replaced and the request verified again', async () => {
  await waitUntil(() => verifierPids.length > 0, 'the first verifier to be ready', 30_000);
  const firstPid = verifierPids.at(-1)!;
  const candidate = queued[0]!; // a valid key again, under a new id
  // Stopped first, so the request is certainly still with it when it dies.
  process.kill(firstPid, 'SIGSTOP');
  await dispatcher.enqueue(fixture.request('c-killed', OTHER, candidate.path));
  await new Promise((r) => setTimeout(r, 100));
  process.kill(firstPid, 'SIGKILL');
  const outcome = await outcomes.next('c-killed');
  assert.deepEqual(outcome, validOutcome('c-killed', candidate));
  assert.ok(
    verifierPids.length >= 2 && verifierPids.at(-1) !== firstPid,
    `no new verifier process (pids ${verifierPids.join(', ')})`,
  );
  assert.ok(!processAlive(firstPid), 'the killed verifier is still there');
});

test('close() stops the verifier process; a closed dispatcher takes no more requests', async () => {
  const pids: number[] = [];
  const own = createEmbeddedDispatcher({ onVerifierReady: (pid) => pids.push(pid) });
  const collected = outcomeCollector<VerificationOutcome>();
  own.onOutcome(collected.listener);
  await own.enqueue(fixture.request('c-own', 'register', carol.path));
  assert.equal((await collected.next('c-own')).status, 'valid');
  assert.equal(pids.length, 1);
  assert.ok(processAlive(pids[0]!), 'the verifier is not running');
  const started = Date.now();
  await own.close();
  assert.ok(Date.now() - started < 5000, 'close() waited for the verifier to time out');
  assert.ok(!processAlive(pids[0]!), `verifier ${pids[0]} still runs after close()`);
  await assert.rejects(own.enqueue(fixture.request('c-late', 'register', carol.path)), /closed/);
  await own.close();
});

test('close() mid head preparation kills the verifier at the timeout; the next dispatcher prepares it', async (t) => {
  const closeTimeoutMs = 1000;
  const head = (await openCeremony(fixture.dataDir)).chains.get('register')!.head!;
  const stateDir = stateDirFor(fixture.dataDir);
  const key = circuitChallengeKey(await linkChallengeSeed(stateDir), 'register');
  const request = {
    circuit: 'register',
    headZkeyPath: fixture.headPath('register'),
    stateDir,
    headFileHash: head.fileHash,
  };
  // A preparation first reads the head's cache entry (state/link-cache/FILEHASH.bin). A FIFO
  // there holds it in that read, mid-way, for as long as the test keeps the FIFO's writer open
  // without writing: no sleep decides when close() comes, and no seam in the verifier is needed.
  const entry = path.join(stateDir, LINK_CACHE_DIR, `${head.fileHash}.bin`);
  await mkdir(path.dirname(entry), { recursive: true, mode: 0o700 });
  await rm(entry, { force: true });
  execFileSync('mkfifo', [entry]);
  let writer: number | undefined;
  const pids: number[] = [];
  const firstReports: HeadPreparationReport[] = [];
  const first = createEmbeddedDispatcher({
    closeTimeoutMs,
    onVerifierReady: (pid) => pids.push(pid),
    onHeadPrepared: (report) => firstReports.push(report),
  });
  t.after(async () => {
    await first.close();
    if (writer !== undefined) closeSync(writer);
    await rm(entry, { force: true });
  });
  await waitUntil(() => pids.length === 1, 'the verifier to be ready', 30_000);

  first.prepareHead(request);
  // Opening a FIFO's write end without blocking fails (ENXIO) until a reader has it open.
  await waitUntil(() => {
    writer = openSync(entry, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
    return true;
  }, "the preparation to open the head's cache entry");
  const started = performance.now();
  await first.close();
  const took = performance.now() - started;
  // The verifier, asked to leave, waits for its running preparation, which never ends: only the
  // kill at the close timeout ends it. One with nothing running leaves in about a quarter of a
  // second; the margin is for a timer that starts from the loop's cached clock.
  assert.ok(took >= closeTimeoutMs - 100, `close() returned after ${took.toFixed(0)} ms, before its timeout`);
  assert.ok(took < closeTimeoutMs + 4500, `close() took ${took.toFixed(0)} ms`);
  assert.ok(!processAlive(pids[0]!), `verifier ${pids[0]} still runs after close()`);
  assert.deepEqual(firstReports, [], 'a closed dispatcher reported a head preparation');

  closeSync(writer!);
  writer = undefined;
  await rm(entry);
  // A new dispatcher (the coordinator's next start) asks for the same head and hears it prepared:
  // computed, since the killed preparation wrote nothing.
  const nextReports: HeadPreparationReport[] = [];
  const next = createEmbeddedDispatcher({ onHeadPrepared: (report) => nextReports.push(report) });
  t.after(() => next.close());
  next.prepareHead(request);
  await waitUntil(() => nextReports.length === 1, 'the head prepared by the next dispatcher', 60_000);
  assert.deepEqual(nextReports[0], {
    ...nextReports[0],
    circuit: 'register',
    headFileHash: head.fileHash,
    result: 'computed',
  });
  assert.deepEqual(
    await readCachedCombination(stateDir, key, head.fileHash),
    await linkCombinationOf(fixture.headPath('register'), key),
  );
});

test('a coordinator killed by kill -9 leaves no verifier process behind', async () => {
  // A stand-in for the coordinator: a process that creates the dispatcher and reports its verifier.
  const dispatcherModule = pathToFileURL(
    path.join(REPO_ROOT, 'server', 'verification-dispatch', 'embedded-dispatcher.ts'),
  ).href;
  const parent = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { createEmbeddedDispatcher } from ${JSON.stringify(dispatcherModule)};
     createEmbeddedDispatcher({ onVerifierReady: (pid) => console.log(pid) });`,
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const verifierPid = Number(
    await new Promise<string>((resolve, reject) => {
      createInterface({ input: parent.stdout! }).once('line', resolve);
      parent.once('exit', (code) => reject(new Error(`the stand-in coordinator exited with ${code}`)));
    }),
  );
  assert.ok(processAlive(verifierPid));
  parent.kill('SIGKILL');
  await waitUntil(
    () => !processAlive(verifierPid),
    `verifier ${verifierPid} to leave after its coordinator died`,
    10_000,
  );
});

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
