/**
 * Demo sign-in for a test-network ceremony run on one machine: `POST /demo { name }` makes
 * contributor `demo:<name>` with no account at all. Allowed only when the ceremony is a test
 * network and the server listens on loopback (checked at start-up by `assertDemoSignInAllowed`),
 * and each request must come from loopback with a loopback Host (no DNS-rebinding pages), forwarded
 * by no proxy.
 */
import express, { type Request, type Router } from 'express';
import { z } from 'zod';
import { CoordinatorError } from '../../core/errors.ts';
import type { Principal } from './principal.ts';
import type { SessionStore } from './session-store.ts';
import { signedInBody, startSession } from './start-session.ts';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host.replace(/^\[(.*)\]$/, '$1').toLowerCase());
}

/** Socket addresses: 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** Headers a reverse proxy adds: a request carrying one came from further away than its socket. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'];

/**
 * A request from a loopback socket with a loopback Host header (so no DNS-rebinding page can make it)
 * that no proxy forwarded: a proxy on the same machine connects from loopback, and nginx's default
 * Host for its upstream is the upstream's address (`127.0.0.1:8080`), so without this every public
 * request through it would look local (as `/metrics` already refuses them).
 */
export function isLoopbackRequest(req: Request): boolean {
  const forwarded = FORWARDING_HEADERS.some((name) => req.headers[name] !== undefined);
  return !forwarded && isLoopbackAddress(req.socket.remoteAddress) && isLoopbackHost(hostnameOf(req.get('host')));
}

/** Start-up refusal: throws `config.invalid` unless a test network bound to loopback. */
export function assertDemoSignInAllowed(options: { testNetwork: boolean; host: string }): void {
  if (!options.testNetwork) {
    throw new CoordinatorError('config.invalid', 'Demo sign-in is only for a ceremony marked as a test network');
  }
  if (!isLoopbackHost(options.host)) {
    throw new CoordinatorError(
      'config.invalid',
      `Demo sign-in needs the server bound to loopback (127.0.0.1, ::1 or localhost), not "${options.host}"`,
    );
  }
}

const demoBodySchema = z.object({ name: z.string().regex(/^[a-z0-9-]{1,32}$/i) });

export interface DemoSignInDeps {
  /** False unless the config enables it (and `assertDemoSignInAllowed` passed). */
  enabled: boolean;
  sessions: SessionStore;
  secureCookies: boolean;
}

export function createDemoSignInRouter(deps: DemoSignInDeps): Router {
  const router = express.Router();
  router.post('/demo', (req, res) => {
    if (!deps.enabled) throw new CoordinatorError('auth.demo_disabled', 'Demo sign-in is off for this ceremony');
    if (!isLoopbackRequest(req)) {
      throw new CoordinatorError('auth.demo_disabled', 'Demo sign-in is only answered on loopback');
    }
    const parsed = demoBodySchema.safeParse(req.body);
    if (!parsed.success)
      throw new CoordinatorError('request.invalid', 'Expected { name } of 1 to 32 letters, digits or dashes');
    const name = parsed.data.name.toLowerCase();
    const principal: Principal = { id: `demo:${name}`, kind: 'demo', displayName: name, coordinator: false };
    res.json(signedInBody(startSession(req, res, deps.sessions, principal, deps.secureCookies)));
  });
  return router;
}

function hostnameOf(hostHeader: string | undefined): string {
  if (!hostHeader) return '';
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return '';
  }
}
