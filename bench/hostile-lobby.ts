/**
 * Hostile lobby: a whole ceremony of the nine test circuits taken by H honest terminal
 * contributors (`ceremony contribute --coordinator URL --demo hNN`, each its own process, default
 * 20), while K hostile accounts (default 5) that joined first try to hold the circuits: each polls
 * GET /api/me every second, holds the presence stream, joins again whenever it is out of the queue,
 * and never contributes; each turn it is granted it plays, in turn, one of three ways: never take
 * it; send heartbeats every second and never download or upload (heartbeats do not take a turn,
 * so this plays as never taking it); leave at once and join again.
 *
 * Shortened rules, so a run takes minutes (production values in brackets): TAKE_TURN_MS 2.5 s (30 s),
 * TAKE_PRIORITY_MS 400 ms (5 s: the same share of TAKE_TURN_MS), STANDBY_STEP_MS 100 ms (1.25 s: a quarter
 * of the priority, as in production),
 * UPLOAD_START_MS 12 s (10 min; `--upload-start S`), UPLOAD_STALL_MS 8 s (2 min), TURN_SILENCE_MS 8 s (2 min),
 * PRESENCE_MS 15 s (60 s), DISCONNECT_GRACE_MS 2 s (10 s), TURN_TIMEOUT_MS 30 s (10 min),
 * HEARTBEAT_EXTENSION_MS 40 s (2 min), COOLDOWN_MS 30 s (5 min), MAX_MISSED_TURNS 3 (3); the
 * per-address and per-contributor limits raised 100×, so they do not stop the hostile accounts
 * (the worst case). Each honest client goes through its own shaped link (`--link`, default 1/1
 * Mbit/s, a slow home line). TAKE_TURN_MS and UPLOAD_START_MS are what the honest clients of this
 * run need, with a margin: they take a turn within a round trip of its grant or standby offer when
 * their client has the CPU (the first 8 of a queue hold their polls) and send their first upload
 * bytes within about 4 s on the largest circuit when the machine is idle, but twenty clients
 * starting at once on two cores took more than 8 s now and then.
 *
 * Idle, per circuit: the time during which an honest contributor waits in its queue, eligible (no
 * cooldown left), while its turn is held by a hostile account or by nobody; against the wall time
 * (first join to the last honest acceptance, or to the cap when some never finish). Read from the
 * published queue log. The floor is 0; the goal, every honest contributor finishes and the worst
 * circuit is idle at most 5 % of the wall time. The worst circuit's idle is broken down by cause:
 * between a turn's end and the next grant (a verdict, a leave, a lapse), and a hostile grant until
 * the standby offer reached the honest entry that took it (takePriorityMs for the grantee, then
 * standbyStepMs for each entry that let it pass: the rules' share), from that offer to its take (the client), until its
 * holder left it, or not taken in time (nobody honest offered it, or none took it).
 *
 * With `--baseline REF` the same run is first made on the coordinator and client of git REF (e.g.
 * the commit before the change: the m1/m2 loop), built in a scratch folder, capped at `--cap`
 * seconds, and the two are printed side by side.
 *
 * `--keep` keeps each run's data folder (its path printed) for a look at its queue log afterwards; a
 * run whose audit fails keeps it anyway. The coordinator's log lines are in it (coordinator-log.jsonl).
 *
 * `--trace` runs each honest client with bench/terminal-trace.mjs and prints, for each turn an honest
 * client took over on standby, the steps from the offer reaching it to its take (bench/offer-take-trace.ts).
 *
 * Usage: tsx bench/hostile-lobby.ts [--honest 20] [--hostile 5] [--link 1/1] [--baseline REF]
 *                                   [--cap 600] [--upload-start 12] [--keep] [--trace]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { queueLogFinding } from '../core/audit/check-queue-fairness.ts';
import { initCeremony } from '../core/ceremony/init-ceremony.ts';
import { loadCeremonyConfig } from '../core/config/ceremony-config.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { QUEUE_LOG_FILE, type QueueRules } from '../core/queue-log/queue-log-entry.ts';
import { standbyReachedAt, statedStandby, type StandbyRule } from '../core/queue-log/turn-order.ts';
import { newCeremonyDir, REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { ContributorClient, type MeView } from '../tests/helpers/contributor-client.ts';
import { parseLink, startShapedProxy, type ShapedProxy } from '../tests/helpers/shaped-proxy.ts';
import { parseBenchArgs } from './bench-args.ts';
import { printTakeTimelines, takeTimelines, traceFileOf } from './offer-take-trace.ts';
import { benchLog as log } from './bench-chain.ts';
import { startCeremonyServe, type CoordinatorProcess } from './coordinator-process.ts';

const SHORTENED = {
  TAKE_TURN_MS: '2500',
  TAKE_PRIORITY_MS: '400',
  STANDBY_STEP_MS: '100',
  UPLOAD_STALL_MS: '8000',
  TURN_SILENCE_MS: '8000',
  PRESENCE_MS: '15000',
  DISCONNECT_GRACE_MS: '2000',
  TURN_TIMEOUT_MS: '30000',
  HEARTBEAT_EXTENSION_MS: '40000',
  COOLDOWN_MS: '30000',
  MAX_MISSED_TURNS: '3',
  RATE_LIMIT_SIGN_IN: '2000',
  RATE_LIMIT_JOIN: '1000',
  RATE_LIMIT_QUEUE_LOG: '12000',
  RATE_LIMIT_CEREMONY_READS: '100000',
};
/** The coordinator's JSON log lines, written into the run's data folder. */
const COORDINATOR_LOG_FILE = 'coordinator-log.jsonl';
const STRATEGIES = ['never takes it', 'heartbeats, never uploads', 'leaves and joins again'] as const;
type Strategy = (typeof STRATEGIES)[number];

export interface HostileOptions {
  honest: number;
  hostile: number;
  link: { downMbit: number; upMbit: number };
  capMs: number;
  /** Keep each run's data folder (its queue log, transcript, chains) for a look afterwards. */
  keep: boolean;
  /** UPLOAD_START_MS of the run (12 s by default). */
  uploadStartMs: number;
  /** Trace the honest clients' requests and print where each standby take went (bench/offer-take-trace.ts). */
  trace: boolean;
}

export interface HostileFigures {
  label: string;
  wallMs: number;
  idleMs: Record<string, number>;
  /** Each circuit's idle time by cause (CAUSES). */
  byCause: Record<string, Record<Cause, number>>;
  /** Idle time, all circuits, while a hostile account held the turn. */
  heldByHostileMs: number;
  hostileGrants: number;
  byStrategy: Record<Strategy, number>;
  honestGrants: number;
  honestMissed: number;
  finished: number;
  fairness: string;
  /** The coordinator's warnings, each with how often it was logged. */
  warnings: string[];
}

const running = new Set<ChildProcess>();

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // gone already
  }
}

/**
 * One honest `ceremony contribute` of the checkout at `root`; resolves with its exit code. With
 * `traceTo`, its HTTP events go to that file (bench/terminal-trace.mjs).
 */
function runHonest(root: string, url: string, name: string, traceTo?: string): Promise<number | null> {
  const trace = traceTo ? ['--import', path.join(REPO_ROOT, 'bench', 'terminal-trace.mjs')] : [];
  const child = spawn(
    process.execPath,
    [...trace, path.join(root, 'bin', 'ceremony.js'), 'contribute', '--coordinator', url, '--demo', name],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
      ...(traceTo ? { env: { ...process.env, CEREMONY_BENCH_TRACE: traceTo } } : {}),
    },
  );
  running.add(child);
  // Its last lines, printed if it fails: why an honest contributor did not finish.
  const last: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    // A stack's frames say less than the message above them.
    if (/^\s+at /.test(line)) return;
    last.push(line.slice(0, 300));
    if (last.length > 6) last.shift();
  });
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      if (code !== 0 && signal !== 'SIGKILL') log(`honest ${name} exited with ${code}: ${last.join(' | ')}`);
      resolve(code);
    }),
  );
}

/** Holds the presence stream open until `signal`, opening it again when it drops. */
async function holdPresence(client: ContributorClient, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      const response = await client.fetch('GET', '/api/me/presence', { signal, timeoutMs: Infinity });
      if (response.body) for await (const _ of response.body) if (signal.aborted) break;
    } catch {
      // dropped or aborted: again below
    }
    await sleep(1000, undefined, { signal }).catch(() => {});
  }
}

/** A hostile account's moves, once a second, until `signal` (see the header); counts its turns by strategy. */
async function playHostile(
  client: ContributorClient,
  first: number,
  byStrategy: Record<Strategy, number>,
  signal: AbortSignal,
): Promise<void> {
  let turns = first;
  let held: { key: string; strategy: Strategy } | undefined;
  while (!signal.aborted) {
    try {
      const me: MeView = await client.me();
      const turn = me.status.circuits.find((c) => c.state === 'turn') as { circuit: string; startedAt?: number };
      const inLine = me.status.circuits.some((c) => ['waiting', 'turn', 'verifying'].includes(c.state));
      if (!inLine) await client.join();
      else if (turn) {
        const key = `${turn.circuit}@${turn.startedAt}`;
        if (held?.key !== key) {
          held = { key, strategy: STRATEGIES[turns++ % STRATEGIES.length]! };
          byStrategy[held.strategy]++;
        }
        if (held.strategy === STRATEGIES[1]) await client.request('POST', `/api/circuits/${turn.circuit}/heartbeat`);
        if (held.strategy === STRATEGIES[2]) {
          await client.request('POST', '/api/me/leave');
          await client.join();
        }
      }
    } catch {
      // refused (not your turn any more, a limit): go on
    }
    await sleep(1000, undefined, { signal }).catch(() => {});
  }
}

interface Waiter {
  eligibleAt: number;
}

/** Why a circuit was idle (see idleTimes). */
const CAUSES = {
  between: 'between a turn’s end and the next grant',
  walk: 'hostile grant, until the standby offer reached the honest taker',
  take: 'hostile grant, from that offer to its take',
  left: 'hostile grant, until its holder left it',
  notTaken: 'hostile grant, not taken in time',
} as const;
type Cause = keyof typeof CAUSES;

/** A hostile account's grant while honest contributors waited: how it ended, and when they waited. */
interface HostileGrant {
  circuit: string;
  at: number;
  end?: Exclude<Cause, 'between' | 'take'>;
  /** Entries that let the turn pass on standby before the one that took it. */
  skipped: number;
  waited: Array<[number, number]>;
}

/** The idle time of `grant` by cause: a standby walk lasts until the offer reached its taker, the take what is left. */
function grantCauses(grant: HostileGrant, standby: StandbyRule, add: (cause: Cause, ms: number) => void): void {
  const reached = standbyReachedAt(grant.at, grant.skipped + 1, standby);
  for (const [from, to] of grant.waited) {
    if (grant.end !== 'walk') add(grant.end ?? 'notTaken', to - from);
    else
      (add('walk', Math.max(0, Math.min(to, reached) - from)), add('take', Math.max(0, to - Math.max(from, reached))));
  }
}

/**
 * Idle time per circuit (see the header), from the queue log's entries, and all circuits' idle time
 * while a hostile account held the turn (the rest: held by nobody); hostile ids start with `demo:x`.
 * `byCause`: each circuit's idle time by what held it (CAUSES).
 */
function idleTimes(
  entries: ReadonlyArray<Record<string, unknown>>,
  circuits: readonly string[],
  end: number,
): { idleMs: Record<string, number>; heldByHostileMs: number; byCause: Record<string, Record<Cause, number>> } {
  let heldByHostileMs = 0;
  const honest = (who: unknown) => typeof who === 'string' && who.startsWith('demo:h');
  const idle = Object.fromEntries(circuits.map((c) => [c, 0]));
  const byCause = Object.fromEntries(
    circuits.map((c) => [c, Object.fromEntries(Object.keys(CAUSES).map((k) => [k, 0])) as Record<Cause, number>]),
  );
  const holder = new Map<string, string>();
  const hostileGrants: HostileGrant[] = [];
  const grantOf = new Map<string, HostileGrant>();
  const waiting = new Map<string, Map<string, Waiter>>(circuits.map((c) => [c, new Map()]));
  const rules = entries.find((e) => e.type === 'rules');
  const steps = entries.filter((e) => e.type !== 'rules');
  const ended = (circuit: string, how: HostileGrant['end']) => {
    const grant = grantOf.get(circuit);
    if (grant && grant.end === undefined) grant.end = how;
  };
  for (const [i, entry] of steps.entries()) {
    const at = Date.parse(entry.time as string);
    const circuit = entry.circuit as string;
    const who = entry.contributor as string;
    const queue = waiting.get(circuit)!;
    if (entry.type === 'join')
      queue.set(who, { eligibleAt: entry.eligibleAt ? Date.parse(entry.eligibleAt as string) : 0 });
    if (entry.type === 'granted') {
      queue.delete(who);
      holder.set(circuit, who);
      if (honest(who)) grantOf.delete(circuit);
      else hostileGrants.push(grantOf.set(circuit, { circuit, at, skipped: 0, waited: [] }).get(circuit)!);
    }
    const grant = grantOf.get(circuit);
    if (entry.type === 'skipped' && grant) grant.skipped++;
    if (entry.type === 'lapsed') ended(circuit, entry.takenOverBy ? 'walk' : 'notTaken');
    if (entry.type === 'lapsed' && entry.taken === false) queue.set(who, { eligibleAt: at });
    if (['lapsed', 'accepted', 'refused'].includes(entry.type as string)) holder.delete(circuit);
    if (entry.type === 'left' || entry.type === 'removed') {
      queue.delete(who);
      if (holder.get(circuit) === who && entry.from !== 'after_verdict')
        (holder.delete(circuit), ended(circuit, 'left'));
    }
    const next = Math.min(end, i + 1 < steps.length ? Date.parse(steps[i + 1]!.time as string) : end);
    if (next <= at) continue;
    for (const c of circuits) {
      const held = holder.get(c);
      if (held !== undefined && honest(held)) continue;
      // Waiting and eligible during [at, next): from its eligibleAt on.
      const from = Math.min(
        ...[...waiting.get(c)!].filter(([w]) => honest(w)).map(([, w]) => Math.max(at, w.eligibleAt)),
        Infinity,
      );
      if (from >= next) continue;
      idle[c]! += next - from;
      if (held === undefined) byCause[c]!.between += next - from;
      else (grantOf.get(c)!.waited.push([from, next]), (heldByHostileMs += next - from));
    }
  }
  const standby = statedStandby((rules ?? {}) as Partial<QueueRules>);
  for (const grant of hostileGrants) grantCauses(grant, standby, (cause, ms) => (byCause[grant.circuit]![cause] += ms));
  return { idleMs: idle, heldByHostileMs, byCause };
}

/** One run on the checkout at `root`: the hostile accounts join, then the honest contributors; figures from the log. */
async function runOnce(
  label: string,
  root: string,
  template: string,
  options: HostileOptions,
): Promise<HostileFigures> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `bench-hostile-${label}-`));
  let coordinator: CoordinatorProcess | undefined;
  const links: ShapedProxy[] = [];
  const stop = new AbortController();
  let figures: HostileFigures | undefined;
  try {
    await cp(template, dataDir, { recursive: true, verbatimSymlinks: true });
    const env = { ...SHORTENED, UPLOAD_START_MS: String(options.uploadStartMs) };
    coordinator = await startCeremonyServe(dataDir, env, root);
    const byStrategy = Object.fromEntries(STRATEGIES.map((s) => [s, 0])) as Record<Strategy, number>;
    const hostile = await Promise.all(
      Array.from({ length: options.hostile }, async (_, i) => {
        const client = new ContributorClient(coordinator!.url);
        await client.signInDemo(`x${i}`);
        await client.join();
        return client;
      }),
    );
    const playing = hostile.flatMap((client, i) => [
      holdPresence(client, stop.signal),
      playHostile(client, i, byStrategy, stop.signal),
    ]);
    log(`${label}: ${options.hostile} hostile accounts joined; ${options.honest} honest contributors start`);
    const started = Date.now();
    const exits = await Promise.all(
      Array.from({ length: options.honest }, async (_, i) => {
        const link = await startShapedProxy({ ...options.link, target: coordinator!.url });
        links.push(link);
        const cap = sleep(options.capMs - (Date.now() - started)).then(() => 'capped' as const);
        const name = `h${String(i).padStart(2, '0')}`;
        const traceTo = options.trace ? traceFileOf(dataDir, name) : undefined;
        return Promise.race([runHonest(root, link.url, name, traceTo), cap]);
      }),
    );
    for (const child of running) killGroup(child);
    stop.abort();
    await Promise.all(playing);
    await coordinator.stop();
    // In the data folder, which is kept when the audit fails: the queue log is read against it.
    await writeFile(
      path.join(dataDir, COORDINATOR_LOG_FILE),
      coordinator.logs
        .map((line) => `${JSON.stringify({ ...line, time: new Date(line.time).toISOString() })}\n`)
        .join(''),
    );
    const warnings = new Map<string, number>();
    for (const line of coordinator.logs)
      if (line.level === 'warn') warnings.set(line.message, (warnings.get(line.message) ?? 0) + 1);
    coordinator = undefined;
    figures = await figuresOf(
      label,
      options,
      dataDir,
      byStrategy,
      exits.filter((code) => code === 0).length,
      started + options.capMs,
      warnings,
    );
    if (options.trace) printTakeTimelines(label, await takeTimelines(dataDir, await queueLogEntries(dataDir)));
    return figures;
  } finally {
    stop.abort();
    for (const child of running) killGroup(child);
    for (const link of links) await link.stop();
    await coordinator?.stop();
    // A failed audit's folder is kept whatever --keep says: the failure is read from it.
    if (!options.keep && figures?.fairness === 'passed') await rm(dataDir, { recursive: true, force: true });
    else log(`kept ${dataDir}`);
  }
}

async function queueLogEntries(dataDir: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(path.join(dataDir, QUEUE_LOG_FILE), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function figuresOf(
  label: string,
  options: HostileOptions,
  dataDir: string,
  byStrategy: Record<Strategy, number>,
  finished: number,
  capAt: number,
  warnings: ReadonlyMap<string, number>,
): Promise<HostileFigures> {
  const config = await loadCeremonyConfig(dataDir);
  const entries = await queueLogEntries(dataDir);
  const honest = (e: Record<string, unknown>) => String(e.contributor).startsWith('demo:h');
  const first = Date.parse(entries.find((e) => e.type === 'join')!.time as string);
  const accepted = entries.filter((e) => e.type === 'accepted' && honest(e));
  const everyone = finished === options.honest;
  const end = everyone && accepted.length > 0 ? Date.parse(accepted.at(-1)!.time as string) : capAt;
  const finding = await queueLogFinding(config);
  return {
    label,
    wallMs: end - first,
    ...idleTimes(
      entries,
      config.circuits.map((c) => c.name),
      end,
    ),
    hostileGrants: entries.filter((e) => e.type === 'granted' && !honest(e)).length,
    byStrategy,
    honestGrants: entries.filter((e) => e.type === 'granted' && honest(e)).length,
    honestMissed: entries.filter((e) => ['lapsed', 'skipped', 'refused'].includes(e.type as string) && honest(e))
      .length,
    finished,
    fairness: finding.ok ? 'passed' : `FAILED: ${finding.summary.slice(0, 300)}`,
    warnings: [...warnings].map(([message, n]) => `${n} × ${message}`),
  };
}

/**
 * The checkout of `ref` in a scratch folder (this checkout's node_modules linked), its dist/ built
 * (kept for the next run of the same ref), and this checkout's browser app linked (`ceremony serve`
 * needs one; the bench's clients are terminal ones).
 */
async function baselineTree(ref: string): Promise<string> {
  const root = path.join(REPO_ROOT, 'scratch', `hostile-lobby-baseline-${ref.replace(/[^\w.-]/g, '_')}`);
  if (existsSync(path.join(root, 'dist'))) return root;
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  const archive = spawnSync('sh', ['-c', 'git archive "$1" | tar -x -C "$2"', 'sh', ref, root], { cwd: REPO_ROOT });
  if (archive.status !== 0) throw new Error(`git archive ${ref}: ${archive.stderr.toString().slice(0, 300)}`);
  await symlink(path.join(REPO_ROOT, 'node_modules'), path.join(root, 'node_modules'));
  await symlink(path.join(REPO_ROOT, 'web', 'dist'), path.join(root, 'web', 'dist'));
  log(`building the coordinator of ${ref} in ${path.relative(REPO_ROOT, root)}`);
  const build = spawnSync(process.execPath, ['scripts/build.js', 'dist'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (build.status !== 0) throw new Error(`the build of ${ref} failed`);
  return root;
}

/** The circuit idle the longest in a run. */
function worstCircuit(figures: HostileFigures): string {
  return Object.entries(figures.idleMs).reduce((worst, entry) => (entry[1] > worst[1] ? entry : worst))[0];
}

export function printHostileLobby(figures: readonly HostileFigures[], options: HostileOptions): void {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)} %`;
  process.stdout.write(
    `\nhostile lobby: the nine test circuits, ${options.honest} honest terminal contributors (each on a ` +
      `${options.link.downMbit}/${options.link.upMbit} Mbit/s link), ${options.hostile} hostile accounts that ` +
      'joined first (shortened rules: see bench/hostile-lobby.ts)\n',
  );
  const circuits = Object.keys(figures[0]!.idleMs);
  const rows = [
    ['', ...figures.map((f) => f.label)],
    ['wall time (first join → last honest acceptance, or the cap)', ...figures.map((f) => s(f.wallMs))],
    ...circuits.map((c) => [
      `  idle: ${c}`,
      ...figures.map((f) => `${s(f.idleMs[c]!)} (${pct(f.idleMs[c]!, f.wallMs)})`),
    ]),
    ['  idle, all circuits, while a hostile account held the turn', ...figures.map((f) => s(f.heldByHostileMs))],
    [
      'idle, worst circuit ÷ wall (goal ≤ 5 %)',
      ...figures.map((f) => pct(Math.max(...Object.values(f.idleMs)), f.wallMs)),
    ],
    ...(Object.keys(CAUSES) as Cause[]).map((cause) => [
      `  worst circuit's idle: ${CAUSES[cause]}`,
      ...figures.map((f) => s(f.byCause[worstCircuit(f)]![cause])),
    ]),
    [`honest contributors finished (goal ${options.honest})`, ...figures.map((f) => String(f.finished))],
    ['turns granted to hostile / honest accounts', ...figures.map((f) => `${f.hostileGrants} / ${f.honestGrants}`)],
    ...STRATEGIES.map((st) => [`  hostile turns: ${st}`, ...figures.map((f) => String(f.byStrategy[st]))]),
    ['honest turns missed or refused', ...figures.map((f) => String(f.honestMissed))],
    ["audit's fairness check (this release's rules)", ...figures.map((f) => f.fairness.split(':')[0]!)],
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows) process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}\n`);
  for (const f of figures) if (f.fairness !== 'passed') process.stdout.write(`${f.label}: ${f.fairness}\n`);
  for (const f of figures)
    for (const warning of f.warnings) process.stdout.write(`${f.label}: coordinator warning ${warning}\n`);
}

export async function hostileLobbyBench(options: HostileOptions, baseline?: string): Promise<HostileFigures[]> {
  const build = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'build.js'), 'dist'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (build.status !== 0) throw new Error('the build failed');
  const stop = (): void => {
    for (const child of running) killGroup(child);
    process.exit(130);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const template = await newCeremonyDir();
  try {
    log('initialising the nine test circuits (test network, dev ptau)');
    await initCeremony(template);
    const figures: HostileFigures[] = [];
    if (baseline) figures.push(await runOnce(`before (${baseline})`, await baselineTree(baseline), template, options));
    figures.push(await runOnce('this release', REPO_ROOT, template, options));
    return figures;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await rm(template, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: {
      honest: { type: 'string', default: '20' },
      hostile: { type: 'string', default: '5' },
      link: { type: 'string', default: '1/1' },
      baseline: { type: 'string' },
      cap: { type: 'string', default: '600' },
      keep: { type: 'boolean', default: false },
      'upload-start': { type: 'string', default: '12' },
      trace: { type: 'boolean', default: false },
    },
  });
  const options: HostileOptions = {
    honest: Number(values.honest),
    hostile: Number(values.hostile),
    link: parseLink(values.link),
    capMs: Number(values.cap) * 1000,
    keep: values.keep,
    uploadStartMs: Number(values['upload-start']) * 1000,
    trace: values.trace,
  };
  printHostileLobby(await hostileLobbyBench(options, values.baseline), options);
  await releaseBn128();
}
