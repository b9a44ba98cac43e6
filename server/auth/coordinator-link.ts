/**
 * The test network's coordinator sign-in link, like a notebook server's token URL: `npm start`
 * makes a fresh random token each start and prints `GET /auth/coordinator-link?token=…`; opening
 * it signs the browser in as coordinator and lands on /console/. The token lives only in this
 * process's memory, so a restart ends every old link. Allowed only on a test network bound to
 * loopback (checked at start-up), and answered only to loopback requests with a loopback Host, as
 * the demo sign-in is; production keeps COORDINATOR_TOKEN and GitHub ids.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Router } from 'express';
import { CoordinatorError } from '../../core/errors.ts';
import { isLoopbackHost, isLoopbackRequest } from './demo-sign-in.ts';
import type { Principal } from './principal.ts';
import type { SessionStore } from './session-store.ts';
import { startSession } from './start-session.ts';

export const COORDINATOR_LINK_PATH = '/auth/coordinator-link';

/** Start-up refusal: throws `config.invalid` unless a test network bound to loopback. */
export function assertCoordinatorLinkAllowed(options: { testNetwork: boolean; host: string }): void {
  if (!options.testNetwork)
    throw new CoordinatorError(
      'config.invalid',
      'The coordinator sign-in link is only for a ceremony marked as a test network',
    );
  if (!isLoopbackHost(options.host)) {
    throw new CoordinatorError(
      'config.invalid',
      `The coordinator sign-in link needs the server bound to loopback, not "${options.host}"`,
    );
  }
}

export interface CoordinatorLinkDeps {
  /** At least 32 random bytes, encoded; made by the start script, never stored. */
  token: string;
  sessions: SessionStore;
  secureCookies: boolean;
}

export function createCoordinatorLinkRouter(deps: CoordinatorLinkDeps): Router {
  if (deps.token.length < 32) throw new RangeError('the coordinator link token must have at least 32 characters');
  const expected = sha256(deps.token);
  const router = express.Router();
  router.get('/coordinator-link', (req, res) => {
    if (!isLoopbackRequest(req)) {
      throw new CoordinatorError('auth.not_coordinator', 'The coordinator sign-in link is only answered on loopback');
    }
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    // Digests of equal length whatever was sent: the comparison time says nothing about the token.
    if (token.length === 0 || token.length > 1024 || !timingSafeEqual(sha256(token), expected)) {
      throw new CoordinatorError(
        'auth.not_coordinator',
        'This coordinator sign-in link is not valid (links end when the server restarts; use the one it printed last)',
      );
    }
    const principal: Principal = {
      id: 'coordinator:link',
      kind: 'coordinator-token',
      displayName: 'coordinator',
      coordinator: true,
    };
    startSession(req, res, deps.sessions, principal, deps.secureCookies);
    // The token must not stay in the address bar or the history entry of the console.
    res.set('Cache-Control', 'no-store').set('Referrer-Policy', 'no-referrer').redirect(303, '/console/');
  });
  return router;
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
