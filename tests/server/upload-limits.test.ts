/**
 * The limits on uploads, over real HTTP and tus against a real coordinator (verification by a
 * `ceremony worker` on a real Redis, started only when the test wants a verifier), on a clock the
 * test controls:
 *  - an upload shorter than the smallest possible next link (an empty one above all), or of
 *    undeclared length, is refused at creation; a creation-with-upload body larger than declared
 *    (413) leaves no file behind; the turn is not spent;
 *  - a second creation in the same turn replaces the first: its writer is stopped, its URL is
 *    gone, one file stays;
 *  - a finished upload waiting for a verifier outlives the expiry sweep, and is accepted once a
 *    verifier starts; an unfinished one is swept once expired by the coordinator's clock;
 *  - a malformed and a truncated upload are refused without naming any server path;
 *  - the free-space guard refuses uploads (507) when the disk is short of the largest key plus
 *    the configured margin, and /healthz shows it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { copyCeremony } from '../fixtures/ceremony-fixture.ts';
import { ContributorClient, type MeView } from '../helpers/contributor-client.ts';
import { truncatedCopy } from '../helpers/zkey-tamper.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { MIN_CONTRIBUTION_RECORD_BYTES } from '../../core/zkey/zkey-file.ts';
import { ManualClock } from '../../server/clock.ts';
import { waitUntil } from '../helpers/wait-until.ts';
import { largestUploadBytes } from '../../server/files/upload-creation-rules.ts';

/** What the coordinator under test warned about: disk errors are logged, never sent to clients. */
const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = [];
const recordingLog = {
  info: () => {},
  warn: (message: string, fields?: Record<string, unknown>) => void warnings.push({ message, fields }),
};
const clock = new ManualClock(Date.now());
let coordinator: TestCoordinator;
let dataDir: string;
let alice: ContributorClient;

/**
 * The two circuits these tests upload to (the second for a turn after the first's is accepted, and for
 * creations at once on two): a ceremony of these alone shows every limit, and starts without making
 * and preparing seven chains nobody uploads to.
 */
const TWO = { circuits: ['register', 'treeUpdate'] };

before(async () => {
  coordinator = await startTestCoordinator({
    redis: true,
    clock,
    log: recordingLog,
    tickIntervalMs: 60_000,
    ceremony: TWO,
  });
  dataDir = coordinator.dataDir;
  alice = new ContributorClient(coordinator.url);
  await alice.signInDemo('alice');
  await alice.join();
});

after(() => coordinator?.close());

/** The refusal in a response (the client's reader), checked to name no server path. */
async function refusal(response: Response): Promise<{ status: number; code: string; message: string }> {
  const { status, code, message, body } = await alice.refusal(response);
  assertNoServerPath(body);
  return { status, code, message };
}

/** The data files of a circuit's uploads (tus keeps `<id>` and `<id>.json`). */
async function uploadFiles(circuit: string, folder = dataDir): Promise<string[]> {
  const entries = await readdir(path.join(folder, 'uploads', circuit)).catch(() => []);
  return entries.filter((name) => !name.endsWith('.json')).sort();
}

function assertNoServerPath(text: string): void {
  assert.ok(!text.includes(dataDir), `a message names the data folder: ${text}`);
  assert.ok(!/\/uploads\//.test(text), `a message names an upload's path: ${text}`);
}

/** The free-space guard's byte figures, from /metrics (loopback, no proxy header: no token needed). */
async function diskFigures(base: string): Promise<{ free: number; required: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const figure = (name: string): number => {
    const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    assert.ok(match, `${name} is in /metrics`);
    return Number(match[1]);
  };
  return { free: figure('ceremony_upload_disk_free_bytes'), required: figure('ceremony_upload_disk_required_bytes') };
}

async function headSize(circuit: string): Promise<number> {
  const index = await alice.headIndex(circuit);
  return (await stat(ceremonyPaths(dataDir).zkeyPath(circuit, index))).size;
}

const stateOf = (circuit: string) => (me: MeView) => me.status.circuits.find((c) => c.circuit === circuit)?.state;

test(
  'an upload shorter than the smallest next link, or of undeclared ' +
    'length, is refused at creation and stores nothing',
  async () => {
    assert.equal((await alice.progress('register')).state, 'turn');
    const minimum = (await headSize('register')) + MIN_CONTRIBUTION_RECORD_BYTES;

    // The empty upload the review found: tus would create and finish it at once.
    await assert.rejects(alice.upload('register', Buffer.alloc(0)), /response code: 400[\s\S]*upload\.too_small/);
    const empty = await refusal(await alice.createUpload('register', { length: 0 }));
    assert.deepEqual([empty.status, empty.code], [400, 'upload.too_small']);
    assert.match(empty.message, new RegExp(`at least ${minimum} bytes`));
    const short = await refusal(await alice.createUpload('register', { length: minimum - 1 }));
    assert.deepEqual([short.status, short.code], [400, 'upload.too_small']);
    // A deferred length would be declared on a later PATCH, past this check.
    const deferred = await refusal(await alice.createUpload('register', { headers: { 'upload-defer-length': '1' } }));
    assert.deepEqual([deferred.status, deferred.code], [411, 'upload.length_required']);
    // Creation with upload, the body longer than declared: refused, and its fresh file removed.
    const overlong = await refusal(
      await alice.createUpload('register', { length: minimum, body: new Uint8Array(minimum + 10) }),
    );
    assert.deepEqual([overlong.status, overlong.code], [413, 'upload.too_large']);

    assert.deepEqual(await uploadFiles('register'), [], 'no refused creation left a file');
    assert.equal((await alice.progress('register')).state, 'turn', 'the turn is not spent');
  },
);

test("tus's own protocol errors answer {error:{code,message}} like every other refusal", async () => {
  const length = (await headSize('register')) + MIN_CONTRIBUTION_RECORD_BYTES;
  const created = await alice.createUpload('register', { length });
  assert.equal(created.status, 201, await created.text());
  const url = alice.uploadUrl(created);
  const conflict = await refusal(await alice.patch(url, 5, new Uint8Array(10)));
  assert.deepEqual([conflict.status, conflict.code], [409, 'upload.offset_conflict']);
  const missing = await refusal(await alice.patch(`${url}0`, 0, new Uint8Array(10)));
  assert.deepEqual([missing.status, missing.code], [404, 'upload.not_found']);
  const { 'upload-offset': _offset, ...withoutOffset } = alice.patchHeaders(0);
  const unplaced = await refusal(
    await fetch(url, { method: 'PATCH', headers: withoutOffset, body: new Uint8Array(10) }),
  );
  assert.deepEqual([unplaced.status, unplaced.code], [400, 'upload.protocol_error']);
  assert.match(unplaced.message, /Upload-Offset header required/);
  // Still resumable at its real offset: none of the refusals wrote a byte.
  const head = await fetch(url, { method: 'HEAD', headers: alice.tusHeaders() });
  assert.equal(head.headers.get('upload-offset'), '0');
  // Metadata that cannot be read: whose upload it is cannot be told, and tus's store takes it for no upload.
  const file = path.join(dataDir, 'uploads', 'register', path.basename(url));
  await rm(`${file}.json`);
  await symlink(`${path.basename(file)}.json`, `${file}.json`); // a link to itself: reading it fails with ELOOP
  const unreadable = await refusal(await alice.patch(url, 0, new Uint8Array(10)));
  assert.deepEqual([unreadable.status, unreadable.code], [404, 'upload.not_found']);
  assert.equal((await stat(file)).size, 0, 'nothing was written');
  await rm(file);
  await rm(`${file}.json`);
});

let contribution: { file: string; contributionHash: string };

test(
  'a second creation in the same turn replaces the first: its writer is ' + 'stopped, its URL gone, one file stays',
  async () => {
    contribution = await alice.makeContribution('register');
    const bytes = await readFile(contribution.file);
    const length = { length: bytes.length };
    const first = await alice.createUpload('register', length);
    assert.equal(first.status, 201, await first.text());
    const firstUrl = alice.uploadUrl(first);
    const patch = (offset: number, body: BodyInit) => alice.patch(firstUrl, offset, body);
    assert.equal((await patch(0, bytes.subarray(0, 1000))).status, 204);

    // A PATCH still streaming into the first upload when the second is created.
    let feed!: ReadableStreamDefaultController<Uint8Array>;
    const stream = new ReadableStream<Uint8Array>({ start: (controller) => void (feed = controller) });
    const writing = patch(1000, stream);
    feed.enqueue(bytes.subarray(1000, 2000));
    await waitUntil(
      async () => (await stat(path.join(dataDir, 'uploads', 'register', path.basename(firstUrl)))).size === 2000,
      'the streamed bytes to land',
      10_000,
    );

    const second = await alice.createUpload('register', length);
    assert.equal(second.status, 201, await second.text());
    const secondId = path.basename(second.headers.get('location')!);
    // The first writer was stopped (it ends although its body never does) and its file deleted.
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error('the first upload is still being written')), 20_000)),
    );
    await Promise.race([
      writing.then(
        (r) => r.body?.cancel(),
        () => undefined,
      ),
      stuck,
    ]).finally(() => clearTimeout(timer));
    try {
      feed.close();
    } catch {
      // the server already dropped the stream
    }
    assert.deepEqual(await uploadFiles('register'), [secondId]);
    const head = await fetch(firstUrl, { method: 'HEAD', headers: alice.tusHeaders() });
    assert.equal(head.status, 404, 'the replaced upload cannot be resumed');
    assert.equal((await patch(2000, bytes.subarray(2000, 3000))).status, 404, 'nor written to');

    // The real client's upload replaces the second in turn, and completes.
    await alice.upload('register', bytes);
    await alice.waitFor((me) => stateOf('register')(me) === 'verifying', 'verifying');
    assert.equal((await uploadFiles('register')).length, 1, 'only the finished upload stays');
  },
);

test(
  'a finished upload waiting for a verifier outlives the expiry sweep ' + 'and is accepted once a verifier starts',
  async () => {
    // No worker yet: the job waits in Redis while the coordinator's clock passes the expiry.
    const [candidate] = await uploadFiles('register');
    clock.advance(coordinator.uploads.expiryMs + 60_000);
    assert.equal(await coordinator.uploads.sweepExpired(), 0, 'the sweep deleted nothing');
    assert.deepEqual(await uploadFiles('register'), [candidate], 'the finished upload is still there');

    await coordinator.startWorker();
    const me = await alice.waitFor((m) => stateOf('register')(m) === 'accepted', 'register accepted', 90_000);
    assert.equal(
      me.status.circuits.find((c) => c.circuit === 'register')!.contributionHash,
      contribution.contributionHash,
    );
    assert.equal(await alice.headIndex('register'), 1);
    assert.deepEqual(await uploadFiles('register'), [], 'the accepted upload became the head');
  },
);

test('a malformed and a truncated upload are refused, and no message names a server path', async () => {
  await alice.waitFor((m) => stateOf('treeUpdate')(m) === 'turn', 'a turn on treeUpdate');
  const { file } = await alice.makeContribution('treeUpdate');
  const size = (await stat(file)).size;
  const refusals: Array<{ code: string; message: string }> = [];
  const refusedUpload = async (bytes: Buffer): Promise<void> => {
    const before = (await alice.me()).contributions.length;
    await alice.upload('treeUpdate', bytes);
    const me = await alice.waitFor(
      (m) => m.contributions.length > before && m.contributions.at(-1)!.status === 'refused',
      'the refusal',
    );
    refusals.push(me.status.lastRefusal!);
  };

  await refusedUpload(randomBytes(size)); // the size of a real contribution, but not a zkey
  await alice.waitFor((m) => stateOf('treeUpdate')(m) === 'turn', 'the turn again after the refusal');
  const truncated = await truncatedCopy(
    file,
    path.join(await mkdtemp(path.join(tmpdir(), 'truncated-')), 'next.zkey'),
    8,
  );
  await refusedUpload(await readFile(truncated));

  assert.deepEqual(
    refusals.map((r) => r.code),
    ['zkey.malformed', 'zkey.malformed'],
  );
  for (const { message } of refusals) assert.match(message, /^the uploaded key is not a valid Groth16 zkey: /);
  assert.match(refusals[1]!.message, /truncated|runs past the end/);
  for (const route of ['/api/me', '/api/me/receipts']) {
    const text = await (await fetch(`${alice.baseUrl}${route}`, { headers: { cookie: alice.cookie } })).text();
    assertNoServerPath(text);
  }
  await rm(path.dirname(truncated), { recursive: true, force: true });
});

test('an unfinished upload is swept once expired by the coordinator clock, not before', async () => {
  await alice.waitFor((m) => stateOf('treeUpdate')(m) === 'turn', 'the turn again');
  const created = await alice.createUpload('treeUpdate', { length: (await headSize('treeUpdate')) + 1024 });
  assert.equal(created.status, 201, await created.text());
  assert.equal((await uploadFiles('treeUpdate')).length, 1);
  clock.advance(coordinator.uploads.expiryMs - 1_000);
  assert.equal(await coordinator.uploads.sweepExpired(), 0);
  assert.equal((await uploadFiles('treeUpdate')).length, 1, 'not expired yet');
  clock.advance(2_000);
  assert.equal(await coordinator.uploads.sweepExpired(), 1);
  assert.deepEqual(await uploadFiles('treeUpdate'), []);
});

test(
  'an upload whose metadata cannot be read is logged with its error code ' + 'by the sweep, and still swept by its age',
  async () => {
    const directory = path.join(dataDir, 'uploads', 'treeUpdate');
    await mkdir(directory, { recursive: true });
    const stray = path.join(directory, 'stray-upload');
    await writeFile(stray, randomBytes(16));
    await utimes(stray, new Date(0), new Date(0));
    await symlink('stray-upload.json', `${stray}.json`); // a link to itself: reading it fails with ELOOP
    warnings.length = 0;
    assert.equal(await coordinator.uploads.sweepExpired(), 1);
    assert.deepEqual(warnings, [
      { message: 'upload metadata unreadable', fields: { circuit: 'treeUpdate', code: 'ELOOP' } },
    ]);
    assert.deepEqual(await readdir(directory), []);
  },
);

test(
  'the free-space guard refuses uploads when the disk is short of the ' +
    'largest key plus the margin, and /healthz shows it',
  async () => {
    const healthy = (await (await fetch(`${coordinator.url}/healthz`)).json()) as { ok: boolean; uploads: unknown };
    // In public only whether uploads are taken; the byte figures are in /metrics (behind its token).
    assert.deepEqual(healthy.uploads, { accepting: true });
    const figures = await diskFigures(coordinator.url);
    assert.ok(figures.free >= figures.required);
    assert.ok(figures.required > 1024 ** 3, 'the default margin (1 GiB) plus the largest key');

    // A second coordinator on a copy of the ceremony (one coordinator serves a folder), whose
    // margin is more than any disk holds; its database and queue log apart from the copied ones.
    const guardedDir = await copyCeremony(dataDir);
    const stateDir = await mkdtemp(path.join(tmpdir(), 'guard-state-'));
    const guarded = await startTestCoordinator({
      dataDir: guardedDir,
      env: {
        DATABASE_FILE: path.join(stateDir, 'coordinator.sqlite'),
        QUEUE_LOG_FILE: path.join(stateDir, 'queue-log.jsonl'),
        UPLOAD_DISK_MARGIN_BYTES: String(2 ** 52),
      },
      clock,
      tickIntervalMs: 60_000,
    });
    try {
      const health = (await (await fetch(`${guarded.url}/healthz`)).json()) as typeof healthy;
      assert.equal(health.ok, true, 'a full disk stops uploads, not the coordinator');
      assert.deepEqual(health.uploads, { accepting: false });
      const guardedFigures = await diskFigures(guarded.url);
      assert.ok(guardedFigures.free < guardedFigures.required);
      assert.ok(guardedFigures.required > 2 ** 52, 'the configured margin plus the largest key');

      const bob = new ContributorClient(guarded.url);
      await bob.signInDemo('bob');
      await bob.join();
      assert.equal((await bob.progress('register')).state, 'turn');
      const before = await uploadFiles('register', guardedDir);
      const refused = await refusal(
        await bob.createUpload('register', { length: (await headSize('register')) + 1024 }),
      );
      assert.deepEqual([refused.status, refused.code], [507, 'upload.disk_full']);
      assert.deepEqual(await uploadFiles('register', guardedDir), before, 'nothing stored');
      assert.equal((await bob.progress('register')).state, 'turn', 'the turn is not spent');
    } finally {
      await guarded.close();
      await rm(stateDir, { recursive: true, force: true });
      await rm(guardedDir, { recursive: true, force: true });
    }
  },
);

test(
  'creations at once on two circuits see each other: with free space for one, the other is ' +
    'refused upload.disk_full',
  async () => {
    let free = Number.MAX_SAFE_INTEGER;
    const racing = await startTestCoordinator({
      tickIntervalMs: 60_000,
      freeDiskBytes: async () => free,
      ceremony: TWO,
    });
    try {
      const circuits = racing.config.circuits.slice(0, 2).map((c) => c.name);
      const clients: ContributorClient[] = [];
      for (const circuit of circuits) {
        const client = new ContributorClient(racing.url);
        await client.signInDemo(`racer-${circuit}`);
        await client.request('POST', '/api/me/join', { circuits: [circuit] });
        assert.equal((await client.progress(circuit)).state, 'turn');
        clients.push(client);
      }
      const sizes = await Promise.all(
        circuits.map(
          async (circuit) =>
            (await stat(ceremonyPaths(racing.dataDir).zkeyPath(circuit, await clients[0]!.headIndex(circuit)))).size,
        ),
      );
      const needs = sizes.map(largestUploadBytes);
      // Room (beyond the default 1 GiB margin) for the larger of the two, not for both.
      free = 1024 ** 3 + Math.max(...needs) + Math.floor(Math.min(...needs) / 2);
      const answers = await Promise.all(
        circuits.map((circuit, i) => clients[i]!.createUpload(circuit, { length: sizes[i]! + 1024 })),
      );
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [201, 507]);
      const refused = await clients[0]!.refusal(answers.find((answer) => answer.status === 507)!);
      assert.equal(refused.code, 'upload.disk_full');
    } finally {
      await racing.close();
    }
  },
);
