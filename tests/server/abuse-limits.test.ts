/**
 * Abuse limits and browser hardening of the real coordinator over HTTP: rate limits on sign-in,
 * challenge creation and upload creation (429 rate.limited with Retry-After), counts shared
 * through a real Redis by two coordinators, bounded challenge and session rows (capped, expired
 * rows swept), the 64 kB /auth body limit, the security headers, the Secure cookie under an
 * https PUBLIC_URL, and tus CORS for the app's own origin only.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyCeremony, newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { ContributorClient, HttpError } from '../helpers/contributor-client.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { ManualClock } from '../../server/clock.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import { RATE_LIMIT_DEFAULTS } from '../../server/http/rate-limits.ts';
import { MAX_CHALLENGES_PER_ADDRESS } from '../../server/auth/semaphore-challenges.ts';
import { STEP_RECEIPTS_PER_ANSWER } from '../../server/routes/contributor-router.ts';
import { ApiError } from '../../client/api-client.ts';

const TOKEN = 'coordinator-token-for-abuse-limits';
const PUBLIC_URL = 'https://ceremony.example';
let dataDir: string;
const running: TestCoordinator[] = [];
const copies: string[] = [];

async function start(env: Record<string, string>, clock = new ManualClock(Date.now())): Promise<TestCoordinator> {
  // A copy of the initialised folder each: one coordinator serves a folder (core/data-folder/serving-lock.ts).
  const folder = await copyCeremony(dataDir);
  copies.push(folder);
  const coordinator = await startTestCoordinator({
    dataDir: folder,
    open: false,
    env: { COORDINATOR_TOKEN: TOKEN, ...env },
    clock,
    tickIntervalMs: 60_000,
  });
  running.push(coordinator);
  return coordinator;
}

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function codeOf(response: Response): Promise<string | undefined> {
  return ((await response.json()) as { error?: { code?: string } }).error?.code;
}

before(async () => {
  dataDir = await newCeremonyDir({ init: true });
});

after(async () => {
  for (const coordinator of running) await coordinator.close();
  await cleanUp(dataDir, ...copies);
});

test('limits are validated at start-up with the setting named', async () => {
  for (const [name, value] of [
    ['RATE_LIMIT_SIGN_IN', 'lots'],
    ['RATE_LIMIT_WINDOW_MS', '0'],
    ['MAX_MISSED_TURNS', '0'],
    ['TRUST_PROXY', '-1'],
  ] as const) {
    assert.throws(
      () => loadServerConfig({ [name]: value }),
      (e: unknown) => isCoordinatorError(e, 'config.invalid') && e.message.includes(name),
      `${name}=${value}`,
    );
  }
  await assert.rejects(
    start({ SEMAPHORE_GROUP_MEMBERS: '12345', SEMAPHORE_ROOT_DURATION_MS: 'an hour' }),
    (e: unknown) => isCoordinatorError(e, 'config.invalid') && e.message.includes('SEMAPHORE_ROOT_DURATION_MS'),
  );
});

describe('rate limits', () => {
  test(
    'sign-in attempts beyond the limit get 429 rate.limited with ' +
      'Retry-After; a right token does not get through either',
    async () => {
      const { url } = await start({ RATE_LIMIT_SIGN_IN: '3', RATE_LIMIT_WINDOW_MS: '600000' });
      for (let i = 0; i < 3; i++) {
        const response = await post(`${url}/auth/coordinator`, { token: `wrong-token-number-${i}` });
        assert.equal(response.status, 403);
        assert.equal(await codeOf(response), 'auth.not_coordinator');
      }
      const limited = await post(`${url}/auth/coordinator`, { token: TOKEN });
      assert.equal(limited.status, 429);
      const retryAfter = Number(limited.headers.get('retry-after'));
      assert.ok(retryAfter > 0 && retryAfter <= 600, `Retry-After: ${limited.headers.get('retry-after')}`);
      assert.match(limited.headers.get('ratelimit-policy') ?? '', /q=3/);
      assert.equal(await codeOf(limited), 'rate.limited');
      // Other sign-in routes share the budget; routes that are not sign-ins do not.
      assert.equal((await post(`${url}/auth/demo`, { name: 'someone' })).status, 429);
      assert.equal((await fetch(`${url}/auth/session`)).status, 200);
    },
  );

  test('upload creation is limited per contributor, in front of the upload code', async () => {
    const { url } = await start({ RATE_LIMIT_UPLOAD_CREATION: '2', OPEN_ON_START: 'false' });
    const client = new ContributorClient(url);
    await client.signInDemo('uploader');
    const create = () => client.createUpload('register', { length: 1024 });
    for (let i = 0; i < 2; i++)
      assert.equal((await create()).status, 409, 'not this contributor’s turn: refused by the upload code');
    const limited = await create();
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.equal(await codeOf(limited), 'rate.limited');
  });

  test(
    'joins are limited per contributor (429 lobby.too_many_joins after the burst); an honest join, leave, ' +
      'join is not; leaving always works',
    async () => {
      const coordinator = await start({ OPEN_ON_START: 'true' });
      const holder = new ContributorClient(coordinator.url);
      await holder.signInDemo('holder');
      await holder.request('POST', '/api/me/join'); // holds the turn: the others only wait
      const honest = new ContributorClient(coordinator.url);
      await honest.signInDemo('honest');
      await honest.request('POST', '/api/me/join');
      await honest.request('POST', '/api/me/leave');
      await honest.request('POST', '/api/me/join', { circuits: ['register'] });

      const total = async () =>
        ((await (await fetch(`${coordinator.url}/api/queue-log?limit=1`)).json()) as { total: number }).total;
      const before = await total();
      const looper = new ContributorClient(coordinator.url);
      await looper.signInDemo('looper');
      let refused: ApiError | undefined;
      let joins = 0;
      for (; joins < 100 && !refused; joins++) {
        await looper.request('POST', '/api/me/join', { circuits: ['register'] }).catch((error: unknown) => {
          if (!(error instanceof ApiError)) throw error;
          refused = error;
        });
        await looper.request('POST', '/api/me/leave');
      }
      assert.ok(refused, 'the loop was refused');
      assert.equal(refused.status, 429);
      assert.equal(refused.code, 'lobby.too_many_joins');
      assert.ok((refused.retryAfterSeconds ?? 0) > 0, 'with Retry-After');
      assert.equal(joins - 1, RATE_LIMIT_DEFAULTS.join, 'refused right after the burst');
      assert.ok((await total()) - before <= 2 * RATE_LIMIT_DEFAULTS.join, 'the log grew by the burst only');
      // Another contributor is not held back by the looper's count.
      const other = new ContributorClient(coordinator.url);
      await other.signInDemo('other');
      await other.request('POST', '/api/me/join');
      await other.request('POST', '/api/me/leave');
    },
  );

  test('GET /api/me/receipts answers the newest step receipts, and pages to the older ones', async () => {
    const coordinator = await start({ OPEN_ON_START: 'true', RATE_LIMIT_JOIN: '1000' });
    const holder = new ContributorClient(coordinator.url);
    await holder.signInDemo('holder');
    await holder.request('POST', '/api/me/join');
    const many = new ContributorClient(coordinator.url);
    const { principal } = await many.signInDemo('many');
    const [first, second] = coordinator.config.circuits.map((c) => c.name);
    // Each change of choice is a join receipt (and a leave).
    for (let i = 0; i < STEP_RECEIPTS_PER_ANSWER + 5; i++) {
      coordinator.lobby.join(principal.id, [i % 2 ? second! : first!], 'many');
      // Lets the server close idle connections meanwhile, rather than under the next request.
      if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    type Answer = { receipts: unknown[]; steps: Array<{ seq: number }>; olderSteps?: number };
    const newest = await many.request<Answer>('GET', '/api/me/receipts');
    assert.equal(newest.steps.length, STEP_RECEIPTS_PER_ANSWER);
    assert.equal(newest.olderSteps, 5);
    const all = coordinator.lobby.queueLog.stepReceiptsFor(principal.id);
    assert.deepEqual(
      newest.steps.map((step) => step.seq),
      all.slice(5).map((step) => step.seq),
      'the newest, oldest first',
    );
    const older = await many.request<Answer>('GET', `/api/me/receipts?stepsBefore=${newest.steps[0]!.seq}`);
    assert.deepEqual(
      older.steps.map((step) => step.seq),
      all.slice(0, 5).map((step) => step.seq),
    );
    assert.equal(older.olderSteps, undefined, 'nothing older');
    await assert.rejects(many.request('GET', '/api/me/receipts?stepsBefore=soon'), (error: unknown) => {
      return error instanceof ApiError && error.code === 'request.invalid';
    });
  });

  test('two coordinators on one Redis share the counts', async () => {
    const redis: RedisServer = await startRedisServer();
    try {
      const env = { REDIS_URL: redis.url, RATE_LIMIT_SIGN_IN: '3' };
      const [a, b] = [await start(env), await start(env)];
      assert.equal((await post(`${a.url}/auth/coordinator`, { token: 'wrong-token-wrong-token' })).status, 403);
      assert.equal((await post(`${b.url}/auth/coordinator`, { token: 'wrong-token-wrong-token' })).status, 403);
      assert.equal((await post(`${a.url}/auth/coordinator`, { token: 'wrong-token-wrong-token' })).status, 403);
      const limited = await post(`${b.url}/auth/coordinator`, { token: TOKEN });
      assert.equal(limited.status, 429, 'b counted a’s attempts');
      assert.equal(await codeOf(limited), 'rate.limited');
      await a.close();
      await b.close();
    } finally {
      await redis.stop();
    }
  });
});

describe('bounded rows', () => {
  test('Semaphore challenges: capped, used and expired ones swept', async () => {
    const clock = new ManualClock(Date.now());
    const coordinator = await start(
      { SEMAPHORE_GROUP_MEMBERS: '12345', SEMAPHORE_MAX_CHALLENGES: '4', RATE_LIMIT_CHALLENGE: '100' },
      clock,
    );
    const rows = () =>
      (coordinator.db.prepare('SELECT COUNT(*) AS n FROM auth_semaphore_challenges').get() as { n: number }).n;
    for (let i = 0; i < 4; i++)
      assert.equal((await post(`${coordinator.url}/auth/semaphore/challenge`, {})).status, 200);
    const full = await post(`${coordinator.url}/auth/semaphore/challenge`, {});
    assert.equal(full.status, 429);
    assert.equal(await codeOf(full), 'rate.limited');
    assert.equal(Number(full.headers.get('retry-after')), 5 * 60, 'until the oldest challenge expires');
    assert.equal(rows(), 4);
    clock.advance(5 * 60_000);
    assert.equal((await post(`${coordinator.url}/auth/semaphore/challenge`, {})).status, 200);
    assert.equal(rows(), 1, 'expired challenges were swept');
  });

  test('Semaphore challenges: a share per address (auth.too_many_in_progress), another address gets one', async () => {
    const coordinator = await start({
      SEMAPHORE_GROUP_MEMBERS: '12345',
      RATE_LIMIT_CHALLENGE: '100',
      TRUST_PROXY: 'loopback',
    });
    const challenge = (address: string) =>
      post(`${coordinator.url}/auth/semaphore/challenge`, {}, { 'x-forwarded-for': address });
    for (let i = 0; i < MAX_CHALLENGES_PER_ADDRESS; i++) assert.equal((await challenge('203.0.113.5')).status, 200);
    const refused = await challenge('203.0.113.5');
    assert.equal(refused.status, 429);
    assert.equal(await codeOf(refused), 'auth.too_many_in_progress');
    assert.equal(Number(refused.headers.get('retry-after')), 5 * 60, 'until its oldest challenge expires');
    assert.equal((await challenge('198.51.100.7')).status, 200, 'another address is not held back');
  });

  test('sessions: a few per principal, a cap in all that spares coordinators, expired ones swept', async () => {
    const clock = new ManualClock(Date.now());
    const coordinator = await start(
      { SESSIONS_PER_PRINCIPAL: '2', MAX_SESSIONS: '4', RATE_LIMIT_SIGN_IN: '100' },
      clock,
    );
    const rows = () => (coordinator.db.prepare('SELECT COUNT(*) AS n FROM auth_sessions').get() as { n: number }).n;
    const clients: ContributorClient[] = [];
    for (let i = 0; i < 5; i++) {
      const client = new ContributorClient(coordinator.url);
      await client.signInDemo('repeat');
      clients.push(client);
    }
    assert.equal(rows(), 2, 'signing in again and again keeps two sessions');
    assert.equal((await clients[4]!.me()).principal.id, 'demo:repeat', 'the newest session lives');
    await assert.rejects(clients[0]!.me(), (e: unknown) => e instanceof HttpError && e.code === 'auth.required');
    await new ContributorClient(coordinator.url).signInDemo('second');
    await new ContributorClient(coordinator.url).signInDemo('third');
    assert.equal(rows(), 4);
    await assert.rejects(
      new ContributorClient(coordinator.url).signInDemo('fourth'),
      (e: unknown) => e instanceof HttpError && e.status === 429 && e.code === 'rate.limited',
    );
    await new ContributorClient(coordinator.url).signInCoordinator(TOKEN);
    clock.advance(12 * 60 * 60_000);
    await new ContributorClient(coordinator.url).signInDemo('fourth');
    assert.equal(rows(), 1, 'expired sessions were swept');
  });
});

describe('request bodies and browser hardening', () => {
  test('a 100 kB /auth body is refused by the 64 kB limit', async () => {
    const { url } = await start({});
    const response = await post(`${url}/auth/demo`, { name: 'big', padding: 'x'.repeat(100 * 1024) });
    assert.equal(response.status, 413);
    assert.equal(await codeOf(response), 'request.too_large');
    assert.equal((await post(`${url}/auth/demo`, { name: 'small' })).status, 200);
  });

  test('security headers, a Secure cookie under an https PUBLIC_URL, tus CORS only for the app’s origin', async () => {
    const { url } = await start({ PUBLIC_URL, OPEN_ON_START: 'true' });
    const health = await fetch(`${url}/healthz`);
    const csp = health.headers.get('content-security-policy') ?? '';
    for (const directive of [
      "default-src 'self'",
      "script-src 'self' 'wasm-unsafe-eval'",
      "worker-src 'self' blob:",
      "frame-ancestors 'none'",
      "object-src 'none'",
    ]) {
      assert.ok(csp.includes(directive), `${directive} in ${csp}`);
    }
    assert.equal(health.headers.get('x-frame-options'), 'DENY');
    assert.equal(health.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(health.headers.get('referrer-policy'), 'no-referrer');
    assert.match(health.headers.get('strict-transport-security') ?? '', /max-age=\d+/);

    const signIn = await post(`${url}/auth/demo`, { name: 'cors' });
    assert.match(signIn.headers.get('set-cookie') ?? '', /;\s*Secure/i);
    const client = new ContributorClient(url);
    await client.signInDemo('cors');
    // tus writes its CORS headers on every answer; OPTIONS gets them without touching the upload rules.
    const create = (origin: string) =>
      fetch(`${url}/api/circuits/register/contributions`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          cookie: client.cookie,
          'x-csrf-token': client.csrfToken,
        },
      });
    const foreign = await create('https://evil.example');
    assert.equal(foreign.headers.get('access-control-allow-origin'), null, 'no CORS for another origin');
    const own = await create(PUBLIC_URL);
    assert.equal(own.headers.get('access-control-allow-origin'), PUBLIC_URL);
  });
});
