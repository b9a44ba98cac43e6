/**
 * Request rate limits (express-rate-limit) for the routes an abuser would hammer: every sign-in
 * route (per client address), device-flow polls (per address), Semaphore challenge creation (per address), upload
 * creation (per signed-in contributor, else per address), joins of the queues (per contributor: see `join`),
 * pages of the public queue log (per address) and whole answers of the ceremony and its transcript (per address; a
 * 304 is free); and the byte budget of the file downloads per address (download-budget.ts). Counts live in this
 * process, or in Redis when the coordinator has one (rate-limit-redis), so they are shared by every coordinator
 * process and survive a restart. A refusal is `429 rate.limited` (joins: `429 lobby.too_many_joins`; the reads of
 * the ceremony: `429 rate.ceremony_reads`) with `Retry-After` (seconds) and, for request counts, the
 * `RateLimit`/`RateLimit-Policy` headers of the IETF draft.
 */
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { Redis } from 'ioredis';
import { CoordinatorError, type ErrorCode } from '../../core/errors.ts';
import type { Principal } from '../auth/principal.ts';
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
}

export const RATE_LIMIT_DEFAULTS: Required<RateLimitConfig> = Object.freeze({
  windowMs: 60_000,
  signIn: 20,
  challenge: 20,
  devicePoll: 120,
  uploadCreation: 30,
  join: 10,
  downloadBytes: DOWNLOAD_BUDGET_DEFAULTS.bytes,
  downloadWindowMs: DOWNLOAD_BUDGET_DEFAULTS.windowMs,
  queueLog: 120,
  ceremonyReads: 240,
});

export interface RateLimits {
  signIn: RequestHandler;
  challenge: RequestHandler;
  devicePoll: RequestHandler;
  uploadCreation: RequestHandler;
  join: RequestHandler;
  /** The byte budget of the file downloads, per client address. */
  downloads: DownloadBudget;
  queueLog: RequestHandler;
  ceremonyReads: RequestHandler;
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
    join: limiter('join', config.join, 'joins of the queue', byPrincipal, 'lobby.too_many_joins'),
    downloads: options.redis
      ? new RedisDownloadBudget(downloadBudget, options.redis, `${options.prefix ?? 'ceremony'}:rl`)
      : new MemoryDownloadBudget(downloadBudget),
  };
}
