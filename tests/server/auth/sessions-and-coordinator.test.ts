// Sessions, CSRF, coordinator token sign-in, role guards and the loopback demo sign-in.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { isCoordinatorError } from '../../../core/errors.ts';
import { parseAuthConfig } from '../../../server/auth/auth-config.ts';
import { createAuthRouter } from '../../../server/auth/auth-router.ts';
import { assertDemoSignInAllowed, isLoopbackAddress } from '../../../server/auth/demo-sign-in.ts';
import { ManualClock } from '../../../server/clock.ts';
import { openDatabase } from '../../../server/store/database.ts';
import { assertRefused, Browser, errorCode, startAuthTestServer, type AuthTestServer } from './auth-test-server.ts';

const COORDINATOR_TOKEN = 'a-coordinator-token-from-the-env';

interface SignedIn {
  principal: { id: string; kind: string; displayName: string; coordinator: boolean };
  csrfToken: string;
  expiresAt: string;
}

describe('sessions, CSRF and coordinator sign-in', () => {
  const clock = new ManualClock();
  let server: AuthTestServer;

  before(async () => {
    server = await startAuthTestServer({
      clock,
      testNetwork: true,
      config: { coordinatorToken: COORDINATOR_TOKEN, demo: { enabled: true } },
    });
  });
  after(() => server.close());

  it('answers { principal: null } without a session, and lists the methods', async () => {
    const browser = new Browser();
    assert.deepEqual(await (await browser.request(`${server.url}/auth/session`)).json(), { principal: null });
    assert.deepEqual(await (await browser.request(`${server.url}/auth/methods`)).json(), {
      github: false,
      semaphore: false,
      coordinatorToken: true,
      demo: true,
    });
    const me = await browser.request(`${server.url}/api/me`);
    await assertRefused(me, 401, 'auth.required');
  });

  it('refuses a wrong coordinator token', async () => {
    const browser = new Browser();
    const response = await browser.post(`${server.url}/auth/coordinator`, { token: `${COORDINATOR_TOKEN}x` });
    await assertRefused(response, 403, 'auth.not_coordinator');
    assert.equal(browser.cookies.size, 0);
  });

  it('signs in the coordinator with the right token; coordinator actions need the CSRF header', async () => {
    const browser = new Browser();
    const response = await browser.post(`${server.url}/auth/coordinator`, { token: COORDINATOR_TOKEN });
    assert.equal(response.status, 200);
    const body = (await response.json()) as SignedIn;
    assert.deepEqual(body.principal, {
      id: 'coordinator:token',
      kind: 'coordinator-token',
      displayName: 'coordinator',
      coordinator: true,
    });

    const session = (await (await browser.request(`${server.url}/auth/session`)).json()) as SignedIn;
    assert.equal(session.csrfToken, body.csrfToken);

    const noHeader = await browser.post(`${server.url}/api/coordinator/pause`, {});
    await assertRefused(noHeader, 403, 'auth.csrf');
    const wrongHeader = await browser.post(`${server.url}/api/coordinator/pause`, {}, { 'x-csrf-token': 'nope' });
    assert.equal(await errorCode(wrongHeader), 'auth.csrf');
    const ok = await browser.post(`${server.url}/api/coordinator/pause`, {}, { 'x-csrf-token': body.csrfToken });
    assert.equal(ok.status, 200);
  });

  it('refuses a coordinator action to a contributor (403) and to nobody (401)', async () => {
    const anonymous = await new Browser().post(`${server.url}/api/coordinator/pause`, {});
    await assertRefused(anonymous, 401, 'auth.required');

    const contributor = new Browser();
    const signedIn = (await (await contributor.post(`${server.url}/auth/demo`, { name: 'dora' })).json()) as SignedIn;
    const refused = await contributor.post(
      `${server.url}/api/coordinator/pause`,
      {},
      { 'x-csrf-token': signedIn.csrfToken },
    );
    await assertRefused(refused, 403, 'auth.not_coordinator');
  });

  it('expires sessions on the injected clock and logs out', async () => {
    const browser = new Browser();
    const signedIn = (await (await browser.post(`${server.url}/auth/demo`, { name: 'eve' })).json()) as SignedIn;
    assert.equal(Date.parse(signedIn.expiresAt), clock.now() + 12 * 60 * 60_000);
    assert.equal((await browser.request(`${server.url}/api/me`)).status, 200);

    const logoutWithoutCsrf = await browser.post(`${server.url}/auth/logout`, {});
    assert.equal(await errorCode(logoutWithoutCsrf), 'auth.csrf');
    const logout = await browser.post(`${server.url}/auth/logout`, {}, { 'x-csrf-token': signedIn.csrfToken });
    assert.equal(logout.status, 204);
    assert.equal((await browser.request(`${server.url}/api/me`)).status, 401);

    const later = new Browser();
    await later.post(`${server.url}/auth/demo`, { name: 'eve' });
    clock.advance(12 * 60 * 60_000 - 1);
    assert.equal((await later.request(`${server.url}/api/me`)).status, 200);
    clock.advance(1);
    assert.equal((await later.request(`${server.url}/api/me`)).status, 401);
  });

  it('demo sign-in makes demo:<name> and validates the name', async () => {
    const browser = new Browser();
    const response = await browser.post(`${server.url}/auth/demo`, { name: 'Demo-1' });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as SignedIn).principal.id, 'demo:demo-1');
    const bad = await browser.post(`${server.url}/auth/demo`, { name: '../etc' });
    await assertRefused(bad, 400, 'request.invalid');
  });

  it('demo sign-in refuses a request whose Host is not loopback (DNS rebinding)', async () => {
    const { port } = new URL(server.url);
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/auth/demo',
          method: 'POST',
          headers: { host: `evil.example:${port}`, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      request.on('error', reject);
      request.end(JSON.stringify({ name: 'x' }));
    });
    assert.equal(status, 403);
  });
});

describe('demo sign-in guards', () => {
  it('refuses to start unless a test network bound to loopback', () => {
    const refused = (options: { testNetwork: boolean; host: string }) =>
      assert.throws(
        () => assertDemoSignInAllowed(options),
        (e) => isCoordinatorError(e, 'config.invalid'),
      );
    refused({ testNetwork: false, host: '127.0.0.1' });
    refused({ testNetwork: true, host: '0.0.0.0' });
    refused({ testNetwork: true, host: '192.168.1.10' });
    for (const host of ['127.0.0.1', '::1', '[::1]', 'localhost']) assertDemoSignInAllowed({ testNetwork: true, host });

    const db = openDatabase(':memory:');
    const config = parseAuthConfig({ demo: { enabled: true } });
    assert.throws(
      () =>
        createAuthRouter({
          db,
          clock: new ManualClock(),
          config,
          ceremonyId: 'c',
          testNetwork: false,
          host: '127.0.0.1',
        }),
      (e) => isCoordinatorError(e, 'config.invalid'),
    );
    assert.throws(
      () =>
        createAuthRouter({ db, clock: new ManualClock(), config, ceremonyId: 'c', testNetwork: true, host: '0.0.0.0' }),
      (e) => isCoordinatorError(e, 'config.invalid'),
    );
    db.close();
  });

  it('recognises loopback socket addresses only', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) assert.equal(isLoopbackAddress(a), true, a);
    for (const a of ['10.0.0.1', '::ffff:10.0.0.1', '2001:db8::1', undefined, ''])
      assert.equal(isLoopbackAddress(a), false, String(a));
  });

  it('answers 403 auth.demo_disabled when demo sign-in is off, and coordinator sign-in when no token', async () => {
    const server = await startAuthTestServer({ config: {}, testNetwork: false });
    try {
      const demo = await new Browser().post(`${server.url}/auth/demo`, { name: 'dora' });
      await assertRefused(demo, 403, 'auth.demo_disabled');
      const coordinator = await new Browser().post(`${server.url}/auth/coordinator`, { token: 'anything-at-all-here' });
      await assertRefused(coordinator, 403, 'auth.not_coordinator');
      const github = await new Browser().request(`${server.url}/auth/github`);
      assert.equal(github.status, 404);
    } finally {
      await server.close();
    }
  });
});
