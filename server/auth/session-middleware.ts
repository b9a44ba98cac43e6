/**
 * Turns the session cookie of each request into `req.principal` and `req.csrfToken`. An unknown
 * or expired cookie is simply no session (the request proceeds unauthenticated, and the stale
 * cookie is cleared); refusing is left to `requireContributor` / `requireCoordinator`.
 */
import type { RequestHandler } from 'express';
import type { Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import type { AuthConfig } from './auth-config.ts';
import { clearSessionCookie, readSessionCookie } from './session-cookie.ts';
import { SessionStore } from './session-store.ts';

export interface SessionMiddlewareDeps {
  db: Db;
  clock: Clock;
  config: AuthConfig;
  /** Share one store with the auth router; made from db/clock/config when absent. */
  sessions?: SessionStore;
}

export function createSessionMiddleware(deps: SessionMiddlewareDeps): RequestHandler {
  const sessions = deps.sessions ?? new SessionStore(deps.db, deps.clock, deps.config.sessionTtlMs, deps.config);
  return (req, res, next) => {
    const token = readSessionCookie(req);
    if (token === undefined) return next();
    const session = sessions.find(token);
    if (!session) {
      clearSessionCookie(res, { secure: deps.config.secureCookies });
      return next();
    }
    req.principal = session.principal;
    req.csrfToken = session.csrfToken;
    next();
  };
}
