/**
 * The limits of the coordinator's file downloads over real HTTP, against clients that hold what
 * they ask for:
 *  - downloads in progress at once: per client address (`429 download.too_many_in_progress`) and in
 *    all (`503 download.server_busy`), both with Retry-After; a turn's holder downloading their own
 *    turn's inputs is counted apart, so neither an address's nor everyone's downloads stop a turn;
 *  - a minimum transfer rate: a reader that takes the answer slower than it (here, one that stops
 *    reading) has its connection closed, and what it got is shorter than the file;
 *  - the download budget: a turn's holder pays for their own turn's inputs, not their address, so
 *    another account behind the same address (a NAT) that spent the address's budget cannot stop
 *    the turn;
 *  - an immutable file's URL with a query string is refused (`400 request.query_not_allowed`,
 *    `no-store`) before any work: every query would be another miss of the caches in front.
 * The held downloads are of a 2^14 ptau (19 MB): more than loopback's socket buffers take, so the
 * server really waits for the reader.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { recordingLog } from '../helpers/recording-log.ts';
import { waitUntil } from '../helpers/wait-until.ts';
import { ApiError } from '../../client/api-client.ts';
import { cleanUp } from '../helpers/clean-up.ts';

/** A download whose reader took its first bytes and stopped reading: the server holds it open. */
async function heldDownload(url: string, route: string, forwardedFor: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.write(`GET ${route} HTTP/1.1\r\nHost: ${hostname}\r\nX-Forwarded-For: ${forwardedFor}\r\n\r\n`);
  const [first] = (await once(socket, 'data')) as [Buffer];
  socket.pause();
  assert.match(first.toString('latin1'), /^HTTP\/1\.1 200 /, `${route} for ${forwardedFor}`);
  return socket;
}

async function refusalOf(response: Response): Promise<{ status: number; code: string; retryAfter: string | null }> {
  const body = (await response.json()) as { error: { code: string } };
  return { status: response.status, code: body.error.code, retryAfter: response.headers.get('retry-after') };
}

describe('downloads in progress at once, and the minimum transfer rate', () => {
  let coordinator: TestCoordinator;
  const logged = recordingLog();
  const held: Socket[] = [];

  before(async () => {
    coordinator = await startTestCoordinator({
      ceremony: { ptauPower: 14 },
      log: logged.log,
      tickIntervalMs: 100,
      env: {
        // This test's one client stands for several addresses through a proxy on loopback.
        TRUST_PROXY: 'loopback',
        MAX_DOWNLOADS_PER_ADDRESS: '2',
        MAX_DOWNLOADS: '3',
        MIN_TRANSFER_WINDOW_MS: '500',
      },
    });
  });
  after(async () => {
    for (const socket of held) socket.destroy();
    await coordinator?.close();
  });

  test('past an address’s cap and everyone’s, downloads are refused with their codes; a turn is not', async () => {
    const ptau = (address: string) => fetch(`${coordinator.url}/api/ptau`, { headers: { 'x-forwarded-for': address } });
    const alice = new ContributorClient(coordinator.url);
    await alice.signInDemo('alice');
    await alice.join();
    await alice.waitForState('register', 'turn', 'alice’s turn');

    held.push(await heldDownload(coordinator.url, '/api/ptau', '203.0.113.1'));
    held.push(await heldDownload(coordinator.url, '/api/ptau', '203.0.113.1'));
    const third = await refusalOf(await ptau('203.0.113.1'));
    assert.deepEqual([third.status, third.code], [429, 'download.too_many_in_progress']);
    assert.ok(Number(third.retryAfter) > 0, 'with Retry-After');

    held.push(await heldDownload(coordinator.url, '/api/ptau', '198.51.100.7')); // another address: the third in all
    const busy = await refusalOf(await ptau('192.0.2.9'));
    assert.deepEqual([busy.status, busy.code], [503, 'download.server_busy']);
    assert.ok(Number(busy.retryAfter) > 0, 'with Retry-After');

    // The turn's holder, behind the full address: their inputs are theirs to fetch.
    const inputs = await alice.fetch('GET', '/api/circuits/register/contribution-inputs');
    assert.equal(inputs.status, 200);
    assert.ok((await inputs.arrayBuffer()).byteLength > 0);

    // Readers gone, their downloads end and their places are free again.
    for (const socket of held.splice(0)) socket.destroy();
    await waitUntil(async () => {
      const response = await ptau('203.0.113.1');
      await response.arrayBuffer();
      return response.status === 200;
    }, 'a download of the address after its readers left');
  });

  test('a reader that stops reading is cut off; one that reads is not', async () => {
    const size = (await stat(coordinator.config.ptauPath)).size;
    const whole = await fetch(`${coordinator.url}/api/ptau`);
    assert.equal((await whole.arrayBuffer()).byteLength, size, 'a reader at loopback speed gets it all');

    const cut = () => logged.lines.some((line) => line.message.includes('slower than the minimum transfer rate'));
    const socket = await heldDownload(coordinator.url, '/api/ptau', '203.0.113.50');
    held.push(socket);
    await waitUntil(cut, 'the coordinator to cut the stalled reader off', 10_000);
    let received = 0;
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    const closed = once(socket, 'close');
    socket.resume();
    await closed;
    assert.ok(received < size, `${received} bytes of ${size}: the answer ended early`);
  });
});

describe('who pays for a download, and what a URL may carry', () => {
  let coordinator: TestCoordinator;

  before(async () => {
    coordinator = await startTestCoordinator({ tickIntervalMs: 100 });
    const skeleton = await fetch(`${coordinator.url}/api/circuits/register/contribution-inputs`);
    const bytes = (await skeleton.arrayBuffer()).byteLength;
    // One download of the inputs and a half: a second by the same payer is refused.
    await coordinator.restart({ DOWNLOAD_BUDGET_BYTES: String(Math.floor(bytes * 1.5)) });
  });
  after(() => coordinator?.close());

  test('a turn’s holder pays for their own inputs: the address’s spent budget cannot stop the turn', async () => {
    const alice = new ContributorClient(coordinator.url);
    await alice.signInDemo('alice');
    await alice.join();
    await alice.waitForState('register', 'turn', 'alice’s turn');
    const bob = new ContributorClient(coordinator.url);
    await bob.signInDemo('bob');
    await bob.join();

    // Bob (waiting, same address) spends the address's budget on the inputs.
    await (await bob.fetch('GET', '/api/circuits/register/contribution-inputs')).arrayBuffer();
    await assert.rejects(
      bob.fetch('GET', '/api/circuits/register/contribution-inputs'),
      (error: unknown) => error instanceof ApiError && error.status === 429 && error.code === 'rate.limited',
    );
    const inputs = await alice.fetch('GET', '/api/circuits/register/contribution-inputs');
    assert.equal(inputs.status, 200, 'the turn’s own download');
    await inputs.arrayBuffer();
  });

  test('an immutable file’s URL with a query string is refused, uncached', async () => {
    for (const route of [
      '/api/circuits/register/zkeys/0',
      '/api/circuits/register/contribution-inputs/1',
      '/api/circuits/register/r1cs',
      '/api/ptau',
      '/api/final/register.zkey',
    ]) {
      for (const query of ['?v=2', '?', '?a=1&b=2']) {
        const response = await fetch(`${coordinator.url}${route}${query}`);
        const refused = await refusalOf(response);
        assert.deepEqual([refused.status, refused.code], [400, 'request.query_not_allowed'], `${route}${query}`);
        assert.equal(response.headers.get('cache-control'), 'no-store', `${route}${query}`);
      }
    }
  });
  test('another spelling of an immutable file’s URL is not served (each would miss the caches)', async () => {
    for (const route of [
      '/API/ptau',
      '/api/ptau/',
      '/api/%70tau',
      '/api/circuits/%72egister/zkeys/0',
      '/api/circuits/register/zkeys/00',
      '/api/circuits/register/ZKEYS/0',
      '/api/circuits/register/r1cs/',
      '/api/circuits/register/contribution-inputs/00',
    ]) {
      const response = await fetch(`${coordinator.url}${route}`);
      await response.arrayBuffer();
      assert.equal(response.status, 404, route);
      assert.equal(response.headers.get('cache-control'), 'no-store', route);
    }
    assert.equal((await fetch(`${coordinator.url}/api/ptau`, { method: 'HEAD' })).status, 200, 'the address itself');
  });
});

describe('the browser app’s files', () => {
  let coordinator: TestCoordinator;
  let webDir: string;

  before(async () => {
    webDir = await mkdtemp(path.join(tmpdir(), 'download-limits-web-'));
    await writeFile(path.join(webDir, 'index.html'), '<!doctype html>');
    await writeFile(path.join(webDir, 'large.bin'), Buffer.alloc(60_000, 7));
    coordinator = await startTestCoordinator({ webDir, env: { DOWNLOAD_BUDGET_BYTES: '100000' } });
  });
  after(async () => {
    await coordinator?.close();
    await cleanUp(webDir);
  });

  test('count against the address’s download budget: once it is spent they are refused', async () => {
    const file = () => fetch(`${coordinator.url}/large.bin`);
    const first = await file();
    assert.equal((await first.arrayBuffer()).byteLength, 60_000);
    const second = await file();
    assert.equal(second.status, 200, 'within the budget when it began');
    await second.arrayBuffer();
    const refused = await refusalOf(await file());
    assert.deepEqual([refused.status, refused.code], [429, 'rate.limited']);
    assert.ok(Number(refused.retryAfter) > 0);
  });
});
