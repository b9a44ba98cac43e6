/**
 * Sessions in SQLite. The browser holds an opaque random token; only its sha256 is stored, so a
 * copy of the database does not hand out live sessions. Each session carries its own CSRF token
 * and a fixed expiry computed from the injected clock.
 */
import { createHash, randomBytes } from 'node:crypto';
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

export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class SessionStore {
  private readonly statements: SessionStatements;

  constructor(
    db: Db,
    private readonly clock: Clock,
    readonly ttlMs: number,
  ) {
    migrateAuthTables(db);
    this.statements = prepareStatements(db);
  }

  create(principal: Principal): IssuedSession {
    const now = this.clock.now();
    const token = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(32).toString('base64url');
    const expiresAt = now + this.ttlMs;
    this.statements.deleteExpired.run(now);
    this.statements.insert.run(hashSessionToken(token), principal.id, principal.kind, principal.displayName, principal.coordinator ? 1 : 0, csrfToken, now, expiresAt);
    return { token, principal: { ...principal }, csrfToken, expiresAt };
  }

  /** The live session for a cookie token, or null when unknown or expired. */
  find(token: string): Session | null {
    const row = this.statements.findLive.get(hashSessionToken(token), this.clock.now());
    if (!row) return null;
    return {
      principal: { id: row.principal_id, kind: row.principal_kind, displayName: row.display_name, coordinator: row.coordinator === 1 },
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
      `INSERT INTO auth_sessions (token_hash, principal_id, principal_kind, display_name, coordinator, csrf_token, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    findLive: db.prepare<[string, number], SessionRow>(
      `SELECT principal_id, principal_kind, display_name, coordinator, csrf_token, expires_at
       FROM auth_sessions WHERE token_hash = ? AND expires_at > ?`,
    ),
    revoke: db.prepare<[string]>('DELETE FROM auth_sessions WHERE token_hash = ?'),
  };
}
