/**
 * The session cookie: its name and attributes, and reading it back from a request (no cookie
 * parser dependency; only this one cookie matters). HttpOnly so scripts never see the token,
 * SameSite=Strict so no other site can send it, `Secure` when the deployment says so.
 */
import type { Request, Response } from 'express';

export const SESSION_COOKIE = 'ceremony_session';

export interface SessionCookieOptions {
  secure: boolean;
}

export function setSessionCookie(res: Response, token: string, maxAgeMs: number, options: SessionCookieOptions): void {
  res.cookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'strict',
    secure: options.secure,
    path: '/',
    maxAge: maxAgeMs,
  });
}

export function clearSessionCookie(res: Response, options: SessionCookieOptions): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', secure: options.secure, path: '/' });
}

/** The value of one cookie from the request's Cookie header, or undefined. */
export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export function readSessionCookie(req: Request): string | undefined {
  return readCookie(req, SESSION_COOKIE);
}
