/**
 * Queue presence: a whole ceremony of the nine test circuits taken by N terminal
 * contributors (`ceremony contribute --coordinator URL --demo NAME`, each its own process, default
 * 60), of whom every `absentEvery`-th (a fifth) goes away while waiting: its process is killed
 * (SIGKILL: no leave, as a closed laptop) after 0 to 3 accepted circuits, and every
 * `returnEvery`-th (half of them) starts again `returnAfter` seconds later and carries on. The
 * same run twice against the real `ceremony serve` (compiled), once as the lobby without presence
 * (PRESENCE_MS=0, TAKE_TURN_MS=0, TURN_SILENCE_MS=0, DISCONNECT_GRACE_MS=0: every entry counts as
 * there, a turn counts as taken when granted, so an absent contributor's turn runs to its deadline and is missed, up to
 * MAX_MISSED_TURNS times), once with presence on; the same shortened timeouts in both, so the run
 * fits on 2 cores:
 *
 *   TURN_TIMEOUT_MS 30 s (10 min in production), HEARTBEAT_EXTENSION_MS 40 s, COOLDOWN_MS 30 s,
 *   MAX_MISSED_TURNS 3; with presence: PRESENCE_MS 15 s (60 s), TAKE_TURN_MS 3 s (30 s),
 *   TURN_SILENCE_MS 8 s (2 min; the clients then heartbeat every 2 s instead of 30 s: much shorter
 *   and a process starved of CPU by sixty others on two cores misses its beats), DISCONNECT_GRACE_MS
 *   2 s (10 s: a killed client's presence stream closes, so it is passed over that long after).
 *   (PRESENCE_MS cannot shrink like the rest: a contributor far back in line polls every 10 s.)
 *
 * Figures, from the published queue log and the bench's own record of who was really away when:
 *  - each circuit's idle time: no turn held by someone who is there while someone who is there
 *    and eligible waits for that circuit; against the ceremony's wall time (first join → last verdict);
 *    and all circuits' idle time by its cause (a turn granted to someone gone, not taken yet; a turn
 *    taken by someone gone since; a free circuit whose first present waiter the lobby holds away; a
 *    free circuit not granted yet);
 *  - turns given to someone absent (passed on or missed), contributors who finished, the audit's
 *    fairness check (core/audit/check-queue-fairness.ts) on the published log and transcript.
 * Goal: idle ≤ 5 % of the wall time with presence, every contributor who stayed (or came back)
 * finishes, the fairness check passes. The floor is 0 idle: a circuit always busy while anyone waits.
 *
 * Usage: tsx bench/queue-presence.ts [--contributors 60] [--absent-every 5] [--return-every 10]
 *                                    [--return-after 25] [--only presence|today]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { initCeremony } from '../core/ceremony/init-ceremony.ts';
import { loadCeremonyConfig } from '../core/config/ceremony-config.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { queueLogFinding } from '../core/audit/check-queue-fairness.ts';
import { parseQueueLogText, QUEUE_LOG_FILE, type QueueLogEntry } from '../core/queue-log/queue-log-entry.ts';
import { newCeremonyDir, REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { benchLog as log } from './bench-chain.ts';
import { startCeremonyServe, type CoordinatorProcess } from './coordinator-process.ts';
import { parseBenchArgs } from './bench-args.ts';

const SHORTENED = {
  TURN_TIMEOUT_MS: '30000',
  HEARTBEAT_EXTENSION_MS: '40000',
  COOLDOWN_MS: '30000',
  MAX_MISSED_TURNS: '3',
  // Everyone signs in from loopback: the per-address limits are the production ones times 100.
  RATE_LIMIT_SIGN_IN: '2000',
  RATE_LIMIT_QUEUE_LOG: '12000',
};
const MODES = {
  today: { PRESENCE_MS: '0', TAKE_TURN_MS: '0', TURN_SILENCE_MS: '0', DISCONNECT_GRACE_MS: '0' },
  presence: { PRESENCE_MS: '15000', TAKE_TURN_MS: '3000', TURN_SILENCE_MS: '8000', DISCONNECT_GRACE_MS: '2000' },
} as const;
type Mode = keyof typeof MODES;

export interface PresenceOptions {
  contributors: number;
  absentEvery: number;
  returnEvery: number;
  returnAfterMs: number;
}

interface Contributor {
  name: string;
  /** Accepted circuits after which it goes away (undefined: it stays). */
  leavesAfter?: number;
  comesBack: boolean;
  /** When it was away, bench clock (ms). */
  away: Array<{ from: number; to: number }>;
  accepted: number;
  exitCode?: number | null;
}

export interface PresenceFigures {
  mode: Mode;
  wallMs: number;
  /** Per circuit, ms with nobody there holding its turn while someone there and eligible waited. */
  idleMs: Record<string, number>;
  /** All circuits' idle ms by cause (see IDLE_CAUSES). */
  idleByCause: Record<IdleCause, number>;
  passedOn: number;
  missed: number;
  /** Missed turns of contributors who were there (a client that could not beat in time): should be 0. */
  missedWhileThere: string[];
  removed: number;
  finished: number;
  /** Contributors who stayed or came back: all should finish. */
  expectedToFinish: number;
  turns: number;
  fairness: { ok: boolean; summary: string };
}

const running = new Set<ChildProcess>();

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // gone already
  }
}

/** One `ceremony contribute` process; resolves with its exit code; `onAccepted` per accepted circuit. */
function runContributor(
  url: string,
  name: string,
  onAccepted: () => void,
): { child: ChildProcess; done: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    [path.join(REPO_ROOT, 'bin', 'ceremony.js'), 'contribute', '--coordinator', url, '--demo', name],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  running.add(child);
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (/^\S+ #\d+ contribution hash [0-9a-f]+$/.test(line)) onAccepted();
  });
  child.stderr!.resume();
  const done = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return { child, done };
}

const IDLE_CAUSES = {
  untaken: 'turn granted to someone gone, not taken yet',
  silent: 'turn taken by someone gone since',
  heldAway: 'free, its first present waiter held away by the lobby',
  free: 'free, not granted yet (a tick)',
} as const;
type IdleCause = keyof typeof IDLE_CAUSES;

interface Waiter {
  eligibleAt: number;
  /** Away by the lobby's log (passed over until seen). */
  away: boolean;
}

/** Idle time per circuit and by cause, from the queue log and who was really there (see the header). */
function idleTimes(
  entries: readonly QueueLogEntry[],
  circuits: readonly string[],
  present: (contributor: string, at: number) => boolean,
  changes: readonly number[],
  end: number,
): { idleMs: Record<string, number>; idleByCause: Record<IdleCause, number> } {
  const idle = Object.fromEntries(circuits.map((c) => [c, 0]));
  const byCause = Object.fromEntries(Object.keys(IDLE_CAUSES).map((c) => [c, 0])) as Record<IdleCause, number>;
  const holder = new Map<string, { who: string; taken: boolean }>();
  const waiting = new Map<string, Map<string, Waiter>>(circuits.map((c) => [c, new Map()]));
  const times = [...new Set([...entries.map((e) => Date.parse(e.time)), ...changes, end])]
    .filter((t) => t <= end)
    .sort((a, b) => a - b);
  let next = 0;
  for (let i = 0; i < times.length - 1; i++) {
    const at = times[i]!;
    for (; next < entries.length && Date.parse(entries[next]!.time) <= at; next++) {
      const entry = entries[next]!;
      if (entry.type === 'rules') continue;
      const queue = waiting.get(entry.circuit)!;
      const eligibleAt = entry.type === 'join' && entry.eligibleAt ? Date.parse(entry.eligibleAt) : 0;
      if (entry.type === 'join') queue.set(entry.contributor, { eligibleAt, away: false });
      if (entry.type === 'away' || entry.type === 'back') {
        const waiter = queue.get(entry.contributor);
        if (waiter) waiter.away = entry.type === 'away';
      }
      if (entry.type === 'granted') {
        queue.delete(entry.contributor);
        // Without a time to be taken, a turn counts as taken when granted.
        holder.set(entry.circuit, { who: entry.contributor, taken: entry.takeBy === undefined });
      }
      if (entry.type === 'taken') holder.get(entry.circuit)!.taken = true;
      if (entry.type === 'lapsed' && !entry.taken) queue.set(entry.contributor, { eligibleAt: 0, away: true });
      if (['lapsed', 'accepted', 'refused'].includes(entry.type) || (entry.type === 'left' && entry.from === 'turn'))
        holder.delete(entry.circuit);
      if ((entry.type === 'left' && entry.from === 'waiting') || entry.type === 'removed') {
        queue.delete(entry.contributor);
        if (holder.get(entry.circuit)?.who === entry.contributor) holder.delete(entry.circuit);
      }
    }
    const span = times[i + 1]! - at;
    for (const circuit of circuits) {
      const held = holder.get(circuit);
      if (held !== undefined && present(held.who, at)) continue;
      const waiters = [...waiting.get(circuit)!].filter(([who, w]) => w.eligibleAt <= at && present(who, at));
      if (waiters.length === 0) continue;
      idle[circuit]! += span;
      const cause: IdleCause = held
        ? held.taken
          ? 'silent'
          : 'untaken'
        : waiters.every(([, w]) => w.away)
          ? 'heldAway'
          : 'free';
      byCause[cause] += span;
    }
  }
  return { idleMs: idle, idleByCause: byCause };
}

export async function runQueuePresence(
  mode: Mode,
  template: string,
  options: PresenceOptions,
): Promise<PresenceFigures> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `bench-presence-${mode}-`));
  let coordinator: CoordinatorProcess | undefined;
  try {
    await cp(template, dataDir, { recursive: true, verbatimSymlinks: true });
    coordinator = await startCeremonyServe(dataDir, { ...SHORTENED, ...MODES[mode] });
    const url = coordinator.url;
    const config = await loadCeremonyConfig(dataDir);
    const contributors: Contributor[] = Array.from({ length: options.contributors }, (_, i) => {
      const absent = i % options.absentEvery === options.absentEvery - 1;
      return {
        name: `c${String(i).padStart(2, '0')}`,
        ...(absent ? { leavesAfter: i % 4 } : {}),
        comesBack: absent && i % options.returnEvery === options.returnEvery - 1,
        away: [],
        accepted: 0,
      };
    });
    log(
      `${mode}: ${contributors.length} terminal contributors, ` +
        `${contributors.filter((c) => c.leavesAfter !== undefined).length} go away ` +
        `(${contributors.filter((c) => c.comesBack).length} come back after ${options.returnAfterMs / 1000} s)`,
    );
    const finished = contributors.map(async (contributor) => {
      const goAway = (child: ChildProcess): void => {
        contributor.away.push({ from: Date.now(), to: Infinity });
        killGroup(child);
      };
      const first = runContributor(url, contributor.name, () => {
        contributor.accepted++;
        if (contributor.accepted === contributor.leavesAfter) goAway(first.child);
      });
      // Away before its first turn: once it has joined and waits.
      if (contributor.leavesAfter === 0) setTimeout(() => goAway(first.child), 3000);
      const code = await first.done;
      if (contributor.away.length === 0 || !contributor.comesBack) return (contributor.exitCode = code);
      const wait = contributor.away[0]!.from + options.returnAfterMs - Date.now();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
      contributor.away[0]!.to = Date.now();
      const again = runContributor(url, contributor.name, () => contributor.accepted++);
      return (contributor.exitCode = await again.done);
    });
    await Promise.all(finished);
    await coordinator.stop();
    coordinator = undefined;

    const text = await readFile(path.join(dataDir, QUEUE_LOG_FILE), 'utf8');
    const entries = parseQueueLogText(config.id, text, 'of the bench');
    const byName = new Map(contributors.map((c) => [`demo:${c.name}`, c]));
    const present = (who: string, at: number): boolean =>
      !(byName.get(who)?.away ?? []).some((span) => span.from <= at && at < span.to);
    const changes = contributors.flatMap((c) => c.away.flatMap((span) => [span.from, span.to]));
    // From the first join to the last acceptance: the absent may lapse on after everyone is done.
    const first = Date.parse(entries.find((e) => e.type === 'join')!.time);
    const last = Date.parse(entries.filter((e) => e.type === 'accepted').at(-1)!.time);
    const circuits = config.circuits.map((c) => c.name);
    const fairness = await queueLogFinding(config);
    return {
      mode,
      wallMs: last - first,
      ...idleTimes(entries, circuits, present, changes.filter(Number.isFinite), last),
      passedOn: entries.filter((e) => e.type === 'lapsed' && !e.taken).length,
      missed: entries.filter((e) => e.type === 'lapsed' && e.taken).length,
      missedWhileThere: entries.flatMap((e) =>
        e.type === 'lapsed' && e.taken && present(e.contributor, Date.parse(e.time))
          ? [`${e.contributor} on ${e.circuit} at ${e.time}, last heard ${e.silentSince ?? 'before its deadline'}`]
          : [],
      ),
      removed: entries.filter((e) => e.type === 'removed').length,
      finished: contributors.filter((c) => c.exitCode === 0).length,
      expectedToFinish: contributors.filter((c) => c.leavesAfter === undefined || c.comesBack).length,
      turns: entries.filter((e) => e.type === 'granted').length,
      fairness: { ok: fairness.ok, summary: fairness.summary },
    };
  } finally {
    for (const child of running) killGroup(child);
    await coordinator?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export function printQueuePresence(figures: readonly PresenceFigures[], options: PresenceOptions): void {
  const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  const pct = (part: number, whole: number): string => `${((100 * part) / whole).toFixed(1)} %`;
  process.stdout.write(
    `\nqueue presence: the nine test circuits, ${options.contributors} terminal contributors, every ` +
      `${options.absentEvery}th goes away while waiting, every ${options.returnEvery}th comes back after ` +
      `${options.returnAfterMs / 1000} s (shortened timeouts: see bench/queue-presence.ts)\n`,
  );
  const rows = [
    ['', ...figures.map((f) => (f.mode === 'today' ? 'presence off' : 'presence on'))],
    ['wall time (first join → last verdict)', ...figures.map((f) => s(f.wallMs))],
    ...Object.keys(figures[0]!.idleMs).map((circuit) => [
      `  idle: ${circuit}`,
      ...figures.map((f) => `${s(f.idleMs[circuit]!)} (${pct(f.idleMs[circuit]!, f.wallMs)})`),
    ]),
    [
      'idle, worst circuit ÷ wall (goal ≤ 5 %)',
      ...figures.map((f) => pct(Math.max(...Object.values(f.idleMs)), f.wallMs)),
    ],
    [
      'idle, all circuits ÷ (9 × wall)',
      ...figures.map((f) => {
        const values = Object.values(f.idleMs);
        return pct(
          values.reduce((a, b) => a + b, 0),
          values.length * f.wallMs,
        );
      }),
    ],
    ...(Object.keys(IDLE_CAUSES) as IdleCause[]).map((cause) => [
      `  idle, all circuits: ${IDLE_CAUSES[cause]}`,
      ...figures.map((f) => s(f.idleByCause[cause])),
    ]),
    ['turns granted', ...figures.map((f) => String(f.turns))],
    [
      'turns passed on untaken / missed / entries removed',
      ...figures.map((f) => `${f.passedOn} / ${f.missed} / ${f.removed}`),
    ],
    ['turns missed by contributors who were there', ...figures.map((f) => String(f.missedWhileThere.length))],
    ['finished (of those who stayed or came back)', ...figures.map((f) => `${f.finished} (${f.expectedToFinish})`)],
    ['audit fairness check', ...figures.map((f) => (f.fairness.ok ? 'passed' : 'FAILED'))],
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows) process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}\n`);
  for (const f of figures) if (!f.fairness.ok) process.stdout.write(`${f.mode}: ${f.fairness.summary}\n`);
  for (const f of figures)
    for (const miss of f.missedWhileThere) process.stdout.write(`${f.mode}: missed while there: ${miss}\n`);
}

export async function queuePresenceBench(options: PresenceOptions, modes: readonly Mode[]): Promise<PresenceFigures[]> {
  // The coordinator and the terminal clients run from dist/: build what is stale.
  const build = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'build.js')], {
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
    const figures: PresenceFigures[] = [];
    for (const mode of modes) figures.push(await runQueuePresence(mode, template, options));
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
      contributors: { type: 'string', default: '60' },
      'absent-every': { type: 'string', default: '5' },
      'return-every': { type: 'string', default: '10' },
      'return-after': { type: 'string', default: '25' },
      only: { type: 'string' },
    },
  });
  const options: PresenceOptions = {
    contributors: Number(values.contributors),
    absentEvery: Number(values['absent-every']),
    returnEvery: Number(values['return-every']),
    returnAfterMs: Number(values['return-after']) * 1000,
  };
  const modes: Mode[] = values.only ? [values.only as Mode] : ['today', 'presence'];
  printQueuePresence(await queuePresenceBench(options, modes), options);
  await releaseBn128();
}
