/**
 * What moving bytes costs a page's memory in Chromium, apart from any contribution: the growth of
 * the renderer's PSS (bench/process-tree-sampler.ts) while a fresh page moves N MB, the way the
 * streamed turn moves them, against a local server:
 *  - download: one fetch read with a BYOB reader into one reused 512 KiB buffer (core/delta/exact-reader.ts),
 *    5 ms between reads, as the turn's reader waits on the kernel while the network runs ahead;
 *  - upload: sequential XMLHttpRequest POSTs of 2 MiB views of one reused buffer (tus's requests).
 * Both leave garbage as they go, which only a garbage collection frees: the download, the chunks
 * Chromium queued while the reader waited (counted by V8, so a collection comes at its threshold);
 * the upload, a copy of each body kept by its request object (not counted: nothing here makes a
 * collection come). This is what the page's memory during a turn grows by over its fixed cost
 * (docs/contribution-delta.md, "What the page's memory is").
 *
 * Usage: tsx bench/transfer-garbage.ts [--mb 60]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openDevtoolsPage } from './devtools-page.ts';
import { ProcessTreeSampler } from './process-tree-sampler.ts';
import { parseBenchArgs } from './bench-args.ts';

const MiB = 1 << 20;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Run in the page; each sets window.moved when done. */
const MOVES: Record<string, string> = {
  'download (fetch, BYOB reader, one reused buffer, 5 ms between reads)': `(async () => {
    const reader = (await fetch('/bytes', { cache: 'no-store' })).body.getReader({ mode: 'byob' });
    let buffer = new ArrayBuffer(512 * 1024), moved = 0;
    for (;;) {
      const { done, value } = await reader.read(new Uint8Array(buffer));
      if (done) break;
      moved += value.byteLength;
      buffer = value.buffer;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    window.moved = moved;
  })()`,
  'upload (XMLHttpRequest, 2 MiB bodies of one reused buffer)': `(async () => {
    const buffer = new Uint8Array(2 * 1024 * 1024);
    let moved = 0;
    while (moved < MOVE_BYTES) {
      await new Promise((resolve, reject) => {
        const request = new XMLHttpRequest();
        request.open('POST', '/sink');
        request.onload = resolve;
        request.onerror = reject;
        request.send(buffer);
      });
      moved += buffer.byteLength;
    }
    window.moved = moved;
  })()`,
};

async function main(): Promise<void> {
  const { values } = parseBenchArgs(import.meta.url, { options: { mb: { type: 'string', default: '60' } } });
  const moveBytes = Number(values.mb) * MiB;
  if (!(moveBytes > 0)) throw new Error(`--mb is a number of MiB above 0, not "${values.mb}"`);
  const server = createServer((request, response) => {
    if (request.url === '/bytes') {
      response.writeHead(200, { 'content-length': String(moveBytes), 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(256 * 1024, 7);
      let sent = 0;
      const pump = (): void => {
        while (sent < moveBytes) {
          const part = chunk.subarray(0, Math.min(chunk.length, moveBytes - sent));
          sent += part.length;
          if (!response.write(part)) return void response.once('drain', pump);
        }
        response.end();
      };
      return pump();
    }
    if (request.url === '/sink') {
      request.resume();
      request.on('end', () => response.writeHead(204).end());
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>transfer garbage</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  console.log(`the renderer's PSS above idle while a fresh page moves ${values.mb} MiB (each in its own Chromium)`);
  try {
    for (const [what, script] of Object.entries(MOVES)) {
      const page = await openDevtoolsPage({ url, label: 'transfer-garbage' });
      try {
        await page.until('document.readyState === "complete"');
        await sleep(2000); // the page settles: its idle level
        const sampler = new ProcessTreeSampler(page.pid, { intervalMs: 100, pssIntervalMs: 250, byKind: true });
        await sleep(1000);
        const idleSample = sampler.sample();
        const idle = idleSample.pssByKind?.renderer ?? 0;
        const start = Date.now();
        await page.evaluate(`window.moved = undefined; const MOVE_BYTES = ${moveBytes}; ${script}; 0`);
        await page.until('window.moved !== undefined', 120_000);
        const moved = Number(await page.evaluate('window.moved'));
        const end = Date.now();
        await sleep(500);
        const afterSample = sampler.sample();
        const after = afterSample.pssByKind?.renderer ?? 0;
        const samples = sampler.between(start, end);
        const peak = Math.max(...samples.map((sample) => sample.pssByKind?.renderer ?? 0));
        const peakAll = Math.max(...samples.map((sample) => sample.pssBytes ?? 0));
        sampler.stop();
        const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
        console.log(
          `${what}: ${mb(moved)} in ${((end - start) / 1000).toFixed(1)} s; renderer above idle: peak ` +
            `${mb(peak - idle)}, 0.5 s after ${mb(after - idle)}; all of Chromium's processes: peak ` +
            `${mb(peakAll - idleSample.pssBytes!)}, 0.5 s after ${mb(afterSample.pssBytes! - idleSample.pssBytes!)}`,
        );
      } finally {
        await page.close();
      }
    }
  } finally {
    server.close();
  }
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    console.error(error.stack ?? error.message);
    process.exit(1);
  },
);
