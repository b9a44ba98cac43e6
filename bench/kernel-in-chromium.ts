/**
 * The page's G1 kernel as Chromium runs it against the same WebAssembly in Node, same run, same
 * points and scalar: what a page turn pays on top of its compute floor (the floor is Node's kernel)
 * before any transfer, drawing or coordinator shares the cores. The Chromium side is the built web
 * app's own kernel worker (web/dist/assets/kernel-worker-*.js, the file the contributor page
 * starts), driven through its message protocol from a bare harness page; so it measures V8 in
 * Chromium's dedicated workers, not the bench's copy of the kernel. Node's and Chromium's scaled
 * points are compared (SHA-256 of the bytes) before any figure is printed.
 *
 * Each side keeps its kernel for every round, as the page's workers live for a whole turn: Node's
 * kernel, then one Chromium worker, then two at once (each with its own copy of the points, as the
 * page's pool runs two on two cores). The first round (a fresh worker's first call, compiled by
 * V8's baseline tier while its optimising tier works beside it) is shown apart; the others' best
 * is the figure, as on a shared machine a single round mostly measures how the load moved.
 *
 * Usage: tsx bench/kernel-in-chromium.ts [--points N (default 16384)] [--rounds N (default 4)]
 *   [--js-flags FLAGS (V8 flags for Chromium, to try its compiler's options)]
 */
import { createHash, randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { BN254_R, planScaleChain } from '../core/kernel/g1-scale-chain.ts';
import { G1ScaleKernel } from '../core/kernel/g1-scale-kernel.ts';
import { CHROMIUM_ARGS, CHROMIUM_BIN } from '../tests/helpers/chromium.ts';
import { REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { g1BenchPoints } from './g1-bench-points.ts';
import { parseBenchArgs } from './bench-args.ts';

export interface ChromiumKernelFigures {
  points: number;
  rounds: number;
  nodeUsPerPoint: number;
  /** One Chromium worker alone, then each of two at once: best µs a point after the first round, and the first. */
  chromium: Array<{ what: string; usPerPoint: number; firstUsPerPoint: number }>;
  jsFlags?: string;
}

/** The built app's kernel worker: the one file the contributor page starts for its kernel pool. */
function builtKernelWorker(): string {
  const build = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'build.js')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (build.status !== 0) throw new Error('the build failed');
  const assets = path.join(REPO_ROOT, 'web', 'dist', 'assets');
  const found = readdirSync(assets).filter((name) => /^kernel-worker-[\w-]+\.js$/.test(name));
  if (found.length !== 1) throw new Error(`expected one kernel worker in web/dist/assets, found ${found.length}`);
  return readFileSync(path.join(assets, found[0]!), 'utf8');
}

/**
 * The harness page: `scaleIn(workers, …)` starts that many kernel workers, waits for each to be
 * ready, then has each scale its own copy of the points `rounds` times, one round after another.
 * Returns each worker's round times (ms) and the SHA-256 of worker 0's first output.
 */
const HARNESS = `<!doctype html><meta charset="utf-8"><script>
async function runWorker(worker, input, schedule, steps, rounds) {
  await new Promise((ready, fail) => {
    worker.onmessage = (e) => (e.data.ready ? ready() : fail(new Error(e.data.error)));
  });
  const times = [];
  let first;
  for (let id = 0; id < rounds; id++) {
    const points = input.slice();
    const started = performance.now();
    const reply = await new Promise((done) => {
      worker.onmessage = (e) => done(e.data);
      worker.postMessage({ id, points, schedule, steps }, [points.buffer]);
    });
    times.push(performance.now() - started);
    if (reply.error) throw new Error(reply.error);
    first ??= reply.points;
  }
  worker.terminate();
  return { times, first };
}
window.scaleIn = async (workers, base64, schedule, steps, rounds) => {
  const input = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const runs = await Promise.all(Array.from({ length: workers }, () =>
    runWorker(new Worker('/kernel-worker.js', { type: 'module' }), input, new Int8Array(schedule), steps, rounds)));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', runs[0].first));
  const sha256 = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
  return { times: runs.map((r) => r.times), sha256 };
};
</script>`;

function servePage(kernelWorker: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    if (request.url === '/kernel-worker.js') {
      response.writeHead(200, { 'content-type': 'text/javascript' }).end(kernelWorker);
    } else if (request.url === '/') {
      response.writeHead(200, { 'content-type': 'text/html' }).end(HARNESS);
    } else {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
        close: () => new Promise<void>((closed) => server.close(() => closed())),
      }),
    ),
  );
}

export async function runKernelInChromium(
  points = 16384,
  rounds = 4,
  jsFlags?: string,
): Promise<ChromiumKernelFigures> {
  const kernelWorker = builtKernelWorker();
  const input = await g1BenchPoints(points);
  const chain = planScaleChain(BigInt(`0x${randomBytes(32).toString('hex')}`) % BN254_R);
  if (!chain) throw new Error('no chain for the bench scalar');
  const kernel = await G1ScaleKernel.instantiate();
  const page = await servePage(kernelWorker);
  const browser = await chromium.launch({
    executablePath: CHROMIUM_BIN,
    args: [...CHROMIUM_ARGS, ...(jsFlags ? [`--js-flags=${jsFlags}`] : [])],
  });
  try {
    const tab = await browser.newPage();
    await tab.goto(page.url);
    const base64 = Buffer.from(input).toString('base64');
    const schedule = Array.from(chain.schedule);
    let nodeBest = Infinity;
    let nodeOutput = new Uint8Array(0);
    for (let round = 0; round < rounds; round++) {
      const mine = input.slice();
      const started = performance.now();
      kernel.scale(mine, chain);
      nodeBest = Math.min(nodeBest, performance.now() - started);
      nodeOutput = mine;
    }
    const nodeDigest = createHash('sha256').update(nodeOutput).digest('hex');
    const us = (ms: number): number => (ms * 1000) / points;
    const chromiumRows: ChromiumKernelFigures['chromium'] = [];
    for (const workers of [1, 2]) {
      const run = (await tab.evaluate(
        ([w, b, s, steps, r]) =>
          (window as unknown as { scaleIn: (...args: unknown[]) => Promise<unknown> }).scaleIn(w, b, s, steps, r),
        [workers, base64, schedule, chain.steps, rounds] as const,
      )) as { times: number[][]; sha256: string };
      if (run.sha256 !== nodeDigest) throw new Error("Chromium's kernel worker and Node's kernel disagree");
      run.times.forEach((times, i) =>
        chromiumRows.push({
          what: workers === 1 ? 'Chromium, one kernel worker' : `Chromium, worker ${i + 1} of two at once`,
          usPerPoint: us(Math.min(...(times.length > 1 ? times.slice(1) : times))),
          firstUsPerPoint: us(times[0]!),
        }),
      );
    }
    return {
      points,
      rounds,
      nodeUsPerPoint: us(nodeBest),
      chromium: chromiumRows,
      ...(jsFlags ? { jsFlags } : {}),
    };
  } finally {
    await browser.close();
    await page.close();
  }
}

export function printKernelInChromium(f: ChromiumKernelFigures): void {
  const ratio = (us: number): string => `${(us / f.nodeUsPerPoint).toFixed(2)}×`;
  const chromiumVersion = spawnSync(CHROMIUM_BIN, ['--version'], { encoding: 'utf8' }).stdout.trim();
  process.stdout.write(
    `\nThe G1 kernel, one scalar, ${f.points} points, best of rounds 2 to ${f.rounds}` +
      `${f.jsFlags ? ` (Chromium --js-flags=${f.jsFlags})` : ''}\n` +
      `Node ${process.version} (V8 ${process.versions.v8}); ${chromiumVersion || 'Chromium'}\n` +
      `${'where'.padEnd(34)}  ${'µs/point'.padStart(8)}  ${'÷ Node'.padStart(7)}  first round\n` +
      `${'Node, one thread (the floor)'.padEnd(34)}  ${f.nodeUsPerPoint.toFixed(1).padStart(8)}  ` +
      `${'1.00×'.padStart(7)}\n`,
  );
  for (const row of f.chromium) {
    process.stdout.write(
      `${row.what.padEnd(34)}  ${row.usPerPoint.toFixed(1).padStart(8)}  ${ratio(row.usPerPoint).padStart(7)}  ` +
        `${row.firstUsPerPoint.toFixed(1)} µs (${ratio(row.firstUsPerPoint)})\n`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: {
      points: { type: 'string', default: '16384' },
      rounds: { type: 'string', default: '4' },
      'js-flags': { type: 'string' },
    },
  });
  const points = Number(values.points);
  const rounds = Number(values.rounds);
  if (!Number.isInteger(points) || points < 1 || !Number.isInteger(rounds) || rounds < 1) {
    process.stderr.write('--points and --rounds take positive whole numbers\n');
    process.exit(2);
  }
  printKernelInChromium(await runKernelInChromium(points, rounds, values['js-flags']));
}
