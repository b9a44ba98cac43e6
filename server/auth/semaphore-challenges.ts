/**
 * One-time sign-in challenges for Semaphore: a random field element the browser must use as the
 * proof's `message`, so a proof cannot be replayed. Stored with an expiry on the injected clock;
 * consumed by a single UPDATE, so two requests racing with one challenge cannot both pass.
 * Bounded: expired and used rows are swept before each issue (a used challenge stays refused
 * without its row: consume only matches a live one), at most MAX_CHALLENGES_PER_ADDRESS of them
 * issued to one client address (beyond, `auth.too_many_in_progress`: else a few addresses, each
 * taking the most the rate limit allows, would hold the whole table), and at most `maxLive` in all;
 * beyond, issue refuses with `rate.limited` until the oldest expires.
 */
import { randomBytes } from 'node:crypto';
import { CoordinatorError } from '../../core/errors.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import { migrateAuthTables } from './auth-tables.ts';

/** Live challenges issued to one client address (one person needs one; a few share a NAT). */
export const MAX_CHALLENGES_PER_ADDRESS = 10;

export interface IssuedChallenge {
  /** Decimal string of a 248-bit value: below the SNARK scalar field, usable as `message` as is. */
  challenge: string;
  expiresAt: number;
}

export class SemaphoreChallenges {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly maxLive: number,
  ) {
    migrateAuthTables(db);
  }

  /** `client`: the hashed client address (client-address.ts). */
  issue(client: string): IssuedChallenge {
    const now = this.clock.now();
    const challenge = BigInt(`0x${randomBytes(31).toString('hex')}`).toString();
    const expiresAt = now + this.ttlMs;
    this.db
      .transaction(() => {
        this.sweep();
        const ofClient = this.db
          .prepare(
            'SELECT COUNT(*) AS live, MIN(expires_at) AS oldest FROM auth_semaphore_challenges WHERE client_hash = ?',
          )
          .get(client) as { live: number; oldest: number | null };
        if (ofClient.live >= MAX_CHALLENGES_PER_ADDRESS) {
          throw new CoordinatorError(
            'auth.too_many_in_progress',
            `At most ${MAX_CHALLENGES_PER_ADDRESS} sign-in challenges may be outstanding for one address; ` +
              'use one or let it expire',
            { retryAfterSeconds: ((ofClient.oldest ?? now + 1000) - now) / 1000 },
          );
        }
        const live = this.db
          .prepare('SELECT COUNT(*) AS live, MIN(expires_at) AS oldest FROM auth_semaphore_challenges')
          .get() as { live: number; oldest: number | null };
        if (live.live >= this.maxLive) {
          throw new CoordinatorError('rate.limited', 'Too many sign-ins are in progress; try again shortly', {
            retryAfterSeconds: ((live.oldest ?? now + 1000) - now) / 1000,
          });
        }
        this.db
          .prepare('INSERT INTO auth_semaphore_challenges (challenge, expires_at, client_hash) VALUES (?, ?, ?)')
          .run(challenge, expiresAt, client);
      })
      .immediate();
    return { challenge, expiresAt };
  }

  /** Deletes expired and used challenges; returns how many. */
  private sweep(): number {
    return this.db
      .prepare('DELETE FROM auth_semaphore_challenges WHERE expires_at <= ? OR consumed_at IS NOT NULL')
      .run(this.clock.now()).changes;
  }

  /** True exactly once for an issued, unexpired challenge. */
  consume(challenge: string): boolean {
    const now = this.clock.now();
    const result = this.db
      .prepare(
        'UPDATE auth_semaphore_challenges SET consumed_at = ? WHERE challenge ' +
          '= ? AND consumed_at IS NULL AND expires_at > ?',
      )
      .run(now, challenge, now);
    return result.changes === 1;
  }
}
