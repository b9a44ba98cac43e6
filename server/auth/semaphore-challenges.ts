/**
 * One-time sign-in challenges for Semaphore: a random field element the browser must use as the
 * proof's `message`, so a proof cannot be replayed. Stored with an expiry on the injected clock;
 * consumed by a single UPDATE, so two requests racing with one challenge cannot both pass.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import { migrateAuthTables } from './auth-tables.ts';

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
  ) {
    migrateAuthTables(db);
  }

  issue(): IssuedChallenge {
    const now = this.clock.now();
    const challenge = BigInt(`0x${randomBytes(31).toString('hex')}`).toString();
    const expiresAt = now + this.ttlMs;
    this.db.prepare('DELETE FROM auth_semaphore_challenges WHERE expires_at <= ?').run(now);
    this.db.prepare('INSERT INTO auth_semaphore_challenges (challenge, expires_at) VALUES (?, ?)').run(challenge, expiresAt);
    return { challenge, expiresAt };
  }

  /** True exactly once for an issued, unexpired challenge. */
  consume(challenge: string): boolean {
    const now = this.clock.now();
    const result = this.db
      .prepare('UPDATE auth_semaphore_challenges SET consumed_at = ? WHERE challenge = ? AND consumed_at IS NULL AND expires_at > ?')
      .run(now, challenge, now);
    return result.changes === 1;
  }
}
