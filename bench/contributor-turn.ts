/**
 * A contributor's whole turn as a person lives it: the real contributor page in
 * a fresh headless Chromium signs in (demo), clicks Join and waits until the page says "accepted",
 * against the real `ceremony serve` (compiled dist/, its own process group, embedded verifier) on a
 * one-circuit ceremony whose key is the bench key (rs18: the real-shaped 2^18 key, 141–156 MB).
 * Each turn is taken twice: straight to the coordinator, and through a shaped home link (a local
 * proxy, 100 Mbit/s down and 20 up by default, shared by every connection of the browser, its
 * Web Workers' included). Measured per turn:
 *  - the turn, Join click → verdict shown, and its stages as the page shows them (download,
 *    compute with its L/H pass, saving the result, upload) and as the coordinator logs them (last
 *    byte received → verdict: the coordinator's share);
 *  - bytes moved both ways as the coordinator counts them (/metrics before and after, every
 *    route group but /metrics itself), ÷ (2 × key size);
 *  - peak PSS of all the browser's processes above their idle level just before Join, ÷ key size;
 *  - cores busy (CPU time ÷ wall time of the browser's processes) over the L/H pass, ÷ cores; beside
 *    it the coordinator's and the whole machine's over the same stretch: here the coordinator takes
 *    in the upload (splice, sums) on the same cores, which in a ceremony it does on its own machine.
 * Beside them, in the same run: `ceremony contribute` (the local CLI) on the same key, whose
 * contribution step is the compute floor and whose cores busy is the kernel's in Node, and the
 * achieved rates of plain transfers, straight and through the link (is it shaped?). Floors: bytes,
 * the sections a contribution changes (protocol, header with δ, L, H, contributions) down and up,
 * and the whole key twice (today's protocol); time, the slowest of download, compute and upload.
 *
 * Before the measured turns a scripted contributor takes one turn (the chain's z1), so the turns
 * measured run on a head this coordinator verified itself (its link combination cached), as every
 * turn but the first of a real ceremony does.
 *
 * A second kind of client plugs in through `TURN_CLIENTS` (`runTurn(kind, context)`): the terminal
 * client (`ceremony contribute --coordinator`) only needs its driver (start its process, report its
 * stages and verdict).
 *
 * Usage: tsx bench/contributor-turn.ts [--circuit rs18 | --power P] [--link 100/20] [--runs N]
 *                                      [--client browser|cli|cli-whole-key] [--versus CLIENT (a second client,
 *                                      its turns taken in the same run)] [--json FILE (every figure and mark)]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rm, stat, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ceremonyPaths } from '../core/data-folder/ceremony-paths.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { SECTION, readZkeyInfo } from '../core/zkey/zkey-file.ts';
import { HTTP_ROUTE_GROUPS, type HttpRouteGroup } from '../server/metrics/http-byte-counter.ts';
import { REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { ContributorClient } from '../tests/helpers/contributor-client.ts';
import { chromiumProxyArgs, parseLink, startShapedProxy, type ShapedProxy } from '../tests/helpers/shaped-proxy.ts';
import { BENCH_CIRCUIT, benchCeremonyCopy, compiledBenchCeremony } from './bench-ceremony.ts';
import { benchLog as log, isRealShapeName, REAL_SHAPE_NAMES } from './bench-chain.ts';
import { killGroupAtExit, startCeremonyServe, type CoordinatorProcess } from './coordinator-process.ts';
import { openDevtoolsPage } from './devtools-page.ts';
import { MachineCpuSampler, ProcessTreeSampler } from './process-tree-sampler.ts';
import { ceremonyArgv, runStage } from './stage-run.ts';
import { parseBenchArgs } from './bench-args.ts';
import { printTerminalTimelines, terminalTrace, type TerminalTimeline } from './terminal-timeline.ts';

const MB = 1024 * 1024;
/** A turn longer than this is stuck (a shaped rs18 turn takes under two minutes). */
const TURN_TIMEOUT_MS = 30 * 60_000;
/** The goals a turn is held to (bytes, memory, shaped link, coordinator's share, cores), printed beside them. */
const GOALS = {
  bytes: 0.3,
  memory: 0.5,
  shapedRatio: 1.3,
  coordinatorShareSeconds: 1.1,
  coordinatorShareMoonshot: 0.5,
  coresBusy: 0.9,
};

// ——— clients ———————————————————————————————————————————————————————————————————————————————

export type TurnClientKind = 'browser' | 'cli' | 'cli-whole-key';
const TURN_CLIENT_KINDS: readonly TurnClientKind[] = ['browser', 'cli', 'cli-whole-key'];

/** Moments of a turn a client can report (epoch ms); a client whose stages overlap reports those it sees. */
export type TurnMark =
  | 'join'
  | 'turnStart'
  | 'downloadStart'
  | 'computeStart'
  | 'lhStart'
  | 'lhEnd'
  | 'computeEnd'
  | 'uploadStart'
  | 'uploadEnd'
  | 'verdict';

const MARK_ORDER: TurnMark[] = [
  'join',
  'turnStart',
  'downloadStart',
  'computeStart',
  'lhStart',
  'lhEnd',
  'computeEnd',
  'uploadStart',
  'uploadEnd',
  'verdict',
];
/** The stage a turn is in after each mark, in words (where the memory peak fell). */
const STAGE_AFTER: Record<TurnMark, string> = {
  join: 'waiting for the turn',
  turnStart: 'preparing',
  downloadStart: 'the download',
  computeStart: 'compute (before L/H)',
  lhStart: 'the L/H pass',
  lhEnd: 'compute (writing the key)',
  computeEnd: 'saving the result',
  uploadStart: 'the upload',
  uploadEnd: 'verification',
  verdict: 'the verdict',
};

export interface TurnContext {
  /** The coordinator, straight (loopback). */
  coordinator: CoordinatorProcess;
  /**
   * The shaped link, when this turn goes through one: a browser uses it as its proxy
   * (chromiumProxyArgs); a client that takes only a base URL uses `link.url`, which is also a
   * reverse proxy to the coordinator.
   */
  link?: ShapedProxy;
  /** The demo sign-in name of this turn's contributor (a new one each turn). */
  contributorName: string;
}

export interface TurnHooks {
  /** Records a moment of the turn (the first report of each counts); `at` defaults to now. */
  mark(name: TurnMark, at?: number): void;
  /** A client that starts its process inside the turn reports its pid here, to be sampled. */
  processStarted(pid: number): void;
}

export type TurnVerdict =
  | { accepted: true; /** The terminal client's steps (terminal-timeline.ts). */ timeline?: TerminalTimeline }
  | { accepted: false; why: string };

export interface StartedTurnClient {
  /** The root of the client's processes when they exist before the turn (the browser), for its idle level. */
  pid?: number;
  /** What the client says about itself (engine, workers), for the table's header. */
  describe(): string;
  /** The timed turn: marks `join` as it starts, resolves with the verdict the client shows. */
  takeTurn(hooks: TurnHooks): Promise<TurnVerdict>;
  close(): Promise<void>;
}

export interface TurnClientDriver {
  /** Throws, in words, when this client cannot run here: checked before the bench spends minutes setting up. */
  check?(): void;
  /** Everything before the timed turn (the browser: launched, signed in, the Join button on screen). */
  start(context: TurnContext): Promise<StartedTurnClient>;
}

/**
 * Installed in the contributor page: the page's own words, read at every render and reported to
 * the bench (turnBenchReport): the row's status, and the computing step's text (snarkjs's L and H
 * progress, "writing your contribution", "done", the engine). A string, not a function: tsx would
 * wrap a function's inner names in a helper the page does not have.
 */
const PAGE_OBSERVER = `(() => {
  const send = (name) => window.turnBenchReport?.(JSON.stringify([name, Date.now()]));
  const sent = new Set();
  const once = (name) => { if (!sent.has(name)) { sent.add(name); send(name); } };
  let status = null;
  new MutationObserver(() => {
    const row = document.querySelector('#circuits tr[data-circuit]');
    if (!row) return;
    const now = row.getAttribute('data-status');
    const detail = row.querySelector('.detail')?.textContent ?? '';
    if (now !== status) {
      status = now;
      send('status:' + now);
      if (now === 'refused' || now === 'failed') {
        const code = row.querySelector('[data-refusal-code]')?.getAttribute('data-refusal-code') ?? '';
        send('why:' + code + ' ' + detail);
      }
    }
    const engine = /(fast kernel on \\d+ workers?(?:, (?:without )?SIMD)?|snarkjs in one worker[^,)]*)/
      .exec(detail)?.[1];
    if (engine) once('engine:' + engine);
    if (now === 'contributing') {
      // The streamed turn: the L/H pass runs from the first point mixed to the last.
      const mixed = /mixed (\\d+)% of the points/.exec(detail);
      if (mixed && Number(mixed[1]) > 0) once('lhStart');
      if (mixed && Number(mixed[1]) === 100) { once('lhEnd'); once('computeEnd'); }
      return;
    }
    if (now !== 'computing') return;
    if (detail.includes('updating the L section')) once('lhStart');
    if (detail.includes('writing your contribution')) once('lhEnd');
    if (/randomness: done, 100%/.test(detail)) once('computeEnd');
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
})();`;

/**
 * The contributor page in a fresh Chromium profile, through the link's proxy when there is one,
 * driven over the DevTools protocol without its Network domain (bench/devtools-page.ts): with it,
 * as Playwright has it, Chromium reports every transfer to the driver, which took the bench a
 * core over a large key at loopback speed, out of the page's cores.
 */
const browserClient: TurnClientDriver = {
  async start(context) {
    let report: (name: string, at: number) => void = () => {};
    const page = await openDevtoolsPage({
      url: `${context.coordinator.url}/`,
      extraArgs: context.link ? chromiumProxyArgs(context.link) : [],
      label: context.contributorName,
      bindings: {
        turnBenchReport: (payload) => {
          const [name, at] = JSON.parse(payload) as [string, number];
          report(name, at);
        },
      },
      initScript: PAGE_OBSERVER,
    });
    try {
      await page.until(`!!document.querySelector('#demo-name')`);
      await page.evaluate(
        `document.querySelector('#demo-name').value = ${JSON.stringify(context.contributorName)};` +
          `document.querySelector('#demo-sign-in button[type=submit]').click()`,
      );
      await page.until(`!!document.querySelector('#join')`);
      const cores = await page.evaluate('navigator.hardwareConcurrency');
      let engine = 'engine not seen';
      return {
        pid: page.pid,
        describe: () => `page: ${engine}, navigator.hardwareConcurrency ${String(cores)}`,
        takeTurn: (hooks) =>
          new Promise<TurnVerdict>((resolve, reject) => {
            const byStatus: Record<string, TurnMark[]> = {
              turn: ['turnStart'],
              preparing: ['turnStart'],
              downloading: ['turnStart', 'downloadStart'],
              computing: ['turnStart', 'computeStart'],
              uploading: ['computeEnd', 'uploadStart'],
              // Streamed: download, compute and upload start together (the page's own parts say more).
              contributing: ['turnStart', 'downloadStart', 'computeStart', 'uploadStart'],
              verifying: ['uploadEnd'],
              accepted: ['uploadEnd', 'verdict'],
            };
            let why = '';
            report = (name, at) => {
              if (name.startsWith('engine:')) engine = name.slice('engine:'.length);
              else if (name.startsWith('why:')) why = name.slice('why:'.length).trim();
              else if (name.startsWith('status:')) {
                const status = name.slice('status:'.length);
                for (const mark of byStatus[status] ?? []) hooks.mark(mark, at);
                if (status === 'accepted') resolve({ accepted: true });
                // The page words it a moment later: wait for it, then fail the turn.
                if (status === 'refused' || status === 'failed')
                  setTimeout(() => resolve({ accepted: false, why: `${status}: ${why || 'no reason shown'}` }), 500);
              } else hooks.mark(name as TurnMark, at);
            };
            hooks.mark('join');
            page.evaluate(`document.querySelector('#join').click()`).catch(reject);
          }),
        close: () => page.close(),
      };
    } catch (error) {
      await page.close();
      throw error;
    }
  },
};

/**
 * The terminal client (`ceremony contribute --coordinator URL --demo NAME CIRCUIT`), started inside
 * the timed turn: its start-up, sign-in and join count, as a contributor lives them. It writes plain
 * lines when its output is not a terminal; the driver marks the stages those lines name. Through a
 * link it takes the link's URL (a reverse proxy to the coordinator) as the coordinator's.
 */
const CLI_STAGES: Array<[RegExp, TurnMark[]]> = [
  [/your turn/, ['turnStart']],
  [/downloading/, ['downloadStart']],
  [/computing your contribution/, ['computeStart']],
  [/uploading/, ['computeEnd', 'uploadStart']],
  [/verifying/, ['uploadEnd']],
  [/accepted as contribution/, ['uploadEnd', 'verdict']],
];
/** The terminal client; `extraArgs` e.g. `--whole-key` (the page's transfer, for a same-run comparison). */
const cliClient = (extraArgs: readonly string[]): TurnClientDriver => ({
  async start(context) {
    const coordinatorUrl = context.link?.url ?? context.coordinator.url;
    let child: ReturnType<typeof spawn> | undefined;
    let workers = availableParallelism();
    return {
      describe: () => `terminal client: kernel on ${workers} worker thread${workers === 1 ? '' : 's'}`,
      takeTurn: async (hooks) => {
        const trace = await terminalTrace();
        const verdict = await new Promise<TurnVerdict>((resolve, reject) => {
          hooks.mark('join');
          child = spawn(
            process.execPath,
            [
              ...trace.nodeArgs,
              path.join(REPO_ROOT, 'bin', 'ceremony.js'),
              'contribute',
              '--coordinator',
              coordinatorUrl,
              '--demo',
              context.contributorName,
              ...extraArgs,
              BENCH_CIRCUIT,
            ],
            { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: trace.env },
          );
          hooks.processStarted(child.pid!);
          const tail: string[] = [];
          const onLine = (line: string): void => {
            tail.push(line);
            if (tail.length > 20) tail.shift();
            const threads = /kernel on (\d+) thread/.exec(line);
            if (threads) workers = Number(threads[1]);
            for (const [pattern, marks] of CLI_STAGES)
              if (pattern.test(line)) for (const mark of marks) hooks.mark(mark);
          };
          createInterface({ input: child.stdout! }).on('line', onLine);
          createInterface({ input: child.stderr! }).on('line', onLine);
          child.once('error', reject);
          child.once('exit', (code) =>
            resolve(code === 0 ? { accepted: true } : { accepted: false, why: `exit ${code}: ${tail.join(' | ')}` }),
          );
        });
        const timeline = await trace.read();
        return verdict.accepted ? { accepted: true, timeline } : verdict;
      },
      close: async () => {
        if (child?.pid && child.exitCode === null) {
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      },
    };
  },
});

export const TURN_CLIENTS: Record<TurnClientKind, TurnClientDriver> = {
  browser: browserClient,
  cli: cliClient([]),
  'cli-whole-key': cliClient(['--whole-key']),
};

// ——— one turn, measured ———————————————————————————————————————————————————————————————————

export interface TurnMeasurement {
  client: TurnClientKind;
  shaped: boolean;
  clientNote: string;
  /** The key the turn downloaded (the head when it began). */
  keyBytes: number;
  turnMs: number;
  marks: Partial<Record<TurnMark, number>>;
  /** The coordinator's log: the upload's last byte received, and the verdict. */
  uploadCompleteAt: number;
  verdictAt: number;
  /** The coordinator's log between the two: a delta's key complete (spliced), handed to the verifier. */
  splicedAt?: number;
  handedInAt: number;
  /** As the coordinator counts them, every route group but /metrics: down (responses), up (requests). */
  bytes: { down: number; up: number; byRoute: Record<string, { down: number; up: number }> };
  /** As the link counted them (its shaped bytes: bodies), when the turn went through one. */
  linkBytes?: { down: number; up: number };
  memory: { idlePssBytes: number; peakPssBytes: number; peakRssAboveIdleBytes: number; peakAt?: string };
  /**
   * Over the same stretch: the coordinator's busy cores (its process group: here it shares the
   * machine with the client, which it does not in a ceremony) and the whole machine's.
   */
  cores: { busy: number; over: string; seconds: number; coordinator: number; machine: number };
  /** The terminal client's steps, epoch ms (terminal-timeline.ts). */
  timeline?: TerminalTimeline;
}

export type ByteCounts = Record<string, { request: number; response: number }>;

export async function scrapeBytes(coordinatorUrl: string): Promise<ByteCounts> {
  const text = await (await fetch(`${coordinatorUrl}/metrics`)).text();
  const counts: ByteCounts = {};
  for (const match of text.matchAll(/^ceremony_http_(request|response)_bytes_total\{route="([^"]+)"\} (\S+)$/gm)) {
    const entry = (counts[match[2]!] ??= { request: 0, response: 0 });
    entry[match[1] as 'request' | 'response'] = Number(match[3]);
  }
  if (Object.keys(counts).length === 0)
    throw new Error("the coordinator's /metrics has no byte counters (ceremony_http_*_bytes_total)");
  return counts;
}

export function bytesMoved(before: ByteCounts, after: ByteCounts): TurnMeasurement['bytes'] {
  const byRoute: Record<string, { down: number; up: number }> = {};
  let down = 0;
  let up = 0;
  for (const route of HTTP_ROUTE_GROUPS as readonly HttpRouteGroup[]) {
    if (route === 'metrics') continue; // the bench's own scrapes
    const moved = {
      down: (after[route]?.response ?? 0) - (before[route]?.response ?? 0),
      up: (after[route]?.request ?? 0) - (before[route]?.request ?? 0),
    };
    byRoute[route] = moved;
    down += moved.down;
    up += moved.up;
  }
  return { down, up, byRoute };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** The size of the head key of the bench's circuit, as the coordinator serves it. */
async function headKeyBytes(url: string): Promise<number> {
  const ceremony = (await (await fetch(`${url}/api/ceremony`)).json()) as {
    circuits: Array<{ name: string; headIndex: number }>;
  };
  const headIndex = ceremony.circuits.find((c) => c.name === BENCH_CIRCUIT)!.headIndex;
  return Number(
    (await fetch(`${url}/api/circuits/${BENCH_CIRCUIT}/zkeys/${headIndex}`, { method: 'HEAD' })).headers.get(
      'content-length',
    ),
  );
}

/** The coordinator's log lines of the contributor's upload, hand-in, verdict and (with a delta) splice. */
async function turnLogs(context: TurnContext) {
  const contributor = `demo:${context.contributorName}`;
  const uploaded = await context.coordinator.waitForLog(
    'contribution upload complete',
    (l) => l.contributor === contributor,
    10_000,
  );
  const queued = await context.coordinator.waitForLog(
    'contribution uploaded, verifying',
    (l) => l.contributor === contributor,
    10_000,
  );
  const accepted = await context.coordinator.waitForLog(
    'contribution accepted',
    (l) => l.contributionId === queued.contributionId,
    10_000,
  );

  const spliced = context.coordinator.logs.find(
    (l) => l.message === 'contribution delta spliced onto the head' && l.time >= uploaded.time && l.time <= queued.time,
  );
  return { uploaded, queued, accepted, spliced };
}

/**
 * Cores busy over the L/H pass when the client shows it, else its compute stage, else the turn.
 * The page renders once a frame: a short state ("writing your contribution", between the H
 * pass and "done") can be replaced before it is drawn, so the pass may end at the compute's end.
 */
function busyStretch(marks: Partial<Record<TurnMark, number>>): [string, TurnMark, TurnMark] {
  const stretches: Array<[string, TurnMark, TurnMark]> = [
    ['L/H pass', 'lhStart', 'lhEnd'],
    ['L/H pass to compute end', 'lhStart', 'computeEnd'],
    ['compute stage', 'computeStart', 'computeEnd'],
    ['whole turn', 'join', 'verdict'],
  ];
  return (
    stretches.find(([, a, b]) => marks[a] !== undefined && marks[b] !== undefined && marks[b]! > marks[a]!) ??
    stretches[2]!
  );
}

/** Takes one turn with `kind` and measures it (see the module comment). */
export async function runTurn(kind: TurnClientKind, context: TurnContext): Promise<TurnMeasurement> {
  const keyBytes = await headKeyBytes(context.coordinator.url);
  const client = await TURN_CLIENTS[kind].start(context);
  const closeClient = (): Promise<void> => client.close();
  running.push(closeClient);
  let sampler = client.pid === undefined ? undefined : new ProcessTreeSampler(client.pid);
  const coordinatorCpu = new ProcessTreeSampler(context.coordinator.pid, { intervalMs: 250, readPss: false });
  const machineCpu = new MachineCpuSampler();
  try {
    // The idle level: the page signed in and settled, Join not yet clicked (median of three readings).
    let idlePss = 0;
    let idleRss = 0;
    if (sampler) {
      await sleep(2000);
      const idle = [];
      for (let i = 0; i < 3; i++, await sleep(500)) idle.push(sampler.sample());
      idlePss = median(idle.map((s) => s.pssBytes ?? 0));
      idleRss = median(idle.map((s) => s.rssBytes));
    }
    const before = await scrapeBytes(context.coordinator.url);
    const linkBefore = context.link?.bytes();
    const marks: Partial<Record<TurnMark, number>> = {};
    const hooks: TurnHooks = {
      mark(name, at = Date.now()) {
        if (marks[name] !== undefined) return;
        marks[name] = at;
        sampler?.sample();
      },
      processStarted(pid) {
        sampler ??= new ProcessTreeSampler(pid);
      },
    };
    let timer: NodeJS.Timeout | undefined;
    const verdict = await Promise.race([
      client.takeTurn(hooks),
      new Promise<never>(
        (_, reject) =>
          (timer = setTimeout(
            () => reject(new Error(`no verdict within ${TURN_TIMEOUT_MS / 60_000} minutes`)),
            TURN_TIMEOUT_MS,
          )),
      ),
    ]).finally(() => clearTimeout(timer));
    const shownAt = marks.verdict ?? Date.now();
    if (!verdict.accepted) throw new Error(`the turn of ${context.contributorName} was not accepted: ${verdict.why}`);
    const after = await scrapeBytes(context.coordinator.url);
    const linkAfter = context.link?.bytes();
    sampler?.stop();
    coordinatorCpu.stop();
    machineCpu.stop();

    const { uploaded, queued, accepted, spliced } = await turnLogs(context);
    const start = marks.join!;
    const peak = sampler?.peak(start, shownAt);
    const stageAt = (t: number): string => {
      const last = MARK_ORDER.filter((m) => marks[m] !== undefined && marks[m]! <= t).at(-1) ?? 'join';
      return STAGE_AFTER[last];
    };
    const [over, from, to] = busyStretch(marks);
    return {
      client: kind,
      shaped: context.link !== undefined,
      clientNote: client.describe(),
      keyBytes,
      turnMs: shownAt - start,
      marks,
      ...(verdict.timeline ? { timeline: verdict.timeline } : {}),
      uploadCompleteAt: uploaded.time,
      verdictAt: accepted.time,
      ...(spliced ? { splicedAt: spliced.time } : {}),
      handedInAt: queued.time,
      bytes: bytesMoved(before, after),
      linkBytes:
        linkBefore && linkAfter
          ? { down: linkAfter.down - linkBefore.down, up: linkAfter.up - linkBefore.up }
          : undefined,
      memory: {
        idlePssBytes: idlePss,
        peakPssBytes: peak?.pssBytes ?? 0,
        peakRssAboveIdleBytes: sampler ? Math.max(0, sampler.peakRss(start, shownAt) - idleRss) : 0,
        peakAt: peak ? stageAt(peak.t) : undefined,
      },
      cores: (() => {
        const [a, b] = [marks[from] ?? start, marks[to] ?? shownAt];
        const around = { coordinator: coordinatorCpu.coresBusy(a, b), machine: machineCpu.coresBusy(a, b) };
        return sampler
          ? { busy: sampler.coresBusy(a, b), over, seconds: (b - a) / 1000, ...around }
          : { busy: 0, over: 'not sampled', seconds: 0, ...around };
      })(),
    };
  } finally {
    sampler?.stop();
    coordinatorCpu.stop();
    machineCpu.stop();
    if (running.includes(closeClient)) running.splice(running.indexOf(closeClient), 1);
    await client.close();
  }
}

// ——— the link, checked ————————————————————————————————————————————————————————————————————

export interface LinkRates {
  /** Mbit/s (10^6 bits) achieved by a plain download over two connections at once, and an upload. */
  downMbit: number;
  upMbit: number;
}

/**
 * Plain transfers from and to a local server, through `link` (as a proxy) or straight: the
 * download over two connections at once (the link is shared), `downBytes` in all; one upload.
 */
export async function measureLinkRates(
  link: ShapedProxy | undefined,
  downBytes: number,
  upBytes: number,
): Promise<LinkRates> {
  const block = Buffer.alloc(1 << 20, 0x5a);
  const origin = createServer(async (req, res) => {
    if (req.method === 'POST') {
      let received = 0;
      for await (const chunk of req) received += (chunk as Buffer).length;
      res.end(String(received));
      return;
    }
    const size = Number(new URL(req.url ?? '/', 'http://origin').searchParams.get('n'));
    res.writeHead(200, { 'content-length': size });
    for (let sent = 0; sent < size; sent += block.length) {
      if (!res.write(block.subarray(0, Math.min(block.length, size - sent)))) await once(res, 'drain');
    }
    res.end();
  });
  origin.listen(0, '127.0.0.1');
  await once(origin, 'listening');
  const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  const exchange = async (route: string, body?: Buffer): Promise<number> => {
    const options: RequestOptions = link
      ? { host: '127.0.0.1', port: link.port, path: `${originUrl}${route}` }
      : { host: '127.0.0.1', port: new URL(originUrl).port, path: route };
    const req = httpRequest({
      ...options,
      method: body ? 'POST' : 'GET',
      headers: body ? { 'content-length': body.length } : {},
    });
    req.end(body);
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    let received = 0;
    for await (const chunk of res) received += (chunk as Buffer).length;
    return received;
  };
  try {
    let started = performance.now();
    const half = Math.floor(downBytes / 2);
    await Promise.all([exchange(`/bytes?n=${half}`), exchange(`/bytes?n=${downBytes - half}`)]);
    const downSeconds = (performance.now() - started) / 1000;
    started = performance.now();
    await exchange('/sink', Buffer.alloc(upBytes, 0xa5));
    const upSeconds = (performance.now() - started) / 1000;
    return { downMbit: (downBytes * 8) / 1e6 / downSeconds, upMbit: (upBytes * 8) / 1e6 / upSeconds };
  } finally {
    origin.closeAllConnections();
    origin.close();
  }
}

// ——— the local CLI on the same key ——————————————————————————————————————————————————————————

export interface LocalContributeFigures {
  /** The whole command (start-up, contribution, verification, commit). */
  totalMs: number;
  /** Its contribution step ("contributing" → "verifying" in its progress lines): the compute floor. */
  contributeMs: number;
  /** CPU ÷ wall of the process over that step. */
  coresBusy: number;
}

/** `ceremony contribute` (compiled) on a fresh copy of `template`, its process sampled. */
async function runLocalContribute(template: string): Promise<LocalContributeFigures> {
  const dataDir = await benchCeremonyCopy(template, 'bench-turn-cli');
  let sampler: ProcessTreeSampler | undefined;
  try {
    let contributing: number | undefined;
    let verifying: number | undefined;
    const run = await runStage(ceremonyArgv('contribute', BENCH_CIRCUIT, '--data', dataDir, '--name', 'bench'), {
      cwd: REPO_ROOT,
      onStart: (pid) => (sampler = new ProcessTreeSampler(pid)),
      onLine: (line) => {
        if (contributing === undefined && /: contributing to contribution/.test(line)) contributing = Date.now();
        if (verifying === undefined && /: verifying contribution/.test(line)) verifying = Date.now();
        if (contributing !== undefined || verifying !== undefined) sampler!.sample();
      },
    });
    sampler!.stop();
    const output = run.stderr;
    if (/running the sources through tsx/.test(output))
      throw new Error('dist/ is stale (ceremony ran the sources through tsx): build first');
    if (contributing === undefined || verifying === undefined)
      throw new Error(`ceremony contribute printed no contributing/verifying steps:\n${output}`);
    return {
      totalMs: run.ms,
      contributeMs: verifying - contributing,
      coresBusy: sampler!.coresBusy(contributing, verifying),
    };
  } finally {
    sampler?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

// ——— the bench ——————————————————————————————————————————————————————————————————————————————

export interface TurnBenchOptions {
  /** A real-shaped circuit's name (rs18) or a power of two of a generated chain. */
  target: string | number;
  link: { downMbit: number; upMbit: number };
  runs: number;
  client: TurnClientKind;
  /** A second client whose turns are taken in the same run, each right after the first's (same machine state). */
  versus?: TurnClientKind;
}

export interface TurnBenchFigures {
  options: TurnBenchOptions;
  keyLabel: string;
  keyBytes: number;
  /** Bytes of the sections a contribution changes (file header, protocol, header with δ, L, H, contributions). */
  changedBytes: number;
  coresAvailable: number;
  loopback: LinkRates;
  shapedRates: LinkRates;
  unshaped: TurnMeasurement[];
  shaped: TurnMeasurement[];
  /** The `versus` client's turns, interleaved with the first client's. */
  versus?: { unshaped: TurnMeasurement[]; shaped: TurnMeasurement[] };
  local: LocalContributeFigures;
}

/** Bytes of a key's sections that a contribution rewrites, with the file header and their section headers. */
export async function changedSectionBytes(zkey: string): Promise<number> {
  const info = await readZkeyInfo(zkey);
  const changed = [SECTION.protocol, SECTION.grothHeader, SECTION.l, SECTION.h, SECTION.mpc];
  return 12 + changed.reduce((sum, id) => sum + 12 + (info.sections.get(id)?.size ?? 0), 0);
}

/**
 * What the bench started, undone on an interrupt (Ctrl-C, SIGTERM) as on a normal end: last
 * started, first stopped (the coordinator before its data folder is removed). The coordinator's
 * group is also killed at exit, whatever the way out.
 */
const running: Array<() => Promise<void>> = [];
function installInterruptHandlers(): () => void {
  const interrupt = (signal: NodeJS.Signals): void => {
    process.stderr.write(`… ${signal}: stopping what the bench started\n`);
    void (async () => {
      for (const stop of running.splice(0).reverse()) await stop().catch(() => {});
      process.exit(130);
    })();
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  return () => {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  };
}

export async function runContributorTurnBench(options: TurnBenchOptions): Promise<TurnBenchFigures> {
  TURN_CLIENTS[options.client].check?.();
  if (options.versus) TURN_CLIENTS[options.versus].check?.();
  // The coordinator and the CLI run from dist/ (and the page from web/dist): built where stale.
  const { chain, template, dataDir } = await compiledBenchCeremony(options.target, 'bench-turn');
  const removeInterruptHandlers = installInterruptHandlers();
  running.push(() => rm(dataDir, { recursive: true, force: true }));
  let coordinator: CoordinatorProcess | undefined;
  let link: ShapedProxy | undefined;
  const stopKillingAtExit = killGroupAtExit(() => coordinator);
  try {
    log('starting ceremony serve (compiled, embedded verifier)');
    coordinator = await startCeremonyServe(dataDir);
    const started = coordinator;
    running.push(() => started.stop());
    await coordinator.waitForLog('embedded verifier ready', undefined, 120_000);

    log(
      "a first contributor takes a turn with the chain's z1 (so the measured " +
        'turns run on a head this coordinator verified)',
    );
    const warmUp = new ContributorClient(coordinator.url);
    await warmUp.signInDemo('warm-up');
    await warmUp.join();
    await warmUp.waitFor((me) => me.status.circuits[0]?.state === 'turn', 'the warm-up turn');
    await warmUp.upload(BENCH_CIRCUIT, chain.z1);
    await warmUp.waitFor((me) => me.status.circuits[0]?.state === 'accepted', 'the warm-up verdict', 600_000);
    const head = ceremonyPaths(dataDir).zkeyPath(BENCH_CIRCUIT, 1);
    const keyBytes = (await stat(head)).size;
    const changedBytes = await changedSectionBytes(head);

    link = await startShapedProxy({ ...options.link, target: coordinator.url });
    const startedLink = link;
    running.push(() => startedLink.stop());
    log('plain transfers, straight and through the link');
    // At least 64 MB, so that a small key's transfer measures the rate rather than the round trips.
    const loopback = await measureLinkRates(undefined, Math.max(keyBytes, 64 * MB), Math.max(keyBytes, 64 * MB));
    // About 2.5 s each way at the link's rates.
    const shapedRates = await measureLinkRates(
      link,
      Math.round((options.link.downMbit * 1e6 * 2.5) / 8),
      Math.round((options.link.upMbit * 1e6 * 2.5) / 8),
    );

    const unshaped: TurnMeasurement[] = [];
    const shaped: TurnMeasurement[] = [];
    const versus = options.versus ? { unshaped: [] as TurnMeasurement[], shaped: [] as TurnMeasurement[] } : undefined;
    const clients = [options.client, ...(options.versus ? [options.versus] : [])];
    for (let run = 1; run <= options.runs; run++) {
      for (const [i, client] of clients.entries()) {
        log(`turn ${run}/${options.runs}, straight to the coordinator (${client})`);
        const turn = await runTurn(client, { coordinator, contributorName: `turn-${run}-straight-${i}` });
        (i === 0 ? unshaped : versus!.unshaped).push(turn);
      }
      for (const [i, client] of clients.entries()) {
        log(
          `turn ${run}/${options.runs}, through the shaped link ` +
            `${options.link.downMbit}/${options.link.upMbit} Mbit/s (${client})`,
        );
        const turn = await runTurn(client, { coordinator, link, contributorName: `turn-${run}-shaped-${i}` });
        (i === 0 ? shaped : versus!.shaped).push(turn);
      }
    }
    await link.stop();
    await coordinator.stop();

    log('ceremony contribute (the local CLI) on the same key');
    const local = await runLocalContribute(template);
    return {
      options,
      keyLabel:
        typeof options.target === 'string' ? `${options.target} (real-shaped)` : `2^${options.target} constraints`,
      keyBytes,
      changedBytes,
      coresAvailable: availableParallelism(),
      loopback,
      shapedRates,
      unshaped,
      shaped,
      versus,
      local,
    };
  } finally {
    await link?.stop();
    await coordinator?.stop();
    running.length = 0;
    removeInterruptHandlers();
    stopKillingAtExit();
    await rm(dataDir, { recursive: true, force: true });
  }
}

// ——— the table ——————————————————————————————————————————————————————————————————————————————

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const mb = (bytes: number): string => `${(bytes / MB).toFixed(1)} MB`;
const times = (x: number): string => `${x.toFixed(2)}×`;

/** Milliseconds between two marks of a turn, or undefined when the client did not show both. */
function stage(turn: TurnMeasurement, from: TurnMark, to: TurnMark): number | undefined {
  const a = turn.marks[from];
  const b = turn.marks[to];
  // A streamed turn's stages overlap: a stage that "ends" before it starts did not happen apart.
  return a !== undefined && b !== undefined && b >= a ? b - a : undefined;
}

/** The slowest of download, compute and upload, for `down`/`up` bytes at the given rates (Mbit/s). */
function timeFloorMs(down: number, up: number, rates: LinkRates, computeMs: number): { ms: number; parts: string } {
  const downMs = ((down * 8) / (rates.downMbit * 1e6)) * 1000;
  const upMs = ((up * 8) / (rates.upMbit * 1e6)) * 1000;
  const ms = Math.max(downMs, computeMs, upMs);
  return { ms, parts: `down ${seconds(downMs)}, compute ${seconds(computeMs)}, up ${seconds(upMs)}` };
}

export function printContributorTurn(f: TurnBenchFigures): void {
  const out = (line = ''): void => void process.stdout.write(`${line}\n`);
  printTurnFigures(f, out);
  if (f.versus && f.options.versus) printVersusTurns(f, f.versus, f.options.versus, out);
  printTurnStages(f, out);
  const timed = [
    ...f.unshaped.map((t, i) => ({ label: `straight #${i + 1}`, t })),
    ...f.shaped.map((t, i) => ({ label: `shaped #${i + 1}`, t })),
  ].flatMap(({ label, t }) => (t.timeline ? [{ label, startedAt: t.marks.join!, timeline: t.timeline }] : []));
  printTerminalTimelines(timed, f.local.totalMs, out);
}

type PrintLine = (line?: string) => void;

const med = (list: TurnMeasurement[], pick: (t: TurnMeasurement) => number): number => median(list.map(pick));
const memoryOf = (t: TurnMeasurement): number => Math.max(0, t.memory.peakPssBytes - t.memory.idlePssBytes);

/** The headline: the key, the link check, then each figure (median of the runs) against its floor and goal. */
function printTurnFigures(f: TurnBenchFigures, out: PrintLine): void {
  const u = f.unshaped;
  const nominal: LinkRates = { downMbit: f.options.link.downMbit, upMbit: f.options.link.upMbit };
  out();
  out(
    `a contributor's turn (${f.options.client}) on ${f.keyLabel}: key ` +
      `${mb(f.keyBytes)}; ${f.options.runs} run(s), median; ` +
      `${u[0]?.clientNote ?? ''}; cores available ${f.coresAvailable}`,
  );
  out(
    `link check, plain transfers: straight ` +
      `${f.loopback.downMbit.toFixed(0)} Mbit/s down, ` +
      `${f.loopback.upMbit.toFixed(0)} up; ` +
      `through the link (${nominal.downMbit}/${nominal.upMbit}) ` +
      `${f.shapedRates.downMbit.toFixed(1)} down (two connections), ` +
      `${f.shapedRates.upMbit.toFixed(1)} up`,
  );
  const rows = turnFigureRows(f, nominal);
  const width = Math.max(...rows.map((r) => r[0].length));
  const valueWidth = Math.max(...rows.map((r) => r[1].length));
  out(`${'figure'.padEnd(width)}  ${'measured'.padStart(valueWidth)}  floor / detail  [goal]`);
  for (const [name, value, detail, goal] of rows)
    out(`${name.padEnd(width)}  ${value.padStart(valueWidth)}  ${detail}${goal ? `  [${goal}]` : ''}`);
}

/** The figures table's rows: name, measured, floor or detail, goal. */
function turnFigureRows(f: TurnBenchFigures, nominal: LinkRates): Array<[string, string, string, string]> {
  const u = f.unshaped;
  const s = f.shaped;
  const twoKeys = 2 * f.keyBytes;
  const page = f.options.client === 'browser';
  const computeMs = f.local.contributeMs;
  const turnU = med(u, (t) => t.turnMs);
  const turnS = med(s, (t) => t.turnMs);
  const bytesU = med(u, (t) => (t.bytes.down + t.bytes.up) / twoKeys);
  const bytesS = med(s, (t) => (t.bytes.down + t.bytes.up) / twoKeys);
  const memU = med(u, memoryOf);
  const memS = med(s, memoryOf);
  const coresU = med(u, (t) => t.cores.busy);
  // What the client had: the cores not taken by the others on this machine (the coordinator, the bench).
  const coresLeftU = med(
    u,
    (t) => t.cores.busy / Math.max(t.cores.busy, f.coresAvailable - (t.cores.machine - t.cores.busy)),
  );
  const shareU = med(u, (t) => t.verdictAt - t.uploadCompleteAt);
  const shareS = med(s, (t) => t.verdictAt - t.uploadCompleteAt);
  const downU = med(u, (t) => t.bytes.down);
  const upU = med(u, (t) => t.bytes.up);
  const downS = med(s, (t) => t.bytes.down);
  const upS = med(s, (t) => t.bytes.up);
  const floorU = timeFloorMs(downU, upU, f.loopback, computeMs);
  const floorS = timeFloorMs(downS, upS, nominal, computeMs);
  const deltaFloorU = timeFloorMs(f.changedBytes, f.changedBytes, f.loopback, computeMs);
  const deltaFloorS = timeFloorMs(f.changedBytes, f.changedBytes, nominal, computeMs);
  return [
    [
      'turn, straight to the coordinator',
      seconds(turnU),
      `${seconds(floorU.ms)} (${floorU.parts}); ${times(turnU / floorU.ms)} the floor`,
      '',
    ],
    ['  floor if only the changed sections moved', seconds(deltaFloorU.ms), deltaFloorU.parts, ''],
    [
      `turn, through the link ${nominal.downMbit}/${nominal.upMbit} Mbit/s`,
      seconds(turnS),
      `${seconds(floorS.ms)} (${floorS.parts}); ${times(turnS / floorS.ms)} the floor`,
      '',
    ],
    [
      '  floor if only the changed sections moved',
      seconds(deltaFloorS.ms),
      `${deltaFloorS.parts}; ${times(turnS / deltaFloorS.ms)} the floor`,
      '',
    ],
    [
      'shaped ÷ straight',
      times(turnS / turnU),
      `floors: ${times(floorS.ms / floorU.ms)} whole key, ${times(deltaFloorS.ms / deltaFloorU.ms)} changed sections`,
      `≤ ${GOALS.shapedRatio}× (${turnS / turnU <= GOALS.shapedRatio ? 'met' : 'missed'})`,
    ],
    [
      'bytes moved ÷ (2 × key), straight',
      times(bytesU),
      `${times((2 * f.changedBytes) / twoKeys)} changed sections twice; ` +
        `1.00× whole key twice; ` +
        `${times(bytesU / ((2 * f.changedBytes) / twoKeys))} the floor`,
      `≤ ${GOALS.bytes}× (${bytesU <= GOALS.bytes ? 'met' : 'missed'})`,
    ],
    ['bytes moved ÷ (2 × key), through the link', times(bytesS), `down ${mb(downS)}, up ${mb(upS)}`, ''],
    [
      page ? 'peak browser memory above idle ÷ key' : 'peak client memory (its process tree) ÷ key',
      times(memU / f.keyBytes),
      `${mb(memU)} PSS over ${mb(med(u, (t) => t.memory.idlePssBytes))} ` +
        `idle, peak in ${u[0]?.memory.peakAt ?? '?'}; shaped ${times(memS / f.keyBytes)}`,
      `≤ ${GOALS.memory}× (${memU / f.keyBytes <= GOALS.memory ? 'met' : 'missed'})`,
    ],
    [
      `cores busy, ${page ? 'page' : 'terminal client'} (${u[0]?.cores.over ?? '?'})`,
      `${coresU.toFixed(2)} of ${f.coresAvailable}`,
      `${times(coresU / f.coresAvailable)} the cores, over ` +
        `${med(u, (t) => t.cores.seconds).toFixed(1)} s; floor: every core; meanwhile the coordinator ` +
        `${med(u, (t) => t.cores.coordinator).toFixed(2)}, the whole machine ` +
        `${med(u, (t) => t.cores.machine).toFixed(2)}: ${times(coresLeftU)} of the cores the rest left it`,
      `≥ ${GOALS.coresBusy}× (${coresU / f.coresAvailable >= GOALS.coresBusy ? 'met' : 'missed'})`,
    ],
    [
      'cores busy, ceremony contribute (its contribution step)',
      `${f.local.coresBusy.toFixed(2)} of ${f.coresAvailable}`,
      `${times(f.local.coresBusy / f.coresAvailable)} the cores, over ` +
        `${seconds(f.local.contributeMs)} (the compute floor); whole command ` +
        `${seconds(f.local.totalMs)}`,
      '',
    ],
    [
      "coordinator's share: last byte → verdict",
      seconds(shareU),
      `shaped ${seconds(shareS)}`,
      `≤ ${GOALS.coordinatorShareSeconds} s ` +
        `(${shareU / 1000 <= GOALS.coordinatorShareSeconds ? 'met' : 'missed'}); ` +
        `moonshot ≤ ${GOALS.coordinatorShareMoonshot} s`,
    ],
  ];
}

/** The second client's turns, each taken right after the first's: the same machine state. */
function printVersusTurns(
  f: TurnBenchFigures,
  versus: NonNullable<TurnBenchFigures['versus']>,
  kind: TurnClientKind,
  out: PrintLine,
): void {
  const twoKeys = 2 * f.keyBytes;
  const turnU = med(f.unshaped, (t) => t.turnMs);
  const turnS = med(f.shaped, (t) => t.turnMs);
  const vU = med(versus.unshaped, (t) => t.turnMs);
  const vS = med(versus.shaped, (t) => t.turnMs);
  const vFloorU = timeFloorMs(
    med(versus.unshaped, (t) => t.bytes.down),
    med(versus.unshaped, (t) => t.bytes.up),
    f.loopback,
    f.local.contributeMs,
  );
  const vBytes = med(versus.unshaped, (t) => (t.bytes.down + t.bytes.up) / twoKeys);
  out();
  out(`same run, ${kind} against ${f.options.client} (turns taken one after the other)`);
  out(
    `  straight  ${seconds(vU)} against ${seconds(turnU)}: ${times(vU / turnU)}; ` +
      `${times(vU / vFloorU.ms)} its own floor (${vFloorU.parts})`,
  );
  out(`  shaped    ${seconds(vS)} against ${seconds(turnS)}: ${times(vS / turnS)}`);
  out(`  bytes moved ÷ (2 × key): ${times(vBytes)}`);
}

/** Where the time goes, turn by turn (the page's marks, the coordinator's log), with bytes, memory and cores. */
function printTurnStages(f: TurnBenchFigures, out: PrintLine): void {
  const u = f.unshaped;
  const s = f.shaped;
  const page = f.options.client === 'browser';
  out();
  out('where the time goes (each turn; page marks, coordinator log)');
  const stageRows: Array<[string, (t: TurnMeasurement) => number | undefined]> = [
    ['Join → turn under way', (t) => stage(t, 'join', 'turnStart')],
    ['turn → download starts', (t) => stage(t, 'turnStart', 'downloadStart')],
    ['download', (t) => stage(t, 'downloadStart', 'computeStart')],
    ['compute (workers started → done)', (t) => stage(t, 'computeStart', 'computeEnd')],
    ['  of which the L/H pass', (t) => stage(t, 'lhStart', 'lhEnd') ?? stage(t, 'lhStart', 'computeEnd')],
    [
      page ? 'saving the result (IndexedDB)' : 'compute done → upload starts',
      (t) => stage(t, 'computeEnd', 'uploadStart'),
    ],
    ['upload (page: start → sent)', (t) => stage(t, 'uploadStart', 'uploadEnd')],
    ['coordinator: last byte → verdict', (t) => t.verdictAt - t.uploadCompleteAt],
    ['  the key complete (a delta)', (t) => (t.splicedAt === undefined ? undefined : t.splicedAt - t.uploadCompleteAt)],
    ['  handed in (hash, record, queue)', (t) => t.handedInAt - (t.splicedAt ?? t.uploadCompleteAt)],
    ['  verified and committed', (t) => t.verdictAt - t.handedInAt],
    [
      page ? 'verdict → shown on the page' : 'verdict → printed',
      (t) => (t.marks.verdict !== undefined ? t.marks.verdict - t.verdictAt : undefined),
    ],
    [page ? 'whole turn (Join → accepted shown)' : 'whole turn (command started → accepted)', (t) => t.turnMs],
  ];
  const turns = [
    ...u.map((t, i) => [`straight #${i + 1}`, t] as const),
    ...s.map((t, i) => [`shaped #${i + 1}`, t] as const),
  ];
  const stageWidth = Math.max(...stageRows.map((r) => r[0].length));
  out(`${'stage'.padEnd(stageWidth)}  ${turns.map(([name]) => name.padStart(12)).join('  ')}`);
  for (const [name, pick] of stageRows) {
    out(
      `${name.padEnd(stageWidth)}  ${turns
        .map(([, t]) => {
          const ms = pick(t);
          return (ms === undefined ? '—' : seconds(ms)).padStart(12);
        })
        .join('  ')}`,
    );
  }
  /** One table row: the label, then each turn's cell. */
  const row = (label: string, cell: (t: (typeof turns)[number][1]) => string): void =>
    out(`${label.padEnd(stageWidth)}  ${turns.map(([, t]) => cell(t).padStart(12)).join('  ')}`);
  const megabytes = (down: number, up: number, digits: number): string =>
    `${(down / MB).toFixed(digits)}/${(up / MB).toFixed(digits)} MB`;
  row('bytes down / up (server)', (t) => megabytes(t.bytes.down, t.bytes.up, 1));
  row('  of which zkey download / upload', (t) =>
    megabytes(t.bytes.byRoute.zkey_download?.down ?? 0, t.bytes.byRoute.contribution_upload?.up ?? 0, 1),
  );
  row('bytes down / up (link, bodies)', (t) => (t.linkBytes ? megabytes(t.linkBytes.down, t.linkBytes.up, 1) : '—'));
  row('peak memory above idle: PSS / RSS', (t) => megabytes(memoryOf(t), t.memory.peakRssAboveIdleBytes, 0));
  const shortStretch: Record<string, string> = {
    'L/H pass': 'L/H',
    'L/H pass to compute end': 'L/H+',
    'compute stage': 'compute',
  };
  row('cores busy (stretch)', (t) => `${t.cores.busy.toFixed(2)} ${shortStretch[t.cores.over] ?? t.cores.over}`);
  row(
    '  coordinator / the rest / machine',
    (t) =>
      `${t.cores.coordinator.toFixed(2)} / ${(t.cores.machine - t.cores.busy - t.cores.coordinator).toFixed(2)} / ` +
      t.cores.machine.toFixed(2),
  );
  out(
    'L/H: first "updating the L section" → "writing your contribution" on the page; ' +
      'L/H+: → "done" (the short last step was not drawn). ' +
      "The rest: the bench itself (the page's driver, the link) and anything else.",
  );
  out(
    'PSS: each shared page divided among the processes that map it, so the ' +
      "sum over Chromium's processes counts it once (RSS, summed, counts it in each).",
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: {
      circuit: { type: 'string' },
      power: { type: 'string' },
      link: { type: 'string', default: '100/20' },
      runs: { type: 'string', default: '1' },
      client: { type: 'string', default: 'browser' },
      versus: { type: 'string' },
      json: { type: 'string' },
    },
  });
  const options = turnBenchOptions(values);
  const figures = await runContributorTurnBench(options);
  printContributorTurn(figures);
  if (values.json) await writeTurnFigures(values.json, figures);
  // A chain built here (not cached yet) left snarkjs's curve and its worker threads, which keep the process alive.
  await releaseBn128();
}

/** Every figure of the run, each turn's marks (epoch ms) included, as JSON: for quoting, or comparing runs. */
export async function writeTurnFigures(file: string, figures: TurnBenchFigures): Promise<void> {
  await writeFile(file, `${JSON.stringify(figures, null, 2)}\n`);
  process.stderr.write(`… the run's figures are in ${file}\n`);
}

/** The bench's options from the command line (shared with bench/index.ts): usage errors thrown in words. */
export function turnBenchOptions(values: {
  circuit?: string;
  power?: string;
  link?: string;
  runs?: string;
  client?: string;
  versus?: string;
}): TurnBenchOptions {
  if (values.circuit !== undefined && values.power !== undefined)
    throw new Error('name a circuit or a power, not both');
  let target: string | number = 'rs18';
  if (values.power !== undefined) {
    target = Number(values.power);
    if (!Number.isInteger(target) || target < 8 || target > 18)
      throw new Error(`the power must be an integer from 8 to 18, got ${values.power}`);
  } else if (values.circuit !== undefined) {
    if (!isRealShapeName(values.circuit))
      throw new Error(`unknown real-shaped circuit "${values.circuit}" (known: ${REAL_SHAPE_NAMES.join(', ')})`);
    target = values.circuit;
  }
  const runs = Number(values.runs ?? '1');
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`runs must be a positive integer, got ${values.runs}`);
  const client = values.client ?? 'browser';
  for (const kind of [client, values.versus ?? client])
    if (!(TURN_CLIENT_KINDS as readonly string[]).includes(kind))
      throw new Error(`a client is ${TURN_CLIENT_KINDS.join(', ')}, not "${kind}"`);
  if (values.versus === client) throw new Error('--versus names a second client, not the same one');
  return {
    target,
    link: parseLink(values.link ?? '100/20'),
    runs,
    client: client as TurnClientKind,
    versus: values.versus as TurnClientKind | undefined,
  };
}
