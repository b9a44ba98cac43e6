/**
 * A whole ceremony on this machine, stage by stage, each a real process of the compiled app:
 * (dev ptau) → `ceremony init` → `ceremony serve` with page turns in headless Chromium (each page
 * joins every circuit and contributes to each; straight to the coordinator, or through the shaped
 * link) and terminal turns (`ceremony contribute --coordinator`), the coordinator checking each as
 * it arrives → `ceremony finalise` → `ceremony publish` → `ceremony audit` → `ceremony
 * verify-receipt` of a page's receipts. For the 2^22 ceremony (`npm run bench -- --only rs22`,
 * bench/rs22.ts) and the operator's own circuits (bench/real-ceremony.ts).
 *
 * Every stage prints its time against its floor, the slowest of its compute, download and upload:
 *   init      writing and hashing the keys' bytes (a copy of the largest key, same run, scaled to
 *             all of them): the part no computation removes;
 *   a turn    compute: the key's L and H points × the kernel's time per point on every core in
 *             Node (measured in the same run on up to 2^18 of the key's L points); download and
 *             upload: the sections a contribution changes (what the streamed turn moves, each way)
 *             at the link's rate (straight: the loopback rates measured in the run; shaped: the
 *             link's nominal rates);
 *   finalise  one such compute per circuit (the beacon scales L and H as a turn does);
 *   publish   copying the published bytes at the copy rate measured for init;
 *   audit     the MSMs, hashes and FFTs it counted, priced at rates measured after it (audit-floor.ts).
 * and the peak RSS of every process of the stage (VmHWM; the browser's processes by kind, the
 * coordinator and its verifier over all the turns). Its goals are checked at the end: no process above
 * 4 GB, the page's memory above idle ≤ 0.1 × key, each turn ≤ 1.3 × its floor, the coordinator's share
 * ≤ 1 s, the audit ≤ 0.25 × init and ≤ 1.3 × its own floor.
 */
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, open, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { hashFile } from '../core/crypto/file-hash.ts';
import { loadCeremonyConfig } from '../core/config/ceremony-config.ts';
import { makeOwnedWorkFolder, removeDeadOwnersFolders } from '../core/fs/owned-work-folders.ts';
import { ceremonyPaths, type CeremonyPaths } from '../core/data-folder/ceremony-paths.ts';
import { readZkeyInfo, SECTION } from '../core/zkey/zkey-file.ts';
import { planScaleChain } from '../core/kernel/g1-scale-chain.ts';
import { nodeScalePool } from '../core/kernel/node-scale-pool.ts';
import { BN254_R } from '../core/crypto/bn254-moduli.ts';
import { FIXTURE_CACHE, REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { chromiumProxyArgs, startShapedProxy, type ShapedProxy } from '../tests/helpers/shaped-proxy.ts';
import { startCeremonyServe, type CoordinatorProcess, type LogLine } from './coordinator-process.ts';
import { openDevtoolsPage } from './devtools-page.ts';
import { machineBusySeconds, ProcessTreeSampler, treeCpuSeconds } from './process-tree-sampler.ts';
import { KernelSpeedProbe } from './kernel-speed-probe.ts';
import { bytesMoved, changedSectionBytes, measureLinkRates, scrapeBytes, type LinkRates } from './contributor-turn.ts';
import { auditFloor, parseWorkTally } from './audit-floor.ts';
import {
  finaliseArgv,
  megabytes,
  PeakRssWatcher,
  printStageTable,
  runStage,
  seconds,
  STAGE_TIMES_ENV,
  stageTimeLines,
  type StageRow,
} from './stage-run.ts';

const MB = 1024 * 1024;
const CLI = path.join(REPO_ROOT, 'bin', 'ceremony.js');
/** Points the kernel's per-point time is measured on (the compute floor). */
const FLOOR_SAMPLE_POINTS = 1 << 18;
/** A page or terminal turn longer than this has failed. */
const TURN_TIMEOUT_MS = 90 * 60_000;

export interface CeremonyCircuit {
  name: string;
  r1cs: string;
  publicInputs: number;
}

export interface WholeCeremonyOptions {
  title: string;
  circuits: CeremonyCircuit[];
  /** A ptau file (with its BLAKE2b-512 for the audit, else it is hashed), or the cached dev ptau of a power. */
  ptau: { file: string } | { devPower: number };
  /** One page per entry, each contributing to every circuit, straight or through the shaped link. */
  pages: Array<'straight' | 'shaped'>;
  /** After the pages, one terminal turn per circuit (straight). */
  terminal: boolean;
  link: { downMbit: number; upMbit: number };
  /** Where the ceremony's and the published folders go (GBs at 2^22). Default: the OS's temp dir. */
  workRoot?: string;
  /** After the audit, the same audit again on the memo of the ptau the first verified (goal ≤ 0.5 × the first). */
  auditAgain?: boolean;
  log?: (message: string) => void;
}

export interface GoalCheck {
  goal: string;
  measured: string;
  met: boolean;
}

export interface WholeCeremonyFigures {
  title: string;
  keyBytes: Record<string, number>;
  rows: StageRow[];
  goals: GoalCheck[];
  notes: string[];
}

interface TurnTiming {
  circuit: string;
  startAt: number;
  acceptedAt: number;
  share: CoordinatorShare;
}

/** Installed in the page: every circuit row's status, as it changes. */
const ROWS_OBSERVER = `(() => {
  const seen = new Map();
  new MutationObserver(() => {
    for (const row of document.querySelectorAll('#circuits tr[data-circuit]')) {
      const circuit = row.getAttribute('data-circuit');
      const status = row.getAttribute('data-status');
      if (seen.get(circuit) === status) continue;
      seen.set(circuit, status);
      const detail = row.querySelector('.detail')?.textContent ?? '';
      window.ceremonyBenchReport?.(JSON.stringify([circuit, status, Date.now(), detail]));
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
})();`;

const ACTIVE = new Set(['turn', 'preparing', 'downloading', 'computing', 'contributing', 'uploading']);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** How often the kernel probe reads the machine's speed over the turns and finalise. */
const PROBE_EVERY_MS = 5000;
/** Readings of the probe just before the floor's passes, and as many just after. */
const PROBE_BURST = 5;

interface MachineSpeed {
  slowdown: number;
  what: string;
}

/**
 * The machine's speed over a stage (a page's session, a command) by the kernel probe's readings
 * taken over it (kernel-speed-probe.ts), against its speed when the floor was taken: `slowdown`
 * above 1 means the same kernel cost more CPU than then.
 */
function machineSpeed(readings: number[], floors: TurnFloors): MachineSpeed | undefined {
  if (readings.length === 0) return undefined;
  // The mean, not the median: the host slows the machine in spells of seconds, and a stage's CPU
  // time is their sum (a median would call a stage whose slow spells fill 40 % of it unslowed).
  const during = readings.reduce((sum, value) => sum + value, 0) / readings.length;
  const slowdown = during / floors.probeUsPerPoint;
  return {
    slowdown,
    what:
      `the kernel probe (one thread, every ${PROBE_EVERY_MS / 1000} s) read ${during.toFixed(1)} µs a point ` +
      `(mean of ${readings.length}, ${Math.min(...readings).toFixed(1)}–${Math.max(...readings).toFixed(1)}) ` +
      `against ${floors.probeUsPerPoint.toFixed(1)} when the floor was taken: the machine ran the kernel ` +
      `${slowdown.toFixed(2)}× as slow`,
  };
}

/** The end of a row's note: the machine's speed over the stage, when the probe read it. */
const machineNote = (machine: MachineSpeed | undefined): string => (machine ? `; ${machine.what}` : '');

/** A stage's floor split into the part the machine's speed moves (compute) and the part it does not. */
interface SplitFloor {
  ms: number;
  what: string;
  computeMs: number;
  transferMs: number;
}

/** The row's field for the goals (againstFloor), when the probe read the machine. */
const atMachineSpeed = (machine: MachineSpeed | undefined, floor: SplitFloor): Pick<StageRow, 'atMachineSpeed'> =>
  machine
    ? {
        atMachineSpeed: {
          slowdown: machine.slowdown,
          floorMs: Math.max(floor.computeMs * machine.slowdown, floor.transferMs),
        },
      }
    : {};

function verifierName(circuit: string): string {
  const words = circuit.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return `Verifier${words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}`;
}

/**
 * The coordinator's share of a contributor's turn on a circuit: last byte received → accepted (its
 * log), and the first part of it, last byte → handed to the verifier (the intake's last chunk, the
 * contribution recorded); the rest is the verifier's check and the commit.
 */
interface CoordinatorShare {
  ms: number;
  handOffMs: number;
}

function describeShare(share: CoordinatorShare): string {
  return `${seconds(share.ms)} (${seconds(share.handOffMs)} to the verifier, then its check and the commit)`;
}

/** CPU seconds over a turn, by who spent them: what a turn above its compute floor shared its cores with. */
interface CpuSplit {
  wallSeconds: number;
  /** Every process on the machine (/proc/stat). */
  machine: number;
  /** `ceremony serve` and its embedded verifier (its process group). */
  coordinator: number;
  /** This bench process: its samplers, the page's driver, the shaped link. */
  bench: number;
  /** The coordinator's CPU by thread group (threadShares), where its share of the cores went. */
  coordinatorThreads: string;
}

/** Starts counting; the function returned ends the count. */
function countCpu(coordinator: CoordinatorProcess): () => CpuSplit {
  const startedAt = Date.now();
  const machine = machineBusySeconds();
  const served = treeCpuSeconds(coordinator.groupId);
  const bench = process.cpuUsage();
  // Its threads are read every half second, as the page's are: the intake's stages run on threads
  // of their own (the link check's MSM threads, libuv's pool), so the split says which costs.
  const threads = new ProcessTreeSampler(coordinator.groupId, {
    intervalMs: 500,
    pssIntervalMs: 5000,
    readPss: false,
    byThread: true,
  });
  const threadsBefore = threads.threadCpuSeconds();
  return () => {
    const own = process.cpuUsage(bench);
    threads.sample(false);
    threads.stop();
    return {
      wallSeconds: (Date.now() - startedAt) / 1000,
      machine: machineBusySeconds() - machine,
      coordinator: treeCpuSeconds(coordinator.groupId) - served,
      bench: (own.user + own.system) / 1e6,
      coordinatorThreads: threadShares(threadsBefore, threads.threadCpuSeconds()),
    };
  };
}

/**
 * Where the CPU of `span` went, against the compute floor's (its kernel's wall time on every core):
 * `contributor` is the page's tree when it was sampled, else what the machine used beside the
 * coordinator and the bench (a terminal command).
 */
function describeCpu(
  span: string,
  cpu: CpuSplit,
  floorComputeMs: number,
  contributor?: { what: string; seconds: number },
): string {
  const cores = availableParallelism();
  const s = (value: number): string => `${value.toFixed(1)} s`;
  const rest = cpu.machine - cpu.coordinator - cpu.bench;
  const who = contributor
    ? `${contributor.what} ${s(contributor.seconds)}, coordinator ${s(cpu.coordinator)}, bench ${s(cpu.bench)}, ` +
      `the rest ${s(Math.max(0, rest - contributor.seconds))}`
    : `the command ${s(rest)}, coordinator ${s(cpu.coordinator)}, bench ${s(cpu.bench)}`;
  return (
    `CPU over ${span} ${s(cpu.machine)} of ${cores} × ${s(cpu.wallSeconds)}: ${who}; ` +
    `the compute floor is ${s((floorComputeMs / 1000) * cores)} of CPU; ` +
    `the coordinator's CPU by thread: ${cpu.coordinatorThreads}`
  );
}

async function coordinatorShare(
  coordinator: CoordinatorProcess,
  contributor: string,
  circuit: string,
): Promise<CoordinatorShare> {
  const mine = (l: LogLine): boolean => l.contributor === contributor && l.circuit === circuit;
  const uploaded = await coordinator.waitForLog('contribution upload complete', mine, 30_000);
  const queued = await coordinator.waitForLog('contribution uploaded, verifying', mine, 30_000);
  const accepted = await coordinator.waitForLog(
    'contribution accepted',
    (l) => l.contributionId === queued.contributionId,
    60_000,
  );
  return { ms: accepted.time - uploaded.time, handOffMs: queued.time - uploaded.time };
}

interface PageSession {
  turns: TurnTiming[];
  startedAt: number;
  endedAt: number;
  idlePssBytes: number;
  peakPssAboveIdleBytes: number;
  peaks: Array<{ name: string; bytes: number }>;
  bytes: { down: number; up: number };
  receipts: string;
  /** CPU seconds over the session, by who spent them. */
  cpu: CpuSplit;
  /** CPU seconds of the page's tree (every Chromium process of its launch) over the session. */
  pageCpuSeconds: number;
  /** The page's CPU by thread group, the largest first ("renderer DedicatedWorker 520.1 s, …"). */
  threads: string;
}

/** Thread groups at or above this share of a tree's CPU (page, coordinator) are named; the rest summed. */
const THREAD_SHARE_SHOWN = 0.01;

/** Where a tree's CPU went between two readings of ProcessTreeSampler.threadCpuSeconds. */
function threadShares(before: Map<string, number>, after: Map<string, number>): string {
  const spent = [...after].map(([group, s]) => [group, s - (before.get(group) ?? 0)] as const);
  const total = spent.reduce((sum, [, s]) => sum + s, 0);
  const shown = spent.filter(([, s]) => s >= total * THREAD_SHARE_SHOWN).sort((a, b) => b[1] - a[1]);
  const rest = total - shown.reduce((sum, [, s]) => sum + s, 0);
  return [...shown.map(([group, s]) => `${group} ${s.toFixed(1)} s`), `other threads ${rest.toFixed(1)} s`].join(', ');
}

/** One contributor's page: signs in, joins every circuit, and contributes to each until all are accepted. */
async function pageSession(
  coordinator: CoordinatorProcess,
  link: ShapedProxy | undefined,
  name: string,
  circuits: string[],
  stops: Array<() => Promise<void>>,
): Promise<PageSession> {
  const statuses = new Map<string, Array<{ status: string; at: number; detail: string }>>();
  let changed: () => void = () => {};
  const page = await openDevtoolsPage({
    url: `${coordinator.url}/`,
    extraArgs: link ? chromiumProxyArgs(link) : [],
    label: name,
    bindings: {
      ceremonyBenchReport: (payload) => {
        const [circuit, status, at, detail] = JSON.parse(payload) as [string, string, number, string];
        statuses.set(circuit, [...(statuses.get(circuit) ?? []), { status, at, detail }]);
        changed();
      },
    },
    initScript: ROWS_OBSERVER,
  });
  const closePage = (): Promise<void> => page.close();
  stops.push(closePage);
  const watcher = new PeakRssWatcher(page.pid);
  // The page's memory: RSS every half second, PSS every five and whenever RSS climbs to a new high.
  // A PSS reading costs tens of ms of this process's CPU, on the cores the page's kernel needs.
  const sampler = new ProcessTreeSampler(page.pid, { intervalMs: 500, pssIntervalMs: 5000, byThread: true });
  try {
    await page.until(`!!document.querySelector('#demo-name')`);
    await page.evaluate(
      `document.querySelector('#demo-name').value = ${JSON.stringify(name)};` +
        `document.querySelector('#demo-sign-in button[type=submit]').click()`,
    );
    await page.until(`!!document.querySelector('#join')`);
    await sleep(2000);
    const idle: number[] = [];
    for (let i = 0; i < 3; i++, await sleep(500)) idle.push(sampler.sample().pssBytes ?? 0);
    const idlePss = median(idle);
    const before = await scrapeBytes(coordinator.url);
    const startedAt = Date.now();
    const cpuCount = countCpu(coordinator);
    const threadsBefore = sampler.threadCpuSeconds();
    await page.evaluate(`document.querySelector('#join').click()`);
    const deadline = startedAt + TURN_TIMEOUT_MS * circuits.length;
    for (;;) {
      const last = circuits.map((c) => statuses.get(c)?.at(-1));
      const failed = last.find((s) => s && (s.status === 'refused' || s.status === 'failed'));
      if (failed) throw new Error(`${name}'s page: a contribution ${failed.status}: ${failed.detail}`);
      if (last.every((s) => s?.status === 'accepted')) break;
      if (Date.now() > deadline) throw new Error(`${name}'s page: not every circuit accepted in time`);
      await new Promise<void>((resolve) => {
        changed = resolve;
        setTimeout(resolve, 1000);
      });
    }
    const endedAt = Date.now();
    const cpu = cpuCount();
    sampler.sample(false);
    const threads = threadShares(threadsBefore, sampler.threadCpuSeconds());
    const moved = bytesMoved(before, await scrapeBytes(coordinator.url));
    const peak = sampler.peak(startedAt, endedAt);
    const turns: TurnTiming[] = [];
    for (const circuit of circuits) {
      const history = statuses.get(circuit)!;
      const startAt = history.find((s) => ACTIVE.has(s.status))?.at ?? startedAt;
      const acceptedAt = history.find((s) => s.status === 'accepted')!.at;
      turns.push({
        circuit,
        startAt,
        acceptedAt,
        share: await coordinatorShare(coordinator, `demo:${name}`, circuit),
      });
    }
    // The page's own session fetches them (evaluate does not wait for a promise: the answer is kept on window).
    await page.evaluate(`fetch('/api/me/receipts').then((r) => r.text()).then((t) => { window.benchReceipts = t; })`);
    await page.until(`typeof window.benchReceipts === 'string'`);
    const receipts = (await page.evaluate('window.benchReceipts')) as string;
    watcher.read();
    return {
      turns,
      startedAt,
      endedAt,
      cpu,
      pageCpuSeconds: sampler.coresBusy(startedAt, endedAt) * ((endedAt - startedAt) / 1000),
      threads,
      idlePssBytes: idlePss,
      peakPssAboveIdleBytes: Math.max(0, (peak?.pssBytes ?? idlePss) - idlePss),
      peaks: watcher.processes(),
      bytes: { down: moved.down, up: moved.up },
      receipts,
    };
  } finally {
    watcher.stop();
    sampler.stop();
    stops.splice(stops.indexOf(closePage), 1);
    await page.close();
  }
}

/** Timed passes of the floor's measurement; the fastest is kept (anything else on the machine only slows one). */
const FLOOR_PASSES = 3;

/**
 * The kernel's time per point scaling L and H on every core in Node, on up to 2^18 of `key`'s L
 * points: one untimed pass (threads started, WebAssembly tiered up), then the fastest of
 * FLOOR_PASSES timed ones. A single timed pass after a short warm-up once came out 1.3× slower
 * than the same kernel's whole pass over L and H in the same run (finalise): a floor above what
 * the machine does flatters every turn measured against it.
 */
async function kernelMsPerPoint(
  key: string,
  probe: KernelSpeedProbe,
): Promise<{ msPerPoint: number; probeUs: number }> {
  const info = await readZkeyInfo(key);
  const l = info.sections.get(SECTION.l)!;
  const count = Math.min(FLOOR_SAMPLE_POINTS, l.size / 64);
  const points = new Uint8Array(count * 64);
  const handle = await open(key, 'r');
  try {
    await handle.read(points, 0, points.length, l.offset);
  } finally {
    await handle.close();
  }
  const pool = await nodeScalePool();
  try {
    const chain = planScaleChain(BigInt(`0x${randomBytes(31).toString('hex')}`) % BN254_R)!;
    await pool.scale(points.slice(), chain);
    const probedFrom = Date.now();
    probe.burst(PROBE_BURST);
    let fastest = Infinity;
    for (let pass = 0; pass < FLOOR_PASSES; pass++) {
      const copy = points.slice();
      const started = performance.now();
      await pool.scale(copy, chain);
      fastest = Math.min(fastest, performance.now() - started);
    }
    probe.burst(PROBE_BURST);
    return { msPerPoint: fastest / count, probeUs: median(probe.between(probedFrom, Date.now())) };
  } finally {
    pool.close();
  }
}

/**
 * The cached dev ptau of `power`, made now (a stage of its own, its figures kept beside it in
 * PTAU.json) or found in the cache (the row then gives the figures of the run that made it).
 */
export async function ensureDevPtau(
  power: number,
  log: (message: string) => void,
): Promise<{ ptau: string; row?: StageRow }> {
  const ptau = path.join(FIXTURE_CACHE, `dev-pot${power}-insecure.ptau`);
  const figuresFile = `${ptau}.json`;
  const stage = `dev ptau (power ${power})`;
  const cached = await stat(ptau).then(
    () => true,
    () => false,
  );
  if (cached) {
    const earlier = await readFile(figuresFile, 'utf8').then(
      (text) => JSON.parse(text) as { ms: number; peaks: StageRow['peaks']; at: string },
      () => undefined,
    );
    return {
      ptau,
      row: earlier
        ? { stage: `${stage}, cached`, ms: earlier.ms, peaks: earlier.peaks, note: `made ${earlier.at}` }
        : undefined,
    };
  }
  log(`dev ptau of power ${power} (cached for the next runs; about an hour at 22 on two cores)`);
  await mkdir(FIXTURE_CACHE, { recursive: true });
  const made = await runStage([process.execPath, CLI, 'dev-ptau', '--power', String(power), ptau], {
    cwd: REPO_ROOT,
    onLine: (line) => log(`dev-ptau: ${line.trim()}`),
  });
  const peaks = made.peaks.map(({ name, bytes }) => ({ name, bytes }));
  await writeFile(figuresFile, JSON.stringify({ ms: made.ms, peaks, at: new Date().toISOString() }));
  return { ptau, row: { stage, ms: made.ms, peaks } };
}

const WORK_FOLDER_PREFIX = 'whole-ceremony-';

/** Removes the work folders of whole-ceremony runs whose process is gone; returns how many. */
export function removeKilledRunsFolders(root: string): Promise<number> {
  return removeDeadOwnersFolders(root, WORK_FOLDER_PREFIX);
}

export async function runWholeCeremony(options: WholeCeremonyOptions): Promise<WholeCeremonyFigures> {
  const log = options.log ?? ((m: string) => void process.stderr.write(`… ${m}\n`));
  const build = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'build.js')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (build.status !== 0) throw new Error('the build failed');
  const rows: StageRow[] = [];
  const notes: string[] = [];
  const root = options.workRoot ?? tmpdir();
  await mkdir(root, { recursive: true });
  // A run killed outright (SIGKILL, a reboot) could not remove its folder: up to 40 GB at 2^22.
  await removeKilledRunsFolders(root);
  const workFolder = await makeOwnedWorkFolder(root, WORK_FOLDER_PREFIX);
  const work = workFolder.path;
  const stops: Array<() => Promise<void>> = [];
  const interrupt = (): void => {
    void (async () => {
      for (const stop of stops.splice(0).reverse()) await stop().catch(() => {});
      await workFolder.done();
      process.exit(130);
    })();
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    let ptau: string;
    if ('file' in options.ptau) ptau = path.resolve(options.ptau.file);
    else {
      const made = await ensureDevPtau(options.ptau.devPower, log);
      ptau = made.ptau;
      if (made.row) rows.push(made.row);
    }
    log('hashing the ptau (the audit pins it by its BLAKE2b-512)');
    const ptauHash = await hashFile(ptau);
    const dir = await writeCeremonyFolder(path.join(work, 'ceremony'), ptau, options);
    const paths = ceremonyPaths(dir);
    const names = options.circuits.map((c) => c.name);

    const init = await initStage(dir, names, work, log);
    rows.push(init.row);
    log("the kernel's time per point on every core (the compute floor of a turn)");
    const probe = await KernelSpeedProbe.create();
    stops.push(async () => probe.stop());
    const before = await kernelMsPerPoint(paths.zkeyPath(init.largest, 0), probe);
    probe.every(PROBE_EVERY_MS);
    const turns = await turnStages(options, dir, names, init.keyBytes, probe, stops, log);
    const finalised = await finaliseStage(dir, names, probe, log);
    // Publish and audit are not set against the kernel: the probe would only take their cores.
    probe.stop();
    log("the kernel's time per point on every core again, after finalise (the faster is the floor)");
    const after = await kernelMsPerPoint(paths.zkeyPath(init.largest, 0), probe);
    const floors = await turnFloors(paths, names, fasterRate(before, after));
    rows.push(...turns.rows.map((row) => row(floors)), turns.coordinatorRow, finalised(floors));
    const published = path.join(work, 'published');
    rows.push(await publishStage(dir, published, init.copyMsPerByte, log));
    const audit = await auditStage(published, ptauHash, init.row.ms, log);
    rows.push(audit);
    const again = options.auditAgain ? await auditStage(published, ptauHash, init.row.ms, log, audit.ms) : undefined;
    if (again) rows.push(again);
    rows.push(await receiptStage(work, published, turns.receipts, log));
    const goals = wholeCeremonyGoals(rows, turns, audit.ms, init.row.ms);
    goals.push({
      goal: 'the audit ≤ 1.3 × its own floor',
      measured: `${(audit.ms / audit.floor!.ms).toFixed(2)} × its floor (${seconds(audit.floor!.ms)})`,
      met: audit.ms <= 1.3 * audit.floor!.ms,
    });
    if (again)
      goals.push({
        goal: 'a second audit, the ptau remembered, ≤ 0.5 × the first',
        measured: `${(again.ms / audit.ms).toFixed(2)} × the first`,
        met: again.ms <= 0.5 * audit.ms,
      });
    return { title: options.title, keyBytes: init.keyBytes, rows, goals, notes };
  } finally {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => {});
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    await workFolder.done();
  }
}

/** The ceremony's folder at `dir`: its config, the ptau and every circuit's r1cs linked in. */
async function writeCeremonyFolder(dir: string, ptau: string, options: WholeCeremonyOptions): Promise<string> {
  await mkdir(path.join(dir, 'circuits'), { recursive: true });
  await mkdir(path.join(dir, 'ptau'));
  await symlink(ptau, path.join(dir, 'ptau', 'ceremony.ptau'));
  for (const circuit of options.circuits)
    await symlink(path.resolve(circuit.r1cs), path.join(dir, 'circuits', `${circuit.name}.r1cs`));
  await writeFile(
    path.join(dir, 'ceremony.json'),
    JSON.stringify(
      {
        id: 'whole-ceremony-bench',
        title: options.title,
        testNetwork: true,
        ptau: 'ptau/ceremony.ptau',
        circuits: options.circuits.map((c) => ({
          name: c.name,
          verifier: verifierName(c.name),
          publicInputs: c.publicInputs,
          r1cs: `circuits/${c.name}.r1cs`,
        })),
      },
      null,
      2,
    ),
  );
  return dir;
}

interface InitFigures {
  row: StageRow;
  keyBytes: Record<string, number>;
  /** The circuit with the largest key. */
  largest: string;
  /** The copy rate: the largest key copied once (read from the page cache, written and flushed). */
  copyMsPerByte: number;
}

/** `ceremony init`, against the time a copy of its keys' bytes takes (measured after it, in `work`). */
async function initStage(
  dir: string,
  names: string[],
  work: string,
  log: (message: string) => void,
): Promise<InitFigures> {
  const paths = ceremonyPaths(dir);
  log(`ceremony init (${names.length} circuit${names.length === 1 ? '' : 's'})`);
  const init = await runStage([process.execPath, CLI, 'init', '--data', dir], { cwd: REPO_ROOT, env: STAGE_TIMES_ENV });
  if (/running the sources through tsx/.test(init.stderr)) throw new Error('dist/ is stale: build first');
  const keyBytes: Record<string, number> = {};
  for (const name of names) keyBytes[name] = (await stat(paths.zkeyPath(name, 0))).size;
  const largest = names.reduce((a, b) => (keyBytes[a]! >= keyBytes[b]! ? a : b));
  const totalKeyBytes = names.reduce((sum, n) => sum + keyBytes[n]!, 0);
  const copyStarted = performance.now();
  const copyTarget = path.join(work, 'copy-rate.zkey');
  await copyFile(paths.zkeyPath(largest, 0), copyTarget);
  await hashFile(copyTarget);
  const copyMsPerByte = (performance.now() - copyStarted) / keyBytes[largest]!;
  await rm(copyTarget, { force: true });
  const row = {
    stage: 'init',
    ms: init.ms,
    floor: { ms: copyMsPerByte * totalKeyBytes, what: "writing and hashing the keys' bytes (a copy, same run)" },
    peaks: init.peaks,
    stageTimes: stageTimeLines(init.stderr),
  };
  return { row, keyBytes, largest, copyMsPerByte };
}

/** Per circuit, what bounds a turn: the kernel's time on its L and H points, the bytes each way. */
interface TurnFloors {
  computeMs: Record<string, number>;
  changedBytes: Record<string, number>;
  /** The kernel's measured time per point on every core, in µs (the compute floor's rate). */
  usPerPoint: number;
  /** The kernel probe's reading (µs a point, one thread) around the floor's passes: the machine's speed then. */
  probeUsPerPoint: number;
  /** Which of its two measurements the floor's rate is, and the other's (fasterRate). */
  measured: string;
}

type KernelRate = Awaited<ReturnType<typeof kernelMsPerPoint>>;
/** The rate the floor is taken at, naming which measurement it is. */
type FloorRate = KernelRate & { measured: string };

/**
 * The faster of the kernel's two measurements, before the turns and after finalise. The host slows
 * this machine in spells of seconds, and a floor taken in one would flatter every stage set against
 * it (docs/benchmarks.md has a 2^22 run where it did).
 */
function fasterRate(before: KernelRate, after: KernelRate): FloorRate {
  const us = (rate: KernelRate): string => (rate.msPerPoint * 1000).toFixed(1);
  return after.msPerPoint < before.msPerPoint
    ? { ...after, measured: `the faster of two measurements, after finalise; ${us(before)} before the turns` }
    : { ...before, measured: `the faster of two measurements, before the turns; ${us(after)} after finalise` };
}

/** Per circuit, its compute floor at the floor's rate and the bytes a turn moves each way. */
async function turnFloors(
  paths: CeremonyPaths,
  names: string[],
  { msPerPoint, probeUs, measured }: FloorRate,
): Promise<TurnFloors> {
  const computeMs: Record<string, number> = {};
  const changedBytes: Record<string, number> = {};
  for (const name of names) {
    const info = await readZkeyInfo(paths.zkeyPath(name, 0));
    const points = (info.sections.get(SECTION.l)!.size + info.sections.get(SECTION.h)!.size) / 64;
    computeMs[name] = points * msPerPoint;
    changedBytes[name] = await changedSectionBytes(paths.zkeyPath(name, 0));
  }
  return { computeMs, changedBytes, usPerPoint: msPerPoint * 1000, probeUsPerPoint: probeUs, measured };
}

/** A turn's floor on `name` at the link's rates: the slowest of its compute, download and upload. */
function turnFloor(floors: TurnFloors, name: string, r: LinkRates): SplitFloor {
  const changed = floors.changedBytes[name]!;
  const parts = {
    compute: floors.computeMs[name]!,
    download: ((changed * 8) / (r.downMbit * 1e6)) * 1000,
    upload: ((changed * 8) / (r.upMbit * 1e6)) * 1000,
  };
  const [what, ms] = Object.entries(parts).reduce((a, b) => (b[1] > a[1] ? b : a));
  return {
    ms,
    computeMs: parts.compute,
    transferMs: Math.max(parts.download, parts.upload),
    what:
      `${what} (compute ${seconds(parts.compute)} at ${floors.usPerPoint.toFixed(1)} µs a point ` +
      `(${floors.measured}), ` +
      `download ${seconds(parts.download)}, ` +
      `upload ${seconds(parts.upload)} of ${megabytes(changed)} each way at ` +
      `${r.downMbit.toFixed(0)}/${r.upMbit.toFixed(0)} Mbit/s)`,
  };
}

/** A stage's row, once the floor it is set against is known (the kernel is measured again after the stages). */
type RowAgainst = (floors: TurnFloors) => StageRow;

interface TurnFigures {
  rows: RowAgainst[];
  /** The coordinator's peaks over all the turns, its time the sum of its shares. */
  coordinatorRow: StageRow;
  shares: number[];
  /** The largest page's memory above idle over all pages, as a fraction of the largest key. */
  pagePeakAboveIdle: number;
  /** The first page's receipts. */
  receipts: string;
}

/** A terminal turn on each circuit (`ceremony contribute --coordinator`), straight: its rows and shares. */
async function terminalTurns(
  coordinator: Awaited<ReturnType<typeof startCeremonyServe>>,
  names: string[],
  probe: KernelSpeedProbe,
  floorOf: (floors: TurnFloors, name: string, shaped: boolean) => SplitFloor,
  figures: { rows: RowAgainst[]; shares: number[] },
  log: (message: string) => void,
): Promise<void> {
  for (const name of names) {
    const who = `terminal-${name}`;
    log(`a terminal turn on ${name} (ceremony contribute --coordinator)`);
    const cpuCount = countCpu(coordinator);
    const from = probe.probe().t;
    const turn = await runStage(
      [process.execPath, CLI, 'contribute', '--coordinator', coordinator.url, '--demo', who, name],
      { cwd: REPO_ROOT },
    );
    const cpu = cpuCount();
    const readings = probe.between(from, probe.probe().t);
    const share = await coordinatorShare(coordinator, `demo:${who}`, name);
    figures.shares.push(share.ms);
    figures.rows.push((floors) => {
      const machine = machineSpeed(readings, floors);
      const floor = floorOf(floors, name, false);
      return {
        stage: `turn ${name}, terminal straight`,
        ms: turn.ms,
        floor: { ms: floor.ms, what: floor.what },
        peaks: turn.peaks,
        note:
          `coordinator's share ${describeShare(share)}; the whole command (start-up and sign-in included); ` +
          describeCpu('it', cpu, floors.computeMs[name]!) +
          machineNote(machine),
        ...atMachineSpeed(machine, floor),
      };
    });
  }
}

/** `ceremony serve`, its page turns (straight or through the shaped link) and terminal turns. */
async function turnStages(
  options: WholeCeremonyOptions,
  dir: string,
  names: string[],
  keyBytes: Record<string, number>,
  probe: KernelSpeedProbe,
  stops: Array<() => Promise<void>>,
  log: (message: string) => void,
): Promise<TurnFigures> {
  log('ceremony serve (compiled, embedded verifier)');
  const coordinator = await startCeremonyServe(dir);
  stops.push(() => coordinator.stop());
  const coordinatorPeaks = new PeakRssWatcher(coordinator.groupId);
  const figures = { rows: [] as RowAgainst[], shares: [] as number[], pagePeakAboveIdle: 0, receipts: '' };
  try {
    await coordinator.waitForLog('embedded verifier ready', undefined, 300_000);
    // As a ceremony opens, before anyone's turn: the verifier caches contribution 0's combination
    // (one MSM over L and H per circuit), which the first turn's verdict would otherwise compute.
    log("the coordinator's verifier caches contribution 0's link combination of every circuit");
    const prepared = await Promise.all(
      names.map((name) =>
        coordinator.waitForLog('head link combination computed', (l) => l.circuit === name, 1_800_000),
      ),
    );
    const combinedMs = Math.max(...prepared.map((l) => Number(l.ms)));
    figures.rows.push(() => ({
      stage: 'serve: contribution 0 combined',
      ms: combinedMs,
      peaks: [],
      note:
        "the verifier's sums over each circuit's L and H as serve starts, before any turn " +
        '(its peak RSS is in the coordinator row)',
    }));
    let link: ShapedProxy | undefined;
    if (options.pages.includes('shaped')) {
      link = await startShapedProxy({ ...options.link, target: coordinator.url });
      const started = link;
      stops.push(() => started.stop());
    }
    log('plain transfers, straight (the loopback rates a straight turn is held to)');
    const largestKey = Math.max(...names.map((n) => keyBytes[n]!));
    const sample = Math.min(256 * MB, Math.max(largestKey, 64 * MB));
    const loopback: LinkRates = await measureLinkRates(undefined, sample, sample);
    const floorOf = (floors: TurnFloors, name: string, shaped: boolean): SplitFloor =>
      turnFloor(floors, name, shaped ? { downMbit: options.link.downMbit, upMbit: options.link.upMbit } : loopback);

    for (const [i, kind] of options.pages.entries()) {
      const shaped = kind === 'shaped';
      const who = `page-${i + 1}-${kind}`;
      const through = shaped ? `, through ${options.link.downMbit}/${options.link.upMbit} Mbit/s` : '';
      log(`a page (${who}) contributes to every circuit${through}`);
      // Read at its start and end too: a session shorter than the probe's period still has readings.
      const probedFrom = probe.probe().t;
      const session = await pageSession(coordinator, shaped ? link : undefined, who, names, stops);
      const readings = probe.between(probedFrom, probe.probe().t);
      if (!figures.receipts) figures.receipts = session.receipts;
      figures.pagePeakAboveIdle = Math.max(figures.pagePeakAboveIdle, session.peakPssAboveIdleBytes / largestKey);
      for (const turn of session.turns) {
        figures.shares.push(turn.share.ms);
        figures.rows.push((floors) => {
          const machine = machineSpeed(readings, floors);
          const sessionFloorMs = names.reduce((sum, name) => sum + floors.computeMs[name]!, 0);
          const floor = floorOf(floors, turn.circuit, shaped);
          return {
            stage: `turn ${turn.circuit}, page ${kind}`,
            ms: turn.acceptedAt - turn.startAt,
            floor: { ms: floor.ms, what: floor.what },
            peaks: session.peaks,
            note:
              `page PSS above idle ${megabytes(session.peakPssAboveIdleBytes)} = ` +
              `${(session.peakPssAboveIdleBytes / largestKey).toFixed(3)} × key; coordinator's share ` +
              `${describeShare(turn.share)}; moved ${megabytes(session.bytes.down)} down, ` +
              `${megabytes(session.bytes.up)} up in the session; ` +
              // The session holds every circuit's turn: its CPU is set against all their floors.
              describeCpu(names.length > 1 ? 'the session' : 'it', session.cpu, sessionFloorMs, {
                what: 'page',
                seconds: session.pageCpuSeconds,
              }) +
              `; the page's CPU by thread: ${session.threads}` +
              machineNote(machine),
            ...atMachineSpeed(machine, floor),
          };
        });
      }
    }
    if (options.terminal) await terminalTurns(coordinator, names, probe, floorOf, figures, log);
    await link?.stop();
  } finally {
    coordinatorPeaks.read();
    coordinatorPeaks.stop();
    await coordinator.stop();
  }
  const coordinatorRow = {
    stage: 'coordinator (serve) over the turns',
    ms: figures.shares.reduce((a, b) => a + b, 0),
    peaks: coordinatorPeaks.processes(),
    note: `the time is the sum of its shares of the turns, each ≤ ${seconds(Math.max(0, ...figures.shares))}`,
  };
  return { ...figures, coordinatorRow };
}

/** `ceremony finalise`: one compute per circuit is its floor (the beacon scales L and H as a turn does). */
async function finaliseStage(
  dir: string,
  names: string[],
  probe: KernelSpeedProbe,
  log: (message: string) => void,
): Promise<RowAgainst> {
  log('ceremony finalise');
  const from = probe.probe().t;
  const finalise = await runStage(finaliseArgv(dir), { cwd: REPO_ROOT, env: STAGE_TIMES_ENV });
  const readings = probe.between(from, probe.probe().t);
  return (floors) => {
    const machine = machineSpeed(readings, floors);
    const computeMs = names.reduce((sum, n) => sum + floors.computeMs[n]!, 0);
    const what = "compute: one L/H pass of the kernel per circuit (the beacon's scaling)";
    return {
      stage: 'finalise',
      ms: finalise.ms,
      floor: { ms: computeMs, what },
      peaks: finalise.peaks,
      stageTimes: stageTimeLines(finalise.stderr),
      ...(machine ? { note: machine.what } : {}),
      ...atMachineSpeed(machine, { ms: computeMs, what, computeMs, transferMs: 0 }),
    };
  };
}

/** `ceremony publish` into `published`, against copying its bytes at the rate measured for init. */
async function publishStage(
  dir: string,
  published: string,
  copyMsPerByte: number,
  log: (message: string) => void,
): Promise<StageRow> {
  log('ceremony publish');
  const publish = await runStage([process.execPath, CLI, 'publish', dir, published], { cwd: REPO_ROOT });
  const publishedBytes = await folderBytes(published);
  return {
    stage: 'publish',
    ms: publish.ms,
    floor: {
      ms: copyMsPerByte * publishedBytes,
      what: `copying ${megabytes(publishedBytes)} at the rate measured for init`,
    },
    peaks: publish.peaks,
  };
}

/**
 * `ceremony audit` of the published folder, the ptau pinned by its hash; its time as a multiple of
 * init's. Given `firstMs`, the audit again, the ptau remembered by the first: its time against the first's.
 */
async function auditStage(
  published: string,
  ptauHash: string,
  initMs: number,
  log: (message: string) => void,
  firstMs?: number,
): Promise<StageRow> {
  log(
    firstMs === undefined
      ? 'ceremony audit of the published folder (the ptau and every r1cs pinned by its hash)'
      : 'ceremony audit again, the ptau and contribution 0 remembered by the first (hashed all the same)',
  );
  // The bench is the auditor: its own ceremony.json is the one it wrote, and it pins the r1cs it
  // linked in (hashed here, outside the stage timed; the audit hashes them again as every audit does).
  const config = await loadCeremonyConfig(published);
  const r1csPins: string[] = [];
  for (const circuit of config.circuits)
    r1csPins.push('--r1cs-hash', `${circuit.name}=${await hashFile(circuit.r1csPath)}`);
  const command = [process.execPath, CLI, 'audit', published, '--config', path.join(published, 'ceremony.json')];
  // Memo folders of this run's own: the development ptau is cached between runs (and contribution 0
  // of a cached r1cs on it is the same file), so memos in the user's cache would skip their checks
  // and the audit timed would not be the first.
  const memo = [
    ...['--ptau-memo-dir', path.join(path.dirname(published), 'ptau-memo')],
    ...['--initial-key-memo-dir', path.join(path.dirname(published), 'initial-key-memo')],
  ];
  const audit = await runStage([...command, '--ptau-hash', ptauHash, ...r1csPins, ...memo, '--quiet'], {
    cwd: REPO_ROOT,
    env: STAGE_TIMES_ENV,
  });
  // Its floor: the work it counted, priced after it in this run (bench/audit-floor.ts; a lower bound).
  const floor = await auditFloor(parseWorkTally(audit.stderr));
  return {
    stage: firstMs === undefined ? 'audit' : 'audit again (ptau remembered)',
    ms: audit.ms,
    floor: {
      ms: floor.ms,
      what:
        'the MSMs, hashes and FFTs it counted at rates measured after it (bench/audit-floor.ts): ' +
        floor.parts.map((part) => `${part.item} ${seconds(part.ms)}`).join(', ') +
        (floor.unpriced.length > 0 ? `; not priced: ${floor.unpriced.join(', ')}` : ''),
    },
    peaks: audit.peaks,
    note:
      firstMs === undefined
        ? `${(audit.ms / initMs).toFixed(2)} × init`
        : `${(audit.ms / firstMs).toFixed(2)} × the first audit`,
    stageTimes: stageTimeLines(audit.stderr),
  };
}

/** `ceremony verify-receipt` of a page's receipts (written into `work`), offline against the published folder. */
async function receiptStage(
  work: string,
  published: string,
  receipts: string,
  log: (message: string) => void,
): Promise<StageRow> {
  log("ceremony verify-receipt of the first page's receipts, offline against the published folder");
  const receiptsFile = path.join(work, 'receipts.json');
  await writeFile(receiptsFile, receipts);
  const receipt = await runStage([process.execPath, CLI, 'verify-receipt', receiptsFile, published, '--quiet'], {
    cwd: REPO_ROOT,
  });
  return { stage: 'receipt check', ms: receipt.ms, peaks: receipt.peaks };
}

/**
 * A stage's time ÷ its floor, and beside it the time ÷ the floor at the machine's speed during the
 * stage (its compute part slowed as the kernel probe read the machine), which says how much of a
 * miss was the host's. The goal is judged on the first.
 */
function againstFloor(row: StageRow): string {
  const ratio = row.ms / row.floor!.ms;
  const atSpeed = row.atMachineSpeed;
  return atSpeed === undefined
    ? `${ratio.toFixed(2)}×`
    : `${ratio.toFixed(2)}× (${(row.ms / atSpeed.floorMs).toFixed(2)}× of the floor at the machine's speed ` +
        `during it, ${seconds(atSpeed.floorMs)}: its compute slowed ${atSpeed.slowdown.toFixed(2)}× as the kernel ` +
        `probe read the machine, its transfers at the link's rates)`;
}

/** The whole ceremony's goals, checked on its rows and turns. */
function wholeCeremonyGoals(rows: StageRow[], turnFigures: TurnFigures, auditMs: number, initMs: number): GoalCheck[] {
  const { shares, pagePeakAboveIdle } = turnFigures;
  const allPeaks = rows.flatMap((r) => r.peaks);
  const biggest = allPeaks.reduce((a, b) => (b.bytes > a.bytes ? b : a), { name: 'none', bytes: 0 });
  const turns = rows.filter((r) => r.stage.startsWith('turn '));
  const worstTurn = turns.reduce((a, b) => (b.ms / b.floor!.ms > a.ms / a.floor!.ms ? b : a), turns[0]!);
  return [
    {
      goal: 'no process above 4 GB RSS',
      measured: `largest ${biggest.name} ${megabytes(biggest.bytes)}`,
      met: biggest.bytes <= 4 * 1024 * MB,
    },
    {
      goal: "the page's memory above idle ≤ 0.1 × key",
      measured: `${pagePeakAboveIdle.toFixed(3)} × key`,
      met: pagePeakAboveIdle <= 0.1,
    },
    {
      goal: 'each turn ≤ 1.3 × its floor',
      measured: turns.length ? `worst ${worstTurn.stage}: ${againstFloor(worstTurn)}` : 'no turn',
      met: turns.every((t) => t.ms <= 1.3 * t.floor!.ms),
    },
    {
      goal: "the coordinator's share of a turn ≤ 1 s",
      measured: `worst ${seconds(Math.max(0, ...shares))}`,
      met: shares.every((s) => s <= 1000),
    },
    {
      goal: 'the audit ≤ 0.25 × init',
      measured: `${(auditMs / initMs).toFixed(2)} × init`,
      met: auditMs <= 0.25 * initMs,
    },
  ];
}

async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}

export function printWholeCeremony(f: WholeCeremonyFigures, out: NodeJS.WritableStream = process.stdout): void {
  const keys = Object.entries(f.keyBytes)
    .map(([name, bytes]) => `${name} ${megabytes(bytes)}`)
    .join(', ');
  printStageTable(`${f.title} — keys: ${keys}`, f.rows, out);
  const lines = ['', 'goals (a whole ceremony on one machine):'];
  for (const g of f.goals) lines.push(`  ${g.met ? 'met    ' : 'NOT MET'}  ${g.goal}: ${g.measured}`);
  for (const note of f.notes) lines.push(`note: ${note}`);
  const timed = f.rows.filter((row) => row.stageTimes?.length);
  if (timed.length)
    lines.push('', "where the time goes (each command's own stages; overlapping stages each count their own):");
  for (const row of timed) lines.push(`  ${row.stage}:`, ...row.stageTimes!.map((line) => `    ${line}`));
  out.write(`${lines.join('\n')}\n`);
}
