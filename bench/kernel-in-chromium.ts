/**
 * The page's G1 kernel as Chromium runs it against the same WebAssembly in Node, same run, same
 * points and scalar: what a page turn pays on top of its compute floor (the floor is Node's kernel)
 * before any transfer, drawing or coordinator shares the cores. The Chromium side is the built web
 * app's own kernel worker (web/dist/assets/kernel-worker-*.js, the file the contributor page
 * starts), driven through its message protocol from a bare harness page; so it measures V8 in
 * Chromium's dedicated workers, not the bench's copy of the kernel. Node's and Chromium's scaled
 * points are compared (SHA-256 of the bytes) before any figure is printed.
 *
 * Both of the kernel's walks are timed on each side, in the same run: the SIMD one (g1-scale-x4.c,
 * what Node and a browser with WebAssembly SIMD run) and the scalar one (g1-scale.c, the kernel
 * before 2026-12-02 and the fallback without SIMD; the worker is told which by `?walk=` on its URL).
 * Each side keeps its kernel for every round, as the page's workers live for a whole turn: Node's
 * kernels, then one Chromium worker per walk, then two SIMD workers at once (each with its own copy
 * of the points, as the page's pool runs two on two cores). Each round is timed in wall time and in
 * CPU time: Node's thread's own, and Chromium's whole process tree (/proc; the harness page is idle
 * while its workers scale), which other work on the same cores does not add to; and the workers'
 * own threads' CPU time (/proc's per-thread scheduler clock, in nanoseconds), which leaves out what
 * the browser's other processes and threads spend meanwhile (its GPU, network and browser
 * processes' idle work, V8's compiler threads): the walk alone, as Node's figure is. The points
 * are handed to the page once, before the rounds, so that no round's CPU holds their transfer
 * through the DevTools protocol (1.4 MB of base64 at 16,384 points). The first round (a
 * fresh worker's first call, compiled by V8's baseline tier while its optimising tier works beside
 * it) is shown apart; the others' best is the figure, as on a shared machine a single round mostly
 * measures how the load moved.
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
import { processTree, treeCpuSeconds } from './process-tree-sampler.ts';
import { parseBenchArgs } from './bench-args.ts';

export interface ChromiumKernelFigures {
  points: number;
  rounds: number;
  /** Node's SIMD walk, the floor the rows are divided by. */
  nodeUsPerPoint: number;
  /** Node's scalar walk (the kernel before). */
  nodeScalarUsPerPoint: number;
  /** Node's CPU time a point, SIMD and scalar walk. */
  nodeCpuUsPerPoint: { simd: number; scalar: number };
  /**
   * One Chromium worker per walk, then two SIMD workers at once: best wall µs a point of each worker
   * after the first round, and the first; best CPU µs a point of the round (Chromium's processes, all
   * the round's workers, divided by all their points); best CPU µs a point of the workers' own
   * threads (their scheduler clock, all the round's workers, divided by all their points).
   */
  chromium: Array<{
    what: string;
    usPerPoint: number;
    firstUsPerPoint: number;
    cpuUsPerPoint: number;
    workerCpuUsPerPoint: number;
  }>;
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
 * The harness page: `load(base64)` keeps the points; `startWorkers(count, walk)` starts that many
 * kernel workers of that walk and waits for each to be ready; `round(schedule, steps)` has each
 * scale its own copy of the points at once and returns each one's time (ms) and the SHA-256 of
 * worker 0's output; `stopWorkers()` ends them.
 */
const HARNESS = `<!doctype html><meta charset="utf-8"><script>
async function startWorker(walk) {
  const worker = new Worker('/kernel-worker.js?walk=' + walk, { type: 'module' });
  await new Promise((ready, fail) => {
    worker.onmessage = (e) =>
      e.data.ready && e.data.kind === walk ? ready() : fail(new Error(e.data.error ?? 'it runs ' + e.data.kind));
  });
  return worker;
}
window.startWorkers = async (count, walk) => {
  window.workers = await Promise.all(Array.from({ length: count }, () => startWorker(walk)));
};
window.stopWorkers = () => window.workers.forEach((worker) => worker.terminate());
window.load = async (base64) => {
  window.input = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
};
window.round = async (schedule, steps) => {
  const runs = await Promise.all(window.workers.map(async (worker, id) => {
    const points = window.input.slice();
    const started = performance.now();
    const reply = await new Promise((done) => {
      worker.onmessage = (e) => done(e.data);
      worker.postMessage({ id, points, schedule: new Int8Array(schedule), steps }, [points.buffer]);
    });
    if (reply.error) throw new Error(reply.error);
    return { ms: performance.now() - started, points: reply.points };
  }));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', runs[0].points));
  const sha256 = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
  return { times: runs.map((r) => r.ms), sha256 };
};
</script>`;

type HarnessWindow = Record<string, (...args: unknown[]) => Promise<unknown>>;

/** CPU seconds of every Chromium process this bench launched: the tree under this process, less this process's own. */
function chromiumCpuSeconds(): number {
  const own = process.cpuUsage();
  return treeCpuSeconds(process.pid) - (own.user + own.system) / 1e6;
}

/** The name Chromium gives a dedicated worker's thread, as /proc shows it (cut to 15 characters). */
const WORKER_THREAD = /^DedicatedWorker/;

/**
 * CPU milliseconds each Chromium worker thread has run so far, by thread id: the scheduler's own
 * clock (/proc/PID/task/TID/sched, se.sum_exec_runtime, nanosecond resolution), where utime and
 * stime count 10 ms ticks, 1.7 % of a 16,384-point round of the SIMD walk.
 */
function workerThreadsCpuMs(): Map<number, number> {
  const threads = new Map<number, number>();
  for (const { pid } of processTree(process.pid)) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // gone
    }
    for (const tid of tasks) {
      try {
        if (!WORKER_THREAD.test(readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8'))) continue;
        const sched = readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8');
        const ms = /^se\.sum_exec_runtime\s*:\s*([\d.]+)/m.exec(sched)?.[1];
        if (ms !== undefined) threads.set(Number(tid), Number(ms));
      } catch {
        // a thread that ended, or a kernel without /proc/…/sched: not counted
      }
    }
  }
  return threads;
}

/** CPU ms the worker threads alive at both readings ran between them; undefined when none was found. */
function workerThreadsCpuSpent(before: Map<number, number>, after: Map<number, number>): number | undefined {
  let spent: number | undefined;
  for (const [tid, ms] of after) {
    const started = before.get(tid);
    if (started !== undefined) spent = (spent ?? 0) + ms - started;
  }
  return spent;
}

function servePage(kernelWorker: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    if (request.url?.startsWith('/kernel-worker.js?')) {
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
  const kernels = {
    simd: await G1ScaleKernel.instantiate({ kind: 'simd' }),
    scalar: await G1ScaleKernel.instantiate({ kind: 'scalar' }),
  };
  const page = await servePage(kernelWorker);
  const browser = await chromium.launch({
    executablePath: CHROMIUM_BIN,
    args: [...CHROMIUM_ARGS, ...(jsFlags ? [`--js-flags=${jsFlags}`] : [])],
  });
  try {
    const tab = await browser.newPage();
    await tab.goto(page.url);
    await tab.evaluate((b) => (window as unknown as HarnessWindow).load!(b), Buffer.from(input).toString('base64'));
    const schedule = Array.from(chain.schedule);
    const nodeBest = { simd: Infinity, scalar: Infinity };
    const nodeCpu = { simd: Infinity, scalar: Infinity };
    let nodeOutput = new Uint8Array(0);
    for (let round = 0; round < rounds; round++) {
      for (const walk of ['scalar', 'simd'] as const) {
        const mine = input.slice();
        const started = performance.now();
        const cpuStarted = process.cpuUsage();
        kernels[walk].scale(mine, chain);
        const cpu = process.cpuUsage(cpuStarted);
        nodeCpu[walk] = Math.min(nodeCpu[walk], (cpu.user + cpu.system) / 1000);
        nodeBest[walk] = Math.min(nodeBest[walk], performance.now() - started);
        if (nodeOutput.length > 0 && !Buffer.from(mine).equals(Buffer.from(nodeOutput))) {
          throw new Error("Node's two walks disagree");
        }
        nodeOutput = mine;
      }
    }
    const nodeDigest = createHash('sha256').update(nodeOutput).digest('hex');
    const us = (ms: number): number => (ms * 1000) / points;
    const chromiumRows: ChromiumKernelFigures['chromium'] = [];
    for (const [workers, walk] of [
      [1, 'simd'],
      [1, 'scalar'],
      [2, 'simd'],
    ] as const) {
      await tab.evaluate(([w, k]) => (window as unknown as HarnessWindow).startWorkers!(w, k), [
        workers,
        walk,
      ] as const);
      const times: number[][] = Array.from({ length: workers }, () => []);
      let cpuBest = Infinity;
      let workerCpuBest = Infinity;
      for (let round = 0; round < rounds; round++) {
        const cpuStarted = chromiumCpuSeconds();
        const threadsStarted = workerThreadsCpuMs();
        const run = (await tab.evaluate(([s, steps]) => (window as unknown as HarnessWindow).round!(s, steps), [
          schedule,
          chain.steps,
        ] as const)) as { times: number[]; sha256: string };
        const workerMs = workerThreadsCpuSpent(threadsStarted, workerThreadsCpuMs());
        const cpuSeconds = chromiumCpuSeconds() - cpuStarted;
        if (run.sha256 !== nodeDigest) {
          throw new Error(`Chromium's kernel worker (${walk} walk) and Node's kernel disagree`);
        }
        run.times.forEach((ms, i) => times[i]!.push(ms));
        if (round > 0 || rounds === 1) {
          cpuBest = Math.min(cpuBest, (cpuSeconds * 1e6) / (points * workers));
          if (workerMs !== undefined) workerCpuBest = Math.min(workerCpuBest, (workerMs * 1e3) / (points * workers));
        }
      }
      await tab.evaluate(() => (window as unknown as HarnessWindow).stopWorkers!());
      times.forEach((own, i) =>
        chromiumRows.push({
          what:
            workers === 1 ? `Chromium, one worker, ${walk} walk` : `Chromium, worker ${i + 1} of two at once, ${walk}`,
          usPerPoint: us(Math.min(...(own.length > 1 ? own.slice(1) : own))),
          firstUsPerPoint: us(own[0]!),
          cpuUsPerPoint: cpuBest,
          workerCpuUsPerPoint: workerCpuBest,
        }),
      );
    }
    return {
      points,
      rounds,
      nodeUsPerPoint: us(nodeBest.simd),
      nodeScalarUsPerPoint: us(nodeBest.scalar),
      nodeCpuUsPerPoint: { simd: us(nodeCpu.simd), scalar: us(nodeCpu.scalar) },
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
  const cell = (us: number | undefined): string => (us === undefined || !Number.isFinite(us) ? '' : us.toFixed(1));
  const row = (what: string, us: number, cpu: number, workerCpu?: number, first?: number): string =>
    `${what.padEnd(40)}  ${us.toFixed(1).padStart(8)}  ${ratio(us).padStart(7)}  ${cpu.toFixed(1).padStart(8)}` +
    `  ${cell(workerCpu).padStart(10)}` +
    `${first === undefined ? '' : `  ${first.toFixed(1)} µs (${ratio(first)})`}\n`;
  process.stdout.write(
    `\nThe G1 kernel, one scalar, ${f.points} points, best of rounds 2 to ${f.rounds}` +
      `${f.jsFlags ? ` (Chromium --js-flags=${f.jsFlags})` : ''}\n` +
      `Node ${process.version} (V8 ${process.versions.v8}); ${chromiumVersion || 'Chromium'}\n` +
      `${'where'.padEnd(40)}  ${'µs/point'.padStart(8)}  ${'÷ Node'.padStart(7)}  ${'CPU µs'.padStart(8)}` +
      `  ${'worker CPU'.padStart(10)}  first round\n` +
      row('Node, one thread, SIMD walk (the floor)', f.nodeUsPerPoint, f.nodeCpuUsPerPoint.simd) +
      row('Node, one thread, scalar walk (before)', f.nodeScalarUsPerPoint, f.nodeCpuUsPerPoint.scalar),
  );
  for (const r of f.chromium) {
    process.stdout.write(row(r.what, r.usPerPoint, r.cpuUsPerPoint, r.workerCpuUsPerPoint, r.firstUsPerPoint));
  }
  const chromiumWalk = (walk: string): ChromiumKernelFigures['chromium'][number] | undefined =>
    f.chromium.find((r) => r.what === `Chromium, one worker, ${walk} walk`);
  const [simd, scalar] = [chromiumWalk('simd'), chromiumWalk('scalar')];
  const node = f.nodeCpuUsPerPoint;
  const workerRatio = simd && scalar ? simd.workerCpuUsPerPoint / scalar.workerCpuUsPerPoint : NaN;
  process.stdout.write(
    `SIMD walk ÷ scalar walk, CPU time: Node ${(node.simd / node.scalar).toFixed(3)}×` +
      `${simd && scalar ? `, Chromium ${(simd.cpuUsPerPoint / scalar.cpuUsPerPoint).toFixed(3)}×` : ''}` +
      `${Number.isFinite(workerRatio) ? ` (its worker's thread ${workerRatio.toFixed(3)}×)` : ''}` +
      `; wall time: Node ${(f.nodeUsPerPoint / f.nodeScalarUsPerPoint).toFixed(3)}×` +
      `${simd && scalar ? `, Chromium ${(simd.usPerPoint / scalar.usPerPoint).toFixed(3)}×` : ''}\n`,
  );
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
