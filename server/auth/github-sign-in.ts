/**
 * GitHub sign-in through passport-github2 (`GET /github` → GitHub → `GET /github/callback`).
 * Passport runs with `session: false`: the callback creates our own session. The minimums are
 * checked at every sign-in; the contributor is keyed on GitHub's numeric id, never the login,
 * so a renamed account stays the same contributor and a re-registered login is someone else.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import passport from 'passport';
import GitHub from 'passport-github2';
import { CoordinatorError, isCoordinatorError, type ErrorCode } from '../../core/errors.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import type { AuthConfig } from './auth-config.ts';
import { checkGithubMinimums } from './github-minimums.ts';
import { SqliteOAuthStateStore, STATE_REFUSED } from './oauth-state-store.ts';
import type { Principal } from './principal.ts';
import type { SessionStore } from './session-store.ts';
import { startSession } from './start-session.ts';

export type GithubConfig = NonNullable<AuthConfig['github']>;

export interface GithubSignInDeps {
  db: Db;
  clock: Clock;
  github: GithubConfig;
  sessions: SessionStore;
  secureCookies: boolean;
  /** Where a sign-in that failed on the coordinator's side is reported (its answer says only that it failed). */
  log?: { warn(message: string, fields?: Record<string, unknown>): void };
}

export function createGithubSignInRouter(deps: GithubSignInDeps): Router {
  const { github, clock } = deps;
  const authenticator = new passport.Passport();
  const callbackPath = new URL(github.callbackUrl, 'http://placeholder').pathname;
  const stateStore = new SqliteOAuthStateStore(deps.db, clock, github.stateTtlMs, callbackPath, deps.secureCookies);
  const coordinatorIds = new Set(github.coordinatorGithubIds);

  authenticator.use(
    new GitHub.Strategy(
      {
        clientID: github.clientId,
        clientSecret: github.clientSecret,
        callbackURL: github.callbackUrl,
        authorizationURL: github.authorizationUrl,
        tokenURL: github.tokenUrl,
        userProfileURL: github.userProfileUrl,
        // No scope: the public profile is all we read.
        scope: [],
        // passport-oauth2 picks the store's call shape by arity: ours is store(req, meta, cb).
        store: stateStore as unknown as GitHub.StrategyOptions['store'],
      },
      (
        _accessToken: string,
        _refreshToken: string,
        profile: { _json?: unknown },
        done: (err: unknown, user?: Principal | false) => void,
      ) => {
        try {
          done(null, principalOfProfile(profile._json, github, coordinatorIds, clock.now()));
        } catch (error) {
          done(error);
        }
      },
    ),
  );

  const router = express.Router();

  router.get('/github', authenticator.authenticate('github', { session: false }));

  router.get('/github/callback', (req: Request, res: Response, next: NextFunction) => {
    if (req.query.code === undefined && req.query.error === undefined) {
      return next(new CoordinatorError('request.invalid', 'The GitHub callback needs `code` and `state`'));
    }
    // The callback is a top-level navigation: a person sees its answer as a page, so a refusal
    // sends the browser back to the app, which says in plain words what the code means.
    const refuse = (error: CoordinatorError): void => {
      if (req.accepts(['json', 'html']) !== 'html') return next(error);
      res.redirect(303, withSignInError(github.failureRedirect, error.code));
    };
    const finish = (err: unknown, user: Principal | false | undefined, info: unknown) => {
      if (err) return refuse(toCoordinatorError(err, deps.log));
      if (!user) {
        const refusal = info as { message?: string; reason?: string } | undefined;
        if (refusal?.reason === STATE_REFUSED)
          return refuse(new CoordinatorError('auth.csrf', refusal.message ?? 'Bad OAuth state'));
        return refuse(
          new CoordinatorError(
            'auth.required',
            `GitHub sign-in did not complete${refusal?.message ? `: ${refusal.message}` : ''}`,
          ),
        );
      }
      startSession(req, res, deps.sessions, user, deps.secureCookies);
      res.redirect(303, github.successRedirect);
    };
    authenticator.authenticate('github', { session: false }, finish)(req, res, next);
  });

  return router;
}

/**
 * The contributor of a GitHub profile (`/user` JSON), keyed on the numeric id; checks the
 * minimums (auth.below_minimum). Shared by the web sign-in and the device flow.
 */
export function principalOfProfile(
  json: unknown,
  github: GithubConfig,
  coordinatorIds: ReadonlySet<string>,
  nowMs: number,
): Principal {
  const profile = (json ?? {}) as Record<string, unknown>;
  const id = profile.id;
  const login = profile.login;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0 || typeof login !== 'string' || login === '') {
    throw new CoordinatorError('auth.github_failed', 'GitHub profile lacks a numeric id or a login');
  }
  checkGithubMinimums(profile, github.minimums, nowMs);
  return { id: `github:${id}`, kind: 'github', displayName: login, coordinator: coordinatorIds.has(String(id)) };
}

/** `target` (a path or an absolute URL, possibly with a query) with `signInError=<code>` added. */
export function withSignInError(target: string, code: ErrorCode): string {
  const absolute = /^[a-z][a-z0-9+.-]*:/i.test(target);
  const url = new URL(target, 'http://placeholder');
  url.searchParams.set('signInError', code);
  return absolute ? url.href : `${url.pathname}${url.search}${url.hash}`;
}

/**
 * passport-oauth2's errors (by name: it is not a dependency of ours): GitHub refused the
 * authorization or the code, or could not be asked. Their messages are passport's or GitHub's own.
 */
const OAUTH_ERRORS = new Set(['AuthorizationError', 'TokenError', 'InternalOAuthError']);

/**
 * The refusal of a failed callback. Anything but GitHub's answer (the state table's SQLite, say)
 * gets a fixed message: its own may name the coordinator's internals; it goes to the log instead.
 */
function toCoordinatorError(err: unknown, log: GithubSignInDeps['log']): CoordinatorError {
  if (isCoordinatorError(err)) return err;
  if (err instanceof Error && OAUTH_ERRORS.has(err.name))
    return new CoordinatorError('auth.github_failed', `GitHub sign-in failed: ${err.message}`);
  log?.warn('GitHub sign-in failed on the coordinator', { error: String((err as Error)?.stack ?? err) });
  return new CoordinatorError('auth.github_failed', 'GitHub sign-in failed on the coordinator; try again');
}
