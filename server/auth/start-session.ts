/**
 * The one way a sign-in method ends: drop any session the browser already had (no fixation),
 * issue a fresh one for the principal, set the cookie, and tell the client who it now is.
 */
import type { Request, Response } from 'express';
import type { Principal } from './principal.ts';
import { readSessionCookie, setSessionCookie } from './session-cookie.ts';
import type { IssuedSession, SessionStore } from './session-store.ts';

/** The JSON answer of every successful sign-in and of `GET /auth/session`. */
export interface SignedInBody {
  principal: Principal;
  csrfToken: string;
  /** ISO 8601. */
  expiresAt: string;
}

export function startSession(
  req: Request,
  res: Response,
  sessions: SessionStore,
  principal: Principal,
  secureCookies: boolean,
): IssuedSession {
  const previous = readSessionCookie(req);
  if (previous !== undefined) sessions.revoke(previous);
  const session = sessions.create(principal);
  // The cookie's lifetime matches the session's; the server-side expiry (injected clock) is what counts.
  setSessionCookie(res, session.token, sessions.ttlMs, { secure: secureCookies });
  return session;
}

export function signedInBody(session: { principal: Principal; csrfToken: string; expiresAt: number }): SignedInBody {
  return {
    principal: session.principal,
    csrfToken: session.csrfToken,
    expiresAt: new Date(session.expiresAt).toISOString(),
  };
}
