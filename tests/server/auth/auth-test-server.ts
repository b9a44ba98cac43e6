/**
 * Test harness: a small Express app made of the auth router and session middleware (plus a
 * couple of guarded probe routes), listening on loopback, and a fetch client with a cookie jar.
 */
import assert from 'node:assert/strict';
import express, { type ErrorRequestHandler } from 'express';
import type { AddressInfo } from 'node:net';
import { isCoordinatorError } from '../../../core/errors.ts';
import { ManualClock } from '../../../server/clock.ts';
import { errorHandler } from '../../../server/http/error-handler.ts';
import { openDatabase, type Db } from '../../../server/store/database.ts';
import { parseAuthConfig, type AuthConfigInput } from '../../../server/auth/auth-config.ts';
import { createAuthRouter, type AuthDeps } from '../../../server/auth/auth-router.ts';
import { requireCoordinator, requireContributor } from '../../../server/auth/require-principal.ts';
import { requireCsrf } from '../../../server/auth/require-csrf.ts';
import { createSessionMiddleware } from '../../../server/auth/session-middleware.ts';
import { SessionStore } from '../../../server/auth/session-store.ts';

export interface AuthTestServer {
  url: string;
  db: Db;
  clock: ManualClock;
  close(): Promise<void>;
}

export interface AuthTestServerOptions {
  config: AuthConfigInput;
  ceremonyId?: string;
  testNetwork?: boolean;
  clock?: ManualClock;
  extraDeps?: Partial<AuthDeps>;
  /** Trusted proxies, as TRUST_PROXY names them (a client on loopback then names its address in X-Forwarded-For). */
  trustProxy?: string[];
}

export async function startAuthTestServer(options: AuthTestServerOptions): Promise<AuthTestServer> {
  const db = openDatabase(':memory:');
  const clock = options.clock ?? new ManualClock();
  const config = parseAuthConfig(options.config);
  const sessions = new SessionStore(db, clock, config.sessionTtlMs);
  const deps: AuthDeps = {
    db,
    clock,
    config,
    ceremonyId: options.ceremonyId ?? 'test-ceremony',
    testNetwork: options.testNetwork ?? true,
    host: '127.0.0.1',
    sessions,
    ...options.extraDeps,
  };

  const app = express();
  if (options.trustProxy?.length) app.set('trust proxy', options.trustProxy);
  app.use(createSessionMiddleware(deps));
  app.use('/auth', createAuthRouter(deps));
  app.get('/api/me', requireContributor, (req, res) => {
    res.json({ principal: req.principal });
  });
  app.post('/api/coordinator/pause', requireCoordinator, requireCsrf, (_req, res) => {
    res.json({ paused: true });
  });
  // The coordinator's own answer to its refusals (status, body, Retry-After); anything else shown whole, for the test.
  const coordinatorAnswer = errorHandler({ warn: () => {} });
  const onError: ErrorRequestHandler = (err, req, res, next) => {
    if (isCoordinatorError(err)) {
      coordinatorAnswer(err, req, res, next);
      return;
    }
    res.status(500).json({ error: { code: 'internal', message: String(err) } });
  };
  app.use(onError);

  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    db,
    clock,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => {
          db.close();
          if (err) reject(err);
          else resolve();
        });
      }),
  };
}

/** fetch with a cookie jar; never follows redirects (tests follow them explicitly). */
export class Browser {
  readonly cookies = new Map<string, string>();

  async request(url: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    // Like a browser on one loopback host: cookies are not scoped by port (paths are ignored here).
    const jar = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (jar) headers.set('cookie', jar);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(init.json);
    }
    const response = await fetch(url, { ...init, headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  post(url: string, json: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return this.request(url, { method: 'POST', json, headers });
  }
}

export async function errorCode(response: Response): Promise<string | undefined> {
  const body = (await response.json()) as { error?: { code?: string } };
  return body.error?.code;
}

/** Asserts the coordinator refused: HTTP `status`, with the error `code` in the body. */
export async function assertRefused(response: Response, status: number, code: string): Promise<void> {
  assert.equal(response.status, status);
  assert.equal(await errorCode(response), code);
}
