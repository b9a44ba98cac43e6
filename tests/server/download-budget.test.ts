/**
 * The download budget's give-back, in this process and in a real Redis: what a download did not
 * send goes back to the window it was reserved in, never to a later one (a key download that
 * outlived its window would otherwise hand the next window bytes nobody gave it), and a count never
 * goes below zero (a give-back more than the count would otherwise be a credit).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { waitUntil } from '../helpers/wait-until.ts';
import {
  MemoryDownloadBudget,
  RedisDownloadBudget,
  type DownloadBudget,
  type Reservation,
} from '../../server/http/download-budget.ts';

const BYTES = 1000;
const WINDOW_MS = 300;

function windowOf(reservation: Reservation): string {
  assert.ok(reservation.granted, 'granted');
  return (reservation as { window: string }).window;
}

/** The same checks on both counts; `windowPasses` lets the first window end. */
function giveBackChecks(make: () => DownloadBudget, windowPasses: () => Promise<void>): void {
  test('a give-back to a window that ended changes nothing in the next one', async () => {
    const budget = make();
    const first = await budget.reserve('203.0.113.1', 800);
    await windowPasses();
    assert.ok((await budget.reserve('203.0.113.1', 600)).granted, 'a new window');
    // The first download ends now, having sent nothing: its 800 bytes belonged to the window that ended.
    await budget.giveBack('203.0.113.1', 800, windowOf(first));
    assert.equal((await budget.reserve('203.0.113.1', 500)).granted, false, '600 + 500 is past the budget');
    assert.ok((await budget.reserve('203.0.113.1', 400)).granted, '600 + 400 is the budget');
  });

  test('a count never goes below zero', async () => {
    const budget = make();
    const reservation = await budget.reserve('203.0.113.2', 100);
    await budget.giveBack('203.0.113.2', 100, windowOf(reservation));
    await budget.giveBack('203.0.113.2', 100, windowOf(reservation));
    assert.ok((await budget.reserve('203.0.113.2', BYTES)).granted, 'the whole budget');
    assert.equal((await budget.reserve('203.0.113.2', 1)).granted, false, 'and not a byte more');
  });
}

describe('the download budget in this process', () => {
  let now = 1_000_000;
  giveBackChecks(
    () => new MemoryDownloadBudget({ bytes: BYTES, windowMs: WINDOW_MS }, () => now),
    async () => {
      now += WINDOW_MS;
    },
  );
});

describe('the download budget in Redis', () => {
  let server: RedisServer;
  let redis: Redis;
  let prefix = 0;
  before(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  });
  after(async () => {
    await redis?.quit();
    await server?.stop();
  });

  giveBackChecks(
    // A prefix per test: each starts with no counts.
    () => new RedisDownloadBudget({ bytes: BYTES, windowMs: WINDOW_MS }, redis, `test${++prefix}`),
    async () => {
      const ends = Date.now() + WINDOW_MS + 20;
      await waitUntil(() => Date.now() > ends, 'the window to end in Redis');
    },
  );

  test('the counts of the layout before windows had names are left to expire, not read', async () => {
    // A count of the old layout (a plain integer under dl:ADDRESS) would make a hash command fail.
    await redis.set('legacy:rl:dl:203.0.113.9', '999999', 'PX', 60_000);
    const budget = new RedisDownloadBudget({ bytes: BYTES, windowMs: WINDOW_MS }, redis, 'legacy:rl');
    const reservation = await budget.reserve('203.0.113.9', BYTES);
    assert.ok(reservation.granted);
    assert.notEqual(windowOf(reservation), 'uncounted', 'counted, not waved through as if Redis were away');
    assert.equal((await budget.reserve('203.0.113.9', 1)).granted, false);
  });
});
