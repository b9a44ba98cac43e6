/**
 * A command started in its own process group, as a coordinator starts it from a shell: its output
 * collected, waited on by pattern (never by a fixed sleep), and stopped with everything it forked
 * (npm → sh → node → the embedded verifier) by signalling the whole group.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface GroupProcess {
  child: ChildProcess;
  /** stdout and stderr, interleaved as they came. */
  output(): string;
  /** Resolves with the first match of `pattern` in the output; rejects if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Signals the whole group (SIGKILL of the group after `graceMs`) and waits for it to be gone.
   * `lingered`: some process of the group was still alive when the grace period ended (so only the
   * SIGKILL stopped it): what a test asserts to be false for a clean shutdown.
   */
  stop(
    signal?: NodeJS.Signals,
    graceMs?: number,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; lingered: boolean }>;
}

const running = new Set<GroupProcess>();

/** Kills what a failed test left running (the group, not just the leader). */
export async function stopAllGroups(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop('SIGKILL')));
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

export function startGroup(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; label?: string; input?: string },
): GroupProcess {
  const label = options.label ?? [command, ...args].join(' ');
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  // What the command reads on stdin (then end of input), for commands that ask.
  if (options.input !== undefined) child.stdin!.end(options.input);
  let output = '';
  const watchers = new Set<() => void>();
  const collect = (data: Buffer): void => {
    output += data.toString();
    for (const watcher of [...watchers]) watcher();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  const group: GroupProcess = {
    child,
    output: () => output,
    exited,
    waitFor(pattern, timeoutMs = 120_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`no ${pattern} from \`${label}\` within ${timeoutMs} ms; output:\n${output}`)),
          timeoutMs,
        );
        const finish = (error?: Error, match?: RegExpMatchArray): void => {
          clearTimeout(timer);
          watchers.delete(check);
          if (error) reject(error);
          else resolve(match!);
        };
        const check = (): void => {
          const match = output.match(pattern);
          if (match) finish(undefined, match);
        };
        watchers.add(check);
        void exited.then(() =>
          setImmediate(
            () =>
              watchers.has(check) &&
              finish(new Error(`\`${label}\` exited before printing ${pattern}; output:\n${output}`)),
          ),
        );
        check();
      });
    },
    async stop(signal = 'SIGTERM', graceMs = 15_000) {
      const pid = child.pid;
      signalGroup(pid, signal);
      // The leader (npm, npx) may exit before what it started has finished shutting down: wait for
      // the whole group, and kill what is left after the grace period.
      const deadline = Date.now() + graceMs;
      const result = await exited;
      while (pid !== undefined && groupAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const lingered = signal !== 'SIGKILL' && pid !== undefined && groupAlive(pid);
      signalGroup(pid, 'SIGKILL');
      // Killed processes are gone once reaped.
      const reaped = Date.now() + 10_000;
      while (pid !== undefined && groupAlive(pid) && Date.now() < reaped) await new Promise((r) => setTimeout(r, 50));
      running.delete(group);
      return { ...result, lingered };
    },
  };
  running.add(group);
  return group;
}

/**
 * Whether any process of the group still runs. A zombie does not: it holds no port, file or lock, and
 * it stays listed until reaped. A process the group's leader started (the coordinator's embedded
 * verifier) outlives a group SIGKILL as a zombie handed to PID 1, and an init that reaps in rounds
 * (the CI machine's: about every 1.5 s) would make every kill in a test wait for that round.
 */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
  } catch {
    return false;
  }
  return !onlyZombies(pid);
}

/** Whether every process in group `pgid` is a zombie (Linux's /proc; elsewhere, never said). */
function onlyZombies(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return false;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so read after the last ')'.
    const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(group) === pgid && state !== 'Z') return false;
  }
  return true;
}
