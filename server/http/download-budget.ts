/**
 * A byte budget per client address per window on the coordinator's own downloads (chain keys,
 * skeletons, final files, r1cs, ptau): one address cannot make the coordinator's uplink carry a
 * 141 MB key forty times in a row. A CDN in front serves repeated downloads from its cache (they
 * are immutable under versioned URLs, server/routes/immutable-download.ts); this caps what reaches
 * the coordinator itself.
 *
 * A download reserves its whole length (the file, or the range asked for) before its first byte,
 * so parallel requests count at once; one that would take the address past its budget is refused
 * with `429 rate.limited` and `Retry-After` (when the window resets), and what a download did not
 * send (a 304, a HEAD, a client that went away) is given back when it ends; what it sent beyond its
 * reservation (a range the planning took for honoured, sent whole) is charged then. Counts live in
 * this process, or in Redis when the coordinator has one (shared by every coordinator process, kept
 * across restarts); a Redis outage lets downloads through rather than refuse everyone, as the
 * request rate limits do.
 *
 * The default (64 GiB a day) is more than a contributor's turn and an auditor's one fetch of
 * everything a ceremony of the service's size publishes (about 50 GB for 370 links of 2^18 keys),
 * so neither ever meets it (docs/security.md).
 */
import type { Redis } from 'ioredis';

export interface DownloadBudgetConfig {
  /** Bytes one client address may download from the coordinator per window. */
  bytes: number;
  windowMs: number;
}

export const DOWNLOAD_BUDGET_DEFAULTS: DownloadBudgetConfig = Object.freeze({
  bytes: 64 * 1024 ** 3,
  windowMs: 24 * 60 * 60 * 1000,
});

/** A reservation granted, or refused with how long until the window resets. */
export type Reservation = { granted: true } | { granted: false; retryAfterSeconds: number };

export interface DownloadBudget {
  readonly config: DownloadBudgetConfig;
  /** Reserves `bytes` for `client` in its current window, unless that takes it past the budget. */
  reserve(client: string, bytes: number): Promise<Reservation>;
  /** Gives back `bytes` of a reservation that were not sent. */
  giveBack(client: string, bytes: number): Promise<void>;
  /** Counts `bytes` sent beyond a reservation, past the budget or not: they were sent. */
  charge(client: string, bytes: number): Promise<void>;
}

/** Counts in this process: one entry per address with a window under way, expired ones dropped as they are met. */
export class MemoryDownloadBudget implements DownloadBudget {
  private readonly used = new Map<string, { bytes: number; resetAt: number }>();

  constructor(
    readonly config: DownloadBudgetConfig,
    private readonly now: () => number = Date.now,
  ) {}

  async reserve(client: string, bytes: number): Promise<Reservation> {
    const now = this.now();
    this.dropExpired(now);
    const entry = this.used.get(client) ?? { bytes: 0, resetAt: now + this.config.windowMs };
    if (entry.bytes + bytes > this.config.bytes)
      return { granted: false, retryAfterSeconds: Math.max(1, Math.ceil((entry.resetAt - now) / 1000)) };
    entry.bytes += bytes;
    this.used.set(client, entry);
    return { granted: true };
  }

  async giveBack(client: string, bytes: number): Promise<void> {
    const entry = this.used.get(client);
    if (entry) entry.bytes = Math.max(0, entry.bytes - bytes);
  }

  async charge(client: string, bytes: number): Promise<void> {
    const now = this.now();
    this.dropExpired(now);
    const entry = this.used.get(client) ?? { bytes: 0, resetAt: now + this.config.windowMs };
    entry.bytes += bytes;
    this.used.set(client, entry);
  }

  private dropExpired(now: number): void {
    for (const [client, entry] of this.used) if (entry.resetAt <= now) this.used.delete(client);
  }
}

/**
 * Adds the reservation to the address's count, starting its window on the first; takes it back and
 * answers the time left when the count would pass the budget. Returns [granted (1/0), ms left].
 */
const RESERVE_SCRIPT = `
local used = redis.call('INCRBY', KEYS[1], ARGV[1])
if used == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]); left = tonumber(ARGV[3]) end
if used > tonumber(ARGV[2]) then
  redis.call('DECRBY', KEYS[1], ARGV[1])
  return {0, left}
end
return {1, left}
`;

/** Takes back unsent bytes from a window still under way (never from one that expired meanwhile). */
const GIVE_BACK_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DECRBY', KEYS[1], ARGV[1]) end
return 0
`;

/** Adds to the address's count, starting its window if none is under way. */
const CHARGE_SCRIPT = `
local used = redis.call('INCRBY', KEYS[1], ARGV[1])
if used == tonumber(ARGV[1]) or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/** Counts in Redis, shared by every coordinator process of the ceremony (`prefix`). */
export class RedisDownloadBudget implements DownloadBudget {
  constructor(
    readonly config: DownloadBudgetConfig,
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async reserve(client: string, bytes: number): Promise<Reservation> {
    try {
      const [granted, left] = (await this.redis.eval(
        RESERVE_SCRIPT,
        1,
        this.key(client),
        String(bytes),
        String(this.config.bytes),
        String(this.config.windowMs),
      )) as [number, number];
      return granted === 1
        ? { granted: true }
        : { granted: false, retryAfterSeconds: Math.max(1, Math.ceil(left / 1000)) };
    } catch {
      return { granted: true }; // Redis away: downloads go on uncounted
    }
  }

  async giveBack(client: string, bytes: number): Promise<void> {
    await this.redis.eval(GIVE_BACK_SCRIPT, 1, this.key(client), String(bytes)).catch(() => undefined);
  }

  async charge(client: string, bytes: number): Promise<void> {
    await this.redis
      .eval(CHARGE_SCRIPT, 1, this.key(client), String(bytes), String(this.config.windowMs))
      .catch(() => undefined);
  }

  private key(client: string): string {
    return `${this.prefix}:dl:${client}`;
  }
}
