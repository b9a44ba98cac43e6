/**
 * GET /api/ceremony and /api/transcript, read by every open page every few seconds: serialised
 * once per version (the state object the reader keeps per transcript version, the phase, the
 * queues), with a strong ETag of the bytes and a 304 to a revalidation; and limited per address
 * (RATE_LIMIT_CEREMONY_READS whole answers per window, a 304 free: `429 rate.ceremony_reads`).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import type { CeremonyState } from '../../core/ceremony/open-ceremony.ts';
import type { CeremonyConfig } from '../../core/config/ceremony-config.ts';
import { createPublicRouter, type PublicRouterDeps } from '../../server/routes/public-router.ts';
import { newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { cleanUp } from '../helpers/clean-up.ts';

/** A revalidation as a cache sends it (fetch adds `Cache-Control: no-cache` to a conditional request otherwise). */
const revalidation = (etag: string): Record<string, string> => ({
  'if-none-match': etag,
  'cache-control': 'max-age=0',
});

/** A state whose transcript counts how often its entries are read (each read is a serialisation). */
function stateWith(entries: unknown[]): { state: CeremonyState; reads: () => number } {
  let reads = 0;
  const transcript = {
    get entries() {
      reads++;
      return entries;
    },
  };
  return { state: { transcript } as unknown as CeremonyState, reads: () => reads };
}

describe('the transcript: serialised once per version, with its ETag', () => {
  let server: Server | undefined;
  after(() => server?.close());

  test('the same version is served from the cache, a 304 to its ETag; a new entry changes it', async () => {
    const first = stateWith([{ type: 'init', index: 0 }]);
    let current = first.state;
    const app = express();
    app.use(
      createPublicRouter({
        config: { id: 'reads', circuits: [], dataDir: '/nonexistent' } as unknown as CeremonyConfig,
        ceremonyState: async () => current,
      } as unknown as PublicRouterDeps),
    );
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server!.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/transcript`;

    const one = await fetch(url);
    const two = await fetch(url);
    const etag = one.headers.get('etag')!;
    assert.match(etag, /^"[\w-]{43}"$/, 'a strong ETag');
    assert.equal(two.headers.get('etag'), etag);
    assert.equal(one.headers.get('cache-control'), 'no-cache');
    assert.deepEqual(await two.json(), { ceremony: 'reads', entries: [{ type: 'init', index: 0 }] });
    assert.equal(first.reads(), 1, 'serialised once for both');
    const revalidated = await fetch(url, { headers: revalidation(etag) });
    assert.equal(revalidated.status, 304);
    assert.equal((await revalidated.arrayBuffer()).byteLength, 0);

    const second = stateWith([
      { type: 'init', index: 0 },
      { type: 'contribution', index: 1 },
    ]);
    current = second.state;
    const moved = await fetch(url, { headers: revalidation(etag) });
    assert.equal(moved.status, 200, 'a new entry: the whole new transcript');
    assert.notEqual(moved.headers.get('etag'), etag);
    assert.equal(((await moved.json()) as { entries: unknown[] }).entries.length, 2);
  });
});

describe('the reads of the ceremony per address', () => {
  let dataDir: string;
  let coordinator: TestCoordinator | undefined;
  after(async () => {
    await coordinator?.close();
    if (dataDir) await cleanUp(dataDir);
  });

  test('beyond RATE_LIMIT_CEREMONY_READS whole answers: 429 rate.ceremony_reads; a 304 is free', async () => {
    dataDir = await newCeremonyDir({ init: true });
    coordinator = await startTestCoordinator({
      dataDir,
      open: false,
      tickIntervalMs: 60_000,
      env: { RATE_LIMIT_CEREMONY_READS: '3', RATE_LIMIT_WINDOW_MS: '600000' },
    });
    const { url } = coordinator;
    const ceremony = await fetch(`${url}/api/ceremony`);
    assert.equal(ceremony.status, 200);
    const etag = ceremony.headers.get('etag')!;
    const transcript = await fetch(`${url}/api/transcript`);
    assert.equal(transcript.status, 200);
    for (let i = 0; i < 5; i++)
      assert.equal((await fetch(`${url}/api/ceremony`, { headers: revalidation(etag) })).status, 304);
    assert.equal((await fetch(`${url}/api/transcript`)).status, 200, 'the third whole answer');
    const limited = await fetch(`${url}/api/ceremony`);
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    const { error } = (await limited.json()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'rate.ceremony_reads');
    // The receipt key is a read of the same kind, under the same limit; the head's moving URL is not
    // counted per address (a turn behind a shared NAT needs it).
    assert.equal((await fetch(`${url}/api/receipt-key`)).status, 429);
    const head = await fetch(`${url}/api/circuits/register/contribution-inputs`, { redirect: 'manual' });
    assert.equal(head.status, 302);
  });
});
