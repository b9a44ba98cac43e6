/**
 * TRUST_PROXY names the reverse proxies by their addresses, never by a hop count: `X-Forwarded-For`
 * from a client that is not one of them (one that reached the coordinator's port directly) is
 * ignored, so the rate limits and the download budget are charged to the address it connects from,
 * whatever it writes; from a trusted proxy, the header names the client. A hop count, a boolean or a
 * range of every address is refused at start-up with what to write instead.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { copyCeremony, newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';

let dataDir: string;
const running: TestCoordinator[] = [];
const copies: string[] = [];

async function start(env: Record<string, string>): Promise<TestCoordinator> {
  const folder = await copyCeremony(dataDir);
  copies.push(folder);
  const coordinator = await startTestCoordinator({ dataDir: folder, env, tickIntervalMs: 60_000 });
  running.push(coordinator);
  return coordinator;
}

/**
 * A sign-in attempt, which the limit counts whether or not it succeeds: a wrong coordinator token,
 * `403` until past the limit (a forwarded request never signs in by demo: it is not loopback's).
 */
const signIn = (url: string, forwardedFor: string): Promise<Response> =>
  fetch(`${url}/auth/coordinator`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
    body: JSON.stringify({ token: 'not the token' }),
  });
const WITHIN_THE_LIMIT = 403;

before(async () => {
  dataDir = await newCeremonyDir({ init: true });
});

after(async () => {
  for (const coordinator of running) await coordinator.close();
  await cleanUp(dataDir, ...copies);
});

describe('TRUST_PROXY at start-up', () => {
  test('a hop count, a boolean or every address is refused with config.invalid, saying what to write', () => {
    for (const value of ['1', '2', 'true', '0.0.0.0/0', '10.0.0.1,1', '::/0', '10.0.0.0/33', 'proxy.example']) {
      assert.throws(
        () => loadServerConfig({ TRUST_PROXY: value }),
        (e: unknown) =>
          isCoordinatorError(e, 'config.invalid') &&
          e.message.includes('TRUST_PROXY') &&
          e.message.includes('TRUST_PROXY=172.28.0.0/16'),
        `TRUST_PROXY=${value}`,
      );
    }
  });

  test('addresses, CIDRs and the named ranges are taken; unset is none', () => {
    assert.deepEqual(loadServerConfig({}).trustProxy, []);
    assert.deepEqual(loadServerConfig({ TRUST_PROXY: '172.28.0.0/16' }).trustProxy, ['172.28.0.0/16']);
    assert.deepEqual(loadServerConfig({ TRUST_PROXY: ' 10.0.0.2, 10.0.0.3 ' }).trustProxy, ['10.0.0.2', '10.0.0.3']);
    assert.deepEqual(loadServerConfig({ TRUST_PROXY: 'fd00::/8,Loopback' }).trustProxy, ['fd00::/8', 'loopback']);
  });
});

describe('X-Forwarded-For from a client that is not a trusted proxy', () => {
  test('is ignored: the sign-in limit counts the address it connects from, whatever it writes', async () => {
    // The proxy is elsewhere: this test's client (loopback) reached the port directly.
    const { url } = await start({ TRUST_PROXY: '10.20.0.0/16', RATE_LIMIT_SIGN_IN: '2' });
    assert.equal((await signIn(url, '203.0.113.1')).status, WITHIN_THE_LIMIT);
    assert.equal((await signIn(url, '203.0.113.2')).status, WITHIN_THE_LIMIT);
    const third = await signIn(url, '203.0.113.3');
    assert.equal(third.status, 429, 'a third address named in the header is still this client');
    assert.equal(((await third.json()) as { error: { code: string } }).error.code, 'rate.limited');
  });

  test('is ignored: the download budget is charged to the address it connects from', async () => {
    const keyBytes = (await stat(ceremonyPaths(dataDir).zkeyPath('register', 0))).size;
    const { url } = await start({ TRUST_PROXY: '10.20.0.0/16', DOWNLOAD_BUDGET_BYTES: String(keyBytes + 100) });
    const download = (forwardedFor: string) =>
      fetch(`${url}/api/circuits/register/zkeys/0`, { headers: { 'x-forwarded-for': forwardedFor } });
    const first = await download('198.51.100.1');
    assert.equal(first.status, 200);
    await first.arrayBuffer();
    const second = await download('198.51.100.2');
    assert.equal(second.status, 429, 'another address in the header does not get a budget of its own');
    await second.arrayBuffer();
  });

  test('from a trusted proxy, the header names the client: each address has its own limit', async () => {
    const { url } = await start({ TRUST_PROXY: '127.0.0.1', RATE_LIMIT_SIGN_IN: '2' });
    for (let i = 0; i < 2; i++) assert.equal((await signIn(url, '203.0.113.1')).status, WITHIN_THE_LIMIT);
    assert.equal((await signIn(url, '203.0.113.1')).status, 429);
    assert.equal((await signIn(url, '203.0.113.2')).status, WITHIN_THE_LIMIT, 'another client behind the proxy');
    // A client that writes its own header behind the proxy: the proxy appends the address it saw.
    assert.equal((await signIn(url, '203.0.113.2, 203.0.113.1')).status, 429, 'the proxy’s view wins');
  });
});
