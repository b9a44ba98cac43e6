/**
 * The receipt check's goal: from a receipt to "included in the final key of circuit X at position
 * N" in one paste, with the later records' pairings and the fixed sections checked, under 5 s for a
 * 2^18 circuit (the page's own timing) and under 1 MB of the circuit's keys downloaded. On a
 * finalised one-circuit ceremony made from the real-shaped rs18 chain
 * (tests/fixtures/finalised-chain-ceremony.ts: the chain's keys, the real finalisation with a
 * beacon, the coordinator's receipts; cached), served by `ceremony serve` (compiled, its own
 * process group) behind a proxy that counts what it sends, the public page in headless Chromium:
 * one paste of a contributor's receipts file per run, timed by the page and by the bench, key bytes
 * counted by the page and by the proxy. Beside it in the same run: `ceremony verify-receipt` over
 * HTTP and offline, the whole final key downloaded through the same proxy (what any check without
 * ranges fetches first), and `snarkjs zkey verify` of the final key (how snarkjs shows a key's
 * contribution hashes; minutes at 2^18; --skip-snarkjs leaves it out). The floor of the bytes is
 * the parts the check needs: the final key's section table and sections 1, 2, 3 (IC) and 10, and
 * contribution 0's file head and sections 1 and 2.
 *
 * Usage: tsx bench/receipt.ts [--circuit rs18 | --power P] [--runs N] [--skip-snarkjs]
 */
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { finalisedChainCeremony, servableCopy, type ChainKeys } from '../tests/fixtures/finalised-chain-ceremony.ts';
import { launchChromium } from '../tests/helpers/chromium.ts';
import { startCountingProxy } from '../tests/helpers/counting-proxy.ts';
import { startGroup } from '../tests/helpers/process-group.ts';
import { readZkeyInfo } from '../core/zkey/zkey-file.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { benchChain, benchLog as log, isRealShapeName, realShapedChain } from './bench-chain.ts';
import { parseBenchArgs } from './bench-args.ts';

export interface ReceiptFigures {
  label: string;
  keyBytes: number;
  /** Key bytes the check needs at least: the final key's table and sections 1, 2, 3, 10; contribution 0's head. */
  floorBytes: number;
  records: number;
  /** The page's own timing (paste → every verdict shown), one per run. */
  pageMs: number[];
  /** The bench's timing of the same (paste → the page says done), one per run. */
  wallMs: number[];
  /** Key bytes the page counted (bodies) and the proxy counted (headers and bodies), last run. */
  pageKeyBytes: number;
  sentKeyBytes: number;
  rangeRequests: number;
  cliCoordinatorMs: number;
  cliOfflineMs: number;
  downloadMs: number;
  snarkjsVerifyMs?: number;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function timedProcess(command: string, args: string[]): Promise<{ ms: number; code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: performance.now() - started, code, output }));
  });
}

async function chainFor(target: string): Promise<{ chain: ChainKeys; label: string }> {
  if (isRealShapeName(target)) {
    const chain = await realShapedChain(target);
    return { chain: { ...chain, publicInputs: chain.publicInputs }, label: target };
  }
  return { chain: await benchChain(Number(target)), label: `bench${target}` };
}

export async function runReceiptBench(target: string, runs: number, withSnarkjs: boolean): Promise<ReceiptFigures> {
  const { chain, label } = await chainFor(target);
  log(`the finalised ceremony of ${label} (cached; the first time: finalisation, minutes at 2^18)`);
  const ceremony = await finalisedChainCeremony(chain, label);
  await releaseBn128();
  const work = await mkdtemp(path.join(tmpdir(), 'bench-receipt-'));
  const served = await servableCopy(ceremony.dataDir, work);
  const finalKey = path.join(served, 'final', `${ceremony.circuit}.zkey`);
  const info = await readZkeyInfo(finalKey);
  const sectionBytes = (id: number): number => info.sections.get(id)!.size;
  // Contribution 0's file head, section 1 and section 2, with their section headers: its first 700 bytes.
  const initialHeadBytes = 12 + 12 + 4 + 12 + sectionBytes(2);
  const floorBytes =
    12 + 12 * info.sections.size + [1, 2, 3, 10].reduce((sum, id) => sum + sectionBytes(id), 0) + initialHeadBytes;
  const receiptsText = await readFile(ceremony.receiptsFile('two'), 'utf8');

  const server = startGroup(
    process.execPath,
    [path.join(REPO_ROOT, 'bin', 'ceremony.js'), 'serve', '--data', served, '--port', '0'],
    {
      cwd: REPO_ROOT,
      env: process.env,
      label: 'ceremony serve',
    },
  );
  const browser = await launchChromium();
  try {
    const url = (await server.waitFor(/coordinator listening on (http:\/\/\S+)/))[1]!;
    const proxy = await startCountingProxy(url);
    try {
      const { pageMs, wallMs, pageKeyBytes, sentKeyBytes, rangeRequests } = await pageRuns(
        browser,
        proxy,
        runs,
        receiptsText,
        ceremony.circuit,
      );

      const receiptsFile = path.join(work, 'two.json');
      await cp(ceremony.receiptsFile('two'), receiptsFile);
      log('ceremony verify-receipt --coordinator, then offline');
      const cli = await timedProcess(process.execPath, [
        path.join(REPO_ROOT, 'bin', 'ceremony.js'),
        'verify-receipt',
        receiptsFile,
        '--coordinator',
        proxy.url,
        '--quiet',
      ]);
      if (cli.code !== 0) throw new Error(`verify-receipt --coordinator failed:\n${cli.output}`);
      const offline = await timedProcess(process.execPath, [
        path.join(REPO_ROOT, 'bin', 'ceremony.js'),
        'verify-receipt',
        receiptsFile,
        served,
        '--quiet',
      ]);
      if (offline.code !== 0) throw new Error(`verify-receipt DIR failed:\n${offline.output}`);

      log('the whole final key through the same proxy');
      const downloadStarted = performance.now();
      const whole = await fetch(`${proxy.url}/api/final/${ceremony.circuit}.zkey`);
      let downloaded = 0;
      for await (const chunk of whole.body!) downloaded += (chunk as Uint8Array).length;
      const downloadMs = performance.now() - downloadStarted;
      if (downloaded !== info.fileSize) throw new Error(`downloaded ${downloaded} of ${info.fileSize} bytes`);

      const snarkjsVerifyMs = withSnarkjs ? await snarkjsVerify(served, ceremony.circuit, finalKey) : undefined;
      return {
        label,
        keyBytes: info.fileSize,
        floorBytes,
        records: info.mpc.contributions.length,
        pageMs,
        wallMs,
        pageKeyBytes,
        sentKeyBytes,
        rangeRequests,
        cliCoordinatorMs: cli.ms,
        cliOfflineMs: offline.ms,
        downloadMs,
        snarkjsVerifyMs,
      };
    } finally {
      await proxy.close();
    }
  } finally {
    await browser.close();
    await server.stop();
    await rm(work, { recursive: true, force: true });
  }
}

/** The page's check of a pasted receipts file, `runs` times: its own and the wall time, the key bytes it fetched. */
async function pageRuns(
  browser: Awaited<ReturnType<typeof launchChromium>>,
  proxy: Awaited<ReturnType<typeof startCountingProxy>>,
  runs: number,
  receiptsText: string,
  circuit: string,
): Promise<Pick<ReceiptFigures, 'pageMs' | 'wallMs' | 'pageKeyBytes' | 'sentKeyBytes' | 'rangeRequests'>> {
  const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  const pageMs: number[] = [];
  const wallMs: number[] = [];
  let pageKeyBytes = 0;
  let sentKeyBytes = 0;
  let rangeRequests = 0;
  for (let run = 0; run < runs; run++) {
    await page.goto(`${proxy.url}/ceremony/`);
    await page.waitForSelector('#record-query');
    await page.evaluate((text) => navigator.clipboard.writeText(text), receiptsText);
    await page.focus('#record-query');
    const before = proxy.requests.length;
    const started = performance.now();
    await page.keyboard.press('Control+V');
    const summary = await page.waitForSelector('#receipt-check-summary[data-state="done"]', { timeout: 120_000 });
    wallMs.push(performance.now() - started);
    if ((await summary.getAttribute('data-ok')) !== 'true')
      throw new Error(`the page did not find the receipt: ${await summary.textContent()}`);
    pageMs.push(Number(await summary.getAttribute('data-elapsed-ms')));
    pageKeyBytes = Number(await summary.getAttribute('data-key-bytes'));
    const initialKey = `/api/circuits/${circuit}/zkeys/0`;
    const keyRequests = proxy.requests
      .slice(before)
      .filter((r) => r.url.startsWith('/api/final/') || r.url === initialKey);
    rangeRequests = keyRequests.length;
    sentKeyBytes = keyRequests.reduce((sum, r) => sum + r.headerBytes + r.bodyBytes, 0);
    log(`page run ${run + 1}: ${pageMs.at(-1)} ms, ${pageKeyBytes} key bytes`);
  }
  await context.close();
  return { pageMs, wallMs, pageKeyBytes, sentKeyBytes, rangeRequests };
}

/** `snarkjs zkey verify` of the final key, for comparison: its time. */
async function snarkjsVerify(served: string, circuit: string, finalKey: string): Promise<number> {
  log('npx snarkjs zkey verify of the final key (minutes at 2^18)');
  const r1cs = path.join(served, 'circuits', `${circuit}.r1cs`);
  const ptau = path.join(served, 'ptau', 'dev.ptau');
  const verified = await timedProcess('npx', ['snarkjs', 'zkey', 'verify', r1cs, ptau, finalKey]);
  if (verified.code !== 0 || !/ZKey Ok!/.test(verified.output))
    throw new Error(`snarkjs zkey verify failed:\n${verified.output.slice(-2000)}`);
  return verified.ms;
}

export function printReceiptBench(f: ReceiptFigures): void {
  const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} kB`;
  const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
  const page = median(f.pageMs);
  const rows: Array<[string, string]> = [
    ['final key', `${mb(f.keyBytes)}, ${f.records} records in its history`],
    [
      `paste → verdict, the page's own timing (median of ${f.pageMs.length})`,
      `${s(page)} (runs: ${f.pageMs.map(s).join(', ')}); goal < 5 s`,
    ],
    ['paste → verdict shown, timed by the bench', s(median(f.wallMs))],
    [
      "key bytes the page read (bodies; the final key's and contribution 0's)",
      `${kb(f.pageKeyBytes)} = ${((f.pageKeyBytes / f.keyBytes) * 100).toFixed(3)}% of the key; goal < 1 MB`,
    ],
    ['key bytes the coordinator sent (with headers)', `${kb(f.sentKeyBytes)} in ${f.rangeRequests} range requests`],
    [
      'floor: table + sections 1, 2, 3, 10; contribution 0 head',
      `${kb(f.floorBytes)} (the page reads ${(f.pageKeyBytes / f.floorBytes).toFixed(2)}× it)`,
    ],
    ['ceremony verify-receipt --coordinator (process)', s(f.cliCoordinatorMs)],
    ['ceremony verify-receipt DIR, offline (process)', s(f.cliOfflineMs)],
    [
      'the whole final key through the same proxy',
      `${s(f.downloadMs)} (${mb(f.keyBytes)}): ${(f.downloadMs / page).toFixed(1)}× the page's check`,
    ],
  ];
  if (f.snarkjsVerifyMs !== undefined) {
    rows.push([
      'npx snarkjs zkey verify of the final key',
      `${s(f.snarkjsVerifyMs)}: ${(f.snarkjsVerifyMs / page).toFixed(0)}× the page's check (after the download)`,
    ]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(`\nreceipt check on ${f.label} (loopback; a machine shared with other work)\n`);
  for (const [k, v] of rows) process.stdout.write(`  ${k.padEnd(width)}  ${v}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: {
      circuit: { type: 'string' },
      power: { type: 'string' },
      runs: { type: 'string', default: '3' },
      'skip-snarkjs': { type: 'boolean', default: false },
    },
  });
  const target = values.circuit ?? values.power ?? 'rs18';
  await stat(path.join(REPO_ROOT, 'web', 'dist', 'index.html')).catch(() => {
    throw new Error('the browser app is not built: run `npm run build` first');
  });
  printReceiptBench(await runReceiptBench(target, Number(values.runs), !values['skip-snarkjs']));
  await releaseBn128();
}
