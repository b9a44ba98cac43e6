/**
 * A stage of a benchmark run as a child process, watched from outside: its wall time and the peak
 * resident set of every process of its tree (VmHWM of /proc/PID/status, the kernel's own high-water
 * mark of each process, read while it lives (every 200 ms for a stage's first 10 s, then every
 * second), so a peak between two readings is not missed; threads count with their process). The
 * child runs in its own process group, which is killed when the stage ends, fails or the bench
 * exits. And the table the whole-ceremony benches print: each stage's time against its floor, with
 * the peaks.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { REPO_ROOT, TEST_BEACON, TEST_BEACON_ITERATIONS } from '../tests/fixtures/ceremony-fixture.ts';
import { processTree, procStatusBytes } from './process-tree-sampler.ts';
import { STAGE_TIME_PREFIX } from '../core/runtime/stage-timings.ts';

/** The compiled app's `ceremony` command, as a stage's argv: `[node, bin/ceremony.js, ...args]`. */
export function ceremonyArgv(...args: string[]): string[] {
  return [process.execPath, path.join(REPO_ROOT, 'bin', 'ceremony.js'), ...args];
}

/** `ceremony finalise` of a data folder with the tests' beacon. */
export function finaliseArgv(dataDir: string): string[] {
  return ceremonyArgv(
    'finalise',
    '--beacon',
    TEST_BEACON,
    '--iterations',
    String(TEST_BEACON_ITERATIONS),
    '--data',
    dataDir,
  );
}

/** VmHWM of one process in bytes, or undefined once it is gone. */
export function peakRssOf(pid: number): number | undefined {
  return procStatusBytes(pid, 'VmHWM');
}

/** What a process is, for the table: node and its script, or Chromium's kind of process (--type). */
function processName(pid: number): string {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    // Chromium rewrites its command line into one space-separated string.
    const type = /--type=(\S+)/.exec(cmdline)?.[1];
    const subType = /--utility-sub-type=(\S+)/.exec(cmdline)?.[1]?.split('.').at(-2);
    if (type) return `chromium ${subType ?? type}`;
    if (/chrom/.test(cmdline)) return 'chromium';
    const argv = cmdline.split('\0').filter(Boolean);
    const program = argv[0]?.split('/').at(-1) ?? '?';
    if (program !== 'node') return program;
    const script = argv.slice(1).find((a) => !a.startsWith('-') && a !== 'tsx');
    return script ? `node ${script.split('/').slice(-2).join('/')}` : 'node';
  } catch {
    return '?';
  }
}

/** Peak RSS per process of a tree, kept by pid (a process's peak survives its exit). */
export class PeakRssWatcher {
  private readonly peaks = new Map<number, { name: string; bytes: number }>();
  private timer: NodeJS.Timeout;

  /**
   * Reads every `intervalMs` for the first `fastForMs`, then every `slowIntervalMs`. VmHWM is the
   * kernel's own high-water mark, so a slower pace loses nothing of a process that lives on; it only
   * risks a short-lived one ending between two reads, and those start early in a stage. Each read
   * scans /proc, and on a long stage (a 2^22 turn, minutes) reading five times a second took CPU
   * from the very processes being measured.
   */
  constructor(
    private readonly root: number,
    { intervalMs = 200, fastForMs = 10_000, slowIntervalMs = 1000 } = {},
  ) {
    this.timer = setInterval(() => this.read(), intervalMs);
    setTimeout(() => {
      if (this.stopped) return;
      clearInterval(this.timer);
      this.timer = setInterval(() => this.read(), slowIntervalMs);
    }, fastForMs).unref();
    this.read();
  }

  private stopped = false;

  read(): void {
    for (const { pid } of processTree(this.root)) {
      const bytes = peakRssOf(pid);
      if (bytes === undefined) continue;
      const known = this.peaks.get(pid);
      if (!known) this.peaks.set(pid, { name: processName(pid), bytes });
      else known.bytes = Math.max(known.bytes, bytes);
    }
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** Every process seen, largest peak first. */
  processes(): Array<{ pid: number; name: string; bytes: number }> {
    return [...this.peaks.entries()].map(([pid, p]) => ({ pid, ...p })).sort((a, b) => b.bytes - a.bytes);
  }

  /** The largest peak of any one process. */
  largest(): { name: string; bytes: number } {
    return this.processes()[0] ?? { name: 'none', bytes: 0 };
  }
}

export interface StageResult {
  ms: number;
  stdout: string;
  stderr: string;
  peaks: Array<{ pid: number; name: string; bytes: number }>;
}

/** Runs `argv` as a child in its own group, watching its tree's memory; rejects on a non-zero exit. */
export async function runStage(
  argv: string[],
  options: {
    cwd: string;
    env?: NodeJS.ProcessEnv;
    /** Called with the child's pid once it is spawned (to sample it, say). */
    onStart?: (pid: number) => void;
    onLine?: (line: string) => void;
  } = { cwd: process.cwd() },
): Promise<StageResult> {
  const started = performance.now();
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const kill = (): void => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  };
  process.once('exit', kill);
  options.onStart?.(child.pid!);
  const watcher = new PeakRssWatcher(child.pid!);
  let stdout = '';
  let stderr = '';
  createInterface({ input: child.stdout! }).on('line', (line) => {
    stdout += `${line}\n`;
    options.onLine?.(line);
  });
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr += `${line}\n`;
    options.onLine?.(line);
  });
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (c) => {
        watcher.read();
        resolve(c);
      });
    });
    const ms = performance.now() - started;
    if (code !== 0)
      throw new Error(
        `${argv.slice(0, 3).join(' ')} … exited with ${code}:\n${stderr.split('\n').slice(-15).join('\n')}`,
      );
    return { ms, stdout, stderr, peaks: watcher.processes() };
  } finally {
    watcher.stop();
    kill();
    process.off('exit', kill);
  }
}

// ——— the table ——————————————————————————————————————————————————————————————————————————————

export interface StageRow {
  stage: string;
  ms: number;
  /** The floor, in ms, and what it is (the slowest of the stage's compute, download and upload). */
  floor?: { ms: number; what: string };
  /** Peak RSS of each process of the stage, largest first. */
  peaks: Array<{ name: string; bytes: number }>;
  note?: string;
  /** Where its time went: the command's own stage-time lines (CEREMONY_STAGE_TIMES), when it prints them. */
  stageTimes?: string[];
  /**
   * The machine's speed during the stage, by a probe (bench/kernel-speed-probe.ts): `slowdown`, how
   * much slower it ran the kernel than when the floor was taken (1: the same speed), and `floorMs`,
   * the floor with its compute part slowed by as much. A transfer's part is the link's, not the
   * machine's, so a floor set by the upload moves only when the slowed compute overtakes it.
   */
  atMachineSpeed?: { slowdown: number; floorMs: number };
}

/** Set for a command whose stage times a bench prints (core/runtime/stage-timings.ts). */
export const STAGE_TIMES_ENV = { CEREMONY_STAGE_TIMES: '1' };

/** The stage-time lines of a command's stderr, without their prefix. */
export function stageTimeLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith(`${STAGE_TIME_PREFIX} `))
    .map((line) => line.slice(STAGE_TIME_PREFIX.length + 1));
}

const MB = 1024 * 1024;
export const seconds = (ms: number): string =>
  ms < 10_000 ? `${(ms / 1000).toFixed(2)} s` : `${(ms / 1000).toFixed(1)} s`;
export const megabytes = (bytes: number): string => `${(bytes / MB).toFixed(0)} MB`;

/** One line per stage: time, floor, ratio, the largest process and its peak; then every process. */
export function printStageTable(title: string, rows: StageRow[], out: NodeJS.WritableStream = process.stdout): void {
  const lines = [
    '',
    title,
    `${'stage'.padEnd(34)}${'time'.padStart(10)}${'floor'.padStart(10)}${'÷ floor'.padStart(9)}` +
      '  largest process (peak RSS)',
  ];
  for (const row of rows) {
    const largest = row.peaks[0];
    lines.push(
      `${row.stage.padEnd(34)}${seconds(row.ms).padStart(10)}` +
        `${(row.floor ? seconds(row.floor.ms) : '—').padStart(10)}` +
        `${(row.floor ? `${(row.ms / row.floor.ms).toFixed(2)}×` : '—').padStart(9)}  ` +
        (largest ? `${largest.name} ${megabytes(largest.bytes)}` : '—'),
    );
  }
  lines.push('', 'floors:');
  for (const row of rows) if (row.floor) lines.push(`  ${row.stage}: ${row.floor.what}`);
  lines.push('', 'peak RSS of every process (VmHWM):');
  for (const row of rows) {
    const all = row.peaks.map((p) => `${p.name} ${megabytes(p.bytes)}`).join(', ');
    lines.push(`  ${row.stage}: ${all || '—'}${row.note ? `  (${row.note})` : ''}`);
  }
  out.write(`${lines.join('\n')}\n`);
}
