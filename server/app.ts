/**
 * createApp builds the coordinator's Express app from its dependencies without listening, so
 * tests drive it in-process and the entry file (main.ts) wires config → db → queue → listen.
 */
import express, { type RequestHandler, type Router } from 'express';
import type { CeremonyConfig } from '../core/config/ceremony-config.ts';
import type { Clock } from './clock.ts';
import type { Lobby } from './lobby/lobby.ts';
import type { ContributionStore } from './contributions/contribution-store.ts';
import type { CeremonyPhaseStore } from './ceremony-phase.ts';
import type { CeremonyService, ServiceLog } from './ceremony-service.ts';
import { createPublicRouter } from './routes/public-router.ts';
import { createContributorRouter } from './routes/contributor-router.ts';
import {
  DEFAULT_MAX_PRESENCE_STREAMS,
  keepAliveMs,
  PRESENCE_STREAMS_PER_CONTRIBUTOR,
  PresenceStreams,
} from './routes/presence-stream.ts';
import { createCoordinatorRouter } from './routes/coordinator-router.ts';
import { createQueueLogRouter } from './routes/queue-log-router.ts';
import type { ContributionUploads } from './files/contribution-uploads.ts';
import { errorHandler, notFoundHandler } from './http/error-handler.ts';
import type { RateLimits } from './http/rate-limits.ts';
import { securityHeaders } from './http/security-headers.ts';
import type { CoordinatorMetrics } from './metrics/coordinator-metrics.ts';
import { createMetricsRouter } from './metrics/metrics-router.ts';
import { httpByteCounter } from './metrics/http-byte-counter.ts';

export interface AuthWiring {
  /** Routes under /auth (sign-in, session, logout). */
  router: Router;
  /** Sets req.principal from the session cookie. */
  sessionMiddleware: RequestHandler;
  requireContributor: RequestHandler;
  requireCoordinator: RequestHandler;
  requireCsrf: RequestHandler;
}

export interface AppDeps {
  config: CeremonyConfig;
  clock: Clock;
  lobby: Lobby;
  contributions: ContributionStore;
  phase: CeremonyPhaseStore;
  service: CeremonyService;
  constraints: ReadonlyMap<string, number>;
  receiptPublicKeyPem: string;
  auth: AuthWiring;
  /** The tus upload endpoints, with their limits and expiry sweep (start-coordinator closes it). */
  uploads: ContributionUploads;
  log: ServiceLog;
  /** Folder of the built browser app, served at / when present. */
  webDir?: string;
  /** Public base URL: https turns on HSTS (tus answers CORS for its origin only: ContributionUploads). */
  publicUrl?: string;
  /** The rate limits (server/http/rate-limits.ts); none when absent. */
  rateLimits?: RateLimits;
  /** Trusted reverse-proxy hops (client address from X-Forwarded-For). Default 0. */
  trustProxy?: number;
  /** GET /api/me/presence's limits and keep-alive pace (presence-stream.ts); default: 500 streams, 15 s. */
  presence?: { maxStreams: number; keepAliveMs: number };
  /** Where the coordinator reads the announced beacon's block (BEACON_RPC_URL); none: the coordinator gives it. */
  beacon?: { rpcUrl: string | undefined; confirmations: number };
  /** GET /metrics, with METRICS_TOKEN when set (server/metrics). */
  metrics?: { collector: CoordinatorMetrics; token?: string };
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.trustProxy ? deps.trustProxy : false);
  // First, so every request's bytes count, refusals by any later middleware included.
  if (deps.metrics) {
    const collector = deps.metrics.collector;
    app.use(
      httpByteCounter((route, requestBytes, responseBytes) => collector.httpBytes(route, requestBytes, responseBytes)),
    );
  }
  app.use(securityHeaders({ https: deps.publicUrl?.startsWith('https:') ?? false }));
  app.use(deps.auth.sessionMiddleware);

  // Uploads first: tus reads the raw request body itself, so no body parser may run before it.
  const uploads = deps.uploads.handler;
  if (deps.rateLimits) app.post('/api/circuits/:name/contributions', deps.rateLimits.uploadCreation);
  app.all('/api/circuits/:name/contributions{/*rest}', deps.auth.requireContributor, deps.auth.requireCsrf, uploads);

  // Before the app-wide parser: /auth parses its own bodies with a smaller limit (64 kB).
  app.use('/auth', deps.auth.router);
  app.use(express.json({ limit: '256kb' }));
  app.use(
    createPublicRouter({
      config: deps.config,
      lobby: deps.lobby,
      phase: deps.phase,
      constraints: deps.constraints,
      receiptPublicKeyPem: deps.receiptPublicKeyPem,
      ceremonyState: () => deps.service.ceremonyState(),
      diskSpace: () => deps.uploads.diskSpace(),
      log: deps.log,
      downloadBudget: deps.rateLimits?.downloads,
      readLimit: deps.rateLimits?.ceremonyReads,
    }),
  );
  app.use(
    createQueueLogRouter({ config: deps.config, queueLog: deps.lobby.queueLog, rateLimit: deps.rateLimits?.queueLog }),
  );
  if (deps.metrics) app.use(createMetricsRouter({ metrics: deps.metrics.collector, token: deps.metrics.token }));
  app.use(
    createContributorRouter({
      ...deps,
      presenceStreams: new PresenceStreams(
        deps.lobby,
        deps.service,
        {
          maxStreams: deps.presence?.maxStreams ?? DEFAULT_MAX_PRESENCE_STREAMS,
          maxPerContributor: PRESENCE_STREAMS_PER_CONTRIBUTOR,
        },
        deps.presence?.keepAliveMs ?? keepAliveMs(0),
      ),
      requireContributor: deps.auth.requireContributor,
      requireCsrf: deps.auth.requireCsrf,
      joinLimit: deps.rateLimits?.join,
    }),
  );
  app.use(
    createCoordinatorRouter({
      ...deps,
      requireCoordinator: deps.auth.requireCoordinator,
      requireCsrf: deps.auth.requireCsrf,
    }),
  );
  if (deps.webDir) app.use(express.static(deps.webDir, { index: 'index.html', fallthrough: true }));
  app.use('/api', notFoundHandler);
  app.use(errorHandler(deps.log));
  return app;
}
