/**
 * The contributor page's memory during a turn, measured without DevTools' network instrumentation.
 * Chromium is driven over the DevTools protocol directly (bench/devtools-page.ts: no Network
 * domain, whose copies of bodies would add to the page's memory), so the figure is the page's
 * own, with nothing else of the turn bench around it: PSS of all Chromium's
 * processes (bench/process-tree-sampler.ts) above their idle level before Join, on the cached
 * one-circuit bench ceremony of a generated 2^P key (or a real-shaped one) against `ceremony serve`
 * (dist/ and web/dist are built first where stale).
 *
 * With `--link DOWN/UP` (Mbit/s) the page goes through the turn bench's shaped proxy, as a
 * contributor on a home link.
 *
 * Usage: tsx bench/page-memory.ts [--power 16 | --circuit rs18] [--link 100/20]
 * In `npm run bench` (bench/index.ts, `--only page-memory`) it runs on the turn bench's key: rs18,
 * or --turn-circuit NAME / --turn-power P.
 */
import { spawnSync } from 'node:child_process';
import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { ceremonyPaths } from '../core/data-folder/ceremony-paths.ts';
import { REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { chromiumProxyArgs, parseLink, startShapedProxy, type ShapedProxy } from '../tests/helpers/shaped-proxy.ts';
import { BENCH_CIRCUIT, benchCeremonyCopy, benchCeremonyTemplate } from './bench-ceremony.ts';
import { benchChain, benchLog as log, isRealShapeName, realShapedChain, REAL_SHAPE_NAMES } from './bench-chain.ts';
import { startCeremonyServe } from './coordinator-process.ts';
import { openDevtoolsPage, type DevtoolsPage } from './devtools-page.ts';
import { ProcessTreeSampler } from './process-tree-sampler.ts';
import { parseBenchArgs } from './bench-args.ts';

const TURN_TIMEOUT_MS = 10 * 60 * 1000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const { values } = parseBenchArgs(import.meta.url, {
    options: { power: { type: 'string', default: '16' }, circuit: { type: 'string' }, link: { type: 'string' } },
  });
  const linkRates = values.link === undefined ? undefined : parseLink(values.link);
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
  const through = values.link ? `, through a ${values.link} Mbit/s link` : '';
  const label = `${values.circuit ?? `2^${values.power}`}${through}`;
  const template = await benchCeremonyTemplate(chain, values.circuit ?? String(values.power));
  const dataDir = await benchCeremonyCopy(template, 'page-memory');
  const keyBytes = (await stat(ceremonyPaths(dataDir).zkeyPath(BENCH_CIRCUIT, 0))).size;
  log('starting ceremony serve and Chromium (DevTools protocol, no Network domain)');
  const coordinator = await startCeremonyServe(dataDir);
  let page: DevtoolsPage | undefined;
  let link: ShapedProxy | undefined;
  try {
    if (linkRates) link = await startShapedProxy(linkRates);
    page = await openDevtoolsPage({
      url: `${coordinator.url}/`,
      label: 'memory',
      extraArgs: link ? chromiumProxyArgs(link) : [],
    });
    const { evaluate, until } = page;
    await until(`!!document.querySelector('#demo-name')`);
    await evaluate(
      `document.querySelector('#demo-name').value = 'memory';` +
        `document.querySelector('#demo-sign-in button[type=submit]').click()`,
    );
    await until(`!!document.querySelector('#join')`);
    await sleep(3000); // the page settles: its idle level
    const sampler = new ProcessTreeSampler(page.pid, { intervalMs: 100, pssIntervalMs: 500, byKind: true });
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
    await page?.close();
    await link?.stop();
    await coordinator.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    console.error(error.stack ?? error.message);
    process.exit(1);
  },
);
