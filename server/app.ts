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
import type { HeadInputs } from './routes/head-inputs.ts';
import { withinDownloadBudget, type DownloadLimits } from './routes/immutable-download.ts';
import { createContributorRouter } from './routes/contributor-router.ts';
import { keepAliveMs, PRESENCE_STREAMS_PER_CONTRIBUTOR, PresenceStreams } from './routes/presence-stream.ts';
import { createCoordinatorRouter } from './routes/coordinator-router.ts';
import { createQueueLogRouter } from './routes/queue-log-router.ts';
import type { ContributionUploads } from './files/contribution-uploads.ts';
import { errorHandler, notFoundHandler } from './http/error-handler.ts';
import type { RateLimits } from './http/rate-limits.ts';
import { securityHeaders } from './http/security-headers.ts';
import { descriptorBudget } from './http/descriptor-budget.ts';
import { DOWNLOADS_PER_ADDRESS, DownloadSlots } from './http/download-slots.ts';
import { SLOW_READER_DEFAULTS, SlowReaderGuard, type SlowReaderLimits } from './http/slow-reader-guard.ts';
import { bodyDeadline, HTTP_TIMEOUT_DEFAULTS } from './http/server-timeouts.ts';
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
  /**
   * The trusted reverse proxies' addresses, CIDRs or named ranges (server/http/trusted-proxies.ts): the client's
   * address is taken from X-Forwarded-For only past them. Default none.
   */
  trustProxy?: readonly string[];
  /** GET /api/me/presence's limits and keep-alive pace (presence-stream.ts); default: from the descriptors, 15 s. */
  presence?: { maxStreams: number; keepAliveMs: number };
  /** File downloads at once, per address and in all (download-slots.ts); default 8, and the descriptors'. */
  downloads?: { perAddress: number; total: number };
  /** The minimum transfer rate of every answer (slow-reader-guard.ts); default 8 KiB/s over a minute. */
  slowReaders?: SlowReaderLimits;
  /** Where the coordinator reads the announced beacon's block (BEACON_RPC_URL); none: the coordinator gives it. */
  beacon?: { rpcUrl: string | undefined; confirmations: number };
  /** GET /metrics, with METRICS_TOKEN when set (server/metrics). */
  metrics?: { collector: CoordinatorMetrics; token?: string };
  /** The heads' inputs, prepared as each head is accepted (head-inputs.ts); default: at their first download. */
  headInputs?: HeadInputs;
}

/** The file downloads' limits: each payer's byte budget, and the downloads at once per payer and in all. */
function downloadLimits(deps: AppDeps): DownloadLimits {
  return {
    budget: deps.rateLimits?.downloads,
    slots: new DownloadSlots({
      perPayer: deps.downloads?.perAddress ?? DOWNLOADS_PER_ADDRESS,
      total: deps.downloads?.total ?? descriptorBudget().maxDownloads,
    }),
  };
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.trustProxy?.length ? [...deps.trustProxy] : false);
  // Before anything answers: every answer is watched for a reader that holds it back.
  const slowReaders = new SlowReaderGuard(deps.slowReaders ?? SLOW_READER_DEFAULTS, (req, fields) =>
    deps.log.info('connection closed: its client read slower than the minimum transfer rate', {
      method: req.method,
      path: (req.url ?? '').slice(0, 200),
      ...fields,
    }),
  );
  app.use(slowReaders.middleware());
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
  // tus picks its handler by method alone: a POST to a sub-path would create an upload past the creation limit.
  app.post('/api/circuits/:name/contributions/*rest', notFoundHandler);
  if (deps.rateLimits) {
    const { uploadCreation, uploadRequests } = deps.rateLimits;
    app.post('/api/circuits/:name/contributions', uploadCreation);
    app.all('/api/circuits/:name/contributions{/*rest}', (req, res, next) =>
      req.method === 'PATCH' || req.method === 'HEAD' ? uploadRequests(req, res, next) : next(),
    );
  }
  app.all('/api/circuits/:name/contributions{/*rest}', deps.auth.requireContributor, deps.auth.requireCsrf, uploads);

  // Every body below is small (16 kB at most): one sent at a trickle is cut rather than hold its socket.
  app.use(bodyDeadline(HTTP_TIMEOUT_DEFAULTS.bodyDeadlineMs));
  // No app-wide body parser: each route that takes a JSON body parses it after its guards (server/http/json-body.ts).
  app.use('/auth', deps.auth.router);
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
      downloads: downloadLimits(deps),
      readLimit: deps.rateLimits?.ceremonyReads,
      headInputs: deps.headInputs,
      takeTurn: (contributorId, circuit) => deps.service.takeTurn(contributorId, circuit),
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
          maxStreams: deps.presence?.maxStreams ?? descriptorBudget().maxPresenceStreams,
          maxPerContributor: PRESENCE_STREAMS_PER_CONTRIBUTOR,
        },
        deps.presence?.keepAliveMs ?? keepAliveMs(0),
      ),
      requireContributor: deps.auth.requireContributor,
      requireCsrf: deps.auth.requireCsrf,
      joinLimit: deps.rateLimits?.join,
      contributorLimit: deps.rateLimits?.contributorRequests,
      receiptLimit: deps.rateLimits?.receiptReads,
    }),
  );
  app.use(
    createCoordinatorRouter({
      ...deps,
      requireCoordinator: deps.auth.requireCoordinator,
      requireCsrf: deps.auth.requireCsrf,
    }),
  );
  app.use('/api', notFoundHandler);
  // The app's files: within the address's byte budget, as every file the coordinator sends.
  if (deps.webDir)
    app.use(
      withinDownloadBudget(deps.rateLimits?.downloads),
      express.static(deps.webDir, { index: 'index.html', fallthrough: true }),
    );
  app.use(errorHandler(deps.log));
  return app;
}
