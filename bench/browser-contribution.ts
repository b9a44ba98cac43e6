/**
 * Contribution: snarkjs in Node vs the browser app's path in headless Chromium, on the same key
 * (contribution 3 on the bench chain's z2 of 2^P constraints; goal: browser ≤ 1.5× Node). Rows:
 *  - npx snarkjs zkey contribute Z2 OUT   (snarkjs's CLI, a fresh process per run)
 *  - snarkjs zKey.contribute in-process    (the curve released before each run, so every row pays
 *                                           its curve set-up, as the browser's fresh worker does)
 *  - the browser: web/src/contribute/compute-contribution.ts (the app's own Web Worker), built
 *    with vite from bench/browser-contribution/ into .fixture-cache/bench-browser-contribution/
 *    and served with the head by a static server on 127.0.0.1; the head's download is timed apart.
 * Each browser output is PUT back to the server and checked with verifyLinkFromHead(z2, output): it must
 * be a valid next link whose contribution hash is the one the page reported.
 * Then the CLI: `ceremony contribute` (kernel threads, then its own verification and the commit)
 * on a one-circuit ceremony whose head is the chain's z0, against `npx snarkjs zkey contribute`
 * of that same head; and the single-threaded per-point cost of each kernel tried.
 * At --power 18 the key is the real-shaped rs18 (bench-chain.ts: 233,000 constraints).
 *
 * Usage: tsx bench/browser-contribution.ts [--power P (default 16)] [--runs N (default 1)]
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Browser } from 'playwright-core';
import * as snarkjs from 'snarkjs';
import { build } from 'vite';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { verifyLinkFromHead } from '../core/link-check/verify-link-from-head.ts';
import { echoPageErrors, launchChromium } from '../tests/helpers/chromium.ts';
import { FIXTURE_CACHE, REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { benchChain, benchLog as log, realShapedChain, type BenchChain } from './bench-chain.ts';
import { initCeremony } from '../core/ceremony/init-ceremony.ts';
import { ceremonyPaths } from '../core/data-folder/ceremony-paths.ts';
import { printKernelPerPoint, runKernelPerPoint, type PerPointFigures } from './kernel-per-point.ts';
import type { BenchPageGlobal, BrowserContributionResult } from './browser-contribution/bench-result.ts';
import { parseBenchArgs } from './bench-args.ts';

const PAGE_SOURCE = path.join(REPO_ROOT, 'bench', 'browser-contribution');
const PAGE_BUILD = path.join(FIXTURE_CACHE, 'bench-browser-contribution');
const MB = 1024 * 1024;
/** The browser's contribution, and `ceremony contribute`, must be at least this much faster than snarkjs. */
const GOAL_SPEEDUP = 1.5;
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
};
const silent: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };

export interface ContributionFigures {
  keyMb: number;
  constraints: number;
  runs: number;
  cliMs: number;
  nodeApiMs: number;
  browserComputeMs: number;
  browserDownloadMs: number;
  nodeCpus: number;
  browserHardwareConcurrency: number;
  /** `ceremony contribute` (CLI process: kernel threads, verification, commit) on the ceremony's head z0. */
  ceremonyContributeMs: number;
  /** `npx snarkjs zkey contribute` of that same head. */
  snarkjsSameHeadMs: number;
  perPoint: PerPointFigures;
}

const CIRCUIT = 'mul';
const exists = (p: string): Promise<boolean> =>
  stat(p).then(
    () => true,
    () => false,
  );

/** The key of the benchmark: the real-shaped rs18 at 2^18, the synthetic bench chain otherwise. */
async function contributionChain(power: number): Promise<BenchChain & { constraints: number }> {
  if (power === 18) return realShapedChain('rs18');
  const chain = await benchChain(power);
  return { ...chain, constraints: 2 ** power };
}

/** An initialised one-circuit test-network ceremony on the chain's circuit (cached; its head is z0). */
async function ceremonyTemplate(chain: BenchChain): Promise<string> {
  const template = path.join(FIXTURE_CACHE, `bench-contribute-${path.basename(path.dirname(chain.r1cs))}`);
  if (await exists(path.join(template, 'ready'))) return template;
  await rm(template, { recursive: true, force: true });
  await mkdir(path.join(template, 'circuits'), { recursive: true });
  await mkdir(path.join(template, 'ptau'), { recursive: true });
  await cp(chain.r1cs, path.join(template, 'circuits', `${CIRCUIT}.r1cs`));
  await symlink(chain.ptau, path.join(template, 'ptau', 'dev.ptau'));
  const { publicInputs } = chain as { publicInputs?: number };
  const config = {
    id: 'bench-contribute',
    title: 'contribution benchmark',
    testNetwork: true,
    ptau: 'ptau/dev.ptau',
    circuits: [
      { name: CIRCUIT, verifier: 'VerifierMul', publicInputs: publicInputs ?? 12, r1cs: `circuits/${CIRCUIT}.r1cs` },
    ],
  };
  await writeFile(path.join(template, 'ceremony.json'), JSON.stringify(config, null, 2));
  log(`initialising the contribution benchmark ceremony (ceremony init at 2^${chain.power}; cached)`);
  await initCeremony(template);
  if (!(await readFile(ceremonyPaths(template).zkeyPath(CIRCUIT, 0))).equals(await readFile(chain.z0))) {
    throw new Error("the ceremony's contribution 0 differs from the bench chain's z0");
  }
  await writeFile(path.join(template, 'ready'), '');
  return template;
}

function runCeremonyCli(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'ceremony.js'), ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? -1));
  });
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The benchmark page, rebuilt every run (seconds): never stale against web/src, nothing to invalidate. */
async function buildPage(): Promise<void> {
  log('building the benchmark page (vite)');
  await build({
    configFile: false,
    root: PAGE_SOURCE,
    base: '/',
    publicDir: false,
    logLevel: 'warn',
    build: { outDir: PAGE_BUILD, emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 4096 },
    // As the app's own build (vite.config.ts): the contribution worker is an ES module.
    worker: { format: 'es' },
  });
}

function runSnarkjsCli(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['snarkjs', ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? -1));
  });
}

const randomEntropy = (): string => randomBytes(32).toString('hex');

interface StaticServer {
  url: string;
  close(): Promise<void>;
}

/**
 * The built page, GET /zkey (the head, streamed) and PUT /output?offset=N (a slice of the
 * browser's new key, streamed into outputPath at N). Same origin as the page, so no CORS; no cross-origin isolation
 * either: snarkjs's browser build (ffjavascript's thread pool) uses plain Workers and postMessage, not
 * SharedArrayBuffer.
 */
async function startStaticServer(zkeyPath: string, outputPath: string): Promise<StaticServer> {
  const fail = (res: ServerResponse, status: number, message: string): void => {
    if (!res.headersSent) res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(message);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const route = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (route === '/output' && req.method === 'PUT') {
      // One slice of the key at ?offset=N (the page sends them in order, the first at 0).
      const offset = Number(new URL(req.url ?? '/', 'http://localhost').searchParams.get('offset') ?? '0');
      if (!Number.isSafeInteger(offset) || offset < 0) return fail(res, 400, 'bad offset');
      await pipeline(req, createWriteStream(outputPath, { flags: offset === 0 ? 'w' : 'r+', start: offset }));
      res.writeHead(204).end();
      return;
    }
    if (req.method !== 'GET') return fail(res, 405, 'method not allowed');
    const file = route === '/zkey' ? zkeyPath : path.join(PAGE_BUILD, route === '/' ? 'index.html' : route);
    if (file !== zkeyPath && !file.startsWith(PAGE_BUILD + path.sep)) return fail(res, 403, 'outside the page');
    const size = await stat(file).then(
      (s) => (s.isFile() ? s.size : undefined),
      () => undefined,
    );
    if (size === undefined) return fail(res, 404, 'not found');
    res.writeHead(200, {
      'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
      'content-length': size,
      'cache-control': 'no-store',
    });
    await pipeline(createReadStream(file), res);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => fail(res, 500, error.message));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `npx snarkjs zkey contribute` of `head`, `runs` times: each run's time. */
async function snarkjsCliRuns(head: string, nodeOutput: string, runs: number): Promise<number[]> {
  const cli: number[] = [];
  for (let i = 0; i < runs; i++) {
    log(`npx snarkjs zkey contribute (${i + 1}/${runs})`);
    // Removed first, so the checks below can only see this run's key.
    await rm(nodeOutput, { force: true });
    const started = performance.now();
    const code = await runSnarkjsCli(['zkey', 'contribute', head, nodeOutput, '--name=bench', `-e=${randomEntropy()}`]);
    cli.push(performance.now() - started);
    if (code !== 0) throw new Error(`npx snarkjs zkey contribute exited with ${code}`);
    if ((await stat(nodeOutput)).size === 0) throw new Error('npx snarkjs zkey contribute wrote an empty key');
  }
  return cli;
}

/** `ceremony contribute` on a fresh copy of the ceremony, and snarkjs's contribution to the same head, `runs` times. */
async function ceremonyContributeRuns(
  chain: Awaited<ReturnType<typeof contributionChain>>,
  scratch: string,
  nodeOutput: string,
  runs: number,
): Promise<{ ceremonyRuns: number[]; sameHead: number[] }> {
  const template = await ceremonyTemplate(chain);
  const ceremonyRuns: number[] = [];
  const sameHead: number[] = [];
  for (let i = 0; i < runs; i++) {
    log(`ceremony contribute (CLI: kernel, verification, commit) (${i + 1}/${runs})`);
    const dataDir = path.join(scratch, `ceremony-${i}`);
    await cp(template, dataDir, { recursive: true, verbatimSymlinks: true });
    let started = performance.now();
    const code = await runCeremonyCli(['contribute', CIRCUIT, '--data', dataDir, '--name', 'bench']);
    ceremonyRuns.push(performance.now() - started);
    if (code !== 0) throw new Error(`ceremony contribute exited with ${code}`);
    if (!(await exists(ceremonyPaths(dataDir).zkeyPath(CIRCUIT, 1))))
      throw new Error('ceremony contribute committed no contribution 1');
    await rm(dataDir, { recursive: true, force: true });
    log(`npx snarkjs zkey contribute of the same head (${i + 1}/${runs})`);
    await rm(nodeOutput, { force: true });
    started = performance.now();
    const snarkjsCode = await runSnarkjsCli([
      'zkey',
      'contribute',
      ceremonyPaths(template).zkeyPath(CIRCUIT, 0),
      nodeOutput,
      '--name=bench',
      `-e=${randomEntropy()}`,
    ]);
    sameHead.push(performance.now() - started);
    if (snarkjsCode !== 0) throw new Error(`npx snarkjs zkey contribute exited with ${snarkjsCode}`);
  }
  return { ceremonyRuns, sameHead };
}

export async function runBrowserContribution(power: number, runs: number): Promise<ContributionFigures> {
  const chain = await contributionChain(power);
  const keyBytes = (await stat(chain.z2)).size;
  const scratch = await mkdtemp(path.join(tmpdir(), 'bench-contribution-'));
  const nodeOutput = path.join(scratch, 'node.zkey');
  const browserOutput = path.join(scratch, 'browser.zkey');
  let server: StaticServer | undefined;
  let browser: Browser | undefined;
  try {
    await buildPage();

    const cli = await snarkjsCliRuns(chain.z2, nodeOutput, runs);

    const nodeApi: number[] = [];
    for (let i = 0; i < runs; i++) {
      log(`snarkjs zKey.contribute in Node (${i + 1}/${runs})`);
      await releaseBn128();
      const started = performance.now();
      const hash = await snarkjs.zKey.contribute(chain.z2, nodeOutput, 'bench', randomEntropy(), silent);
      nodeApi.push(performance.now() - started);
      if (!(hash instanceof Uint8Array) || hash.length !== 64)
        throw new Error('snarkjs zKey.contribute returned no contribution hash');
    }
    // The Node curve's threads and memory would otherwise sit beside Chromium's for its runs.
    await releaseBn128();

    server = await startStaticServer(chain.z2, browserOutput);
    browser = await launchChromium();
    const page = await browser.newPage();
    echoPageErrors(page, 'bench');
    // A contribution at 2^18 takes minutes; Playwright's 30 s defaults would cut it short.
    page.setDefaultTimeout(0);
    page.setDefaultNavigationTimeout(0);
    await page.goto(`${server.url}/`);
    const results: BrowserContributionResult[] = [];
    for (let i = 0; i < runs; i++) {
      log(`browser contribution in headless Chromium (${i + 1}/${runs})`);
      await rm(browserOutput, { force: true });
      const result = await page.evaluate(
        ([zkeyUrl, outputUrl]) =>
          (globalThis as typeof globalThis & BenchPageGlobal).benchContribute(zkeyUrl, outputUrl),
        [`${server.url}/zkey`, `${server.url}/output`] as const,
      );
      const written = (await stat(browserOutput)).size;
      if (written !== result.outputBytes)
        throw new Error(`the page made ${result.outputBytes} bytes, the server received ${written}`);
      log('verifyLinkFromHead(z2, browser output)');
      const link = await verifyLinkFromHead(chain.z2, browserOutput);
      if (link.contributionHash !== result.hash) {
        throw new Error(
          `the browser reported contribution hash ${result.hash}, verifyLinkFromHead computed ${link.contributionHash}`,
        );
      }
      if (link.recordedName !== 'bench')
        throw new Error(`the browser's record is named ${String(link.recordedName)}, not "bench"`);
      // verifyLinkFromHead's curve (threads, wasm memory) would otherwise sit beside the next browser run.
      await releaseBn128();
      results.push(result);
    }

    await browser.close();
    browser = undefined;

    const { ceremonyRuns, sameHead } = await ceremonyContributeRuns(chain, scratch, nodeOutput, runs);
    log('per-point cost of each kernel, single-threaded');
    const perPoint = await runKernelPerPoint();

    return {
      ceremonyContributeMs: median(ceremonyRuns),
      snarkjsSameHeadMs: median(sameHead),
      perPoint,
      keyMb: keyBytes / MB,
      constraints: chain.constraints,
      runs,
      cliMs: median(cli),
      nodeApiMs: median(nodeApi),
      browserComputeMs: median(results.map((r) => r.computeMs)),
      browserDownloadMs: median(results.map((r) => r.downloadMs)),
      nodeCpus: cpus().length,
      browserHardwareConcurrency: results[0]!.hardwareConcurrency,
    };
  } finally {
    await browser?.close();
    await server?.close();
    await releaseBn128();
    await rm(scratch, { recursive: true, force: true });
  }
}

export function printBrowserContribution(power: number, f: ContributionFigures): void {
  const speedup = (ours: number, theirs: number): string => `${(theirs / ours).toFixed(2)}× faster`;
  const goal = (ours: number, theirs: number): string =>
    `goal ≥ ${GOAL_SPEEDUP}× (${theirs / ours >= GOAL_SPEEDUP ? 'met' : 'missed'})`;
  const rows: Array<[string, string, string]> = [
    ['npx snarkjs zkey contribute (CLI)', f.cliMs.toFixed(0), ''],
    ['snarkjs zKey.contribute in Node (API)', f.nodeApiMs.toFixed(0), ''],
    ['browser: computeContribution (kernel workers)', f.browserComputeMs.toFixed(0), ''],
    ['browser: download of the head (localhost)', f.browserDownloadMs.toFixed(0), 'not in the compute time'],
    // The goal is judged like for like: the API row, like the browser's, pays curve set-up but no
    // process start-up (the CLI row also pays npx and Node starting).
    ['browser vs Node API', speedup(f.browserComputeMs, f.nodeApiMs), goal(f.browserComputeMs, f.nodeApiMs)],
    ['npx snarkjs zkey contribute (ceremony head)', f.snarkjsSameHeadMs.toFixed(0), ''],
    ['ceremony contribute (+ verify + commit)', f.ceremonyContributeMs.toFixed(0), 'CLI process, kernel threads'],
    [
      'ceremony contribute vs snarkjs CLI',
      speedup(f.ceremonyContributeMs, f.snarkjsSameHeadMs),
      goal(f.ceremonyContributeMs, f.snarkjsSameHeadMs),
    ],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  process.stdout.write(
    `\ncontribution at 2^${power}: key ${f.keyMb.toFixed(1)} MB, ` +
      `${f.constraints} constraints; median of ${f.runs} run(s) per row; ` +
      `Node os.cpus() ${f.nodeCpus}, Chromium navigator.hardwareConcurrency ${f.browserHardwareConcurrency}\n`,
  );
  process.stdout.write(`${'path'.padEnd(width)}  ${'time (ms)'.padStart(12)}\n`);
  for (const [name, value, note] of rows)
    process.stdout.write(`${name.padEnd(width)}  ${value.padStart(12)}${note ? `  ${note}` : ''}\n`);
  printKernelPerPoint(f.perPoint);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: { power: { type: 'string', default: '16' }, runs: { type: 'string', default: '1' } },
  });
  const power = Number(values.power);
  const runs = Number(values.runs);
  if (!Number.isInteger(power) || power < 10 || power > 18)
    throw new Error(`--power must be an integer from 10 to 18, got ${values.power}`);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
  printBrowserContribution(power, await runBrowserContribution(power, runs));
}
