// GitHub sign-in by the device flow (the terminal client's): the coordinator's routes over HTTP
// against the GitHub emulator's device endpoints, every answer GitHub can give, and the limits.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../../server/clock.ts';
import { createRateLimits } from '../../../server/http/rate-limits.ts';
import { MAX_DEVICE_SIGN_INS_PER_ADDRESS } from '../../../server/auth/github-device-flow.ts';
import {
  githubProfile,
  startGithubEmulator,
  type GithubEmulator,
  type GithubProfile,
} from '../../helpers/github-emulator.ts';
import { assertRefused, Browser, errorCode, startAuthTestServer, type AuthTestServer } from './auth-test-server.ts';

const clock = new ManualClock(Date.UTC(2026, 6, 1));

/** Dana's account, 30 days old by the clock. */
const profile = (overrides: Partial<GithubProfile> = {}) =>
  githubProfile(clock.now(), 30, { id: 5151, login: 'dana', ...overrides });

interface Started {
  handle: string;
  userCode: string;
  verificationUri: string;
  intervalSeconds: number;
  expiresInSeconds: number;
}

function githubConfig(github: GithubEmulator) {
  return {
    clientId: github.clientId,
    clientSecret: github.clientSecret,
    authorizationUrl: github.authorizationUrl,
    tokenUrl: github.tokenUrl,
    userProfileUrl: github.userProfileUrl,
    deviceCodeUrl: github.deviceCodeUrl,
    coordinatorGithubIds: [777],
  };
}

describe('GitHub device-flow sign-in', () => {
  let github: GithubEmulator;
  let server: AuthTestServer;

  before(async () => {
    // GitHub's interval is 0 here: the coordinator's own pacing is tested on the ManualClock.
    github = await startGithubEmulator({ deviceIntervalSeconds: 0 });
    server = await startAuthTestServer({ clock, config: { github: githubConfig(github) } });
  });

  after(async () => {
    await server.close();
    await github.close();
  });

  async function start(browser = new Browser()): Promise<Started> {
    const response = await browser.request(`${server.url}/auth/github/device`, { method: 'POST' });
    assert.equal(response.status, 200);
    return (await response.json()) as Started;
  }

  const poll = (browser: Browser, handle: string): Promise<Response> =>
    browser.post(`${server.url}/auth/github/device/poll`, { handle });

  it('answers a user code and where to enter it; the coordinator asked GitHub with its own client id', async () => {
    const before = github.deviceCodeRequests().length;
    const started = await start();
    assert.match(started.userCode, /^[0-9A-F]{4}-[0-9A-F]{4}$/);
    assert.equal(started.verificationUri, `${github.url}/login/device`);
    assert.equal(started.expiresInSeconds, 900);
    assert.match(started.handle, /^[A-Za-z0-9_-]{43}$/);
    const request = github.deviceCodeRequests()[before]!;
    assert.equal(request.client_id, github.clientId);
    assert.equal(request.client_secret, undefined, 'the device flow sends no client secret');
    // The handle is stored only as a hash.
    const rows = server.db.prepare('SELECT handle_hash, device_code FROM auth_github_devices').all() as Array<{
      handle_hash: string;
      device_code: string;
    }>;
    assert.ok(rows.length > 0 && rows.every((row) => row.handle_hash !== started.handle));
  });

  it(
    'pending until the person authorizes; then a session exactly as the ' +
      'web sign-in makes, and the handle is spent',
    async () => {
      github.setProfile(profile());
      const browser = new Browser();
      const started = await start(browser);
      const pending = await poll(browser, started.handle);
      await assertRefused(pending, 400, 'auth.device_pending');
      assert.equal(await github.actOnDevice(started.userCode, 'authorize'), 200);
      const signedIn = await poll(browser, started.handle);
      assert.equal(signedIn.status, 200);
      const body = (await signedIn.json()) as {
        principal: { id: string; kind: string; displayName: string; coordinator: boolean };
        csrfToken: string;
      };
      assert.deepEqual(body.principal, { id: 'github:5151', kind: 'github', displayName: 'dana', coordinator: false });
      assert.ok(browser.cookies.get('ceremony_session'), 'the session cookie is set');
      const session = (await (await browser.request(`${server.url}/auth/session`)).json()) as {
        principal: { id: string } | null;
        csrfToken?: string;
      };
      assert.equal(session.principal?.id, 'github:5151');
      assert.equal(session.csrfToken, body.csrfToken);
      assert.deepEqual(github.devicePolls(started.userCode), ['authorization_pending', 'access_token']);
      const again = await poll(new Browser(), started.handle);
      await assertRefused(again, 410, 'auth.device_expired');
    },
  );

  it('marks a configured GitHub id as coordinator, as the web sign-in does', async () => {
    github.setProfile(profile({ id: 777, login: 'carol' }));
    const browser = new Browser();
    const started = await start(browser);
    await github.actOnDevice(started.userCode, 'authorize');
    const body = (await (await poll(browser, started.handle)).json()) as { principal: { coordinator: boolean } };
    assert.equal(body.principal.coordinator, true);
  });

  it('a cancelled authorization is auth.device_denied, and ends the sign-in', async () => {
    github.setProfile(profile());
    const browser = new Browser();
    const started = await start(browser);
    await github.actOnDevice(started.userCode, 'cancel');
    const denied = await poll(browser, started.handle);
    await assertRefused(denied, 403, 'auth.device_denied');
    assert.equal(browser.cookies.get('ceremony_session'), undefined);
    assert.equal(await errorCode(await poll(browser, started.handle)), 'auth.device_expired', 'the handle is gone');
  });

  it('auth.device_expired: a code expired at GitHub, or by the coordinator’s clock without asking GitHub', async () => {
    const browser = new Browser();
    const atGithub = await start(browser);
    github.expireDevice(atGithub.userCode);
    const expired = await poll(browser, atGithub.handle);
    await assertRefused(expired, 410, 'auth.device_expired');

    const local = await start(browser);
    clock.advance(900_000);
    assert.equal(await errorCode(await poll(browser, local.handle)), 'auth.device_expired');
    assert.deepEqual(github.devicePolls(local.userCode), [], 'GitHub was not asked');
  });

  it('the minimums are the web sign-in’s, with the same reasons', async () => {
    github.setProfile(profile({ followers: 0, public_repos: 1 }));
    const browser = new Browser();
    const started = await start(browser);
    await github.actOnDevice(started.userCode, 'authorize');
    const refused = await poll(browser, started.handle);
    assert.equal(refused.status, 403);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'auth.below_minimum');
    assert.match(body.error.message, /followers 0 < 1, publicRepos 1 < 2/);
    assert.equal(browser.cookies.get('ceremony_session'), undefined);
  });

  it('refuses an unknown handle and a malformed body', async () => {
    const browser = new Browser();
    assert.equal(await errorCode(await poll(browser, 'A'.repeat(43))), 'auth.device_expired');
    const malformed = await browser.post(`${server.url}/auth/github/device/poll`, { handle: '../etc', extra: 1 });
    await assertRefused(malformed, 400, 'request.invalid');
  });
});

describe('GitHub device-flow pacing and limits', () => {
  let github: GithubEmulator;
  let server: AuthTestServer;

  before(async () => {
    github = await startGithubEmulator({ deviceIntervalSeconds: 1 });
    const rateLimits = createRateLimits({
      config: {
        windowMs: 60_000,
        signIn: 3,
        challenge: 20,
        devicePoll: 6,
        uploadCreation: 30,
        join: 10,
        queueLog: 120,
      },
    });
    server = await startAuthTestServer({ clock, config: { github: githubConfig(github) }, extraDeps: { rateLimits } });
  });

  after(async () => {
    await server.close();
    await github.close();
  });

  it(
    'a poll before the interval is slow_down from the coordinator, which ' +
      'does not ask GitHub; GitHub’s own slow_down lengthens the interval',
    async () => {
      const browser = new Browser();
      const started = (await (
        await browser.request(`${server.url}/auth/github/device`, { method: 'POST' })
      ).json()) as Started;
      assert.equal(started.intervalSeconds, 1);
      const early = await browser.post(`${server.url}/auth/github/device/poll`, { handle: started.handle });
      await assertRefused(early, 429, 'auth.device_slow_down');
      assert.deepEqual(github.devicePolls(started.userCode), [], 'GitHub was not asked');

      clock.advance(1000);
      assert.equal(
        await errorCode(await browser.post(`${server.url}/auth/github/device/poll`, { handle: started.handle })),
        'auth.device_pending',
      );
      // By the coordinator's clock the interval passed; by GitHub's (real time) it did not: GitHub says slow_down.
      clock.advance(1000);
      const slowed = await browser.post(`${server.url}/auth/github/device/poll`, { handle: started.handle });
      assert.equal(await errorCode(slowed), 'auth.device_slow_down');
      assert.deepEqual(github.devicePolls(started.userCode), ['authorization_pending', 'slow_down']);
      // The coordinator now paces at GitHub's new interval (6 s): 1 s later is too early, without asking GitHub.
      clock.advance(1000);
      assert.equal(
        await errorCode(await browser.post(`${server.url}/auth/github/device/poll`, { handle: started.handle })),
        'auth.device_slow_down',
      );
      assert.equal(github.devicePolls(started.userCode).length, 2);
    },
  );

  it('starts count as sign-in attempts: beyond the limit, rate.limited', async () => {
    // One start was made above; the limit is 3 per window.
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await new Browser().request(`${server.url}/auth/github/device`, { method: 'POST' })).status);
    assert.deepEqual(statuses, [200, 200, 429]);
  });

  it('polls are limited per address too: beyond the limit, rate.limited, whatever the handle', async () => {
    // Four polls were made above; the limit is 6 per window.
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await new Browser().post(`${server.url}/auth/github/device/poll`, { handle: 'A'.repeat(43) });
      codes.push((await errorCode(answer)) ?? `HTTP ${answer.status}`);
    }
    assert.deepEqual(codes, ['auth.device_expired', 'auth.device_expired', 'rate.limited']);
  });
});

describe('GitHub device-flow sign-ins in progress per address', () => {
  it(
    'one address holds at most a few at once (each polls GitHub); the next ' +
      'is rate.limited before GitHub is asked, until one ends',
    async () => {
      const ownClock = new ManualClock(Date.UTC(2026, 6, 1));
      const github = await startGithubEmulator({ deviceIntervalSeconds: 1 });
      const server = await startAuthTestServer({ clock: ownClock, config: { github: githubConfig(github) } });
      try {
        const startOne = (): Promise<Response> =>
          new Browser().request(`${server.url}/auth/github/device`, { method: 'POST' });
        const started: Started[] = [];
        for (let i = 0; i < MAX_DEVICE_SIGN_INS_PER_ADDRESS; i++) {
          const response = await startOne();
          assert.equal(response.status, 200);
          started.push((await response.json()) as Started);
        }
        const asked = github.deviceCodeRequests().length;
        const refused = await startOne();
        await assertRefused(refused, 429, 'auth.too_many_in_progress');
        assert.equal(github.deviceCodeRequests().length, asked, 'GitHub was not asked');
        // One ends (cancelled at GitHub): one place is free, and starts side by side take only it.
        github.setProfile(profile());
        assert.equal(await github.actOnDevice(started[0]!.userCode, 'cancel'), 200);
        ownClock.advance(1000);
        assert.equal(
          await errorCode(
            await new Browser().post(`${server.url}/auth/github/device/poll`, { handle: started[0]!.handle }),
          ),
          'auth.device_denied',
        );
        const burst = await Promise.all([startOne(), startOne(), startOne()]);
        assert.deepEqual(burst.map((response) => response.status).sort(), [200, 429, 429]);
        assert.equal((await startOne()).status, 429);
        // All expire: the address may start again.
        ownClock.advance(16 * 60_000);
        assert.equal((await startOne()).status, 200);
      } finally {
        await server.close();
        await github.close();
      }
    },
  );
});

describe('GitHub device-flow sign-in when GitHub refuses the coordinator', () => {
  it('a GitHub that does not start the device flow for this client is auth.github_failed', async () => {
    const github = await startGithubEmulator({ clientId: 'another-client' });
    const server = await startAuthTestServer({
      clock,
      config: { github: { ...githubConfig(github), clientId: 'not-registered' } },
    });
    try {
      const response = await new Browser().request(`${server.url}/auth/github/device`, { method: 'POST' });
      assert.equal(response.status, 502);
      const body = (await response.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'auth.github_failed');
      assert.match(body.error.message, /incorrect_client_credentials/);
    } finally {
      await server.close();
      await github.close();
    }
  });
});
