/**
 * CPU time and memory of a whole process tree (Linux /proc), sampled every few tens of ms: the
 * processes whose parent chain leads to the root, and those in the root's process group (a
 * helper that daemonised, such as Chromium's crashpad handler, keeps the group). For a browser
 * this is every Chromium process of one launch: browser, zygotes, renderers, GPU, network and
 * storage services; the page's Web Workers are threads of its renderer, counted with it.
 *
 * Memory is PSS (proportional set size, /proc/PID/smaps_rollup): each shared page is divided
 * among the processes mapping it, so the sum over a tree counts the binary, fonts and shared
 * memory once. RSS counts a shared page in full in every process that maps it (Chromium's
 * processes share a lot), so summed it overstates the tree; it is sampled too, for comparison.
 *
 * CPU is utime + stime (/proc/PID/stat, all threads), summed over every process ever seen, each
 * at its last reading, so a process that exits between samples keeps what it used until then (a
 * process that starts and ends between two scans of the tree, a second apart, is not seen).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';

export interface TreeSample {
  /** Epoch ms. */
  t: number;
  /** CPU seconds used by the tree since the sampler started watching it. */
  cpuSeconds: number;
  /** Summed PSS, on the samples that read it (smaps_rollup is costly: see ProcessTreeSampler). */
  pssBytes?: number;
  /** PSS by kind of process (a Chromium process's --type: renderer, gpu-process, network…), with pssBytes. */
  pssByKind?: Record<string, number>;
  /** Summed RSS (cheap: statm), on every sample. */
  rssBytes: number;
  processes: number;
}

function getconf(name: string, fallback: number): number {
  try {
    return Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim()) || fallback;
  } catch {
    return fallback;
  }
}

/** Clock ticks per second of /proc/PID/stat (100 on Linux), and the page size of /proc/PID/statm. */
const CLOCK_TICKS = getconf('CLK_TCK', 100);
const PAGE_BYTES = getconf('PAGESIZE', 4096);
/** A rise of the summed RSS past its highest by this much triggers a PSS reading. */
const RISE_BYTES = 16 * 1024 * 1024;

/** A memory figure of /proc/PID/status in bytes (VmRSS resident now, VmHWM its peak), or undefined once it is gone. */
export function procStatusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

interface ProcStat {
  pid: number;
  ppid: number;
  pgrp: number;
  cpuTicks: number;
}

/** A /proc …/stat line (a process's or a thread's): its name, the fields after it, its CPU ticks. */
function parseStat(text: string): { name: string; fields: string[]; cpuTicks: number } {
  // The command name (field 2) is in parentheses and may hold spaces: fields are counted after its ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14, stime 15.
  const cpuTicks = Number(fields[11]) + Number(fields[12]);
  return { name: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), fields, cpuTicks };
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const { fields, cpuTicks } = parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    // ppid is field 4, pgrp 5.
    return { pid, ppid: Number(fields[1]), pgrp: Number(fields[2]), cpuTicks };
  } catch {
    return undefined; // gone
  }
}

/** PSS of one process in bytes (smaps_rollup), or undefined once it is gone. */
function readPss(pid: number): number | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    return Number(/^Pss:\s+(\d+) kB/m.exec(text)?.[1] ?? 0) * 1024;
  } catch {
    return undefined;
  }
}

/**
 * What a process is, from its command line: a Chromium child's `--type` (a utility process's
 * `--utility-sub-type`, its last name: network, storage, audio), `browser` for Chromium's own, else
 * the executable's name.
 */
function processKind(pid: number): string {
  try {
    // Chromium rewrites its command line into one string, its arguments joined by spaces.
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
    const flag = (name: string): string | undefined =>
      args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
    const type = flag('type');
    if (type === 'utility') return (flag('utility-sub-type') ?? 'utility').split('.').at(-1)!.toLowerCase();
    if (type) return type;
    const executable = path.basename(args[0] ?? '');
    if (/chrom/i.test(executable)) return 'browser';
    // Node processes differ by their script (the coordinator and its embedded verifier are both node).
    if (executable === 'node' && args[1] && !args[1].startsWith('-')) return path.basename(args[1]);
    return executable;
  } catch {
    return 'gone';
  }
}

/** RSS of one process in bytes (statm: cheap), or undefined once it is gone. */
function readRss(pid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * PAGE_BYTES;
  } catch {
    return undefined;
  }
}

/** Every process of the tree under `root` (itself included) and of its process group. */
export function processTree(root: number): ProcStat[] {
  const all: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat) all.push(stat);
  }
  const byParent = new Map<number, ProcStat[]>();
  for (const stat of all) byParent.set(stat.ppid, [...(byParent.get(stat.ppid) ?? []), stat]);
  const found = new Map<number, ProcStat>();
  const visit = (stat: ProcStat): void => {
    if (found.has(stat.pid)) return;
    found.set(stat.pid, stat);
    for (const child of byParent.get(stat.pid) ?? []) visit(child);
  };
  for (const stat of all) if (stat.pid === root || stat.pgrp === root) visit(stat);
  return [...found.values()];
}

/**
 * Samples a tree: CPU and RSS every `intervalMs` (cheap reads of the processes known), the tree
 * itself and its PSS every `pssIntervalMs`, and both whenever `sample()` is called (a bench calls
 * it at each stage of its work, where memory moves). PSS is read less often because it costs: the
 * kernel walks every mapping's page tables for smaps_rollup, about 45 ms of CPU for the nine
 * processes of an idle Chromium, which at 100 ms would take a good part of a core from the
 * browser being measured; once a second (and when RSS climbs to a new high) it takes a few % of one.
 */
export class ProcessTreeSampler {
  readonly samples: TreeSample[] = [];
  private readonly lastTicks = new Map<number, number>();
  private readonly startTicks = new Map<number, number>();
  private tree: ProcStat[];
  private readonly timers: NodeJS.Timeout[];
  /** The highest summed RSS so far: a cheap reading that rises past it triggers a PSS reading. */
  private highestRss = 0;
  /** False for a tree watched for its CPU only: its PSS is not read (pssBytes stays 0). */
  private readonly readsPss: boolean;
  /** PSS samples also sum PSS by kind of process (pssByKind). */
  private readonly byKind: boolean;
  private readonly kinds = new Map<number, string>();
  /** Also read each thread's CPU at every sample (threadCpuSeconds): where a browser's CPU goes. */
  private readonly byThread: boolean;
  /** Each thread's ticks, first and last seen, with its name in its group ("main", "DedicatedWorker"). */
  private readonly threads = new Map<string, { name: string; first: number; last: number }>();

  constructor(
    private readonly root: number,
    options: {
      intervalMs?: number;
      pssIntervalMs?: number;
      readPss?: boolean;
      byKind?: boolean;
      byThread?: boolean;
    } = {},
  ) {
    this.readsPss = options.readPss ?? true;
    this.byKind = options.byKind ?? false;
    this.byThread = options.byThread ?? false;
    // The first reading is the zero of the CPU count: what the tree used before is not ours.
    this.tree = processTree(root);
    for (const stat of this.tree) this.startTicks.set(stat.pid, stat.cpuTicks);
    this.sample();
    // Unreferenced: a sampler left running by a bench that failed must not keep it alive.
    this.timers = [
      setInterval(() => this.sample(false), options.intervalMs ?? 100).unref(),
      setInterval(() => this.sample(), options.pssIntervalMs ?? 1000).unref(),
    ];
  }

  /**
   * Takes a sample now, with PSS unless `withPss` is false, and returns it. A sample without PSS
   * whose RSS tops the highest so far by RISE_BYTES reads PSS too: memory peaks are where the
   * tree grows, and a short one (a key copied, then freed) could fall between two timed readings.
   */
  sample(withPss = true): TreeSample {
    if (withPss) this.tree = processTree(this.root);
    let pss = 0;
    let rss = 0;
    let alive = 0;
    const byKind: Record<string, number> = {};
    for (const known of this.tree) {
      const stat = withPss ? known : readStat(known.pid);
      if (!stat) continue;
      alive++;
      this.lastTicks.set(stat.pid, stat.cpuTicks);
      if (this.byThread) this.readThreads(stat.pid);
      rss += readRss(stat.pid) ?? 0;
      if (withPss && this.readsPss) {
        const own = readPss(stat.pid) ?? 0;
        pss += own;
        if (this.byKind) {
          const kind = this.knowKind(stat.pid);
          byKind[kind] = (byKind[kind] ?? 0) + own;
        }
      }
    }
    if (!withPss && this.readsPss && rss > this.highestRss + RISE_BYTES) return this.sample(true);
    this.highestRss = Math.max(this.highestRss, rss);
    let ticks = 0;
    for (const [pid, last] of this.lastTicks) ticks += last - (this.startTicks.get(pid) ?? 0);
    const sample: TreeSample = {
      t: Date.now(),
      cpuSeconds: ticks / CLOCK_TICKS,
      rssBytes: rss,
      processes: alive,
      ...(withPss ? { pssBytes: pss } : {}),
      ...(withPss && this.byKind ? { pssByKind: byKind } : {}),
    };
    this.samples.push(sample);
    return sample;
  }

  /**
   * The process's kind, read once; a zygote's is read again until it is another. Chromium forks
   * its renderers from a zygote, and a renderer read just after the fork still shows the zygote's
   * command line: kept, its CPU would be counted as the zygote's.
   */
  private knowKind(pid: number): string {
    let kind = this.kinds.get(pid);
    if (kind === undefined || kind === 'zygote') {
      kind = processKind(pid);
      this.kinds.set(pid, kind);
    }
    return kind;
  }

  /**
   * Reads the CPU of each of a process's threads. A thread first seen at the sampler's start
   * counts from there; one first seen later started since (or its process joined the tree since)
   * and counts whole. A thread that ends keeps its last reading, up to `intervalMs` short.
   */
  private readThreads(pid: number): void {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      return; // gone
    }
    this.knowKind(pid);
    for (const tid of tids) {
      let stat: ReturnType<typeof parseStat>;
      try {
        stat = parseStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
      } catch {
        continue; // ended
      }
      const key = `${pid}/${tid}`;
      const known = this.threads.get(key);
      if (known) {
        known.last = stat.cpuTicks;
        continue;
      }
      // Chromium names its threads (15 characters at most here); numbered ones are grouped. A
      // process's main thread bears the process's name, and Node leaves every thread that name,
      // so the main thread is called so and Node's others (kernel threads, libuv's pool) "threads".
      const name = Number(tid) === pid ? 'main' : stat.name.replace(/[\d/:#-]+$/, '');
      const first = this.samples.length === 0 ? stat.cpuTicks : 0;
      this.threads.set(key, { name: name === 'node' ? 'threads' : name, first, last: stat.cpuTicks });
    }
  }

  /**
   * CPU seconds by thread group (a process's kind and a thread's name: "renderer DedicatedWorker"),
   * since the sampler started, with what each process's threads that were never sampled used
   * ("renderer threads ended unsampled"); empty unless it was made with `byThread`. Two readings
   * subtracted give a span's.
   */
  threadCpuSeconds(): Map<string, number> {
    const groups = new Map<string, number>();
    const add = (group: string, ticks: number): void =>
      void groups.set(group, (groups.get(group) ?? 0) + ticks / CLOCK_TICKS);
    // A process's own figure counts its ended threads too: what its threads seen do not hold was
    // spent by threads that began and ended between two samples (a short turn's workers).
    const unseen = new Map<number, number>();
    for (const [key, thread] of this.threads) {
      const pid = Number(key.split('/')[0]);
      add(`${this.kinds.get(pid)} ${thread.name}`, thread.last - thread.first);
      unseen.set(pid, (unseen.get(pid) ?? 0) + thread.last - thread.first);
    }
    for (const [pid, seen] of unseen) {
      const own = (this.lastTicks.get(pid) ?? 0) - (this.startTicks.get(pid) ?? 0);
      if (own > seen) add(`${this.kinds.get(pid)} threads ended unsampled`, own - seen);
    }
    return groups;
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
  }

  /** The samples taken from `from` to `to` (epoch ms, inclusive). */
  between(from: number, to: number): TreeSample[] {
    return this.samples.filter((s) => s.t >= from && s.t <= to);
  }

  /** The sample with the largest PSS from `from` to `to` (of those that read it). */
  peak(from: number, to: number): TreeSample | undefined {
    return this.between(from, to).reduce<TreeSample | undefined>(
      (best, s) => (s.pssBytes !== undefined && (best === undefined || s.pssBytes > best.pssBytes!) ? s : best),
      undefined,
    );
  }

  /** The largest summed RSS from `from` to `to`. */
  peakRss(from: number, to: number): number {
    return Math.max(0, ...this.between(from, to).map((s) => s.rssBytes));
  }

  /** CPU seconds ÷ wall seconds from `from` to `to`: how many cores the tree kept busy on average. */
  coresBusy(from: number, to: number): number {
    return coresBusyOver(this.samples, from, to);
  }
}

/** CPU seconds of timed samples at time `t`, from the samples around it (linear between them). */
function cpuAt(samples: ReadonlyArray<{ t: number; cpuSeconds: number }>, t: number): number {
  const after = samples.findIndex((s) => s.t >= t);
  if (after === -1) return samples.at(-1)?.cpuSeconds ?? 0;
  const b = samples[after]!;
  const a = samples[after - 1];
  if (a === undefined || b.t === a.t) return b.cpuSeconds;
  return a.cpuSeconds + ((b.cpuSeconds - a.cpuSeconds) * (t - a.t)) / (b.t - a.t);
}

function coresBusyOver(samples: ReadonlyArray<{ t: number; cpuSeconds: number }>, from: number, to: number): number {
  return to > from ? (cpuAt(samples, to) - cpuAt(samples, from)) / ((to - from) / 1000) : 0;
}

/** The machine's busy CPU seconds (/proc/stat: every state but idle and iowait), all cores. */
export function machineBusySeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is counted in user already).
  const busy = fields.slice(0, 8).reduce((sum, ticks, i) => (i === 3 || i === 4 ? sum : sum + ticks), 0);
  return busy / CLOCK_TICKS;
}

/**
 * How busy the whole machine was, sampled every `intervalMs`: against a tree's own figure it says
 * whether the cores a tree left idle were idle, or taken by something else on the machine.
 */
export class MachineCpuSampler {
  private readonly samples: Array<{ t: number; cpuSeconds: number }> = [];
  private readonly timer: NodeJS.Timeout;

  constructor(intervalMs = 100) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  sample(): void {
    this.samples.push({ t: Date.now(), cpuSeconds: machineBusySeconds() });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Busy cores of the whole machine from `from` to `to`, on average. */
  coresBusy(from: number, to: number): number {
    return coresBusyOver(this.samples, from, to);
  }
}

/** CPU seconds (user + system, every thread) spent so far by the live processes of the tree under `root`. */
export function treeCpuSeconds(root: number): number {
  return processTree(root).reduce((sum, stat) => sum + stat.cpuTicks, 0) / CLOCK_TICKS;
}
