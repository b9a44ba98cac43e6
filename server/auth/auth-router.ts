/**
 * Everything under `/auth`: the session endpoints and every configured sign-in method (GitHub in
 * a browser or by the device flow from a terminal, Semaphore, coordinator token, loopback demo). Build it with
 * `createAuthRouter(deps)`, mount it at `/auth` after `createSessionMiddleware(deps)`; pass the same `deps` to both
 * (and, to share one store, the same `sessions`). Errors are thrown as CoordinatorError for the app's error
 * middleware to render.
 */
import express, { type Router } from 'express';
import { CoordinatorError } from '../../core/errors.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import { SEMAPHORE_DEFAULTS, type AuthConfig } from './auth-config.ts';
import { createCoordinatorSignInRouter } from './coordinator-sign-in.ts';
import { assertCoordinatorLinkAllowed, createCoordinatorLinkRouter } from './coordinator-link.ts';
import { assertDemoSignInAllowed, createDemoSignInRouter } from './demo-sign-in.ts';
import { createGithubSignInRouter } from './github-sign-in.ts';
import { createGithubDeviceFlowRouter } from './github-device-flow.ts';
import type { RateLimits } from '../http/rate-limits.ts';
import { jsonBody } from '../http/json-body.ts';
import { requireCsrf } from './require-csrf.ts';
import { SemaphoreGroup } from './semaphore-group.ts';
import { createSemaphoreSignInRouter, type SemaphoreProofCheck } from './semaphore-sign-in.ts';
import { clearSessionCookie, readSessionCookie } from './session-cookie.ts';
import { SessionStore } from './session-store.ts';
import { signedInBody } from './start-session.ts';

export interface AuthDeps {
  db: Db;
  clock: Clock;
  config: AuthConfig;
  /** This ceremony's id: the Semaphore scope. */
  ceremonyId: string;
  testNetwork: boolean;
  /** The address the server listens on (demo sign-in needs loopback). */
  host: string;
  /** Shared with `createSessionMiddleware`; made from db/clock/config when absent. */
  sessions?: SessionStore;
  /** To change the member list at run time (`updateGroupMembers`); made from config when absent. */
  semaphoreGroup?: SemaphoreGroup;
  /**
   * Rate limits of the sign-in routes and of challenge creation, and the public reads' limit (the Semaphore
   * group's member list); none when absent.
   */
  rateLimits?: Pick<RateLimits, 'signIn' | 'challenge' | 'devicePoll'> & Partial<Pick<RateLimits, 'ceremonyReads'>>;
  /** The Semaphore proof check; the library's `verifyProof` when absent (a test holds one open to fill the cap). */
  verifySemaphoreProof?: SemaphoreProofCheck;
  /** The test network's coordinator sign-in link token (`npm start`); absent = no link route. */
  coordinatorLinkToken?: string;
  /** Where failures of the coordinator's own during a sign-in are reported (never in the answer). */
  log?: { warn(message: string, fields?: Record<string, unknown>): void };
}

/** Which sign-in methods this server offers (`GET /auth/methods`). */
export interface AuthMethods {
  github: boolean;
  semaphore: boolean;
  coordinatorToken: boolean;
  demo: boolean;
}

export function createAuthRouter(deps: AuthDeps): Router {
  const { config, db, clock } = deps;
  if (config.demo.enabled) assertDemoSignInAllowed({ testNetwork: deps.testNetwork, host: deps.host });
  if (deps.coordinatorLinkToken !== undefined)
    assertCoordinatorLinkAllowed({ testNetwork: deps.testNetwork, host: deps.host });
  const sessions = deps.sessions ?? new SessionStore(db, clock, config.sessionTtlMs, config);
  const secureCookies = config.secureCookies;
  const methods: AuthMethods = {
    github: config.github !== undefined,
    semaphore: config.semaphore !== undefined || deps.semaphoreGroup !== undefined,
    coordinatorToken: config.coordinatorToken !== undefined,
    demo: config.demo.enabled,
  };

  const router = express.Router();
  if (deps.rateLimits) {
    // Before the body parser: a refused attempt costs no parsing.
    router.get(['/github', '/github/callback'], deps.rateLimits.signIn);
    router.post(['/semaphore', '/coordinator', '/demo', '/github/device'], deps.rateLimits.signIn);
    router.post('/semaphore/challenge', deps.rateLimits.challenge);
    router.post('/github/device/poll', deps.rateLimits.devicePoll);
  }
  // Only the routes that take a body parse one, after their rate limits: any other request under /auth
  // (anonymous, unlimited) costs no parsing whatever it sends.
  router.post(['/semaphore', '/coordinator', '/demo', '/github/device/poll'], jsonBody());

  router.get('/methods', (_req, res) => {
    res.json(methods);
  });

  router.get('/session', (req, res) => {
    if (!req.principal || req.csrfToken === undefined) {
      res.json({ principal: null });
      return;
    }
    const token = readSessionCookie(req);
    const session = token === undefined ? null : sessions.find(token);
    if (!session) {
      res.json({ principal: null });
      return;
    }
    res.json(signedInBody(session));
  });

  router.post('/logout', requireCsrf, (req, res) => {
    const token = readSessionCookie(req);
    if (token !== undefined) sessions.revoke(token);
    clearSessionCookie(res, { secure: secureCookies });
    res.status(204).end();
  });

  if (config.github) {
    router.use(createGithubSignInRouter({ db, clock, github: config.github, sessions, secureCookies, log: deps.log }));
    router.use(createGithubDeviceFlowRouter({ db, clock, github: config.github, sessions, secureCookies }));
  }

  const semaphore = config.semaphore;
  const group =
    deps.semaphoreGroup ?? (semaphore ? new SemaphoreGroup(db, clock, semaphore.groupMembers, semaphore) : undefined);
  if (group) {
    router.use(
      createSemaphoreSignInRouter({
        db,
        clock,
        ceremonyId: deps.ceremonyId,
        group,
        challengeTtlMs: semaphore?.challengeTtlMs ?? SEMAPHORE_DEFAULTS.challengeTtlMs,
        maxChallenges: semaphore?.maxChallenges ?? SEMAPHORE_DEFAULTS.maxChallenges,
        maxProofChecks: semaphore?.maxProofChecks ?? SEMAPHORE_DEFAULTS.maxProofChecks,
        verifyProof: deps.verifySemaphoreProof,
        sessions,
        secureCookies,
        groupReadLimit: deps.rateLimits?.ceremonyReads,
      }),
    );
  }

  router.use(createCoordinatorSignInRouter({ coordinatorToken: config.coordinatorToken, sessions, secureCookies }));
  router.use(createDemoSignInRouter({ enabled: config.demo.enabled, sessions, secureCookies }));
  if (deps.coordinatorLinkToken !== undefined)
    router.use(createCoordinatorLinkRouter({ token: deps.coordinatorLinkToken, sessions, secureCookies }));

  const notConfigured = [...(methods.github ? [] : ['/github']), ...(methods.semaphore ? [] : ['/semaphore'])];
  if (notConfigured.length > 0) {
    router.use(notConfigured, (_req, _res, next) => {
      next(new CoordinatorError('not_found', 'This sign-in method is not configured on this server'));
    });
  }

  return router;
}
