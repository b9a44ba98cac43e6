/**
 * `GET /metrics` (Prometheus text format). Answered without sign-in to a request from loopback
 * that no proxy forwarded (a TLS proxy on the same machine would otherwise make every public
 * request look local), and from anywhere to a scraper presenting `Authorization: Bearer
 * <METRICS_TOKEN>` when that setting is on. Everything else: 403 `metrics.forbidden`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Router, type Request } from 'express';
import { CoordinatorError } from '../../core/errors.ts';
import { isLoopbackAddress } from '../auth/demo-sign-in.ts';
import type { CoordinatorMetrics } from './coordinator-metrics.ts';

export interface MetricsRouterDeps {
  metrics: CoordinatorMetrics;
  /** METRICS_TOKEN: lets a scraper in from anywhere with a bearer token. */
  token?: string;
}

const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'];

// Hashed first so the comparison takes the same time whatever the length of the guess.
const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

function authorize(req: Request, token: string | undefined): void {
  const authorization = req.get('authorization');
  if (authorization !== undefined) {
    const presented = /^Bearer (\S+)$/i.exec(authorization.trim())?.[1];
    if (token !== undefined && presented !== undefined && timingSafeEqual(digest(presented), digest(token))) return;
    throw new CoordinatorError(
      'metrics.forbidden',
      token === undefined
        ? 'this coordinator takes no metrics token (METRICS_TOKEN is not set)'
        : 'wrong metrics token',
    );
  }
  const forwarded = FORWARDING_HEADERS.some((name) => req.headers[name] !== undefined);
  if (isLoopbackAddress(req.socket.remoteAddress) && !forwarded) return;
  throw new CoordinatorError(
    'metrics.forbidden',
    token === undefined
      ? 'metrics are answered on loopback only (the coordinator can be given METRICS_TOKEN to let a scraper in)'
      : 'metrics need a bearer token from outside loopback',
  );
}

export function createMetricsRouter(deps: MetricsRouterDeps): Router {
  const router = Router();
  router.get('/metrics', async (req, res) => {
    authorize(req, deps.token);
    const body = await deps.metrics.registry.metrics();
    res.set('Content-Type', deps.metrics.registry.contentType).set('Cache-Control', 'no-store').send(body);
  });
  return router;
}
