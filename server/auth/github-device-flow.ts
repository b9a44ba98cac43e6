/**
 * GitHub sign-in for a terminal (`ceremony contribute --github`): the OAuth 2.0 device flow
 * (RFC 8628, what `gh auth login` uses), with the coordinator as the OAuth client. The client
 * never sees a GitHub token, and the coordinator never trusts one it did not obtain itself:
 *
 *   POST /github/device       the coordinator asks GitHub for a device code (with its client id)
 *                             and answers the user code, the address to enter it at, the polling
 *                             interval, the expiry and an opaque handle (stored as its sha256);
 *   POST /github/device/poll  { handle }: the coordinator polls GitHub's token endpoint with the
 *                             device code; once the person has authorized, it reads the profile,
 *                             applies the same minimums as the web sign-in and starts a session
 *                             exactly as the web sign-in does (cookie + CSRF token in the answer).
 *
 * GitHub's answers map to codes: authorization_pending → auth.device_pending, slow_down →
 * auth.device_slow_down (the interval grows as GitHub says), expired_token (and an unknown or used
 * handle) → auth.device_expired, access_denied → auth.device_denied; anything else GitHub says, or
 * GitHub out of reach, → auth.github_failed. Bounded: starts are rate-limited like every sign-in
 * route (auth-router), at most MAX_DEVICE_SIGN_INS are outstanding (expired ones swept first), at
 * most MAX_DEVICE_SIGN_INS_PER_ADDRESS of them started from one client address, and a handle
 * polled before its interval is answered slow_down without asking GitHub, so a client cannot spend
 * the coordinator's GitHub quota (without the per-address cap, one address starting the most the
 * sign-in rate limit allows would hold some 300 handles, each worth a GitHub request every 5 s). A handle ends with its
 * session, its refusal or its expiry: it is never used twice.
 */
import { createHash, randomBytes } from 'node:crypto';
import express, { type Router } from 'express';
import { z } from 'zod';
import { CoordinatorError, isCoordinatorError } from '../../core/errors.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import { migrateAuthTables } from './auth-tables.ts';
import { hashClient } from './client-address.ts';
import { principalOfProfile, type GithubConfig } from './github-sign-in.ts';
import type { SessionStore } from './session-store.ts';
import { signedInBody, startSession } from './start-session.ts';

/** Device sign-ins in progress at most: a flood of starts cannot grow the table. */
const MAX_DEVICE_SIGN_INS = 10_000;
/** Device sign-ins in progress started from one client address (one person needs one; a few share a NAT). */
export const MAX_DEVICE_SIGN_INS_PER_ADDRESS = 5;
/** GitHub's device codes last 15 minutes; one that claims longer is held no longer than this. */
const LONGEST_DEVICE_CODE_MS = 30 * 60_000;
/** RFC 8628's default interval, when GitHub names none. */
const DEFAULT_INTERVAL_S = 5;
/** How much earlier than its interval a poll may arrive (timers and network jitter) before it is slow_down. */
const POLL_TOLERANCE_MS = 250;
/** Every call to GitHub is bounded. */
const GITHUB_TIMEOUT_MS = 10_000;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface GithubDeviceFlowDeps {
  db: Db;
  clock: Clock;
  github: GithubConfig;
  sessions: SessionStore;
  secureCookies: boolean;
}

/** The answer of `POST /auth/github/device`. */
export interface DeviceSignInStart {
  /** Opaque; send it back to /auth/github/device/poll. */
  handle: string;
  /** What the person types at `verificationUri`. */
  userCode: string;
  verificationUri: string;
  /** Poll no more often than this. */
  intervalSeconds: number;
  expiresInSeconds: number;
}

const deviceCodeAnswer = z.object({
  device_code: z.string().min(1).max(512),
  user_code: z.string().min(1).max(64),
  verification_uri: z.string().url(),
  expires_in: z.number().int().positive(),
  interval: z.number().int().nonnegative().optional(),
});

const tokenAnswer = z.union([
  z.object({ access_token: z.string().min(1) }),
  z.object({
    error: z.string(),
    error_description: z.string().optional(),
    interval: z.number().int().positive().optional(),
  }),
]);

const pollBody = z.object({ handle: z.string().regex(/^[A-Za-z0-9_-]{20,100}$/) }).strict();

interface DeviceRow {
  device_code: string;
  interval_ms: number;
  next_poll_at: number;
  expires_at: number;
}

function hashHandle(handle: string): string {
  return createHash('sha256').update(handle).digest('hex');
}

/** POSTs a form to GitHub and reads its JSON answer; any failure to do so is auth.github_failed. */
async function postToGithub(url: string, form: Record<string, string>): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
      signal: AbortSignal.timeout(GITHUB_TIMEOUT_MS),
    });
  } catch {
    throw new CoordinatorError('auth.github_failed', 'GitHub could not be reached; try again in a moment');
  }
  const body = await response.json().catch(() => undefined);
  if (body === undefined)
    throw new CoordinatorError('auth.github_failed', `GitHub answered ${response.status} without JSON`);
  return body;
}

async function readProfile(url: string, token: string): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/vnd.github+json',
        'user-agent': 'phase2-ceremony-coordinator',
      },
      signal: AbortSignal.timeout(GITHUB_TIMEOUT_MS),
    });
  } catch {
    throw new CoordinatorError(
      'auth.github_failed',
      'GitHub could not be reached for the profile; try again in a moment',
    );
  }
  if (!response.ok)
    throw new CoordinatorError('auth.github_failed', `GitHub refused to read the profile (${response.status})`);
  return response.json().catch(() => {
    throw new CoordinatorError('auth.github_failed', 'GitHub answered the profile without JSON');
  });
}

type DeviceStatements = ReturnType<typeof prepareDeviceStatements>;

/** The device sign-ins' statements, prepared once per router. */
function prepareDeviceStatements(db: Db) {
  return {
    sweep: db.prepare<[number]>('DELETE FROM auth_github_devices WHERE expires_at <= ?'),
    count: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM auth_github_devices'),
    countOfClient: db.prepare<[string], { n: number }>(
      'SELECT COUNT(*) AS n FROM auth_github_devices WHERE client_hash = ?',
    ),
    insert: db.prepare<[string, string, number, number, number, string]>(
      'INSERT INTO auth_github_devices (handle_hash, device_code, ' +
        'interval_ms, next_poll_at, expires_at, client_hash) ' +
        'VALUES (?, ?, ?, ?, ?, ?)',
    ),
    find: db.prepare<[string], DeviceRow>(
      'SELECT device_code, interval_ms, next_poll_at, expires_at FROM auth_github_devices WHERE handle_hash = ?',
    ),
    setPolled: db.prepare<[number, number, string]>(
      'UPDATE auth_github_devices SET interval_ms = ?, next_poll_at = ? WHERE handle_hash = ?',
    ),
    remove: db.prepare<[string]>('DELETE FROM auth_github_devices WHERE handle_hash = ?'),
  };
}

/**
 * GitHub's answer to a poll before the sign-in is authorized, as the refusal the client is sent: wait,
 * poll slower (RFC 8628), or start again; the handle is spent unless GitHub said to keep polling.
 */
function refuseUnfinished(
  error: string,
  interval: number | undefined,
  poll: { intervalSeconds: number; now: number; key: string; statements: DeviceStatements },
): never {
  const { intervalSeconds, now, key, statements } = poll;
  switch (error) {
    case 'authorization_pending':
      throw new CoordinatorError('auth.device_pending', 'Not authorized at GitHub yet', {
        retryAfterSeconds: intervalSeconds,
      });
    case 'slow_down': {
      // RFC 8628: the interval grows by 5 s; GitHub names the new one.
      const slower = Math.max(interval ?? 0, intervalSeconds + 5) * 1000;
      statements.setPolled.run(slower, now + slower - POLL_TOLERANCE_MS, key);
      throw new CoordinatorError('auth.device_slow_down', `Poll at most every ${slower / 1000} s`, {
        retryAfterSeconds: slower / 1000,
      });
    }
    case 'expired_token':
    case 'incorrect_device_code':
      statements.remove.run(key);
      throw new CoordinatorError(
        'auth.device_expired',
        'The GitHub sign-in code expired before it was authorized; start the sign-in again',
      );
    case 'access_denied':
      statements.remove.run(key);
      throw new CoordinatorError('auth.device_denied', 'The authorization was cancelled at GitHub');
    default:
      statements.remove.run(key);
      throw new CoordinatorError('auth.github_failed', `GitHub refused the device sign-in (${error.slice(0, 100)})`);
  }
}

/**
 * Refused once the address has its cap of sign-ins in progress. Asked before GitHub is, and again
 * just before the insert (the same tick): starts running side by side cannot together pass the cap.
 * (A COUNT query answers one row, whatever the table holds: the `!` here and on the router's count.)
 */
function refuseBusyClient(statements: DeviceStatements, client: string): void {
  if (statements.countOfClient.get(client)!.n < MAX_DEVICE_SIGN_INS_PER_ADDRESS) return;
  throw new CoordinatorError(
    'auth.too_many_in_progress',
    `At most ${MAX_DEVICE_SIGN_INS_PER_ADDRESS} GitHub sign-ins may be in progress from one address; ` +
      'finish one or let it expire',
    { retryAfterSeconds: 60 },
  );
}

/** A device code from GitHub, for the OAuth App: refused when GitHub does not start the device flow. */
async function requestDeviceCode(github: GithubDeviceFlowDeps['github']): Promise<z.infer<typeof deviceCodeAnswer>> {
  const answer = await postToGithub(github.deviceCodeUrl, { client_id: github.clientId, scope: '' });
  const parsed = deviceCodeAnswer.safeParse(answer);
  if (!parsed.success) {
    const error = (answer as { error?: unknown }).error;
    // e.g. device_flow_disabled: the OAuth App does not allow the device flow.
    throw new CoordinatorError(
      'auth.github_failed',
      `GitHub did not start the device sign-in${typeof error === 'string' ? ` (${error.slice(0, 100)})` : ''}`,
    );
  }
  return parsed.data;
}

export function createGithubDeviceFlowRouter(deps: GithubDeviceFlowDeps): Router {
  const { db, clock, github } = deps;
  migrateAuthTables(db);
  const coordinatorIds = new Set(github.coordinatorGithubIds);
  const statements = prepareDeviceStatements(db);

  const router = express.Router();

  router.post('/github/device', async (req, res) => {
    const now = clock.now();
    statements.sweep.run(now);
    const client = hashClient(req);
    refuseBusyClient(statements, client);
    if (statements.count.get()!.n >= MAX_DEVICE_SIGN_INS) {
      throw new CoordinatorError('rate.limited', 'Too many GitHub sign-ins are in progress; try again shortly', {
        retryAfterSeconds: 60,
      });
    }
    const code = await requestDeviceCode(github);
    const intervalMs = (code.interval ?? DEFAULT_INTERVAL_S) * 1000;
    const expiresAt = clock.now() + Math.min(code.expires_in * 1000, LONGEST_DEVICE_CODE_MS);
    const handle = randomBytes(32).toString('base64url');
    refuseBusyClient(statements, client);
    statements.insert.run(
      hashHandle(handle),
      code.device_code,
      intervalMs,
      clock.now() + intervalMs - POLL_TOLERANCE_MS,
      expiresAt,
      client,
    );
    const start: DeviceSignInStart = {
      handle,
      userCode: code.user_code,
      verificationUri: code.verification_uri,
      intervalSeconds: intervalMs / 1000,
      expiresInSeconds: Math.round((expiresAt - clock.now()) / 1000),
    };
    res.json(start);
  });

  router.post('/github/device/poll', async (req, res) => {
    const body = pollBody.safeParse(req.body ?? {});
    if (!body.success)
      throw new CoordinatorError('request.invalid', 'Expected { handle } as answered by POST /auth/github/device');
    const key = hashHandle(body.data.handle);
    const row = statements.find.get(key);
    const now = clock.now();
    if (!row || row.expires_at <= now) {
      if (row) statements.remove.run(key);
      throw new CoordinatorError(
        'auth.device_expired',
        'This GitHub sign-in code is unknown, expired or already used; start the sign-in again',
      );
    }
    const intervalSeconds = row.interval_ms / 1000;
    if (now < row.next_poll_at) {
      throw new CoordinatorError('auth.device_slow_down', `Poll at most every ${intervalSeconds} s`, {
        retryAfterSeconds: intervalSeconds,
      });
    }
    statements.setPolled.run(row.interval_ms, now + row.interval_ms - POLL_TOLERANCE_MS, key);

    const answer = tokenAnswer.safeParse(
      await postToGithub(github.tokenUrl, {
        client_id: github.clientId,
        device_code: row.device_code,
        grant_type: DEVICE_GRANT,
      }),
    );
    if (!answer.success)
      throw new CoordinatorError('auth.github_failed', 'GitHub answered the device sign-in with something unexpected');
    if ('error' in answer.data) {
      const { error, interval } = answer.data;
      refuseUnfinished(error, interval, { intervalSeconds, now, key, statements });
    }
    // Authorized: the handle is spent whatever the profile says.
    statements.remove.run(key);
    const profile = await readProfile(github.userProfileUrl, answer.data.access_token);
    let principal;
    try {
      principal = principalOfProfile(profile, github, coordinatorIds, clock.now());
    } catch (error) {
      if (isCoordinatorError(error)) throw error;
      throw new CoordinatorError('auth.github_failed', 'GitHub sign-in failed');
    }
    res.json(signedInBody(startSession(req, res, deps.sessions, principal, deps.secureCookies)));
  });

  return router;
}
