/**
 * The coordinator's link challenge seen from outside: `ceremony serve` (embedded verifier) in its
 * own process, contributors over HTTP. Two good contributions are accepted (the second on the
 * cached one-MSM path) and a bad one refused; the seed, and the circuit key derived from it, never
 * appear in the data folder outside state/, in anything the coordinator or its verifier printed,
 * or in the responses of the public routes. After a restart with the cache deleted a good
 * contribution is still accepted and a bad one refused with its code.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { newCeremonyDir, REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startGroup, stopAllGroups, type GroupProcess } from '../helpers/process-group.ts';
import { sectionOffset, tamperedCopy } from '../helpers/zkey-tamper.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { getBn128 } from '../../core/crypto/bn128.ts';
import { CHALLENGE_SEED_FILE, circuitChallengeKey, stateDirFor } from '../../core/link-check/link-challenge.ts';
import { LINK_CACHE_DIR } from '../../core/link-check/link-combination-cache.ts';
import { SECTION } from '../../core/zkey/zkey-file.ts';

interface Served {
  group: GroupProcess;
  url: string;
}

let dataDir: string;
let served: Served | undefined;
/** Every coordinator process started, for the scan of everything they printed (JSON log, verifier's stderr). */
const started: GroupProcess[] = [];
const printed = (): string => started.map((group) => group.output()).join('');
const responses: string[] = [];

/** `ceremony serve` in its own process group (stopping it stops the verifier it forks too). */
async function serve(): Promise<Served> {
  const group = startGroup(
    process.execPath,
    [path.join(REPO_ROOT, 'bin', 'ceremony.js'), 'serve', '--data', dataDir, '--port', '0', '--open'],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, DEMO_SIGN_IN: 'true' },
      label: 'ceremony serve',
    },
  );
  started.push(group);
  const [, url] = await group.waitFor(/coordinator listening on (\S+)/, 60_000);
  return { group, url: url! };
}

async function stop(server: Served | undefined): Promise<void> {
  const result = await server?.group.stop('SIGTERM');
  assert.equal(result?.lingered ?? false, false, 'the coordinator or its verifier outlived the grace period');
}

/** A client whose JSON responses are kept for the scan. */
class RecordingClient extends ContributorClient {
  override async request<T>(method: string, route: string, body?: unknown): Promise<T> {
    const result = await super.request<T>(method, route, body);
    responses.push(JSON.stringify(result));
    return result;
  }
}

async function signedIn(url: string, name: string): Promise<RecordingClient> {
  const client = new RecordingClient(url);
  await client.signInDemo(name);
  await client.join();
  return client;
}

/** A contribution on the current head with one L point doubled, uploaded; resolves with the refusal code. */
async function uploadBad(client: ContributorClient): Promise<string | undefined> {
  await client.waitFor((me) => me.status.circuits[0]?.state === 'turn', 'a turn');
  const { file } = await client.makeContribution('register');
  const curve = await getBn128();
  const bad = await tamperedCopy(file, `${file}.bad`, (bytes, info) => {
    const at = sectionOffset(info, SECTION.l);
    const point = curve.G1.fromRprLEM(bytes, at);
    curve.G1.toRprLEM(bytes, at, curve.G1.toAffine(curve.G1.add(point, point)));
  });
  await client.upload('register', bad);
  const me = await client.waitFor((m) => m.status.lastRefusal !== undefined, 'the refusal');
  return me.status.lastRefusal?.code;
}

async function filesOutside(dir: string, skip: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (full === skip) continue;
    if (entry.isDirectory()) found.push(...(await filesOutside(full, skip)));
    else if (entry.isFile()) found.push(full);
  }
  return found;
}

before(async () => {
  dataDir = await newCeremonyDir({
    circuits: ['register'],
    init: true,
  });
  served = await serve();
});

after(async () => {
  try {
    await stop(served);
  } finally {
    await stopAllGroups(); // one that never got to listen
  }
  await cleanUp(dataDir);
});

describe('the link challenge seed stays in state/', () => {
  test('two contributions accepted and cached, a bad one refused and not cached', async () => {
    const a = await signedIn(served!.url, 'alice');
    const b = await signedIn(served!.url, 'bob');
    const c = await signedIn(served!.url, 'carol');
    await a.takeTurn('register');
    await b.takeTurn('register');
    assert.equal(await uploadBad(c), 'contribution.l_section_invalid');
    assert.equal(await a.headIndex('register'), 2);
    const entries = await readdir(path.join(stateDirFor(dataDir), LINK_CACHE_DIR));
    assert.equal(entries.length, 3, 'contribution 0, 1 and 2 cached; the refused one not');
  });

  test('a restart with the cache deleted: a good contribution accepted, a bad one refused', async () => {
    await stop(served);
    await rm(path.join(stateDirFor(dataDir), LINK_CACHE_DIR), { recursive: true });
    served = await serve();
    // carol, refused before the restart, is back in the queue (kept in SQLite) and tries again.
    const carol = new RecordingClient(served.url);
    await carol.signInDemo('carol');
    const e = await signedIn(served.url, 'erin');
    await carol.takeTurn('register');
    assert.equal(await carol.headIndex('register'), 3);
    assert.equal(await uploadBad(e), 'contribution.l_section_invalid');
    assert.equal(await e.headIndex('register'), 3);
  });

  test('never appears in a public file, a log line or a public response', async () => {
    const seedFile = path.join(stateDirFor(dataDir), CHALLENGE_SEED_FILE);
    assert.equal((await stat(seedFile)).mode & 0o777, 0o600);
    const seed = await readFile(seedFile);
    const secrets = [seed, circuitChallengeKey(seed, 'register')];
    const forms = secrets.flatMap((s) => [
      s.toString('hex'),
      s.toString('base64'),
      s.toString('base64url'),
      s.toString('hex').toUpperCase(),
    ]);

    const viewer = new RecordingClient(served!.url);
    for (const route of ['/healthz', '/api/ceremony', '/api/transcript', '/api/manifest']) {
      const response = await fetch(`${served!.url}${route}`);
      responses.push(await response.text());
    }
    for (let index = 0; index <= 3; index++) {
      const response = await fetch(`${served!.url}/api/circuits/register/zkeys/${index}`);
      assert.equal(response.status, 200);
      responses.push(Buffer.from(await response.arrayBuffer()).toString('latin1'));
    }
    responses.push(JSON.stringify(await viewer.request('GET', '/api/ceremony')));

    const published = await filesOutside(dataDir, stateDirFor(dataDir));
    assert.ok(
      published.some((f) => f.endsWith('.zkey')) && published.some((f) => f.endsWith('.jsonl')),
      'the scan sees chains and transcript',
    );
    for (const file of published) {
      const bytes = await readFile(file);
      for (const secret of secrets) assert.equal(bytes.indexOf(secret), -1, `${file} holds a secret's bytes`);
      const text = bytes.toString('latin1');
      for (const form of forms) assert.ok(!text.includes(form), `${file} holds a secret`);
    }
    assert.ok(printed().includes('coordinator listening'), 'the scan sees the logs');
    for (const form of forms) assert.ok(!printed().includes(form), 'a log line holds a secret');
    assert.ok(responses.length > 10);
    for (const body of responses)
      for (const form of forms) assert.ok(!body.includes(form), 'a response holds a secret');
  });
});
