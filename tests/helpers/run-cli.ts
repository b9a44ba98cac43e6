/**
 * The one CLI runner of the tests: the real `ceremony` command (bin/ceremony.js, which runs dist/)
 * in a child process, the way an operator or an auditor runs it, and what came of it as
 * `{code, stdout, stderr}`. For a long-running command that a test waits on and stops (`serve`,
 * `worker`), use a process group instead (tests/helpers/process-group.ts,
 * tests/helpers/worker-process.ts).
 *
 * Options of `runCli(args, options)`, all optional:
 * - `cwd`: the working folder (default: the repository's root).
 * - `env`: variables set over the test's own environment; one set to `undefined` is removed
 *   (e.g. `{ REDIS_URL: undefined }`, so that a CI's setting does not leak into the command).
 * - `timeoutMs`: a guard, 120 s by default: the command is killed (SIGKILL) after it, `code` is
 *   then null and stderr ends with a line saying so, so a hang fails the test with a reason.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';

export interface CliResult {
  /** The exit status; null when the command was killed (by the guard timeout or a signal). */
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
}

export const CEREMONY_BIN = path.join(REPO_ROOT, 'bin', 'ceremony.js');

/** The test's environment with `overrides` applied (an undefined value removes the variable). */
export function environmentWith(overrides: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export function runCli(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CEREMONY_BIN, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      env: environmentWith(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const guard = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(guard);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(guard);
      if (timedOut) stderr += `\n[runCli: \`ceremony ${args.join(' ')}\` killed after ${timeoutMs} ms]\n`;
      resolve({ code, stdout, stderr });
    });
  });
}

/** The non-empty lines of a command's output (so not the empty one after the last newline). */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}
