/**
 * Request rate limits (express-rate-limit) for the routes an abuser would hammer: every sign-in
 * route (per client address), device-flow polls (per address), Semaphore challenge creation (per address), upload
 * creation and the PATCH and HEAD requests of uploads (per signed-in contributor, else per address), joins of the
 * queues (per contributor: see `join`), pages of the public queue log (per address), whole answers of the
 * ceremony, its transcript and its manifest (per address; a 304 is free), a contributor's own requests (their view,
 * presence streams opened, heartbeats) and their receipts (per contributor); and the byte budget of the file
 * downloads per address (download-budget.ts). Counts live in this process, or in Redis when the coordinator has one
 * (rate-limit-redis), so they are shared by every coordinator process and survive a restart. A refusal is
 * `429 rate.limited` (joins: `429 lobby.too_many_joins`; the reads of the ceremony: `429 rate.ceremony_reads`; upload
 * PATCH and HEAD: `429 rate.upload_requests`; a contributor's own requests: `429 rate.contributor_requests`; their
 * receipts: `429 rate.receipt_reads`) with `Retry-After` (seconds) and, for request counts, the
 * `RateLimit`/`RateLimit-Policy` headers of the IETF draft.
 */
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { Redis } from 'ioredis';
import { CoordinatorError, type ErrorCode } from '../../core/errors.ts';
import type { Principal } from '../auth/principal.ts';
import { defaultSettings } from '../config/setting.ts';
import { RATE_LIMIT_SETTINGS, rateLimitsOf } from './rate-limit-settings.ts';
import {
  DOWNLOAD_BUDGET_DEFAULTS,
  MemoryDownloadBudget,
  RedisDownloadBudget,
  type DownloadBudget,
} from './download-budget.ts';

export interface RateLimitConfig {
  /** The window every limit counts in, in ms. */
  windowMs: number;
  /** Sign-in attempts (any method, successful or not) per client address per window. */
  signIn: number;
  /** Semaphore challenges per client address per window. */
  challenge: number;
  /**
   * Device-flow polls per client address per window. A terminal polls each of its sign-ins every
   * 5 s (12 a minute) and an address holds at most 5 at once; a poll sooner than its interval is
   * answered without asking GitHub, but still costs the coordinator a lookup.
   */
  devicePoll: number;
  /** tus upload creations (POST) per contributor per window. */
  uploadCreation: number;
  /**
   * tus PATCH and HEAD requests together per contributor per window. An honest client sends a PATCH per 2 MiB of a
   * delta, or per 8 MiB (at most about 20) of a whole key, and a HEAD when it resumes.
   */
  uploadRequests?: number;
  /**
   * POST /api/me/join per contributor per window. Each join (and the leave it makes possible) is an entry of the
   * public queue log and a signed receipt, kept for good; an honest client joins once, and again now and then (a
   * change of circuits, a run after a Ctrl-C). Leaving is not limited: it must always work, and a leave logs
   * something only after a join or a step of the ceremony (a grant, a verdict) put the contributor somewhere.
   */
  join: number;
  /** Bytes of files one client address may download from the coordinator per `downloadWindowMs` (default 64 GiB). */
  downloadBytes?: number;
  /** The download budget's own window (a day by default: an auditor's fetch of everything takes hours). */
  downloadWindowMs?: number;
  /** Pages of GET /api/queue-log per client address per window (each at most 1000 entries). */
  queueLog: number;
  /**
   * Whole answers of GET /api/ceremony and /api/transcript together per client address per window (a 304 to a
   * revalidation is not counted). At 1,800 links each is a few MB.
   */
  ceremonyReads?: number;
  /**
   * A signed-in contributor's GET /api/me, GET /api/me/presence (each stream opened) and POST …/heartbeat together, per
   * contributor per window. The page polls every 250 ms while its contribution is checked (240 a minute) and a
   * contributor may have a few pages or terminals open.
   */
  contributorRequests?: number;
  /** GET /api/me/receipts per contributor per window (each at most 1000 step receipts). */
  receiptReads?: number;
}

/** The settings' defaults (rate-limit-settings.ts). */
export const RATE_LIMIT_DEFAULTS: Required<RateLimitConfig> = Object.freeze(
  rateLimitsOf(defaultSettings(RATE_LIMIT_SETTINGS.settings)),
);

export interface RateLimits {
  signIn: RequestHandler;
  challenge: RequestHandler;
  devicePoll: RequestHandler;
  uploadCreation: RequestHandler;
  /** PATCH and HEAD of the uploads (per contributor): `429 rate.upload_requests`. */
  uploadRequests: RequestHandler;
  join: RequestHandler;
  /** The byte budget of the file downloads, per client address. */
  downloads: DownloadBudget;
  queueLog: RequestHandler;
  ceremonyReads: RequestHandler;
  contributorRequests: RequestHandler;
  receiptReads: RequestHandler;
}

export interface RateLimitOptions {
  config: RateLimitConfig;
  /** Share counts through this Redis connection; in memory when absent. */
  redis?: Redis;
  /** Key prefix in Redis (one ceremony's coordinators share counts, another's do not). */
  prefix?: string;
}

export const byAddress = (req: Request): string => ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown');

/** The signed-in contributor (the session middleware ran first), else the client address. */
const byPrincipal = (req: Request): string => {
  const principal = (req as Request & { principal?: Principal }).principal;
  return principal ? `principal:${principal.id}` : byAddress(req);
};

export function createRateLimits(options: RateLimitOptions): RateLimits {
  const { config } = options;
  const redis = options.redis;
  const downloadBudget = {
    bytes: config.downloadBytes ?? DOWNLOAD_BUDGET_DEFAULTS.bytes,
    windowMs: config.downloadWindowMs ?? DOWNLOAD_BUDGET_DEFAULTS.windowMs,
  };
  const store = (name: string): Store | undefined =>
    redis
      ? new RedisStore({
          prefix: `${options.prefix ?? 'ceremony'}:rl:${name}:`,
          sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
        })
      : undefined;
  const limiter = (
    name: string,
    limit: number,
    what: string,
    keyGenerator: (req: Request) => string,
    code: ErrorCode = 'rate.limited',
    free?: (res: Response) => boolean,
  ): RequestHandler => {
    const shared = store(name);
    return rateLimit({
      windowMs: config.windowMs,
      limit,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      // A Redis outage must not lock everyone out of signing in: count nothing rather than refuse.
      passOnStoreError: true,
      keyGenerator,
      // A request `free` deems so is taken back from the count once answered.
      ...(free ? { skipSuccessfulRequests: true, requestWasSuccessful: (_req, res) => free(res) } : {}),
      ...(shared ? { store: shared } : {}),
      handler: (req, _res, next) => {
        const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
        const seconds = resetTime
          ? Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000))
          : Math.ceil(config.windowMs / 1000);
        next(
          new CoordinatorError(
            code,
            `Too many ${what}: at most ${limit} per ${Math.round(config.windowMs / 1000)} s; try again in ${seconds} s`,
            { retryAfterSeconds: seconds },
          ),
        );
      },
    });
  };
  return {
    signIn: limiter('sign-in', config.signIn, 'sign-in attempts from this address', byAddress),
    challenge: limiter('challenge', config.challenge, 'sign-in challenges from this address', byAddress),
    devicePoll: limiter('device-poll', config.devicePoll, 'device sign-in polls from this address', byAddress),
    queueLog: limiter('queue-log', config.queueLog, 'queue-log pages from this address', byAddress),
    ceremonyReads: limiter(
      'ceremony-reads',
      config.ceremonyReads ?? RATE_LIMIT_DEFAULTS.ceremonyReads,
      'reads of the ceremony and its transcript from this address',
      byAddress,
      'rate.ceremony_reads',
      (res) => res.statusCode === 304,
    ),
    uploadCreation: limiter('upload', config.uploadCreation, 'uploads started', byPrincipal),
    uploadRequests: limiter(
      'upload-requests',
      config.uploadRequests ?? RATE_LIMIT_DEFAULTS.uploadRequests,
      'upload requests (PATCH, HEAD)',
      byPrincipal,
      'rate.upload_requests',
    ),
    contributorRequests: limiter(
      'contributor',
      config.contributorRequests ?? RATE_LIMIT_DEFAULTS.contributorRequests,
      'requests for your status, presence streams and heartbeats',
      byPrincipal,
      'rate.contributor_requests',
    ),
    receiptReads: limiter(
      'receipts',
      config.receiptReads ?? RATE_LIMIT_DEFAULTS.receiptReads,
      'reads of your receipts',
      byPrincipal,
      'rate.receipt_reads',
    ),
    join: limiter('join', config.join, 'joins of the queue', byPrincipal, 'lobby.too_many_joins'),
    downloads: options.redis
      ? new RedisDownloadBudget(downloadBudget, options.redis, `${options.prefix ?? 'ceremony'}:rl`)
      : new MemoryDownloadBudget(downloadBudget),
  };
}
