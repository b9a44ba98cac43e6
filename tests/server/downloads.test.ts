/**
 * The coordinator's downloads over real HTTP, as a CDN in front of it would see them:
 *  - every file that never changes under its URL (a chain's key by index, a head's inputs by
 *    index, the r1cs, the ptau, the final files) is served `public, max-age=31536000, immutable`
 *    with its hash as a strong ETag, answers 304 to a revalidation and ranges as before; the head's
 *    inputs, which move with the head, redirect (`no-store`) to the URL of the head's own; a
 *    refusal on these routes is never cached;
 *  - each client address has a byte budget per window (DOWNLOAD_BUDGET_BYTES): past it, `429
 *    rate.limited` with Retry-After, and what was not sent (a 304, a HEAD) does not count; with a
 *    REDIS_URL the budget is shared by every coordinator of the ceremony; a range send will not
 *    honour (a stale If-Range) is charged as the whole file it is sent as.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { copyCeremony, finalisedCeremony } from '../fixtures/ceremony-fixture.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { DELTA_FORMAT } from '../../core/delta/delta-format.ts';

const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * A revalidation as a cache sends it. (fetch adds `Cache-Control: no-cache` to a conditional
 * request unless told otherwise, which asks the server for the whole file again.)
 */
const revalidation = (hash: string): Record<string, string> => ({
  'if-none-match': `"${hash}"`,
  'cache-control': 'max-age=0',
});

async function assertImmutable(response: Response, hash: string, what: string): Promise<Buffer> {
  assert.equal(response.status, 200, `${what}: ${response.status}`);
  assert.equal(response.headers.get('cache-control'), IMMUTABLE, what);
  assert.equal(response.headers.get('etag'), `"${hash}"`, `${what}: its hash as a strong ETag`);
  return Buffer.from(await response.arrayBuffer());
}

describe('immutable downloads under versioned URLs', () => {
  let coordinator: TestCoordinator;
  let finalised: TestCoordinator;
  let finalisedDir: string;

  before(async () => {
    coordinator = await startTestCoordinator({ tickIntervalMs: 100 });
    finalisedDir = await copyCeremony((await finalisedCeremony()).dataDir);
    finalised = await startTestCoordinator({ dataDir: finalisedDir, tickIntervalMs: 60_000 });
  });
  after(async () => {
    await coordinator?.close();
    await finalised?.close();
    await cleanUp(finalisedDir);
  });

  test('a chain’s key by its index: a year’s caching, its transcript hash as ETag, 304 and ranges', async () => {
    const state = await openCeremony(coordinator.dataDir);
    const hash = state.chains.get('register')!.init!.fileHash;
    const url = `${coordinator.url}/api/circuits/register/zkeys/0`;
    const body = await assertImmutable(await fetch(url), hash, 'zkeys/0');
    assert.ok(body.equals(await readFile(ceremonyPaths(coordinator.dataDir).zkeyPath('register', 0))));
    const revalidated = await fetch(url, { headers: revalidation(hash) });
    assert.equal(revalidated.status, 304);
    const ranged = await fetch(url, { headers: { range: 'bytes=4-11' } });
    assert.equal(ranged.status, 206);
    assert.ok(Buffer.from(await ranged.arrayBuffer()).equals(body.subarray(4, 12)));
    // A key beyond the head may exist later: that refusal is not cached.
    const missing = await fetch(`${coordinator.url}/api/circuits/register/zkeys/7`);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('cache-control'), 'no-store');
  });

  test('the head’s inputs: the moving URL redirects to the head’s own, which is immutable', async () => {
    const moving = await fetch(`${coordinator.url}/api/circuits/register/contribution-inputs`, { redirect: 'manual' });
    assert.equal(moving.status, 302);
    assert.equal(moving.headers.get('cache-control'), 'no-store');
    assert.equal(moving.headers.get('location'), '/api/circuits/register/contribution-inputs/0');
    const followed = await fetch(`${coordinator.url}/api/circuits/register/contribution-inputs`);
    assert.equal(new URL(followed.url).pathname, '/api/circuits/register/contribution-inputs/0');
    assert.equal(followed.headers.get('x-chain-head'), '0');
    assert.equal(followed.headers.get('x-contribution-format'), DELTA_FORMAT);
    const bytes = Buffer.from(await followed.clone().arrayBuffer());
    const skeleton = path.join(coordinator.dataDir, 'state', 'skeletons', 'register_0.inputs');
    await assertImmutable(followed, await hashFile(skeleton), 'contribution-inputs/0');
    assert.ok(bytes.equals(await readFile(skeleton)));

    // Once the head moves, the old inputs are gone (a contribution on them could not be taken).
    const alice = await ContributorClient.contributed(coordinator.url, 'alice', 'register');
    const stale = await fetch(`${coordinator.url}/api/circuits/register/contribution-inputs/0`);
    const refused = await alice.refusal(stale);
    assert.deepEqual([refused.status, refused.code], [409, 'delta.stale_head']);
    assert.equal(stale.headers.get('cache-control'), 'no-store');
    const ahead = await fetch(`${coordinator.url}/api/circuits/register/contribution-inputs/5`);
    assert.equal(ahead.status, 404);
    const moved = await fetch(`${coordinator.url}/api/circuits/register/contribution-inputs`, { redirect: 'manual' });
    assert.equal(moved.headers.get('location'), '/api/circuits/register/contribution-inputs/1');
  });

  test('the r1cs, the ptau and the final files: immutable, their hashes as ETags', async () => {
    const { config } = coordinator;
    const circuit = config.circuits.find((c) => c.name === 'register')!;
    await assertImmutable(
      await fetch(`${coordinator.url}/api/circuits/register/r1cs`),
      await hashFile(circuit.r1csPath),
      'r1cs',
    );
    await assertImmutable(await fetch(`${coordinator.url}/api/ptau`), await hashFile(config.ptauPath), 'ptau');
    const notYet = await fetch(`${coordinator.url}/api/final/register.zkey`);
    assert.equal(notYet.status, 404);
    assert.equal(notYet.headers.get('cache-control'), 'no-store', 'not finalised yet: not cached');

    const state = await openCeremony(finalisedDir);
    await assertImmutable(
      await fetch(`${finalised.url}/api/final/register.zkey`),
      state.chains.get('register')!.beacon!.fileHash,
      'the final key',
    );
    const manifest = path.join(finalisedDir, 'final', 'manifest.json');
    const served = await fetch(`${finalised.url}/api/final/manifest.json`);
    assert.match(served.headers.get('content-type') ?? '', /^application\/json/);
    await assertImmutable(served, await hashFile(manifest), 'the manifest');
  });
});

describe('the download budget per client address', () => {
  let redis: RedisServer;
  let first: TestCoordinator;
  let keyBytes: number;
  let hash: string;

  before(async () => {
    redis = await startRedisServer();
    first = await startTestCoordinator({ redis, tickIntervalMs: 60_000 });
    const key = ceremonyPaths(first.dataDir).zkeyPath('register', 0);
    keyBytes = (await stat(key)).size;
    hash = await hashFile(key);
    // Two downloads of the key and a bit: the third is one too many.
    await first.restart({ DOWNLOAD_BUDGET_BYTES: String(2 * keyBytes + 100), DOWNLOAD_BUDGET_WINDOW_MS: '600000' });
  });
  after(async () => {
    await first?.close();
    await redis?.stop();
  });

  test('past its budget an address is refused (429 rate.limited, Retry-After); 304s and HEADs are free', async () => {
    const url = `${first.url}/api/circuits/register/zkeys/0`;
    assert.equal((await fetch(url)).status, 200);
    for (let i = 0; i < 5; i++) {
      assert.equal((await fetch(url, { headers: revalidation(hash) })).status, 304);
      assert.equal((await fetch(url, { method: 'HEAD' })).status, 200);
    }
    assert.equal((await fetch(url)).status, 200, 'the second download is within the budget');
    const refused = await fetch(url);
    assert.equal(refused.status, 429);
    const seconds = Number(refused.headers.get('retry-after'));
    assert.ok(seconds > 0 && seconds <= 600, `Retry-After ${refused.headers.get('retry-after')}`);
    assert.equal(refused.headers.get('cache-control'), 'no-store');
    const { error } = (await refused.json()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'rate.limited');
    assert.match(error.message, /downloaded its budget/);
    // The other files share the budget; the API does not.
    assert.equal((await fetch(`${first.url}/api/ptau`)).status, 429);
    assert.equal((await fetch(`${first.url}/api/ceremony`)).status, 200);
  });

  test('with a REDIS_URL the budget is kept in Redis: a restarted coordinator still refuses the address', async () => {
    await first.restart();
    const refused = await fetch(`${first.url}/api/circuits/register/zkeys/0`);
    assert.equal(refused.status, 429, 'the address spent its budget before the restart');
  });
});

describe('the download budget against ranges send does not honour', () => {
  let coordinator: TestCoordinator;
  let keyBytes: number;
  let hash: string;

  before(async () => {
    coordinator = await startTestCoordinator({ tickIntervalMs: 60_000 });
    const key = ceremonyPaths(coordinator.dataDir).zkeyPath('register', 0);
    keyBytes = (await stat(key)).size;
    hash = await hashFile(key);
    await coordinator.restart({
      DOWNLOAD_BUDGET_BYTES: String(2 * keyBytes + 100),
      DOWNLOAD_BUDGET_WINDOW_MS: '600000',
    });
  });
  after(async () => {
    await coordinator?.close();
  });

  test('a range under a stale If-Range is sent whole and charged whole', async () => {
    const url = `${coordinator.url}/api/circuits/register/zkeys/0`;
    const fresh = await fetch(url, { headers: { range: 'bytes=0-0', 'if-range': `"${hash}"` } });
    assert.equal(fresh.status, 206, 'an If-Range naming the key: the range');
    assert.equal((await fresh.arrayBuffer()).byteLength, 1);
    const answers: Array<[number, number]> = [];
    for (let i = 0; i < 3; i++) {
      const stale = await fetch(url, { headers: { range: 'bytes=0-0', 'if-range': '"stale"' } });
      answers.push([stale.status, (await stale.arrayBuffer()).byteLength]);
    }
    assert.equal(answers[0]![1], keyBytes, 'a stale If-Range: the whole key');
    assert.deepEqual(
      answers.map(([status]) => status),
      [200, 200, 429],
      'two whole keys are the budget',
    );
  });
});
