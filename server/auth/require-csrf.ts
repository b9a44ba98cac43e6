/**
 * CSRF guard for cookie sessions: a request that can change state (anything but GET, HEAD,
 * OPTIONS) and rides on a session cookie must echo the session's CSRF token in `X-CSRF-Token`.
 * SameSite=Strict already stops cross-site sends in current browsers; this is the second lock.
 * Requests without a session pass through (they are refused by the principal guards if needed).
 */
import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { CoordinatorError } from '../../core/errors.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const CSRF_HEADER = 'x-csrf-token';

export const requireCsrf: RequestHandler = (req, _res, next) => {
  if (SAFE_METHODS.has(req.method) || req.csrfToken === undefined) return next();
  const sent = req.get(CSRF_HEADER);
  if (sent === undefined || !sameToken(sent, req.csrfToken)) {
    return next(
      new CoordinatorError('auth.csrf', 'Missing or wrong X-CSRF-Token header (get it from GET /auth/session)'),
    );
  }
  next();
};

function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
