/**
 * The contributor page's memory during a turn, measured without DevTools' network instrumentation.
 * Playwright (which the turn bench drives Chromium with) enables the DevTools Network domain on
 * every page, and Chromium then keeps copies of request and response bodies in the renderer for
 * inspection: at 2^16 that adds about 55 MB of the turn's own bytes to the page's memory, growing
 * with the key. Here Chromium is driven over the DevTools protocol directly (its debugging pipe), with only Runtime
 * evaluations (Page and Network stay off), so the figure is the page's own: PSS of all Chromium's
 * processes (bench/process-tree-sampler.ts) above their idle level before Join, on the cached
 * one-circuit bench ceremony of a generated 2^P key (or a real-shaped one) against `ceremony serve`
 * (dist/ and web/dist are built first where stale).
 *
 * Usage: tsx bench/page-memory.ts [--power 16 | --circuit rs18]
 * In `npm run bench` (bench/index.ts, `--only page-memory`) it runs on the turn bench's key: rs18,
 * or --turn-circuit NAME / --turn-power P.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Readable, Writable } from 'node:stream';
import { ceremonyPaths } from '../core/data-folder/ceremony-paths.ts';
import { REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { CHROMIUM_ARGS, CHROMIUM_BIN } from '../tests/helpers/chromium.ts';
import { BENCH_CIRCUIT, benchCeremonyCopy, benchCeremonyTemplate } from './bench-ceremony.ts';
import { benchChain, benchLog as log, isRealShapeName, realShapedChain, REAL_SHAPE_NAMES } from './bench-chain.ts';
import { startCeremonyServe } from './coordinator-process.ts';
import { ProcessTreeSampler } from './process-tree-sampler.ts';

const TURN_TIMEOUT_MS = 10 * 60 * 1000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface DevtoolsClient {
  send(method: string, params?: object, sessionId?: string): Promise<any>;
}

/**
 * A DevTools protocol client over Chromium's debugging pipe (`--remote-debugging-pipe`: commands
 * written to its fd 3, answers read from its fd 4, each message ending with a NUL byte).
 */
function devtoolsOverPipe(toChrome: Writable, fromChrome: Readable): DevtoolsClient {
  let nextId = 0;
  let buffered = '';
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  fromChrome.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let end = buffered.indexOf('\0'); end >= 0; end = buffered.indexOf('\0')) {
      const message = JSON.parse(buffered.slice(0, end)) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
      };
      buffered = buffered.slice(end + 1);
      const pending = message.id === undefined ? undefined : waiting.get(message.id);
      if (!pending) continue;
      waiting.delete(message.id!);
      if (message.error) pending.reject(new Error(message.error.message));
      else pending.resolve(message.result);
    }
  });
  return {
    send: (method, params = {}, sessionId) =>
      new Promise((resolve, reject) => {
        const id = ++nextId;
        waiting.set(id, { resolve, reject });
        toChrome.write(`${JSON.stringify({ id, method, params, sessionId })}\0`);
      }),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { power: { type: 'string', default: '16' }, circuit: { type: 'string' } } });
  if (values.circuit !== undefined && !isRealShapeName(values.circuit))
    throw new Error(`--circuit is one of ${REAL_SHAPE_NAMES.join(', ')}`);
  if (!Number.isInteger(Number(values.power))) throw new Error(`--power is an integer, not "${values.power}"`);
  // ceremony serve runs from dist/ and serves web/dist: build what is stale, so the page measured is today's.
  const build = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'build.js')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (build.status !== 0) throw new Error('the build failed');
  const chain = values.circuit ? await realShapedChain(values.circuit) : await benchChain(Number(values.power));
  const label = values.circuit ?? `2^${values.power}`;
  const template = await benchCeremonyTemplate(chain, values.circuit ?? String(values.power));
  const dataDir = await benchCeremonyCopy(template, 'page-memory');
  const profile = await mkdtemp(path.join(tmpdir(), 'page-memory-profile-'));
  const keyBytes = (await stat(ceremonyPaths(dataDir).zkeyPath(BENCH_CIRCUIT, 0))).size;
  log('starting ceremony serve and Chromium (DevTools protocol, no Network domain)');
  const coordinator = await startCeremonyServe(dataDir);
  const chrome = spawn(CHROMIUM_BIN, [...CHROMIUM_ARGS, '--remote-debugging-pipe', `--user-data-dir=${profile}`], {
    stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
    detached: true,
  });
  try {
    const client = devtoolsOverPipe(chrome.stdio[3] as Writable, chrome.stdio[4] as Readable);
    const { targetId } = await client.send('Target.createTarget', { url: `${coordinator.url}/` });
    const { sessionId } = await client.send('Target.attachToTarget', { targetId, flatten: true });
    const evaluate = async (expression: string): Promise<unknown> =>
      (await client.send('Runtime.evaluate', { expression, returnByValue: true }, sessionId)).result?.value;
    const until = async (expression: string, timeoutMs = 60_000): Promise<void> => {
      // While the page navigates (the sign-in) it has no context to evaluate in for a moment.
      for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(100))
        if (await evaluate(expression).catch(() => false)) return;
      throw new Error(`the page never reached: ${expression}`);
    };
    await until(`!!document.querySelector('#demo-name')`);
    await evaluate(
      `document.querySelector('#demo-name').value = 'memory';` +
        `document.querySelector('#demo-sign-in button[type=submit]').click()`,
    );
    await until(`!!document.querySelector('#join')`);
    await sleep(3000); // the page settles: its idle level
    const sampler = new ProcessTreeSampler(chrome.pid!, { intervalMs: 100, pssIntervalMs: 500, byKind: true });
    await sleep(1500);
    const idleSample = sampler.sample();
    const idle = idleSample.pssBytes!;
    const start = Date.now();
    log('turn under way');
    await evaluate(`document.querySelector('#join').click()`);
    await until(
      `['accepted', 'failed', 'refused'].includes(` +
        `document.querySelector('#circuits tr[data-circuit]')?.getAttribute('data-status'))`,
      TURN_TIMEOUT_MS,
    );
    const status = await evaluate(`document.querySelector('#circuits tr[data-circuit]').getAttribute('data-status')`);
    const end = Date.now();
    const peak = sampler.peak(start, end)!;
    sampler.stop();
    if (status !== 'accepted') throw new Error(`the turn ended ${String(status)}`);
    const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
    const above = peak.pssBytes! - idle;
    console.log(`the page's memory during a turn, without DevTools network buffers (${label}, key ${mb(keyBytes)})`);
    console.log(`turn, Join → accepted                ${((end - start) / 1000).toFixed(1)} s`);
    console.log(`idle PSS of all Chromium processes   ${mb(idle)}`);
    console.log(
      `peak PSS above idle                  ${mb(above)} = ${(above / keyBytes).toFixed(2)}× the key, ` +
        `${((peak.t - start) / 1000).toFixed(1)} s into the turn  [goal ≤ 0.5× the key]`,
    );
    // Where the growth is: the page's renderer (its thread and Web Workers), the network service, …
    const kinds = new Set([...Object.keys(peak.pssByKind ?? {}), ...Object.keys(idleSample.pssByKind ?? {})]);
    const growth = [...kinds]
      .map((kind) => [kind, (peak.pssByKind?.[kind] ?? 0) - (idleSample.pssByKind?.[kind] ?? 0)] as const)
      .filter(([, bytes]) => Math.abs(bytes) >= 0.5e6)
      .sort((a, b) => b[1] - a[1]);
    const signed = ([kind, bytes]: readonly [string, number]): string => `${kind} ${bytes >= 0 ? '+' : ''}${mb(bytes)}`;
    console.log(`  by process, at the peak            ${growth.map(signed).join(', ')}`);
  } finally {
    try {
      process.kill(-chrome.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    await coordinator.stop();
    await rm(dataDir, { recursive: true, force: true });
    await rm(profile, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    console.error(error.stack ?? error.message);
    process.exit(1);
  },
);
