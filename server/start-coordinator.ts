/**
 * Wires the coordinator: configuration → ceremony on disk → SQLite → verification (BullMQ with a
 * REDIS_URL, an embedded verifier process without) → lobby, service, app → listen; and shuts it all down in
 * reverse order. `ceremony serve` and the integration tests both start it through here.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadCeremonyConfig, type CeremonyConfig } from '../core/config/ceremony-config.ts';
import { openCeremony } from '../core/ceremony/open-ceremony.ts';
import { readR1csSummary } from '../core/setup/r1cs-header.ts';
import { CoordinatorError } from '../core/errors.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { closeMultiExp } from '../core/kernel/multi-exp.ts';
import { systemClock, type Clock } from './clock.ts';
import { openDatabase, type Db } from './store/database.ts';
import { Lobby } from './lobby/lobby.ts';
import { ContributionStore } from './contributions/contribution-store.ts';
import { ReceiptSigner } from './contributions/receipt-signer.ts';
import {
  readReceiptPublicKey,
  RECEIPT_PUBLIC_KEY_FILE,
  writeReceiptPublicKey,
} from '../core/receipts/receipt-public-key-file.ts';
import { samePublicKey } from '../core/receipts/receipt-signature.ts';
import { CeremonyPhaseStore } from './ceremony-phase.ts';
import { CeremonyService, type ServiceLog } from './ceremony-service.ts';
import { Redis } from 'ioredis';
import { createApp } from './app.ts';
import { ContributionUploads } from './files/contribution-uploads.ts';
import { createRateLimits } from './http/rate-limits.ts';
import { createAuthRouter } from './auth/auth-router.ts';
import { createSessionMiddleware } from './auth/session-middleware.ts';
import { SessionStore } from './auth/session-store.ts';
import { requireContributor, requireCoordinator } from './auth/require-principal.ts';
import { requireCsrf } from './auth/require-csrf.ts';
import { authConfigFromEnv } from './config/auth-env.ts';
import type { ServerConfig } from './config/server-config.ts';
import { createBullmqDispatcher } from './verification-dispatch/bullmq-dispatcher.ts';
import { createEmbeddedDispatcher } from './verification-dispatch/embedded-dispatcher.ts';
import type { VerificationDispatcher } from './verification-dispatch/verification-dispatcher.ts';
import { CoordinatorMetrics } from './metrics/coordinator-metrics.ts';

export interface StartOptions {
  clock?: Clock;
  log?: ServiceLog;
  /** Interval of deadline checks and turn grants (ms). */
  tickIntervalMs?: number;
  /** Folder of the built browser app to serve at /. */
  webDir?: string;
  /** Test network on loopback only: token of the coordinator sign-in link (server/auth/coordinator-link.ts). */
  coordinatorLinkToken?: string;
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
  const config = await loadCeremonyConfig(serverConfig.dataDir);
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

  const auth = authConfigFromEnv(serverConfig.env, {
    publicUrl: serverConfig.publicUrl,
    testNetwork: config.testNetwork,
    host: serverConfig.host,
  });
  const receipts = await ReceiptSigner.fromKeyFile(serverConfig.receiptKeyFile);
  // A lost or replaced state/ makes a new signing key; publishing its half over the old one would
  // silently make every receipt already handed out fail to verify. The operator decides, by moving
  // the published key aside, before anything is started.
  const published = await readReceiptPublicKey(config.dataDir);
  if (published !== undefined && !samePublicKey(published, receipts.publicKeyPem)) {
    throw new CoordinatorError(
      'config.invalid',
      `the receipt signing key in the state folder is not the one published in ${RECEIPT_PUBLIC_KEY_FILE}, ` +
        'and receipts already handed out verify only against the published one: restore the state folder’s ' +
        `receipt key, or move ${RECEIPT_PUBLIC_KEY_FILE} aside to start with a new key`,
    );
  }
  // The public half, beside the ceremony's public files: `ceremony publish` copies it, so receipts
  // can be checked offline against a publication.
  await writeReceiptPublicKey(config.dataDir, receipts.publicKeyPem);
  const db = openDatabase(serverConfig.databaseFile);
  const phase = new CeremonyPhaseStore(db);
  if (state.finalised && phase.get() !== 'finalised') {
    // Finalisation completed on disk, but the coordinator stopped before recording it (or the
    // ceremony was finalised with `ceremony finalise`): the transcript says it is done.
    if (phase.get() !== 'finalising') {
      if (phase.get() !== 'closed') phase.set('closed', clock.now());
      phase.beginFinalising(clock.now());
    }
    phase.endFinalising('finalised', clock.now());
  } else if (phase.recoverInterruptedFinalisation(clock.now())) {
    log.warn(
      'a finalisation was interrupted by a stop; the ceremony is closed ' +
        'again and may be finalised again (with the same beacon)',
    );
  }
  if (serverConfig.openOnStart && phase.get() === 'setup') phase.set('open', clock.now());

  const lobby = new Lobby(
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
  const contributions = new ContributionStore(db);
  const dispatcher: VerificationDispatcher = serverConfig.redisUrl
    ? await createBullmqDispatcher({ redisUrl: serverConfig.redisUrl })
    : createEmbeddedDispatcher({ onVerifierReady: (pid) => log.info('embedded verifier ready', { pid }) });
  const metrics: CoordinatorMetrics = new CoordinatorMetrics({
    config,
    lobby,
    phase,
    ceremonyState: () => service.ceremonyState(),
    diskSpace: () => uploads.diskSpace(),
  });
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
    observer: metrics,
  });

  // Everything from here on is started inside the try, so that a failure anywhere (a bad auth
  // setting refused by createApp, a port in use) stops what was already started.
  let uploads!: ContributionUploads;
  let rateLimitRedis: Redis | undefined;
  let server: Server;
  try {
    uploads = new ContributionUploads({
      config,
      lobby,
      service,
      clock,
      log,
      diskMarginBytes: serverConfig.uploads.diskMarginBytes,
      publicOrigin: serverConfig.publicUrl ? new URL(serverConfig.publicUrl).origin : undefined,
      onUploadFinished: (circuit, ms) => metrics.uploadFinished(circuit, ms),
    });
    const sessions = new SessionStore(db, clock, auth.sessionTtlMs, auth);
    // Rate-limit counts are shared through Redis when there is one (every coordinator process sees them).
    rateLimitRedis = serverConfig.redisUrl
      ? new Redis(serverConfig.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: false })
      : undefined;
    rateLimitRedis?.on('error', (error) => log.warn('rate-limit redis error', { error: error.message }));
    const rateLimits = createRateLimits({
      config: serverConfig.rateLimits,
      redis: rateLimitRedis,
      prefix: `ceremony:${config.id}`,
    });
    const app = createApp({
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
      metrics: { collector: metrics, token: serverConfig.metricsToken },
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
        }),
        sessionMiddleware: createSessionMiddleware({ db, clock, config: auth, sessions }),
        requireContributor,
        requireCoordinator,
        requireCsrf,
      },
    });
    await service.start();
    server = await new Promise((resolve, reject) => {
      // Express 5 hands a listen error (EADDRINUSE, EACCES) to this callback.
      const listening = app.listen(serverConfig.port, serverConfig.host, (error?: Error) =>
        error ? reject(error) : resolve(listening),
      );
    });
  } catch (error) {
    // Nothing may outlive a failed start: the verifier process or Redis connections would keep
    // a coordinator that serves nothing alive.
    await uploads?.close();
    await service.stop();
    await dispatcher.close();
    rateLimitRedis?.disconnect();
    db.close();
    await releaseBn128();
    await closeMultiExp();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES') {
      throw new CoordinatorError(
        'config.invalid',
        `cannot listen on ${serverConfig.host}:${serverConfig.port}: ${(error as Error).message}`,
      );
    }
    throw error;
  }
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  log.info('coordinator listening', {
    url,
    verification: serverConfig.redisUrl ? 'bullmq' : 'embedded',
    phase: phase.get(),
    ceremony: config.id,
  });

  let closing: Promise<void> | undefined;
  return {
    url,
    config,
    db,
    lobby,
    service,
    phase,
    uploads,
    close: () =>
      (closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await uploads.close();
        await service.stop();
        await dispatcher.close();
        await rateLimitRedis?.quit().catch(() => rateLimitRedis.disconnect());
        db.close();
        await releaseBn128();
        // The MSM threads the delta intake summed on (server/files/delta-intake.ts).
        await closeMultiExp();
      })()),
  };
}
