/**
 * A byte budget per client address per window on the coordinator's own downloads (chain keys,
 * skeletons, final files, r1cs, ptau, the browser app's files): one address cannot make the
 * coordinator's uplink carry a 141 MB key forty times in a row. A CDN in front serves repeated
 * downloads from its cache (they are immutable under versioned URLs,
 * server/routes/immutable-download.ts); this caps what reaches the coordinator itself.
 *
 * A download reserves its whole length (the file, or the range asked for) before its first byte,
 * so parallel requests count at once; one that would take the address past its budget is refused
 * with `429 rate.limited` and `Retry-After` (when the window resets), and what a download did not
 * send (a 304, a HEAD, a client that went away) is given back when it ends, to the window it was
 * reserved in and never below zero (a download that outlives its window gives nothing to the next);
 * what it sent beyond its reservation (a range the planning took for honoured, sent whole) is
 * charged then. Who pays is the caller's choice (a client address, or a turn's holder). Counts live in
 * this process, or in Redis when the coordinator has one (shared by every coordinator process, kept
 * across restarts); a Redis outage lets downloads through rather than refuse everyone, as the
 * request rate limits do.
 *
 * The default (64 GiB a day) is more than a contributor's turn and an auditor's one fetch of
 * everything a ceremony of the service's size publishes (about 50 GB for 370 links of 2^18 keys),
 * so neither ever meets it (docs/security.md).
 */
import type { Redis } from 'ioredis';
import { defaultSettings } from '../config/setting.ts';
import { RATE_LIMIT_SETTINGS } from './rate-limit-settings.ts';

export interface DownloadBudgetConfig {
  /** Bytes one client address may download from the coordinator per window. */
  bytes: number;
  windowMs: number;
}

/** The DOWNLOAD_BUDGET_* settings' defaults (rate-limit-settings.ts). */
export const DOWNLOAD_BUDGET_DEFAULTS: DownloadBudgetConfig = Object.freeze({
  bytes: defaultSettings(RATE_LIMIT_SETTINGS.settings).DOWNLOAD_BUDGET_BYTES,
  windowMs: defaultSettings(RATE_LIMIT_SETTINGS.settings).DOWNLOAD_BUDGET_WINDOW_MS,
});

/**
 * A reservation granted, with the window it was counted in (what it did not send goes back to that
 * window only), or refused with how long until the window resets.
 */
export type Reservation = { granted: true; window: string } | { granted: false; retryAfterSeconds: number };

export interface DownloadBudget {
  readonly config: DownloadBudgetConfig;
  /** Reserves `bytes` for `client` in its current window, unless that takes it past the budget. */
  reserve(client: string, bytes: number): Promise<Reservation>;
  /**
   * Gives back `bytes` of a reservation made in `window` that were not sent: nothing once that window
   * is over (a later window never pays for an earlier one's), and never below zero.
   */
  giveBack(client: string, bytes: number, window: string): Promise<void>;
  /** Counts `bytes` sent beyond a reservation, past the budget or not: they were sent. */
  charge(client: string, bytes: number): Promise<void>;
}

/**
 * Counts in this process: one entry per client with a window under way, expired ones dropped as
 * they are met. A window is named by a number drawn when it starts, so a give-back to a window that
 * ended (and another that began since) changes nothing.
 */
export class MemoryDownloadBudget implements DownloadBudget {
  private readonly used = new Map<string, { bytes: number; resetAt: number; window: string }>();
  private windows = 0;

  constructor(
    readonly config: DownloadBudgetConfig,
    private readonly now: () => number = Date.now,
  ) {}

  async reserve(client: string, bytes: number): Promise<Reservation> {
    const now = this.now();
    const entry = this.current(client, now);
    if (entry.bytes + bytes > this.config.bytes)
      return { granted: false, retryAfterSeconds: Math.max(1, Math.ceil((entry.resetAt - now) / 1000)) };
    entry.bytes += bytes;
    return { granted: true, window: entry.window };
  }

  async giveBack(client: string, bytes: number, window: string): Promise<void> {
    const entry = this.used.get(client);
    if (entry && entry.window === window && entry.resetAt > this.now()) entry.bytes = Math.max(0, entry.bytes - bytes);
  }

  async charge(client: string, bytes: number): Promise<void> {
    this.current(client, this.now()).bytes += bytes;
  }

  /** The client's window under way, started now if none is. */
  private current(client: string, now: number): { bytes: number; resetAt: number; window: string } {
    for (const [other, entry] of this.used) if (entry.resetAt <= now) this.used.delete(other);
    let entry = this.used.get(client);
    if (!entry) {
      entry = { bytes: 0, resetAt: now + this.config.windowMs, window: String(++this.windows) };
      this.used.set(client, entry);
    }
    return entry;
  }
}

/*
 * In Redis, a client's window is a hash { used, window } whose key expires with the window; `window`
 * is drawn (INCR of a counter) when the window starts. The key's name changed with this layout
 * (dl2:): a count of the earlier layout (a plain integer) is left to expire.
 */

/**
 * Adds the reservation to the client's count, starting its window on the first; takes it back and
 * answers the time left when the count would pass the budget. Returns [granted (1/0), ms left, window].
 */
const RESERVE_SCRIPT = `
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'used', 0, 'window', redis.call('INCR', KEYS[2]))
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  left = tonumber(ARGV[3])
end
local used = tonumber(redis.call('HGET', KEYS[1], 'used'))
local window = redis.call('HGET', KEYS[1], 'window')
if used + tonumber(ARGV[1]) > tonumber(ARGV[2]) then return {0, left, window} end
redis.call('HINCRBY', KEYS[1], 'used', ARGV[1])
return {1, left, window}
`;

/** Takes unsent bytes back from the window they were reserved in, while it lasts, never below zero. */
const GIVE_BACK_SCRIPT = `
if redis.call('HGET', KEYS[1], 'window') ~= ARGV[2] then return 0 end
local used = tonumber(redis.call('HGET', KEYS[1], 'used'))
redis.call('HSET', KEYS[1], 'used', math.max(0, used - tonumber(ARGV[1])))
return 0
`;

/** Adds to the client's count, starting its window if none is under way. */
const CHARGE_SCRIPT = `
if redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'used', 0, 'window', redis.call('INCR', KEYS[2]))
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
redis.call('HINCRBY', KEYS[1], 'used', ARGV[1])
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
      const [granted, left, window] = (await this.redis.eval(
        RESERVE_SCRIPT,
        2,
        this.key(client),
        this.windowCounter(),
        String(bytes),
        String(this.config.bytes),
        String(this.config.windowMs),
      )) as [number, number, string];
      return granted === 1
        ? { granted: true, window: String(window) }
        : { granted: false, retryAfterSeconds: Math.max(1, Math.ceil(left / 1000)) };
    } catch {
      return { granted: true, window: 'uncounted' }; // Redis away: downloads go on uncounted
    }
  }

  async giveBack(client: string, bytes: number, window: string): Promise<void> {
    if (window === 'uncounted') return;
    await this.redis.eval(GIVE_BACK_SCRIPT, 1, this.key(client), String(bytes), window).catch(() => undefined);
  }

  async charge(client: string, bytes: number): Promise<void> {
    await this.redis
      .eval(CHARGE_SCRIPT, 2, this.key(client), this.windowCounter(), String(bytes), String(this.config.windowMs))
      .catch(() => undefined);
  }

  /** The client's window (hash: used, window). */
  private key(client: string): string {
    return `${this.prefix}:dl2:${client}`;
  }

  /** Draws the windows' names: never reused, so a give-back can tell its window from a later one. */
  private windowCounter(): string {
    return `${this.prefix}:dl2-windows`;
  }
}
