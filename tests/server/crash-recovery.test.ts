/**
 * `kill -9` of the coordinator during an upload and during verification, then a restart: the
 * upload resumes where it stopped (tus), the verification job survives in Redis and SQLite,
 * nothing is lost, the head and transcript are consistent, and the queue goes on. Then the same
 * kill while a contribution delta is being taken in (spliced onto the head as it arrives): the
 * half-written key it leaves is removed at the restart, and the resumed upload lands.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { auditorConfigOf, devPtauHash, newCeremonyDir, REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { auditCeremony } from '../../core/audit/audit-ceremony.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import { DELTA_FORMAT } from '../../core/delta/delta-format.ts';
import { isTempPath } from '../../core/fs/atomic-write.ts';
import { contributeFast } from '../../core/kernel/contribute-fast.ts';
import { waitUntil } from '../helpers/wait-until.ts';
import { inDeltaV2Order } from '../helpers/zkey-tamper.ts';

let redis: RedisServer;
let dataDir: string;
let port: number;
let server: ChildProcess | undefined;
let worker: WorkerProcess | undefined;
/** The second in line after the first test: the delta's contributor in the second. */
let bob: ContributorClient;
/** The coordinators' JSON log lines (all its runs). */
const logLines: Array<Record<string, unknown>> = [];
const CLI = path.join(REPO_ROOT, 'bin', 'ceremony.js');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = probe.address() as { port: number };
      probe.close(() => resolve(p));
    });
  });
}

async function startServer(): Promise<void> {
  const child = spawn(process.execPath, [CLI, 'serve', '--data', dataDir, '--port', String(port), '--open'], {
    env: { ...process.env, REDIS_URL: redis.url },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  server = child;
  // Whatever answers /healthz on the port may be another process (the port was free when picked,
  // not necessarily now). Ours is up once it logged that it listens there, is still running, and
  // answers. (A coordinator that fails to bind may log the error and stay alive.)
  let stderr = '';
  let listening = false;
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr = `${stderr}${line}\n`.slice(-2000);
    try {
      const entry = JSON.parse(line) as { message?: string; url?: string };
      logLines.push(entry);
      if (entry.message === 'coordinator listening' && new URL(entry.url!).port === String(port)) listening = true;
    } catch {
      // not a JSON log line
    }
  });
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `the coordinator exited before it was up (code ${child.exitCode}, ` +
          `signal ${child.signalCode}): ${stderr.trim()}`,
      );
    }
    const up =
      listening &&
      (await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      ));
    if (up && child.exitCode === null && child.signalCode === null) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the coordinator did not start: ${stderr.trim()}`);
}

async function killServer(): Promise<void> {
  const child = server!;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  server = undefined;
}

async function assertChainsConsistent(): Promise<void> {
  const state = await openCeremony(dataDir);
  for (const chain of state.chains.values()) {
    assert.equal(
      await hashFile(state.paths.zkeyPath(chain.circuit.name, chain.headIndex)),
      chain.head!.fileHash,
      chain.circuit.name,
    );
  }
}

before(async () => {
  redis = await startRedisServer();
  // Every upload here is to register's queue: a ceremony of that circuit alone shows the crashes, and
  // its init, the worker's head preparation and the two audits cost a ninth of the nine circuits'.
  dataDir = await newCeremonyDir({ init: true, circuits: ['register'] });
  port = await freePort();
  await startServer();
});

after(async () => {
  server?.kill('SIGKILL');
  await worker?.stop('SIGKILL');
  await redis?.stop();
  await cleanUp(dataDir);
});

test('kill -9 during an upload and during verification: nothing lost, the queue resumes', async () => {
  const base = `http://127.0.0.1:${port}`;
  const alice = new ContributorClient(base);
  bob = new ContributorClient(base);
  await alice.signInDemo('alice');
  await bob.signInDemo('bob');
  await alice.join();
  await bob.join();
  assert.equal((await alice.progress('register')).state, 'turn');
  const { file, contributionHash } = await alice.makeContribution('register');
  const bytes = await readFile(file);

  // 1. Upload the first third, then the coordinator dies.
  const third = Math.ceil(bytes.length / 3);
  let uploadUrl: string | undefined;
  let receivedBeforeCrash = 0;
  const exited = new Promise((resolve) => server!.once('exit', resolve));
  const partial = alice.upload('register', bytes, {
    chunkSize: third,
    onUrl: (u) => (uploadUrl = u),
    // SIGKILL as soon as the first chunk is acknowledged, before the next one is sent.
    onChunkComplete: (uploaded) => {
      if (receivedBeforeCrash === 0) {
        receivedBeforeCrash = uploaded;
        server!.kill('SIGKILL');
      }
    },
  });
  await assert.rejects(partial);
  await exited;
  server = undefined;
  assert.ok(uploadUrl && receivedBeforeCrash > 0 && receivedBeforeCrash < bytes.length, 'killed mid-upload');
  await assertChainsConsistent();

  // 2. Restart: the session and the turn survived; the upload resumes and completes.
  await startServer();
  assert.equal((await alice.progress('register')).state, 'turn');
  const resumedUrl = await alice.upload('register', bytes, {
    chunkSize: third,
    uploadUrl: new URL(uploadUrl!, base).toString(),
  });
  // tus-js-client silently creates a new upload when HEAD of the old one fails: the same URL
  // proves the upload was resumed, not started again.
  assert.equal(
    new URL(resumedUrl, base).pathname,
    new URL(uploadUrl!, base).pathname,
    'the upload resumed, not restarted',
  );
  await alice.waitFor((m) => m.status.circuits[0]!.state === 'verifying', 'verifying');

  // 3. No worker is running: the job waits in Redis. Kill the coordinator during verification.
  await killServer();
  await startServer();
  assert.equal((await alice.progress('register')).state, 'verifying', 'the verification survived the restart');

  // 4. A worker comes up: the contribution is accepted and the queue moves on to bob.
  worker = await startWorkerProcess({ redisUrl: redis.url });
  const me = await alice.waitFor(
    (m) => m.status.circuits[0]!.state === 'accepted',
    'accepted after the restarts',
    60_000,
  );
  assert.equal(me.status.circuits[0]!.contributionHash, contributionHash);
  await bob.waitFor((m) => m.status.circuits[0]!.state === 'turn', "bob's turn");
  await assertChainsConsistent();
  const state = await openCeremony(dataDir);
  assert.equal(state.chains.get('register')!.headIndex, 1);
  assert.equal(state.transcript.entries.filter((e) => e.type === 'contribution').length, 1, 'accepted exactly once');
  const report = await auditCeremony(dataDir, undefined, {
    auditorConfig: auditorConfigOf(dataDir),
    ptauHash: await devPtauHash(),
    inProgress: true,
  });
  assert.equal(report.ok, true, JSON.stringify(report.findings.filter((f) => !f.ok)));
});

/** The temporary keys in the circuit's uploads folder (a delta's key being spliced is one). */
async function temporaryKeys(): Promise<string[]> {
  const names = await readdir(path.join(dataDir, 'uploads', 'register')).catch(() => []);
  return names.filter(isTempPath);
}

test('kill -9 while a delta is taken in: its partial key goes at restart, the upload resumes', async () => {
  const base = `http://127.0.0.1:${port}`;
  assert.equal((await bob.progress('register')).state, 'turn');
  const inputsResponse = await fetch(`${base}/api/circuits/register/contribution-inputs`);
  assert.equal(inputsResponse.status, 200);
  const head = Number(inputsResponse.headers.get('x-chain-head'));
  const scratch = await mkdtemp(path.join(tmpdir(), 'crash-recovery-delta-'));
  try {
    const inputs = path.join(scratch, 'inputs.skeleton');
    const deltaFile = path.join(scratch, 'delta.skeleton');
    await writeFile(inputs, Buffer.from(await inputsResponse.arrayBuffer()));
    await contributeFast(inputs, deltaFile, 'bob', 'typed entropy', { workers: 2 });
    // As the streaming clients send it: the record before L and H (contributeFast writes ascending ids).
    const delta = inDeltaV2Order(await readFile(deltaFile));
    const metadata = { format: DELTA_FORMAT, head: String(head) };

    // 1. A third of the delta is in and its intake is splicing: the coordinator dies.
    const third = Math.ceil(delta.length / 3);
    const uploadUrl = await bob.startUpload('register', delta, metadata, third);
    await waitUntil(async () => (await temporaryKeys()).length === 1, 'the intake to start its key');
    await killServer();
    assert.equal((await temporaryKeys()).length, 1, 'the kill left the half-spliced key');
    await assertChainsConsistent();

    // 2. Restart: the half-spliced key is removed; the upload resumes at the coordinator's offset.
    const splicesBefore = logLines.filter((l) => l.message === 'contribution delta spliced onto the head').length;
    await startServer();
    await waitUntil(async () => (await temporaryKeys()).length === 0, 'the leftover key removed');
    const resumedUrl = await bob.upload('register', delta, { uploadUrl, metadata, chunkSize: third });
    assert.equal(new URL(resumedUrl).pathname, new URL(uploadUrl).pathname, 'the upload resumed, not restarted');
    await bob.waitFor(
      (m) => m.status.circuits[0]!.state === 'accepted',
      'the delta accepted after the restart',
      60_000,
    );

    // 3. A new intake read the upload from its first byte: taken in as it arrived, with the link sums.
    const splices = logLines.filter((l) => l.message === 'contribution delta spliced onto the head');
    assert.equal(splices.length, splicesBefore + 1, 'one splice after the restart');
    assert.equal(splices.at(-1)!.asItArrived, true, JSON.stringify(splices.at(-1)));
    assert.equal(splices.at(-1)!.sums, true, JSON.stringify(splices.at(-1)));
    const state = await openCeremony(dataDir);
    assert.equal(state.chains.get('register')!.headIndex, head + 1);
    await assertChainsConsistent();
    assert.deepEqual(await readdir(path.join(dataDir, 'uploads', 'register')), [], 'nothing left in the uploads');
    const report = await auditCeremony(dataDir, undefined, {
      auditorConfig: auditorConfigOf(dataDir),
      ptauHash: await devPtauHash(),
      inProgress: true,
    });
    assert.equal(report.ok, true, JSON.stringify(report.findings.filter((f) => !f.ok)));
  } finally {
    await cleanUp(scratch);
  }
});
