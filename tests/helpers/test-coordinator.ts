/**
 * A coordinator for a test, started in the test's process as `ceremony serve` starts it
 * (server/start-coordinator.ts), with what it needs around it: a ceremony folder, initialised, on a
 * free port, open for contributions, optionally a Redis of its own and a `ceremony worker` on it.
 * One `close()` takes it all down: the coordinator, the worker, the Redis and the folder it made.
 *
 *   const coordinator = await startTestCoordinator({ env: { COORDINATOR_TOKEN: TOKEN } });
 *   after(() => coordinator?.close());
 *
 * Options of `startTestCoordinator(options)`, all optional:
 * - `dataDir`: serve this ceremony folder, which stays the caller's (close() leaves it). Default: a
 *   new copy of the project's folder (tests/fixtures/ceremony-fixture.ts), removed by close().
 * - `ceremony`: options of that new folder (`configOverrides`, `ptauPower`, `parentDir`).
 * - `init`: initialise the folder before starting (contribution 0 of every circuit). Default: true
 *   for a new folder, false for a given one.
 * - `env`: server settings by their environment names (server/config/server-config.ts), over the
 *   defaults: CEREMONY_DATA (the folder), PORT 0 (a free port), OPEN_ON_START true, REDIS_URL (the
 *   Redis, when there is one). Without a Redis, verification runs in an embedded verifier process.
 * - `open`: false leaves the ceremony in its setup phase (OPEN_ON_START is not set).
 * - `redis`: true starts a redis-server of its own (stopped by close()); a RedisServer is used as
 *   it is (the caller stops it).
 * - `worker`: true, or options of startWorkerProcess without `redisUrl`, starts `ceremony worker`
 *   on that Redis before the coordinator and waits for its ready line (tests/helpers/worker-process.ts);
 *   close() stops its process group. Needs `redis`.
 * - `log`: the coordinator's log. Default: info dropped, each warning on stderr as one line
 *   (tests/helpers/warnings-to-stderr.ts), so a run that goes wrong says why in the test's output.
 *   Pass your own to record it; do not silence warnings.
 * - `label`: the prefix of those warning lines (default `coordinator`).
 * - `clock`, `tickIntervalMs`, `webDir`, `coordinatorLinkToken`: passed to startCoordinator.
 *
 * The result is the running coordinator (url, config, db, lobby, service, phase, uploads) with:
 * - `dataDir`, `redis`, `worker`: what it runs on;
 * - `startWorker(options?)`: starts (another) `ceremony worker` on its Redis, e.g. once a job waits;
 *   close() stops it before the coordinator;
 * - `stop()`: stops the coordinator only (a crash or a planned stop; the folder, Redis and worker stay);
 * - `restart(env?)`: stops it and starts it again on the same folder (not initialised again) with the
 *   same options, `env` merged over them; the object is updated in place (url, db, service, …) and
 *   returned;
 * - `close()`: the end: stops everything listed above (each once, also after a failed start-up step)
 *   and the curve's threads in this process, and removes the folder it made. To stop the coordinator
 *   and start it again (a crash, a restart), use stop() and restart(), not close().
 */
import { rm } from 'node:fs/promises';
import { newCeremonyDir, type CeremonyDirOptions } from '../fixtures/ceremony-fixture.ts';
import { startRedisServer, type RedisServer } from './redis-server.ts';
import { startWorkerProcess, type WorkerProcess, type WorkerProcessOptions } from './worker-process.ts';
import { warningsToStderr } from './warnings-to-stderr.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import type { ServiceLog } from '../../server/ceremony-service.ts';
import type { Clock } from '../../server/clock.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import { startCoordinator, type RunningCoordinator } from '../../server/start-coordinator.ts';

export type ServerEnv = Record<string, string | undefined>;

export interface TestCoordinatorOptions {
  dataDir?: string;
  ceremony?: Omit<CeremonyDirOptions, 'init'>;
  init?: boolean;
  env?: ServerEnv;
  open?: boolean;
  redis?: boolean | RedisServer;
  worker?: boolean | Omit<WorkerProcessOptions, 'redisUrl'>;
  log?: ServiceLog;
  label?: string;
  clock?: Clock;
  tickIntervalMs?: number;
  webDir?: string;
  coordinatorLinkToken?: string;
  /** The free space the uploads' disk check sees (a disk nearly full); the real one by default. */
  freeDiskBytes?: (directory: string) => Promise<number>;
}

export interface TestCoordinator extends RunningCoordinator {
  dataDir: string;
  redis: RedisServer | undefined;
  worker: WorkerProcess | undefined;
  startWorker(options?: Omit<WorkerProcessOptions, 'redisUrl'>): Promise<WorkerProcess>;
  stop(): Promise<void>;
  restart(env?: ServerEnv): Promise<TestCoordinator>;
  close(): Promise<void>;
}

export async function startTestCoordinator(options: TestCoordinatorOptions = {}): Promise<TestCoordinator> {
  // What close() undoes, last started first; filled in as each part starts, so a failed start-up
  // step stops what was already started.
  const undo: Array<() => Promise<unknown>> = [releaseBn128];
  let closed = false;
  const closeAll = async (): Promise<void> => {
    closed = true;
    const errors: unknown[] = [];
    for (const step of undo.splice(0).reverse()) await step().catch((error: unknown) => errors.push(error));
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, 'closing the test coordinator failed');
  };
  try {
    let dataDir = options.dataDir;
    if (dataDir === undefined) {
      const made = (dataDir = await newCeremonyDir(options.ceremony));
      undo.push(() => rm(made, { recursive: true, force: true }));
    }
    if (options.init ?? options.dataDir === undefined) await initCeremony(dataDir);

    let redis: RedisServer | undefined;
    if (options.redis === true) {
      const own = (redis = await startRedisServer());
      undo.push(() => own.stop());
    } else if (options.redis) {
      redis = options.redis;
    }

    const redisUrl = redis?.url;
    const startWorker = async (workerOptions: Omit<WorkerProcessOptions, 'redisUrl'> = {}): Promise<WorkerProcess> => {
      if (redisUrl === undefined) throw new Error('startTestCoordinator: a worker needs a Redis (option `redis`)');
      const started = await startWorkerProcess({ ...workerOptions, redisUrl });
      undo.push(() => started.stop('SIGTERM'));
      return started;
    };
    const worker = options.worker ? await startWorker(options.worker === true ? {} : options.worker) : undefined;

    const folder = dataDir;
    let env: ServerEnv = {
      CEREMONY_DATA: folder,
      PORT: '0',
      ...(options.open === false ? {} : { OPEN_ON_START: 'true' }),
      ...(redis ? { REDIS_URL: redis.url } : {}),
      ...options.env,
    };
    const log = options.log ?? warningsToStderr(options.label);
    const start = (): Promise<RunningCoordinator> =>
      startCoordinator(loadServerConfig(env), {
        log,
        clock: options.clock,
        tickIntervalMs: options.tickIntervalMs,
        webDir: options.webDir,
        coordinatorLinkToken: options.coordinatorLinkToken,
        freeDiskBytes: options.freeDiskBytes,
      });

    let running = await start();
    undo.push(() => running.close());
    const { close: _close, ...fields } = running;
    const coordinator: TestCoordinator = {
      ...fields,
      dataDir: folder,
      redis,
      worker,
      startWorker,
      stop: () => running.close(),
      async restart(overrides = {}) {
        if (closed) throw new Error('restart() after close(): close() ends it all; stop() stops only the coordinator');
        await running.close();
        env = { ...env, ...overrides };
        running = await start();
        const { close: _again, ...restarted } = running;
        return Object.assign(coordinator, restarted);
      },
      close: closeAll,
    };
    return coordinator;
  } catch (error) {
    await closeAll().catch(() => {}); // the start-up error is the one to report
    throw error;
  }
}
