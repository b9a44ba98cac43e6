/**
 * Wires the coordinator: configuration → ceremony on disk → its serving lock → receipt key →
 * SQLite (its phase brought in line with the transcript) → verification (BullMQ with a REDIS_URL,
 * an embedded verifier process without) → lobby, service, uploads, app → listen. Each resource
 * registers its closer when it is made (startup/closer-stack.ts): one stack stops them in reverse
 * order, on a failed start and on close. The start-up's recovery policy lives in startup/.
 * `ceremony serve` and the integration tests both start it through here.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadCeremonyConfig, type CeremonyConfig } from '../core/config/ceremony-config.ts';
import { openCeremony, type CeremonyState } from '../core/ceremony/open-ceremony.ts';
import { readR1csSummary } from '../core/setup/r1cs-header.ts';
import { CoordinatorError } from '../core/errors.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { closeMultiExp } from '../core/kernel/multi-exp.ts';
import { takeServingLock } from '../core/data-folder/serving-lock.ts';
import { nodeEndOfLifeWarning } from '../core/runtime/node-support.ts';
import { systemClock, type Clock } from './clock.ts';
import { openDatabase, type Db } from './store/database.ts';
import { Lobby } from './lobby/lobby.ts';
import { ContributionStore } from './contributions/contribution-store.ts';
import { ReceiptSigner } from './contributions/receipt-signer.ts';
import { CeremonyPhaseStore } from './ceremony-phase.ts';
import { CeremonyService, type ServiceLog, type ServiceObserver } from './ceremony-service.ts';
import { Redis } from 'ioredis';
import { createApp, type AppDeps } from './app.ts';
import type { Express } from 'express';
import { createBoundedServer } from './http/server-timeouts.ts';
import { ContributionUploads } from './files/contribution-uploads.ts';
import { HeadInputs } from './routes/head-inputs.ts';
import { createRateLimits } from './http/rate-limits.ts';
import { createAuthRouter } from './auth/auth-router.ts';
import { createSessionMiddleware } from './auth/session-middleware.ts';
import { SessionStore } from './auth/session-store.ts';
import { requireContributor, requireCoordinator } from './auth/require-principal.ts';
import { requireCsrf } from './auth/require-csrf.ts';
import { authConfigFromEnv } from './auth/sign-in-settings.ts';
import type { AuthConfig } from './auth/auth-config.ts';
import type { ServerConfig } from './config/server-config.ts';
import { createBullmqDispatcher } from './verification-dispatch/bullmq-dispatcher.ts';
import { createEmbeddedDispatcher } from './verification-dispatch/embedded-dispatcher.ts';
import type { VerificationDispatcher } from './verification-dispatch/verification-dispatcher.ts';
import { CoordinatorMetrics } from './metrics/coordinator-metrics.ts';
import { CloserStack } from './startup/closer-stack.ts';
import { keepAliveMs } from './routes/presence-stream.ts';
import { publishReceiptKey } from './startup/publish-receipt-key.ts';
import { TranscriptPhaseFollower } from './transcript-phase-follower.ts';
import { reconcilePhaseWithTranscript } from './startup/reconcile-phase.ts';

export interface StartOptions {
  clock?: Clock;
  log?: ServiceLog;
  /** Interval of deadline checks and turn grants (ms). */
  tickIntervalMs?: number;
  /** Folder of the built browser app to serve at /. */
  webDir?: string;
  /** Test network on loopback only: token of the coordinator sign-in link (server/auth/coordinator-link.ts). */
  coordinatorLinkToken?: string;
  /** The free space of the data folder's disk (tests: a disk nearly full); statfs by default. */
  freeDiskBytes?: (directory: string) => Promise<number>;
}

export interface RunningCoordinator {
  url: string;
  config: CeremonyConfig;
  db: Db;
  lobby: Lobby;
  service: CeremonyService;
  phase: CeremonyPhaseStore;
  uploads: ContributionUploads;
  close(): Promise<void>;
}

/** The built browser app (`npm run build` → web/dist), or undefined when it has not been built. */
export function builtWebDir(): string | undefined {
  // Compiled, this module is dist/server/start-coordinator.js: one folder deeper than its source.
  const dir = fileURLToPath(
    new URL(import.meta.url.endsWith('.js') ? '../../web/dist/' : '../web/dist/', import.meta.url),
  );
  return existsSync(`${dir}index.html`) ? dir : undefined;
}

/** Structured log lines (one JSON object per line) on stderr. */
export const jsonLog: ServiceLog = {
  info: (message, fields) =>
    process.stderr.write(`${JSON.stringify({ level: 'info', time: new Date().toISOString(), message, ...fields })}\n`),
  warn: (message, fields) =>
    process.stderr.write(`${JSON.stringify({ level: 'warn', time: new Date().toISOString(), message, ...fields })}\n`),
};

export async function startCoordinator(
  serverConfig: ServerConfig,
  options: StartOptions = {},
): Promise<RunningCoordinator> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? jsonLog;
  const { config, state, constraints } = await openInitialisedCeremony(serverConfig.dataDir);
  // Before anything is written to the folder: a second coordinator on it is refused here.
  const serving = await takeServingLock(config.dataDir);

  // From here on each resource registers its closer as soon as it is made: a failure anywhere
  // (Redis unreachable, a bad auth setting refused by createApp, a port in use) stops what was
  // already started, and close() stops the same things in the same way.
  const closers = new CloserStack();
  closers.add('the serving lock', () => serving.release());
  // The curve and the MSM threads are the process's, started on first use (the delta intake sums
  // on them, server/files/delta-intake.ts): registered early, so they stop late.
  closers.add('the MSM threads', closeMultiExp);
  closers.add('the curve', releaseBn128);
  try {
    const auth = authConfigFromEnv(serverConfig.signIn, {
      publicUrl: serverConfig.publicUrl,
      testNetwork: config.testNetwork,
      host: serverConfig.host,
    });
    const receipts = await ReceiptSigner.fromKeyFile(serverConfig.receiptKeyFile);
    await publishReceiptKey(config.dataDir, receipts.publicKeyPem);

    const db = openDatabase(serverConfig.databaseFile);
    closers.add('the database', () => db.close());
    const phase = phaseInLineWithTranscript(db, state, serverConfig.openOnStart, clock, log);

    const lobby = openLobby(db, config, serverConfig, phase, receipts, clock, log);
    const contributions = new ContributionStore(db);
    const dispatcher = await startDispatcher(serverConfig, log);
    closers.add('the verification dispatcher', () => dispatcher.close());
    const metrics = new CoordinatorMetrics({ config, lobby, phase });
    // The uploads (made after the service) hear of each turn that ends without an upload, to delete its unfinished one.
    let uploadsOf: ContributionUploads | undefined;
    const headInputs = new HeadInputs(config);
    closers.add('the head inputs being prepared', () => headInputs.idle());
    const service = new CeremonyService({
      config,
      db,
      clock,
      lobby,
      contributions,
      dispatcher,
      receipts,
      log,
      tickIntervalMs: options.tickIntervalMs,
      observer: serviceObserver(metrics, headInputs, () => uploadsOf, log),
    });
    closers.add('the ceremony service', () => service.stop());
    const uploads = new ContributionUploads({
      config,
      db,
      lobby,
      service,
      candidates: contributions.candidates,
      clock,
      log,
      diskMarginBytes: serverConfig.uploads.diskMarginBytes,
      freeDiskBytes: options.freeDiskBytes,
      publicOrigin: serverConfig.publicUrl ? new URL(serverConfig.publicUrl).origin : undefined,
      onUploadFinished: (circuit, ms) => metrics.uploadFinished(circuit, ms),
    });
    uploadsOf = uploads;
    closers.add('the uploads', () => uploads.close());
    metrics.watchCeremony({ ceremonyState: () => service.ceremonyState(), diskSpace: () => uploads.diskSpace() });
    const app = coordinatorApp({
      serverConfig,
      options,
      closers,
      auth,
      parts: { config, clock, lobby, contributions, phase, service, constraints, receipts, log, uploads, metrics, db },
      headInputs,
    });
    await service.start();
    followTranscript(phase, lobby, service, options, closers, clock, log);
    const url = await listen(app, serverConfig, closers);
    announceListening(url, serverConfig, config, phase, log);
    return { url, config, db, lobby, service, phase, uploads, close: () => closers.close() };
  } catch (error) {
    // Nothing may outlive a failed start: the verifier process or Redis connections would keep
    // a coordinator that serves nothing alive. The start's own error is the one reported.
    await closers
      .close()
      .catch((closeError: unknown) =>
        log.warn('a closer failed while stopping after a failed start', { error: String(closeError) }),
      );
    throw error;
  }
}

/**
 * Who hears what the service does: the metrics; the uploads, of each turn that ends without an
 * upload (its unfinished one is deleted); the heads' inputs, of each accepted head (prepared at once,
 * so the next turn's first request for them finds them ready).
 */
function serviceObserver(
  metrics: CoordinatorMetrics,
  headInputs: HeadInputs,
  uploads: () => ContributionUploads | undefined,
  log: ServiceLog,
): ServiceObserver {
  return {
    lobbyEvent: (event) => {
      metrics.lobbyEvent(event);
      uploads()?.onLobbyEvent(event);
    },
    contributionDecided: (decision) => {
      metrics.contributionDecided(decision);
      if (decision.outcome === 'accepted') headInputs.prepare(decision.circuit, decision.index, log.warn);
    },
  };
}

/** The lobby, open while the ceremony's phase is, its queue log signed with the receipts' key. */
function openLobby(
  db: Db,
  config: CeremonyConfig,
  serverConfig: ServerConfig,
  phase: CeremonyPhaseStore,
  receipts: ReceiptSigner,
  clock: Clock,
  log: ServiceLog,
): Lobby {
  return new Lobby(
    db,
    {
      circuits: config.circuits.map((c) => c.name),
      ceremonyId: config.id,
      isOpen: () => phase.get() === 'open',
      ...serverConfig.lobby,
      queueLog: { file: serverConfig.queueLogFile, sign: (body) => receipts.sign(body), warn: log.warn },
    },
    clock,
  );
}

/** The phase follows the transcript (a ceremony finalised by the CLI closes), stopped by `closers`. */
function followTranscript(
  phase: CeremonyPhaseStore,
  lobby: Lobby,
  service: CeremonyService,
  options: StartOptions,
  closers: CloserStack,
  clock: Clock,
  log: ServiceLog,
): void {
  const follower = new TranscriptPhaseFollower({
    phase,
    lobby,
    clock,
    log,
    ceremonyState: () => service.ceremonyState(),
    changed: () => service.tick(),
    intervalMs: options.tickIntervalMs,
  });
  closers.add('the transcript follower', () => follower.stop());
  follower.start();
}

/** What the app is made of, besides the settings: the start's parts, made by startCoordinator. */
type AppParts = Pick<
  AppDeps,
  'config' | 'clock' | 'lobby' | 'contributions' | 'phase' | 'service' | 'constraints' | 'log' | 'uploads'
> & { receipts: ReceiptSigner; metrics: CoordinatorMetrics; db: Db };

/** The HTTP app with its rate limits (their Redis connection registered on `closers`) and its sign-in. */
function coordinatorApp(start: {
  serverConfig: ServerConfig;
  options: StartOptions;
  closers: CloserStack;
  auth: AuthConfig;
  parts: AppParts;
  headInputs: HeadInputs;
}): Express {
  const { serverConfig, options, closers, auth, headInputs } = start;
  const { config, clock, lobby, contributions, phase, service, constraints, receipts, log, uploads, metrics, db } =
    start.parts;
  const rateLimitRedis = connectRateLimitRedis(serverConfig, log, closers);
  const rateLimits = createRateLimits({
    config: serverConfig.rateLimits,
    redis: rateLimitRedis,
    prefix: `ceremony:${config.id}`,
  });
  const sessions = new SessionStore(db, clock, auth.sessionTtlMs, auth);
  return createApp({
    config,
    clock,
    lobby,
    contributions,
    phase,
    service,
    constraints,
    receiptPublicKeyPem: receipts.publicKeyPem,
    log,
    uploads,
    webDir: options.webDir,
    publicUrl: serverConfig.publicUrl,
    rateLimits,
    trustProxy: serverConfig.trustProxy,
    downloads: serverConfig.downloads,
    slowReaders: serverConfig.slowReaders,
    beacon: serverConfig.beacon,
    metrics: { collector: metrics, token: serverConfig.metricsToken },
    headInputs,
    presence: {
      maxStreams: serverConfig.maxPresenceStreams,
      keepAliveMs: keepAliveMs(serverConfig.lobby.presenceMs),
    },
    auth: {
      router: createAuthRouter({
        db,
        clock,
        config: auth,
        ceremonyId: config.id,
        testNetwork: config.testNetwork,
        host: serverConfig.host,
        sessions,
        rateLimits,
        coordinatorLinkToken: options.coordinatorLinkToken,
        log,
      }),
      sessionMiddleware: createSessionMiddleware({ db, clock, config: auth, sessions }),
      requireContributor,
      requireCoordinator,
      requireCsrf,
    },
  });
}

/** The start's one log line, and a warning when the Node it runs on is past its support. */
function announceListening(
  url: string,
  serverConfig: ServerConfig,
  config: CeremonyConfig,
  phase: CeremonyPhaseStore,
  log: ServiceLog,
): void {
  log.info('coordinator listening', {
    url,
    verification: serverConfig.redisUrl ? 'bullmq' : 'embedded',
    phase: phase.get(),
    ceremony: config.id,
    node: process.version,
    openFiles: serverConfig.descriptors.softLimit,
  });
  // Real time, not the ceremony's clock: the runtime's support ends on the calendar.
  const endOfLife = nodeEndOfLifeWarning(process.version, new Date());
  if (endOfLife) log.warn(endOfLife, { node: process.version });
}

/** The phase kept in the database, brought in line with the transcript (startup/reconcile-phase.ts), and why. */
function phaseInLineWithTranscript(
  db: Db,
  state: CeremonyState,
  openOnStart: boolean,
  clock: Clock,
  log: ServiceLog,
): CeremonyPhaseStore {
  const phase = new CeremonyPhaseStore(db);
  const found = reconcilePhaseWithTranscript(phase, {
    finalisedInTranscript: state.finalised !== undefined,
    beaconAnnouncedInTranscript: state.beaconAnnouncement !== undefined,
    openOnStart,
    now: clock.now(),
  });
  if (found === 'closed_by_beacon_announcement')
    log.warn('the transcript announces the beacon, so contributions are closed: the ceremony is closed');
  if (found === 'finalisation_interrupted') {
    log.warn(
      'a finalisation was interrupted by a stop; the ceremony is closed ' +
        'again and may be finalised again (with the same beacon)',
    );
  }
  return phase;
}

/** The ceremony of `dataDir`, refused unless every chain has its contribution 0; each circuit's constraints. */
async function openInitialisedCeremony(
  dataDir: string,
): Promise<{ config: CeremonyConfig; state: CeremonyState; constraints: Map<string, number> }> {
  const config = await loadCeremonyConfig(dataDir);
  const state = await openCeremony(config.dataDir);
  if ([...state.chains.values()].some((chain) => !chain.head)) {
    throw new CoordinatorError(
      'ceremony.not_initialised',
      `the ceremony in ${config.dataDir} is not initialised; run \`ceremony init --data ${config.dataDir}\` first`,
    );
  }
  const constraints = new Map<string, number>();
  for (const circuit of config.circuits)
    constraints.set(circuit.name, (await readR1csSummary(circuit.r1csPath)).nConstraints);
  return { config, state, constraints };
}

/** BullMQ workers with a REDIS_URL, else one embedded verifier process forked now. */
async function startDispatcher(serverConfig: ServerConfig, log: ServiceLog): Promise<VerificationDispatcher> {
  return serverConfig.redisUrl
    ? await createBullmqDispatcher({ redisUrl: serverConfig.redisUrl })
    : createEmbeddedDispatcher({
        onVerifierReady: (pid) => log.info('embedded verifier ready', { pid }),
        onHeadPrepared: (report) =>
          'failed' in report
            ? log.warn("could not cache a head's link combination", { circuit: report.circuit, error: report.failed })
            : log.info(`head link combination ${report.result}`, { circuit: report.circuit, ms: report.ms }),
      });
}

/** Rate-limit counts are shared through Redis when there is one (every coordinator process sees them). */
function connectRateLimitRedis(serverConfig: ServerConfig, log: ServiceLog, closers: CloserStack): Redis | undefined {
  if (!serverConfig.redisUrl) return undefined;
  const redis = new Redis(serverConfig.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: false });
  redis.on('error', (error) => log.warn('rate-limit redis error', { error: error.message }));
  // QUIT lets commands under way finish; a connection that cannot send it is simply dropped.
  closers.add('the rate-limit Redis connection', () => redis.quit().catch(() => redis.disconnect()));
  return redis;
}

/** Listens on the configured address; a port in use or not allowed is config.invalid. Returns the URL. */
async function listen(app: Express, serverConfig: ServerConfig, closers: CloserStack): Promise<string> {
  let server: Server;
  try {
    server = await new Promise<Server>((resolve, reject) => {
      const bounded = createBoundedServer(app, {
        ...serverConfig.http,
        longestTurnMs: serverConfig.lobby.maxTurnMs,
      });
      bounded.once('error', reject);
      bounded.listen(serverConfig.port, serverConfig.host, () => {
        bounded.off('error', reject);
        resolve(bounded);
      });
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES') throw error;
    throw new CoordinatorError(
      'config.invalid',
      `cannot listen on ${serverConfig.host}:${serverConfig.port}: ${(error as Error).message}`,
    );
  }
  closers.add(
    'the HTTP server',
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const address = server.address() as AddressInfo;
  return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
}
