/**
 * The coordinator's configuration, from the environment (and `ceremony serve` flags), validated
 * once at start-up into a frozen object: a bad value stops the start with `config.invalid` naming
 * the variable. Each setting is declared once, below or in auth-env.ts (sign-in), with its schema,
 * its default and its doc line; `serve --help` and docs/operations.md are generated from them
 * (settings-doc.ts). Every default works on a machine with nothing but Node: SQLite in the data
 * folder, an embedded verifier process, loopback only.
 */
import path from 'node:path';
import { z } from 'zod';
import { LOBBY_DEFAULTS } from '../lobby/lobby-types.ts';
import { QUEUE_LOG_FILE } from '../../core/queue-log/queue-log-entry.ts';
import { RATE_LIMIT_DEFAULTS, type RateLimitConfig } from '../http/rate-limits.ts';
import { descriptorBudget, type DescriptorBudget } from '../http/descriptor-budget.ts';
import { parseTrustedProxies } from '../http/trusted-proxies.ts';
import { HTTP_TIMEOUT_DEFAULTS } from '../http/server-timeouts.ts';
import { DOWNLOADS_PER_ADDRESS } from '../http/download-slots.ts';
import { SLOW_READER_DEFAULTS } from '../http/slow-reader-guard.ts';
import { DEFAULT_CONFIRMATIONS } from '../../core/finalise/beacon-announcement.ts';
import { booleanSetting, declareSettings, schemaOfSettings, settingsError } from './setting.ts';
import { parseSignInEnv, type SignInEnv } from './auth-env.ts';

const durationMs = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const offOrMs = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);
const count = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** Every setting of the coordinator but sign-in's (auth-env.ts): variable name, schema with its default, doc line. */
export const SERVER_SETTINGS = declareSettings({
  CEREMONY_DATA: {
    group: 'serving',
    schema: z.string().default('ceremony-data'),
    doc: 'the data folder: ceremony.json, circuits, chains, transcript (state/ and uploads/ are added)',
    flag: '--data',
  },
  HOST: {
    group: 'serving',
    schema: z.string().default('127.0.0.1'),
    doc: 'the interface to listen on; loopback by default: put a TLS proxy in front for the public',
    flag: '--host',
  },
  PORT: {
    group: 'serving',
    schema: z.coerce.number().int().min(0).max(65535).default(8080),
    doc: 'the port to listen on',
    flag: '--port',
  },
  PUBLIC_URL: {
    group: 'serving',
    schema: z.string().url().optional(),
    doc: 'the public base URL: OAuth callback, links, CORS origin, HSTS when https',
    unset: 'http://HOST:PORT',
  },
  REDIS_URL: {
    group: 'serving',
    schema: z.string().url().optional(),
    doc: 'verification by BullMQ workers (`ceremony worker`), and rate limits shared in Redis',
    unset: 'none: one embedded verifier process',
  },
  DATABASE_FILE: {
    group: 'serving',
    schema: z.string().optional(),
    doc: 'the SQLite database',
    unset: 'DATA/state/coordinator.sqlite',
  },
  RECEIPT_KEY_FILE: {
    group: 'serving',
    schema: z.string().optional(),
    doc: 'the Ed25519 key signing receipts, created on first start',
    unset: 'DATA/state/receipt-key.pem',
  },
  QUEUE_LOG_FILE: {
    group: 'serving',
    schema: z.string().optional(),
    doc:
      "the public queue log's file, a mirror of the database's log that `ceremony publish` copies; one coordinator " +
      'serves a data folder (a second is refused, ceremony.already_served), so leave it',
    unset: 'DATA/transcript/queue-log.jsonl',
  },
  PRESENCE_MS: {
    group: 'turns',
    schema: offOrMs(LOBBY_DEFAULTS.presenceMs),
    doc: "a waiting entry not seen (its client's polls) for this long is passed over, its place kept; 0: off",
  },
  TAKE_TURN_MS: {
    group: 'turns',
    schema: offOrMs(LOBBY_DEFAULTS.takeTurnMs),
    doc: 'a granted turn not taken (first download or heartbeat) within this passes on, a missed turn; 0: off',
  },
  TURN_TIMEOUT_MS: {
    group: 'turns',
    schema: durationMs(LOBBY_DEFAULTS.turnTimeoutMs),
    doc: 'how long a turn lasts; each heartbeat extends it by HEARTBEAT_EXTENSION_MS, never past MAX_TURN_MS',
  },
  TURN_SILENCE_MS: {
    group: 'turns',
    schema: offOrMs(LOBBY_DEFAULTS.turnSilenceMs),
    doc: 'a taken turn whose client sends nothing (heartbeat, download, upload) for this long is missed; 0: off',
  },
  DISCONNECT_GRACE_MS: {
    group: 'turns',
    schema: offOrMs(LOBBY_DEFAULTS.disconnectGraceMs),
    doc:
      'a contributor whose presence stream closed and who is not seen again within this is passed over (place ' +
      'kept), and a turn granted and not yet taken passes on; 0: a closed stream means nothing',
  },
  UPLOAD_START_MS: {
    group: 'turns',
    schema: offOrMs(LOBBY_DEFAULTS.uploadStartMs),
    doc:
      'a taken turn none of whose upload arrived within this of its grant is missed (heartbeats alone do not hold ' +
      "a turn): it must cover the slowest machine's whole-key contribution; 0: off",
  },
  UPLOAD_STALL_MS: {
    group: 'turns',
    schema: offOrMs(LOBBY_DEFAULTS.uploadStallMs),
    doc:
      'a taken turn whose upload, once started, gains less than 64 KiB, or than the pace that ends it within ' +
      'MAX_TURN_MS if more, for this long is missed; 0: off',
  },
  MAX_PRESENCE_STREAMS: {
    group: 'turns',
    schema: z.coerce.number().int().nonnegative().optional(),
    doc:
      'presence streams (GET /api/me/presence) open at once, each a file descriptor; beyond it, clients keep their ' +
      'place by polling',
    unset: 'half the connections the soft limit of open files allows at start, at most 10 000 (docs/security.md)',
  },
  MAX_DOWNLOADS: {
    group: 'limits',
    schema: z.coerce.number().int().positive().optional(),
    doc:
      'file downloads (keys, inputs, r1cs, ptau, final files) in progress at once, all clients together; beyond, ' +
      "503 download.server_busy; a turn's holder's own downloads are not counted",
    unset: 'an eighth of the open files left beyond a reserve at start, at most 2000',
  },
  MAX_DOWNLOADS_PER_ADDRESS: {
    group: 'limits',
    schema: count(DOWNLOADS_PER_ADDRESS),
    doc: "file downloads in progress at once per client address (a turn's holder: for their turn); beyond, 429",
  },
  MIN_TRANSFER_BYTES_PER_SECOND: {
    group: 'limits',
    schema: z.coerce.number().int().nonnegative().default(SLOW_READER_DEFAULTS.minBytesPerSecond),
    doc:
      'the least a client must read of any answer per second, on average over MIN_TRANSFER_WINDOW_MS, while the ' +
      'answer waits for it; slower, its connection is closed; 0: no minimum',
  },
  MIN_TRANSFER_WINDOW_MS: {
    group: 'limits',
    schema: durationMs(SLOW_READER_DEFAULTS.windowMs),
    doc: 'the window of MIN_TRANSFER_BYTES_PER_SECOND',
  },
  HTTP_KEEP_ALIVE_MS: {
    group: 'serving',
    schema: durationMs(HTTP_TIMEOUT_DEFAULTS.keepAliveMs),
    doc:
      "how long an idle keep-alive connection is kept: above a reverse proxy's own idle timeout for its " +
      'connections to the coordinator (nginx: 60 s), or the proxy may send a request on a connection being closed',
  },
  HEARTBEAT_EXTENSION_MS: {
    group: 'turns',
    schema: durationMs(LOBBY_DEFAULTS.heartbeatExtensionMs),
    doc: "how far each heartbeat pushes a turn's deadline",
  },
  MAX_TURN_MS: {
    group: 'turns',
    schema: durationMs(LOBBY_DEFAULTS.maxTurnMs),
    doc: 'the longest a turn may last from its start, heartbeats included',
  },
  COOLDOWN_MS: {
    group: 'turns',
    schema: durationMs(LOBBY_DEFAULTS.cooldownMs),
    doc:
      'an entry a missed turn sends to the back of the queue (a refusal aside) is eligible again after this; a ' +
      'join past MAX_MISSED_TURNS waits it, doubled per miss beyond',
  },
  UPLOAD_DISK_MARGIN_BYTES: {
    group: 'limits',
    schema: z.coerce
      .number()
      .int()
      .nonnegative()
      .max(Number.MAX_SAFE_INTEGER)
      .default(1024 ** 3),
    doc:
      "free space the data folder's disk keeps beyond the largest possible upload (and what uploads under way " +
      'will still write); below it, new uploads are refused (upload.disk_full)',
  },
  MAX_MISSED_TURNS: {
    group: 'turns',
    schema: count(LOBBY_DEFAULTS.maxMissedTurns),
    doc:
      'missed turns in one circuit (every turn ended without a contribution, never reset) after which the entry ' +
      'leaves the queue (the contributor sees why)',
  },
  RATE_LIMIT_WINDOW_MS: {
    group: 'limits',
    schema: durationMs(RATE_LIMIT_DEFAULTS.windowMs),
    doc: 'the window of every RATE_LIMIT_* count below (docs/security.md, rate limits)',
  },
  RATE_LIMIT_SIGN_IN: {
    group: 'limits',
    schema: count(RATE_LIMIT_DEFAULTS.signIn),
    doc: 'sign-in attempts per client address, successful or not',
  },
  RATE_LIMIT_CHALLENGE: {
    group: 'limits',
    schema: count(RATE_LIMIT_DEFAULTS.challenge),
    doc: 'Semaphore sign-in challenges per client address',
  },
  RATE_LIMIT_DEVICE_POLL: {
    group: 'limits',
    schema: count(RATE_LIMIT_DEFAULTS.devicePoll),
    doc: "polls of GitHub's device flow per client address",
  },
  RATE_LIMIT_UPLOAD_CREATION: {
    group: 'limits',
    schema: count(RATE_LIMIT_DEFAULTS.uploadCreation),
    doc: 'uploads started per contributor',
  },
  RATE_LIMIT_UPLOAD_REQUESTS: {
    group: 'limits',
    schema: count(RATE_LIMIT_DEFAULTS.uploadRequests),
    doc:
      "PATCH and HEAD requests of a contributor's uploads together (a PATCH per 2 MiB of a delta, per 8 MiB of a " +
      'whole key); beyond, 429 rate.upload_requests',
  },
  RATE_LIMIT_JOIN: {
    group: 'limits',
    schema: count(RATE_LIMIT_DEFAULTS.join),
    doc: 'joins of the queue per contributor',
  },
  RATE_LIMIT_QUEUE_LOG: {
    group: 'limits',
    schema: count(RATE_LIMIT_DEFAULTS.queueLog),
    doc: 'reads of the public queue log per client address',
  },
  RATE_LIMIT_CEREMONY_READS: {
    group: 'limits',
    schema: count(RATE_LIMIT_DEFAULTS.ceremonyReads),
    doc:
      'whole answers of GET /api/ceremony, /api/transcript, /api/manifest and /api/receipt-key per client address ' +
      '(a 304 is free)',
  },
  RATE_LIMIT_CONTRIBUTOR_REQUESTS: {
    group: 'limits',
    schema: count(RATE_LIMIT_DEFAULTS.contributorRequests),
    doc: "a contributor's GET /api/me, presence streams opened and heartbeats together",
  },
  RATE_LIMIT_RECEIPTS: {
    group: 'limits',
    schema: count(RATE_LIMIT_DEFAULTS.receiptReads),
    doc: "a contributor's GET /api/me/receipts",
  },
  DOWNLOAD_BUDGET_BYTES: {
    group: 'limits',
    schema: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).default(RATE_LIMIT_DEFAULTS.downloadBytes),
    doc:
      "bytes of files (keys, skeletons, final files, r1cs, ptau, the app's) one client address may download per " +
      "DOWNLOAD_BUDGET_WINDOW_MS (429 rate.limited beyond): more than a turn and an auditor's fetch of everything",
  },
  DOWNLOAD_BUDGET_WINDOW_MS: {
    group: 'limits',
    schema: durationMs(RATE_LIMIT_DEFAULTS.downloadWindowMs),
    doc: 'the window of DOWNLOAD_BUDGET_BYTES',
  },
  TRUST_PROXY: {
    group: 'limits',
    schema: z
      .string()
      .optional()
      .transform((raw, ctx) => {
        const parsed = parseTrustedProxies(raw ?? '');
        if ('proxies' in parsed) return parsed.proxies;
        ctx.addIssue({ code: 'custom', message: parsed.refused });
        return z.NEVER;
      }),
    doc:
      'the reverse proxies whose X-Forwarded-For names the client (rate limits and the download budget key on ' +
      'its address), by the addresses they connect from: addresses and CIDRs, comma-separated (172.28.0.0/16; ' +
      'loopback for a proxy on this machine); never a hop count',
    unset: 'none: every client is the address it connects from',
  },
  BEACON_RPC_URL: {
    group: 'beacon',
    schema: z.string().url().optional(),
    doc:
      "a JSON-RPC endpoint of the beacon's chain: the console's announcement checks the block is still ahead, " +
      'finalise reads its hash (never logged or sent: it may carry an API key)',
    unset: 'none: the console cannot announce, and its finalise takes the beacon as given',
  },
  BEACON_CONFIRMATIONS: {
    group: 'beacon',
    schema: z.coerce.number().int().nonnegative().default(DEFAULT_CONFIRMATIONS),
    doc: 'blocks on top of the announced one before finalise takes its hash (Ethereum finalises in 64)',
  },
  OPEN_ON_START: {
    group: 'serving',
    schema: booleanSetting(false),
    doc: 'open the ceremony at start (test networks and demos; production opens from the console)',
    flag: '--open',
  },
  METRICS_TOKEN: {
    group: 'metrics',
    schema: z
      .string()
      .regex(
        /^[A-Za-z0-9._~+/=-]{16,256}$/,
        'must be 16 to 256 characters usable in a bearer token (letters, digits, . _ ~ + / = -)',
      )
      .optional(),
    doc: 'lets a Prometheus scraper read GET /metrics from outside loopback with `Authorization: Bearer TOKEN`',
    unset: 'none: loopback only',
  },
});

const serverSchema = schemaOfSettings(SERVER_SETTINGS);

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
  /** The file downloads' limits (server/http/download-slots.ts). */
  downloads: { perAddress: number; total: number };
  /** The minimum transfer rate of every answer (server/http/slow-reader-guard.ts). */
  slowReaders: { minBytesPerSecond: number; windowMs: number };
  /** The HTTP server's connections (server/http/server-timeouts.ts). */
  http: { keepAliveMs: number; maxConnections: number };
  /** How the soft limit of open files was shared out (its figures are defaults of the settings above). */
  descriptors: DescriptorBudget;
  lobby: {
    presenceMs: number;
    takeTurnMs: number;
    turnTimeoutMs: number;
    turnSilenceMs: number;
    disconnectGraceMs: number;
    uploadStartMs: number;
    uploadStallMs: number;
    heartbeatExtensionMs: number;
    maxTurnMs: number;
    cooldownMs: number;
    maxMissedTurns: number;
  };
  rateLimits: RateLimitConfig;
  /** The trusted proxies' addresses, CIDRs or named ranges (Express `trust proxy`); empty: none. */
  trustProxy: readonly string[];
  openOnStart: boolean;
  /** BEACON_RPC_URL and BEACON_CONFIRMATIONS. */
  beacon: { rpcUrl: string | undefined; confirmations: number };
  uploads: { diskMarginBytes: number };
  /** METRICS_TOKEN, when set. */
  metricsToken: string | undefined;
  /** The sign-in settings, validated here and turned into the auth section at start (auth-env.ts). */
  signIn: SignInEnv;
}

export function loadServerConfig(
  env: Record<string, string | undefined>,
  overrides: Partial<Record<keyof ServerEnv, string>> = {},
): ServerConfig {
  const parsed = serverSchema.safeParse({
    ...env,
    ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)),
  });
  if (!parsed.success) throw settingsError('server', parsed.error);
  const signIn = parseSignInEnv(env);
  const e = parsed.data;
  const dataDir = path.resolve(e.CEREMONY_DATA);
  const descriptors = descriptorBudget();
  return Object.freeze({
    dataDir,
    host: e.HOST,
    port: e.PORT,
    publicUrl: (e.PUBLIC_URL ?? `http://${e.HOST.includes(':') ? `[${e.HOST}]` : e.HOST}:${e.PORT}`).replace(/\/$/, ''),
    redisUrl: e.REDIS_URL,
    databaseFile: path.resolve(e.DATABASE_FILE ?? path.join(dataDir, 'state', 'coordinator.sqlite')),
    receiptKeyFile: path.resolve(e.RECEIPT_KEY_FILE ?? path.join(dataDir, 'state', 'receipt-key.pem')),
    queueLogFile: path.resolve(e.QUEUE_LOG_FILE ?? path.join(dataDir, QUEUE_LOG_FILE)),
    maxPresenceStreams: e.MAX_PRESENCE_STREAMS ?? descriptors.maxPresenceStreams,
    downloads: Object.freeze({
      perAddress: e.MAX_DOWNLOADS_PER_ADDRESS,
      total: e.MAX_DOWNLOADS ?? descriptors.maxDownloads,
    }),
    slowReaders: Object.freeze({
      minBytesPerSecond: e.MIN_TRANSFER_BYTES_PER_SECOND,
      windowMs: e.MIN_TRANSFER_WINDOW_MS,
    }),
    http: Object.freeze({ keepAliveMs: e.HTTP_KEEP_ALIVE_MS, maxConnections: descriptors.maxConnections }),
    descriptors: Object.freeze(descriptors),
    lobby: Object.freeze({
      presenceMs: e.PRESENCE_MS,
      takeTurnMs: e.TAKE_TURN_MS,
      turnTimeoutMs: e.TURN_TIMEOUT_MS,
      turnSilenceMs: e.TURN_SILENCE_MS,
      disconnectGraceMs: e.DISCONNECT_GRACE_MS,
      uploadStartMs: e.UPLOAD_START_MS,
      uploadStallMs: e.UPLOAD_STALL_MS,
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
      uploadRequests: e.RATE_LIMIT_UPLOAD_REQUESTS,
      join: e.RATE_LIMIT_JOIN,
      downloadBytes: e.DOWNLOAD_BUDGET_BYTES,
      downloadWindowMs: e.DOWNLOAD_BUDGET_WINDOW_MS,
      queueLog: e.RATE_LIMIT_QUEUE_LOG,
      ceremonyReads: e.RATE_LIMIT_CEREMONY_READS,
      contributorRequests: e.RATE_LIMIT_CONTRIBUTOR_REQUESTS,
      receiptReads: e.RATE_LIMIT_RECEIPTS,
    }),
    trustProxy: Object.freeze([...e.TRUST_PROXY]),
    openOnStart: e.OPEN_ON_START,
    beacon: Object.freeze({ rpcUrl: e.BEACON_RPC_URL, confirmations: e.BEACON_CONFIRMATIONS }),
    uploads: Object.freeze({ diskMarginBytes: e.UPLOAD_DISK_MARGIN_BYTES }),
    metricsToken: e.METRICS_TOKEN,
    signIn,
  });
}
