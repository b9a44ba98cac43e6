/**
 * A coordinator in a child process, watched from outside: its JSON log lines as they arrive and
 * its resident set size, sampled from /proc/PID/status (Linux). Either bench/coordinator-child.ts
 * (startCoordinatorProcess: seeds lobbies, reports the coordinator's own pid) or the real
 * `ceremony serve` of the compiled app (startCeremonyServe).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { groupAlive } from '../tests/helpers/process-group.ts';
import { procStatusBytes } from './process-tree-sampler.ts';

export interface LogLine {
  message: string;
  /** Epoch ms of the line's own `time` field. */
  time: number;
  [field: string]: unknown;
}

export interface CoordinatorProcess {
  url: string;
  /** The coordinator's own process (whose RSS the transfer bench samples). */
  pid: number;
  /** Its process group (the coordinator and the verifier it forks): what stop() signals. */
  groupId: number;
  logs: LogLine[];
  /** Resolves with the first log line (seen so far or later) whose message is `message`. */
  waitForLog(message: string, predicate?: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  stop(): Promise<void>;
}

/** Resident set size of a process in bytes (VmRSS), or undefined once it is gone. */
export function rssOf(pid: number): number | undefined {
  return procStatusBytes(pid, 'VmRSS');
}

/** Samples `rssOf(pid)` every `intervalMs` until stopped; `mark` labels the samples that follow. */
export class RssSampler {
  readonly samples: Array<{ t: number; rss: number; phase: string }> = [];
  private phase = 'start';
  private readonly atStart = new Map<string, number>();
  private timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    intervalMs = 20,
  ) {
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
    const values = this.samples
      .filter((s) => s.phase === phase)
      .map((s) => s.rss)
      .sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)] ?? 0;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

export async function startCoordinatorProcess(dataDir: string, extraArgs: string[] = []): Promise<CoordinatorProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(REPO_ROOT, 'bench', 'coordinator-child.ts'), '--data', dataDir, ...extraArgs],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: stop() signals the group, so the verifier it forks stops with it.
      detached: true,
    },
  );
  return watchCoordinator(
    child,
    (stdout, exited) =>
      new Promise<{ url: string; pid: number }>((resolve, reject) => {
        stdout.once('line', (line) => resolve(JSON.parse(line)));
        void exited.then((code) => reject(new Error(`the coordinator exited with ${code} before it was ready`)));
      }),
  );
}

/**
 * The real coordinator as an operator runs it: `ceremony serve` from the compiled app (bin/ceremony.js
 * → dist/; the caller builds first), on loopback with a free port, the ceremony open, an embedded
 * verifier, the demo sign-in of a test network, in its own process group (stop() ends the
 * verifier with it). Refuses to run the TypeScript sources (a stale dist/ would time tsx).
 * `env` adds to the environment (e.g. TURN_TIMEOUT_MS).
 *
 * It runs at a lower priority (nice 10, its verifier and threads with it). In a ceremony the
 * coordinator has its own machine; here it shares the contributor's cores, and while a delta
 * uploads it splices and sums it (server/files/delta-intake.ts), which would otherwise slow the
 * contributor's computation by what a second machine never takes from it. Niced, it takes the
 * cycles the contributor leaves idle; after the last byte the contributor only waits, so the
 * coordinator's share is not slowed.
 */
export async function startCeremonyServe(
  dataDir: string,
  env: NodeJS.ProcessEnv = {},
  /** The checkout whose compiled app runs (another build of the coordinator, for a before/after bench). */
  root = REPO_ROOT,
): Promise<CoordinatorProcess> {
  // `nice` execs node in place: the child's pid (the process group) is the coordinator's.
  const child: ChildProcess = spawn(
    'nice',
    [
      '-n',
      '10',
      process.execPath,
      path.join(root, 'bin', 'ceremony.js'),
      'serve',
      '--data',
      dataDir,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--open',
    ],
    {
      cwd: root,
      env: { ...inheritedEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  return watchCoordinator(child, (stdout, exited, stderrText) =>
    new Promise<{ url: string; pid: number }>((resolve, reject) => {
      stdout.on('line', (line) => {
        const url = /^coordinator listening on (\S+)/.exec(line)?.[1];
        if (url) resolve({ url, pid: child.pid! });
      });
      void exited.then((code) =>
        reject(new Error(`ceremony serve exited with ${code} before it listened:\n${stderrText()}`)),
      );
    }).then((ready) => {
      if (/running the sources through tsx/.test(stderrText()))
        throw new Error('dist/ is stale (ceremony serve ran the sources through tsx): build first');
      return ready;
    }),
  );
}

/** This process's environment without the settings that would make it another coordinator than described above. */
function inheritedEnv(): NodeJS.ProcessEnv {
  const { REDIS_URL, DATABASE_FILE, PUBLIC_URL, DEMO_SIGN_IN, CEREMONY_DATA, PORT, HOST, ...rest } = process.env;
  return rest;
}

/** A coordinator started by `start`: its JSON log lines collected, stopped by its process group. */
async function watchCoordinator(
  child: ChildProcess,
  ready: (
    stdout: ReturnType<typeof createInterface>,
    exited: Promise<number | null>,
    stderrText: () => string,
  ) => Promise<{ url: string; pid: number }>,
): Promise<CoordinatorProcess> {
  const logs: LogLine[] = [];
  const waiters: Array<() => void> = [];
  let plain = '';
  createInterface({ input: child.stderr! }).on('line', (line) => {
    try {
      const parsed = JSON.parse(line) as { message: string; time: string };
      logs.push({ ...parsed, time: Date.parse(parsed.time) });
      for (const wake of waiters.splice(0)) wake();
    } catch {
      plain += `${line}\n`;
      process.stderr.write(`[coordinator] ${line}\n`);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stopGroup = async (): Promise<void> => {
    const signal = (name: NodeJS.Signals): void => {
      try {
        process.kill(-child.pid!, name);
      } catch {
        // the group is gone already
      }
    };
    if (child.exitCode === null && child.signalCode === null) signal('SIGTERM');
    // The verifier may outlive the leader for a moment: the whole group goes, killed if it lingers.
    const deadline = Date.now() + 15_000;
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    while (groupAlive(child.pid!) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    signal('SIGKILL');
  };
  let started: { url: string; pid: number };
  try {
    started = await ready(createInterface({ input: child.stdout! }), exited, () => plain);
  } catch (error) {
    await stopGroup();
    throw error;
  }
  return {
    ...started,
    groupId: child.pid!,
    logs,
    async waitForLog(message, predicate = () => true, timeoutMs = 600_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = logs.find((l) => l.message === message && predicate(l));
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`no "${message}" log line from the coordinator within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 1000);
        });
      }
    },
    stop: stopGroup,
  };
}

/**
 * Kills the process group of the coordinator `current()` names when this process exits, whatever
 * the way out; returns the function that stops watching (call it once the coordinator is stopped).
 */
export function killGroupAtExit(current: () => CoordinatorProcess | undefined): () => void {
  const kill = (): void => {
    try {
      const coordinator = current();
      if (coordinator) process.kill(-coordinator.groupId, 'SIGKILL');
    } catch {
      // gone
    }
  };
  process.once('exit', kill);
  return () => process.off('exit', kill);
}
