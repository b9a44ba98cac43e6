/**
 * Sessions in SQLite. The browser holds an opaque random token; only its sha256 is stored, so a
 * copy of the database does not hand out live sessions. Each session carries its own CSRF token
 * and a fixed expiry computed from the injected clock.
 *
 * Bounded: expired rows are swept before every insert, one principal holds at most
 * `sessionsPerPrincipal` sessions (a new sign-in ends the oldest: a demo or Semaphore user signing
 * in over and over does not pile up rows), and the table holds at most `maxSessions` live rows
 * (beyond, non-coordinator sign-ins are refused with `rate.limited`).
 */
import { createHash, randomBytes } from 'node:crypto';
import { CoordinatorError } from '../../core/errors.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import { migrateAuthTables } from './auth-tables.ts';
import type { Principal, PrincipalKind } from './principal.ts';

export interface Session {
  principal: Principal;
  csrfToken: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

export interface IssuedSession extends Session {
  /** The secret that goes into the cookie; never stored. */
  token: string;
}

interface SessionRow {
  principal_id: string;
  principal_kind: PrincipalKind;
  display_name: string;
  coordinator: number;
  csrf_token: string;
  expires_at: number;
}

function hashSessionToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface SessionLimits {
  /** Sessions one principal may hold; the oldest beyond this end. */
  sessionsPerPrincipal: number;
  /** Live sessions in all. */
  maxSessions: number;
}

const SESSION_LIMIT_DEFAULTS: SessionLimits = Object.freeze({ sessionsPerPrincipal: 5, maxSessions: 100_000 });

export class SessionStore {
  private readonly statements: SessionStatements;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    readonly ttlMs: number,
    private readonly limits: SessionLimits = SESSION_LIMIT_DEFAULTS,
  ) {
    migrateAuthTables(db);
    this.statements = prepareStatements(db);
  }

  create(principal: Principal): IssuedSession {
    const now = this.clock.now();
    const token = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(32).toString('base64url');
    const expiresAt = now + this.ttlMs;
    this.db
      .transaction(() => {
        this.statements.deleteExpired.run(now);
        // A COUNT query answers one row, whatever the table holds.
        if (!principal.coordinator && this.statements.count.get()!.live >= this.limits.maxSessions) {
          throw new CoordinatorError(
            'rate.limited',
            'The coordinator holds as many sessions as it allows; try again later',
            { retryAfterSeconds: 60 },
          );
        }
        this.statements.insert.run(
          hashSessionToken(token),
          principal.id,
          principal.kind,
          principal.displayName,
          principal.coordinator ? 1 : 0,
          csrfToken,
          now,
          expiresAt,
        );
        this.statements.trimPrincipal.run(principal.id, principal.id, this.limits.sessionsPerPrincipal);
      })
      .immediate();
    return { token, principal: { ...principal }, csrfToken, expiresAt };
  }

  /** The live session for a cookie token, or null when unknown or expired. */
  find(token: string): Session | null {
    const row = this.statements.findLive.get(hashSessionToken(token), this.clock.now());
    if (!row) return null;
    return {
      principal: {
        id: row.principal_id,
        kind: row.principal_kind,
        displayName: row.display_name,
        coordinator: row.coordinator === 1,
      },
      csrfToken: row.csrf_token,
      expiresAt: row.expires_at,
    };
  }

  revoke(token: string): void {
    this.statements.revoke.run(hashSessionToken(token));
  }
}

type SessionStatements = ReturnType<typeof prepareStatements>;

/** Every query of the store, prepared once (find runs on every request with a session cookie). */
function prepareStatements(db: Db) {
  return {
    deleteExpired: db.prepare<[number]>('DELETE FROM auth_sessions WHERE expires_at <= ?'),
    insert: db.prepare<[string, string, PrincipalKind, string, number, string, number, number]>(
      `INSERT INTO auth_sessions (token_hash, principal_id, principal_kind, display_name, coordinator,
         csrf_token, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    findLive: db.prepare<[string, number], SessionRow>(
      `SELECT principal_id, principal_kind, display_name, coordinator, csrf_token, expires_at
       FROM auth_sessions WHERE token_hash = ? AND expires_at > ?`,
    ),
    revoke: db.prepare<[string]>('DELETE FROM auth_sessions WHERE token_hash = ?'),
    count: db.prepare<[], { live: number }>('SELECT COUNT(*) AS live FROM auth_sessions'),
    // Keeps the principal's newest sessions (rowid breaks ties of one clock tick).
    trimPrincipal: db.prepare<[string, string, number]>(
      `DELETE FROM auth_sessions WHERE principal_id = ? AND rowid NOT IN (
         SELECT rowid FROM auth_sessions WHERE principal_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?)`,
    ),
  };
}
