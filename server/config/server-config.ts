/**
 * The coordinator's configuration, from the environment (and `ceremony serve` flags), validated
 * once at start-up into a frozen object. Every option has a default that works on a machine with
 * nothing but Node: SQLite in the data folder, an embedded verifier process, loopback only.
 */
import path from 'node:path';
import { z } from 'zod';
import { CoordinatorError } from '../../core/errors.ts';
import { LOBBY_DEFAULTS } from '../lobby/lobby-types.ts';
import { QUEUE_LOG_FILE } from '../../core/queue-log/queue-log-entry.ts';
import { RATE_LIMIT_DEFAULTS, type RateLimitConfig } from '../http/rate-limits.ts';
import { DEFAULT_MAX_PRESENCE_STREAMS } from '../routes/presence-stream.ts';
import { DEFAULT_CONFIRMATIONS } from '../../core/finalise/beacon-announcement.ts';

const durationMs = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const count = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const serverSchema = z.object({
  /** Ceremony data folder (ceremony.json, chains, transcript; state/ and uploads/ are added). */
  CEREMONY_DATA: z.string().default('ceremony-data'),
  /** Interface to listen on. Loopback by default: put a TLS proxy in front for the public. */
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Public base URL (OAuth callback, links). Default http://HOST:PORT. */
  PUBLIC_URL: z.string().url().optional(),
  /**
   * With a Redis URL, verification goes to BullMQ workers (`ceremony worker`); without, an embedded verifier process
   * runs it.
   */
  REDIS_URL: z.string().url().optional(),
  /** SQLite database file. Default DATA/state/coordinator.sqlite. */
  DATABASE_FILE: z.string().optional(),
  /** Ed25519 key signing receipts, created on first start. Default DATA/state/receipt-key.pem. */
  RECEIPT_KEY_FILE: z.string().optional(),
  /**
   * The public queue log's file, a mirror of the database's log. Default DATA/transcript/queue-log.jsonl,
   * where `ceremony publish` takes it from: set it only for a coordinator whose lobby is not the
   * ceremony's (several test coordinators on one data folder, each with its own DATABASE_FILE).
   */
  QUEUE_LOG_FILE: z.string().optional(),
  /** A waiting entry not seen (its client's polls) for this long is passed over, its place kept; 0: off. */
  PRESENCE_MS: z.coerce.number().int().nonnegative().default(LOBBY_DEFAULTS.presenceMs),
  /** A granted turn not taken (first download or heartbeat) within this passes on, not a missed turn; 0: off. */
  TAKE_TURN_MS: z.coerce.number().int().nonnegative().default(LOBBY_DEFAULTS.takeTurnMs),
  TURN_TIMEOUT_MS: durationMs(LOBBY_DEFAULTS.turnTimeoutMs),
  /** A taken turn whose client sends nothing (heartbeat, download, upload) for this long is missed; 0: off. */
  TURN_SILENCE_MS: z.coerce.number().int().nonnegative().default(LOBBY_DEFAULTS.turnSilenceMs),
  /** A contributor whose presence stream closed is passed over this long after, unless seen again; 0: off. */
  DISCONNECT_GRACE_MS: z.coerce.number().int().nonnegative().default(LOBBY_DEFAULTS.disconnectGraceMs),
  /** Presence streams (GET /api/me/presence) open at once; each holds a file descriptor. */
  MAX_PRESENCE_STREAMS: z.coerce.number().int().nonnegative().default(DEFAULT_MAX_PRESENCE_STREAMS),
  HEARTBEAT_EXTENSION_MS: durationMs(LOBBY_DEFAULTS.heartbeatExtensionMs),
  MAX_TURN_MS: durationMs(LOBBY_DEFAULTS.maxTurnMs),
  COOLDOWN_MS: durationMs(LOBBY_DEFAULTS.cooldownMs),
  /**
   * Free space the data folder's disk must keep beyond the largest possible upload, or new uploads are refused
   * (upload.disk_full). Default 1 GiB.
   */
  UPLOAD_DISK_MARGIN_BYTES: z.coerce
    .number()
    .int()
    .nonnegative()
    .max(Number.MAX_SAFE_INTEGER)
    .default(1024 ** 3),
  /** Missed turns in one circuit after which the entry leaves the queue (the contributor sees why). */
  MAX_MISSED_TURNS: count(LOBBY_DEFAULTS.maxMissedTurns),
  /** The window of every rate limit, and the limit of each route in it (see server/http/rate-limits.ts). */
  RATE_LIMIT_WINDOW_MS: durationMs(RATE_LIMIT_DEFAULTS.windowMs),
  RATE_LIMIT_SIGN_IN: count(RATE_LIMIT_DEFAULTS.signIn),
  RATE_LIMIT_CHALLENGE: count(RATE_LIMIT_DEFAULTS.challenge),
  RATE_LIMIT_DEVICE_POLL: count(RATE_LIMIT_DEFAULTS.devicePoll),
  RATE_LIMIT_UPLOAD_CREATION: count(RATE_LIMIT_DEFAULTS.uploadCreation),
  RATE_LIMIT_JOIN: count(RATE_LIMIT_DEFAULTS.join),
  RATE_LIMIT_QUEUE_LOG: count(RATE_LIMIT_DEFAULTS.queueLog),
  RATE_LIMIT_CEREMONY_READS: count(RATE_LIMIT_DEFAULTS.ceremonyReads),
  /**
   * Bytes of files (keys, skeletons, final files, r1cs, ptau) one client address may download from the coordinator
   * per DOWNLOAD_BUDGET_WINDOW_MS; beyond, 429 rate.limited. Default 64 GiB a day: more than a turn and an auditor's
   * fetch of everything of the service's ceremony (docs/security.md).
   */
  DOWNLOAD_BUDGET_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .max(Number.MAX_SAFE_INTEGER)
    .default(RATE_LIMIT_DEFAULTS.downloadBytes),
  DOWNLOAD_BUDGET_WINDOW_MS: durationMs(RATE_LIMIT_DEFAULTS.downloadWindowMs),
  /**
   * Reverse proxies in front of the coordinator whose X-Forwarded-For is trusted (rate limits key on the client
   * address). Default 0.
   */
  TRUST_PROXY: z.coerce.number().int().min(0).max(10).default(0),
  /**
   * A JSON-RPC endpoint of the chain the beacon is announced on: the console's announcement checks the block is
   * still ahead, and finalise reads its hash. May carry an API key: it is never logged or sent.
   */
  BEACON_RPC_URL: z.string().url().optional(),
  /** Blocks on top of the announced one before finalise takes its hash. */
  BEACON_CONFIRMATIONS: z.coerce.number().int().nonnegative().default(DEFAULT_CONFIRMATIONS),
  /** Open the ceremony at start-up (test networks and demos; production opens from the console). */
  OPEN_ON_START: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** Lets a Prometheus scraper read GET /metrics from outside loopback with `Authorization: Bearer <token>`. */
  METRICS_TOKEN: z
    .string()
    .regex(
      /^[A-Za-z0-9._~+/=-]{16,256}$/,
      'must be 16 to 256 characters usable in a bearer token (letters, digits, . _ ~ + / = -)',
    )
    .optional(),
});

export type ServerEnv = z.infer<typeof serverSchema>;

export interface ServerConfig {
  dataDir: string;
  host: string;
  port: number;
  publicUrl: string;
  redisUrl: string | undefined;
  databaseFile: string;
  receiptKeyFile: string;
  queueLogFile: string;
  /** GET /api/me/presence: streams open at once. */
  maxPresenceStreams: number;
  lobby: {
    presenceMs: number;
    takeTurnMs: number;
    turnTimeoutMs: number;
    turnSilenceMs: number;
    disconnectGraceMs: number;
    heartbeatExtensionMs: number;
    maxTurnMs: number;
    cooldownMs: number;
    maxMissedTurns: number;
  };
  rateLimits: RateLimitConfig;
  /** Trusted proxy hops (Express `trust proxy`). */
  trustProxy: number;
  openOnStart: boolean;
  /** BEACON_RPC_URL and BEACON_CONFIRMATIONS. */
  beacon: { rpcUrl: string | undefined; confirmations: number };
  uploads: { diskMarginBytes: number };
  /** METRICS_TOKEN, when set. */
  metricsToken: string | undefined;
  /** The raw environment, for sections parsed by their own modules (auth). */
  env: Readonly<Record<string, string | undefined>>;
}

export function loadServerConfig(
  env: Record<string, string | undefined>,
  overrides: Partial<Record<keyof ServerEnv, string>> = {},
): ServerConfig {
  const parsed = serverSchema.safeParse({
    ...env,
    ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)),
  });
  if (!parsed.success) {
    throw new CoordinatorError(
      'config.invalid',
      `server configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.CEREMONY_DATA);
  return Object.freeze({
    dataDir,
    host: e.HOST,
    port: e.PORT,
    publicUrl: (e.PUBLIC_URL ?? `http://${e.HOST.includes(':') ? `[${e.HOST}]` : e.HOST}:${e.PORT}`).replace(/\/$/, ''),
    redisUrl: e.REDIS_URL,
    databaseFile: path.resolve(e.DATABASE_FILE ?? path.join(dataDir, 'state', 'coordinator.sqlite')),
    receiptKeyFile: path.resolve(e.RECEIPT_KEY_FILE ?? path.join(dataDir, 'state', 'receipt-key.pem')),
    queueLogFile: path.resolve(e.QUEUE_LOG_FILE ?? path.join(dataDir, QUEUE_LOG_FILE)),
    maxPresenceStreams: e.MAX_PRESENCE_STREAMS,
    lobby: Object.freeze({
      presenceMs: e.PRESENCE_MS,
      takeTurnMs: e.TAKE_TURN_MS,
      turnTimeoutMs: e.TURN_TIMEOUT_MS,
      turnSilenceMs: e.TURN_SILENCE_MS,
      disconnectGraceMs: e.DISCONNECT_GRACE_MS,
      heartbeatExtensionMs: e.HEARTBEAT_EXTENSION_MS,
      maxTurnMs: e.MAX_TURN_MS,
      cooldownMs: e.COOLDOWN_MS,
      maxMissedTurns: e.MAX_MISSED_TURNS,
    }),
    rateLimits: Object.freeze({
      windowMs: e.RATE_LIMIT_WINDOW_MS,
      signIn: e.RATE_LIMIT_SIGN_IN,
      challenge: e.RATE_LIMIT_CHALLENGE,
      devicePoll: e.RATE_LIMIT_DEVICE_POLL,
      uploadCreation: e.RATE_LIMIT_UPLOAD_CREATION,
      join: e.RATE_LIMIT_JOIN,
      downloadBytes: e.DOWNLOAD_BUDGET_BYTES,
      downloadWindowMs: e.DOWNLOAD_BUDGET_WINDOW_MS,
      queueLog: e.RATE_LIMIT_QUEUE_LOG,
      ceremonyReads: e.RATE_LIMIT_CEREMONY_READS,
    }),
    trustProxy: e.TRUST_PROXY,
    openOnStart: e.OPEN_ON_START,
    beacon: Object.freeze({ rpcUrl: e.BEACON_RPC_URL, confirmations: e.BEACON_CONFIRMATIONS }),
    uploads: Object.freeze({ diskMarginBytes: e.UPLOAD_DISK_MARGIN_BYTES }),
    metricsToken: e.METRICS_TOKEN,
    env: Object.freeze({ ...env }),
  });
}
