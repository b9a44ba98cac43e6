// GitHub sign-in: the real passport-github2 strategy against a local emulator of GitHub.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../../server/clock.ts';
import { withSignInError } from '../../../server/auth/github-sign-in.ts';
import { MAX_OAUTH_STATES_PER_ADDRESS } from '../../../server/auth/oauth-state-store.ts';
import {
  githubProfile,
  startGithubEmulator,
  type GithubEmulator,
  type GithubProfile,
} from '../../helpers/github-emulator.ts';
import { assertRefused, Browser, startAuthTestServer, type AuthTestServer } from './auth-test-server.ts';

const DAY = 24 * 60 * 60 * 1000;
const clock = new ManualClock(Date.UTC(2026, 6, 1));

/** Alice's account, 30 days old by the clock: just old enough. */
const profile = (overrides: Partial<GithubProfile> = {}) =>
  githubProfile(clock.now(), 30, { id: 4242, login: 'alice', ...overrides });

/** Runs the whole redirect dance in `browser`; returns the response of our callback. */
async function signInWithGithub(browser: Browser, server: AuthTestServer): Promise<Response> {
  const start = await browser.request(`${server.url}/auth/github`);
  assert.equal(start.status, 302);
  const authorize = await browser.request(start.headers.get('location')!);
  assert.equal(authorize.status, 302);
  return browser.request(authorize.headers.get('location')!);
}

async function sessionOf(browser: Browser, server: AuthTestServer) {
  return (await (await browser.request(`${server.url}/auth/session`)).json()) as {
    principal: { id: string; kind: string; displayName: string; coordinator: boolean } | null;
    csrfToken?: string;
  };
}

// One emulator and one server serve every describe below.
let github: GithubEmulator;
let server: AuthTestServer;
/** What the server logged (its warnings' fields, as JSON). */
const logged: string[] = [];

before(async () => {
  github = await startGithubEmulator();
  server = await startAuthTestServer({
    clock,
    config: {
      github: {
        clientId: github.clientId,
        clientSecret: github.clientSecret,
        authorizationUrl: github.authorizationUrl,
        tokenUrl: github.tokenUrl,
        userProfileUrl: github.userProfileUrl,
        coordinatorGithubIds: [777],
        successRedirect: '/contribute',
      },
    },
    extraDeps: { log: { warn: (message, fields) => logged.push(`${message} ${JSON.stringify(fields)}`) } },
  });
});

after(async () => {
  await server.close();
  await github.close();
});

describe('GitHub sign-in: who is signed in', () => {
  it('signs in a qualifying account as github:<numeric id> and redirects', async () => {
    github.setProfile(profile());
    const browser = new Browser();
    const callback = await signInWithGithub(browser, server);
    assert.equal(callback.status, 303);
    assert.equal(callback.headers.get('location'), '/contribute');
    const setCookie = callback.headers.getSetCookie().find((c) => c.startsWith('ceremony_session='));
    assert.match(setCookie!, /HttpOnly/);
    assert.match(setCookie!, /SameSite=Strict/);
    const session = await sessionOf(browser, server);
    assert.deepEqual(session.principal, {
      id: 'github:4242',
      kind: 'github',
      displayName: 'alice',
      coordinator: false,
    });
    assert.equal(typeof session.csrfToken, 'string');
    // The token in the cookie is not what is stored.
    const stored = server.db.prepare('SELECT token_hash FROM auth_sessions').all() as Array<{ token_hash: string }>;
    assert.ok(stored.every((row) => !setCookie!.includes(row.token_hash)));
  });

  it('keeps the contributor id across a login rename', async () => {
    github.setProfile(profile({ login: 'alice-renamed' }));
    const browser = new Browser();
    assert.equal((await signInWithGithub(browser, server)).status, 303);
    const session = await sessionOf(browser, server);
    assert.equal(session.principal?.id, 'github:4242');
    assert.equal(session.principal?.displayName, 'alice-renamed');
  });

  it('marks configured GitHub ids as coordinators', async () => {
    github.setProfile(profile({ id: 777, login: 'carol' }));
    const browser = new Browser();
    await signInWithGithub(browser, server);
    assert.equal((await sessionOf(browser, server)).principal?.coordinator, true);
  });
});

describe('GitHub sign-in: the account minimums', () => {
  const shortfalls: Array<[string, Partial<GithubProfile>, RegExp]> = [
    ['followers', { followers: 0 }, /followers 0 < 1/],
    ['following', { following: 4 }, /following 4 < 5/],
    ['public repositories', { public_repos: 1 }, /publicRepos 1 < 2/],
    ['account age', { created_at: new Date(clock.now() - 29 * DAY).toISOString() }, /accountAgeDays 29 < 30/],
  ];
  for (const [name, overrides, message] of shortfalls) {
    it(`refuses an account below the ${name} minimum, naming it`, async () => {
      github.setProfile(profile(overrides));
      const browser = new Browser();
      const callback = await signInWithGithub(browser, server);
      assert.equal(callback.status, 403);
      const body = (await callback.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'auth.below_minimum');
      assert.match(body.error.message, message);
      assert.equal((await sessionOf(browser, server)).principal, null);
    });
  }

  it('checks minimums at every sign-in (an account that fell below is refused)', async () => {
    github.setProfile(profile({ followers: 0, following: 0 }));
    const callback = await signInWithGithub(new Browser(), server);
    const body = (await callback.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'auth.below_minimum');
    assert.match(body.error.message, /followers 0 < 1, following 0 < 5/);
  });
});

describe('GitHub sign-in: where a refused browser is sent', () => {
  it('sends a browser (Accept: text/html) back to the app with the refusal code instead of a JSON page', async () => {
    github.setProfile(profile({ followers: 0 }));
    const browser = new Browser();
    const start = await browser.request(`${server.url}/auth/github`);
    const authorize = await browser.request(start.headers.get('location')!);
    const callback = await browser.request(authorize.headers.get('location')!, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    assert.equal(callback.status, 303);
    assert.equal(callback.headers.get('location'), '/?signInError=auth.below_minimum');
    assert.equal((await sessionOf(browser, server)).principal, null);
  });

  it('adds the code to a failure redirect that has a query or is an absolute URL', () => {
    assert.equal(withSignInError('/contribute?from=mail', 'auth.csrf'), '/contribute?from=mail&signInError=auth.csrf');
    assert.equal(
      withSignInError('https://ceremony.example/#top', 'auth.csrf'),
      'https://ceremony.example/?signInError=auth.csrf#top',
    );
  });
});

describe('GitHub sign-in: the OAuth state and callback', () => {
  it('answers a failure of the coordinator’s own (its database) without its words, which go to the log', async () => {
    github.setProfile(profile());
    const browser = new Browser();
    const start = await browser.request(`${server.url}/auth/github`);
    const authorize = await browser.request(start.headers.get('location')!);
    server.db.exec('ALTER TABLE auth_oauth_states RENAME TO auth_oauth_states_away');
    try {
      const callback = await browser.request(authorize.headers.get('location')!);
      assert.equal(callback.status, 502);
      const { error } = (await callback.json()) as { error: { code: string; message: string } };
      assert.equal(error.code, 'auth.github_failed');
      assert.doesNotMatch(error.message, /auth_oauth_states|table/);
      assert.ok(logged.some((line) => line.includes('no such table: auth_oauth_states')));
    } finally {
      server.db.exec('ALTER TABLE auth_oauth_states_away RENAME TO auth_oauth_states');
    }
  });

  it('refuses a forged state', async () => {
    github.setProfile(profile());
    const browser = new Browser();
    const start = await browser.request(`${server.url}/auth/github`);
    const authorizeUrl = new URL(start.headers.get('location')!);
    authorizeUrl.searchParams.set('state', 'forged-state-value');
    const authorize = await browser.request(authorizeUrl.toString());
    const callback = await browser.request(authorize.headers.get('location')!);
    await assertRefused(callback, 403, 'auth.csrf');
    assert.equal((await sessionOf(browser, server)).principal, null);
  });

  it('refuses a real state carried to another browser (login CSRF), and a replayed one', async () => {
    github.setProfile(profile());
    const attacker = new Browser();
    const start = await attacker.request(`${server.url}/auth/github`);
    const authorize = await attacker.request(start.headers.get('location')!);
    const callbackUrl = authorize.headers.get('location')!;

    const victim = new Browser();
    const planted = await victim.request(callbackUrl);
    await assertRefused(planted, 403, 'auth.csrf');

    // The attacker's own browser can complete once; the state is then spent.
    const state = new URL(callbackUrl).searchParams.get('state')!;
    const first = await attacker.request(callbackUrl);
    assert.equal(first.status, 303);
    const again = new Browser();
    again.cookies.set('ceremony_oauth_state', state);
    const replay = await again.request(callbackUrl);
    await assertRefused(replay, 403, 'auth.csrf');
  });

  it('refuses an expired state', async () => {
    github.setProfile(profile());
    const browser = new Browser();
    const start = await browser.request(`${server.url}/auth/github`);
    const authorize = await browser.request(start.headers.get('location')!);
    clock.advance(10 * 60_000 + 1);
    const callback = await browser.request(authorize.headers.get('location')!);
    await assertRefused(callback, 403, 'auth.csrf');
  });

  it('answers a callback without code as a bad request, not a new sign-in', async () => {
    const response = await new Browser().request(`${server.url}/auth/github/callback`);
    await assertRefused(response, 400, 'request.invalid');
  });
});

describe('GitHub sign-in: states in progress per address', () => {
  it('one address holds at most a few (auth.too_many_in_progress); another still starts a sign-in', async () => {
    const ownClock = new ManualClock(Date.UTC(2026, 6, 1));
    const ownGithub = await startGithubEmulator();
    const ownServer = await startAuthTestServer({
      clock: ownClock,
      trustProxy: ['loopback'],
      config: {
        github: {
          clientId: ownGithub.clientId,
          clientSecret: ownGithub.clientSecret,
          authorizationUrl: ownGithub.authorizationUrl,
          tokenUrl: ownGithub.tokenUrl,
          userProfileUrl: ownGithub.userProfileUrl,
        },
      },
    });
    try {
      const start = (address: string): Promise<Response> =>
        new Browser().request(`${ownServer.url}/auth/github`, { headers: { 'x-forwarded-for': address } });
      for (let i = 0; i < MAX_OAUTH_STATES_PER_ADDRESS; i++) assert.equal((await start('203.0.113.5')).status, 302);
      await assertRefused(await start('203.0.113.5'), 429, 'auth.too_many_in_progress');
      // An IPv6 address counts by its /56, as the rate limits key it: one network, one share.
      for (let i = 0; i < MAX_OAUTH_STATES_PER_ADDRESS; i++)
        assert.equal((await start(`2001:db8:0:1${i.toString(16)}::${i + 1}`)).status, 302);
      await assertRefused(await start('2001:db8:0:ff::1'), 429, 'auth.too_many_in_progress');
      assert.equal((await start('198.51.100.7')).status, 302, 'another address is not held back');
      assert.equal((await start('2001:db8:0:100::1')).status, 302, 'nor another /56');
    } finally {
      await ownServer.close();
      await ownGithub.close();
    }
  });
});
