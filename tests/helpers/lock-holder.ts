/**
 * Another process and a data folder's lock, for the tests (tests/helpers/lock-holder-child.ts is
 * its program). With `ownPidNamespace` it runs under `unshare --pid --fork` as pid 1 of a PID
 * namespace of its own, as the first process of a container does.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';

const CHILD = path.join(import.meta.dirname, 'lock-holder-child.ts');

interface Options {
  ownPidNamespace?: boolean;
  /** false: the kernel lock alone, with no holder's note (as a work folder's owner holds it). */
  note?: boolean;
}

/** Whether this machine lets a test start a process in a PID namespace of its own (it needs root). */
export function pidNamespacesAvailable(): boolean {
  return spawnSync('unshare', ['--pid', '--fork', '--kill-child', 'true']).status === 0;
}

function startChild(mode: 'hold' | 'hold-bare' | 'try', lockPath: string, options: Options) {
  const node = [process.execPath, '--import', 'tsx', CHILD, mode, lockPath];
  const [file, ...args] = options.ownPidNamespace ? ['unshare', '--pid', '--fork', '--kill-child', ...node] : node;
  // Its own process group, so that a kill reaches unshare's child too.
  const child = spawn(file!, args, { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  async function nextLine(what: string): Promise<string> {
    const line = await lines.next();
    if (line.done) throw new Error(`the lock test's child exited (${await exited}) before ${what}`);
    return line.value;
  }
  async function ownPid(): Promise<number> {
    const match = /^pid (\d+)$/.exec(await nextLine('saying its pid'));
    if (!match) throw new Error('the lock test child did not say its pid');
    return Number(match[1]);
  }
  return { child, exited, nextLine, ownPid };
}

export interface LockHolder {
  /** Its pid as it sees it (1 in a namespace of its own). */
  pid: number;
  /** It is done: it releases the lock and exits. */
  release(): Promise<void>;
  /** kill -9, the lock still held; a no-op once it has exited. */
  kill(): Promise<void>;
}

/** Resolves once the other process holds the lock. */
export async function startLockHolder(lockPath: string, options: Options = {}): Promise<LockHolder> {
  const { child, exited, nextLine, ownPid } = startChild(
    options.note === false ? 'hold-bare' : 'hold',
    lockPath,
    options,
  );
  let ended = false;
  void exited.then(() => (ended = true));
  const pid = await ownPid();
  if ((await nextLine('holding the lock')) !== 'held') throw new Error('the lock holder did not take the lock');
  return {
    pid,
    async release() {
      child.stdin!.end();
      if ((await exited) !== 0) throw new Error('the lock holder failed to release the lock');
    },
    async kill() {
      if (ended) return;
      process.kill(-child.pid!, 'SIGKILL');
      await exited;
    },
  };
}

export interface LockAttempt {
  pid: number;
  result: 'entered' | 'refused';
  code?: string;
  message?: string;
}

/** Another process tries the lock once. */
export async function tryLockFromAnotherProcess(lockPath: string, options: Options = {}): Promise<LockAttempt> {
  const { child, exited, nextLine, ownPid } = startChild('try', lockPath, options);
  child.stdin!.end();
  const pid = await ownPid();
  const attempt = JSON.parse(await nextLine('trying the lock')) as Omit<LockAttempt, 'pid'>;
  if ((await exited) !== 0) throw new Error('the lock test child failed');
  return { pid, ...attempt };
}
