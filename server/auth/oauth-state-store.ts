/**
 * The OAuth `state` of GitHub sign-in, kept without express-session: a random value stored in
 * SQLite (one-time, expiring on the injected clock) AND set as a short-lived cookie in the browser
 * that started the sign-in. The callback must bring back both, so a `code`+`state` pair minted by
 * someone else's browser (login CSRF) or replayed is refused. Implements passport-oauth2's
 * state-store interface (`store(req, meta, cb)` / `verify(req, state, cb)`; arity matters).
 */
import { randomBytes } from 'node:crypto';
import type { Request } from 'express';
import { CoordinatorError } from '../../core/errors.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import { migrateAuthTables } from './auth-tables.ts';
import { hashClient } from './client-address.ts';
import { readCookie } from './session-cookie.ts';

const OAUTH_STATE_COOKIE = 'ceremony_oauth_state';
/** Marks a refusal by this store in the `info` passport hands to the callback. */
export const STATE_REFUSED = 'oauth_state_refused';

export interface StateRefusal {
  message: string;
  reason: typeof STATE_REFUSED;
}

/** Outstanding states at most (expired ones are swept first): a flood of sign-in starts cannot grow the table. */
const MAX_OAUTH_STATES = 10_000;
/**
 * Outstanding states started from one client address (one person needs one; a few share a NAT). Without it, one
 * address starting the most the sign-in rate limit allows would hold some 200, and some 50 addresses the whole table.
 */
export const MAX_OAUTH_STATES_PER_ADDRESS = 10;

export class SqliteOAuthStateStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly cookiePath: string,
    private readonly secureCookies: boolean,
  ) {
    migrateAuthTables(db);
  }

  store(req: Request, _meta: unknown, callback: (err: Error | null, state?: string) => void): void {
    try {
      const now = this.clock.now();
      const state = randomBytes(24).toString('base64url');
      const client = hashClient(req);
      this.db.prepare('DELETE FROM auth_oauth_states WHERE expires_at <= ?').run(now);
      const busy = this.refusal(client, now);
      if (busy) return callback(busy);
      this.db
        .prepare('INSERT INTO auth_oauth_states (state, expires_at, client_hash) VALUES (?, ?, ?)')
        .run(state, now + this.ttlMs, client);
      // Lax, not Strict: the cookie must come back on GitHub's top-level redirect to the callback.
      req.res?.cookie(OAUTH_STATE_COOKIE, state, {
        httpOnly: true,
        sameSite: 'lax',
        secure: this.secureCookies,
        path: this.cookiePath,
        maxAge: this.ttlMs,
      });
      callback(null, state);
    } catch (error) {
      callback(error as Error);
    }
  }

  /** Why a new state may not be stored now: its address holds its share, or the table is full. */
  private refusal(client: string, now: number): CoordinatorError | undefined {
    const ofClient = this.db
      .prepare('SELECT COUNT(*) AS n, MIN(expires_at) AS oldest FROM auth_oauth_states WHERE client_hash = ?')
      .get(client) as { n: number; oldest: number | null };
    if (ofClient.n >= MAX_OAUTH_STATES_PER_ADDRESS) {
      return new CoordinatorError(
        'auth.too_many_in_progress',
        `At most ${MAX_OAUTH_STATES_PER_ADDRESS} GitHub sign-ins may be in progress from one address; ` +
          'finish one or let it expire',
        { retryAfterSeconds: secondsUntil(ofClient.oldest, now) },
      );
    }
    if ((this.db.prepare('SELECT COUNT(*) AS n FROM auth_oauth_states').get() as { n: number }).n >= MAX_OAUTH_STATES)
      return new CoordinatorError('rate.limited', 'Too many GitHub sign-ins are in progress; try again shortly', {
        retryAfterSeconds: 60,
      });
    return undefined;
  }

  verify(req: Request, state: unknown, callback: (err: Error | null, ok: boolean, info?: StateRefusal) => void): void {
    try {
      req.res?.clearCookie(OAUTH_STATE_COOKIE, {
        httpOnly: true,
        sameSite: 'lax',
        secure: this.secureCookies,
        path: this.cookiePath,
      });
      const bound = readCookie(req, OAUTH_STATE_COOKIE);
      if (typeof state !== 'string' || state === '' || bound !== state) {
        return callback(null, false, refusal('The sign-in state does not belong to this browser'));
      }
      const consumed = this.db
        .prepare('DELETE FROM auth_oauth_states WHERE state = ? AND expires_at > ?')
        .run(state, this.clock.now());
      if (consumed.changes !== 1)
        return callback(null, false, refusal('The sign-in state is unknown, expired or already used'));
      callback(null, true);
    } catch (error) {
      callback(error as Error, false);
    }
  }
}

/** Whole seconds until `at` (at least 1): a Retry-After. */
function secondsUntil(at: number | null, now: number): number {
  return Math.max(1, Math.ceil(((at ?? now) - now) / 1000));
}

function refusal(message: string): StateRefusal {
  return { message: `${message}; start the GitHub sign-in again`, reason: STATE_REFUSED };
}
