/**
 * Starts bench/coordinator-child.ts in a child process and watches it from outside: its JSON log
 * lines as they arrive (with the parent's receive time) and its resident set size, sampled from
 * /proc/PID/status (Linux).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';

export interface LogLine {
  message: string;
  /** Epoch ms of the line's own `time` field. */
  time: number;
  [field: string]: unknown;
}

export interface CoordinatorProcess {
  url: string;
  pid: number;
  logs: LogLine[];
  /** Resolves with the first log line (seen so far or later) whose message is `message`. */
  waitForLog(message: string, predicate?: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  stop(): Promise<void>;
}

/** Resident set size of a process in bytes (VmRSS), or undefined once it is gone. */
export function rssOf(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Samples `rssOf(pid)` every `intervalMs` until stopped; `mark` labels the samples that follow. */
export class RssSampler {
  readonly samples: Array<{ t: number; rss: number; phase: string }> = [];
  private phase = 'start';
  private readonly atStart = new Map<string, number>();
  private timer: NodeJS.Timeout;

  constructor(private readonly pid: number, intervalMs = 20) {
    this.timer = setInterval(() => {
      const rss = rssOf(pid);
      if (rss !== undefined) this.samples.push({ t: Date.now(), rss, phase: this.phase });
    }, intervalMs);
  }

  mark(phase: string): void {
    this.phase = phase;
    const rss = rssOf(this.pid);
    if (rss !== undefined) {
      this.atStart.set(phase, rss);
      this.samples.push({ t: Date.now(), rss, phase });
    }
  }

  /** Peak of the phase minus the RSS when it began: what the phase itself added. */
  growth(phase: string): number {
    return Math.max(0, this.peak(phase) - (this.atStart.get(phase) ?? this.peak(phase)));
  }

  peak(phase: string): number {
    return Math.max(0, ...this.samples.filter((s) => s.phase === phase).map((s) => s.rss));
  }

  median(phase: string): number {
    const values = this.samples.filter((s) => s.phase === phase).map((s) => s.rss).sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)] ?? 0;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

export async function startCoordinatorProcess(dataDir: string, extraArgs: string[] = []): Promise<CoordinatorProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench', 'coordinator-child.ts'), '--data', dataDir, ...extraArgs], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: stop() signals the group, so the verifier it forks stops with it.
    detached: true,
  });
  const logs: LogLine[] = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    try {
      const parsed = JSON.parse(line) as { message: string; time: string };
      logs.push({ ...parsed, time: Date.parse(parsed.time) });
      for (const wake of waiters.splice(0)) wake();
    } catch {
      process.stderr.write(`[coordinator] ${line}\n`);
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await new Promise<{ url: string; pid: number }>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line)));
    child.once('exit', (code) => reject(new Error(`the coordinator exited with ${code} before it was ready`)));
  });
  return {
    ...ready,
    logs,
    async waitForLog(message, predicate = () => true, timeoutMs = 600_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = logs.find((l) => l.message === message && predicate(l));
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no "${message}" log line from the coordinator within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 1000);
        });
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
  };
}
