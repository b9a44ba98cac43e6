/**
 * Runs the real `ceremony` command (bin/ceremony.js) as a child process, the way an auditor does,
 * and captures its exit status and output. A guard timeout turns a hang into a test failure.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CEREMONY_BIN = fileURLToPath(new URL('../../bin/ceremony.js', import.meta.url));

export interface CliRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
}

export async function runCeremony(args: string[], timeoutMs = 60_000): Promise<CliRun> {
  const started = Date.now();
  const child = spawn(process.execPath, [CEREMONY_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const guard = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  clearTimeout(guard);
  return { exitCode, stdout, stderr, elapsedMs: Date.now() - started };
}

/** The stdout lines of a run, without the trailing empty one. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}
