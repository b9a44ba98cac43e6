/**
 * Start-up of the `ceremony` command and the coordinator: the compiled app (bin/ceremony.js →
 * dist/, plain Node) against the TypeScript sources through tsx (what bin/ did before the build).
 * In the sources' figures only the command's own modules go through tsx: the threads and the
 * embedded verifier it starts load dist/, current here (core/runtime/source-entry.js).
 * Each figure is the median of `runs` fresh processes: `ceremony --help`; `ceremony verify-link`
 * on one link of the small `register` test circuit (start-up dominates); `ceremony serve` until it
 * listens, and until its embedded verifier is ready (curve built).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { devPtau, newCeremonyDir, PROJECT_DATA_DIR, REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { initCeremony } from '../core/ceremony/init-ceremony.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';

export interface StartupRow {
  what: string;
  compiledMs: number;
  tsxMs: number;
}

const silent: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };
const COMPILED = [path.join(REPO_ROOT, 'bin', 'ceremony.js')];
const SOURCES = ['--import', 'tsx', path.join(REPO_ROOT, 'cli', 'main.ts')];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function timeCommand(prefix: string[], args: string[]): number {
  const started = performance.now();
  const run = spawnSync(process.execPath, [...prefix, ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  const elapsed = performance.now() - started;
  if (run.status !== 0) throw new Error(`ceremony ${args.join(' ')} exited with ${run.status}: ${run.stderr}`);
  if (/running the sources through tsx/.test(run.stderr))
    throw new Error('dist/ is stale: the compiled figure would be the tsx one');
  return elapsed;
}

/** Milliseconds until `ceremony serve` prints each of `marks`, then stops it (its process group). */
function timeServe(prefix: string[], dataDir: string, marks: RegExp[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...prefix, 'serve', '--data', dataDir, '--port', '0'], {
      cwd: REPO_ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const times: Array<number | undefined> = marks.map(() => undefined);
    let output = '';
    const onData = (data: Buffer): void => {
      output += data.toString();
      marks.forEach((mark, i) => {
        if (times[i] === undefined && mark.test(output)) times[i] = performance.now() - started;
      });
      if (times.every((t) => t !== undefined)) {
        child.stdout!.off('data', onData);
        child.stderr!.off('data', onData);
        process.kill(-child.pid!, 'SIGTERM');
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', reject);
    child.once('exit', () =>
      times.every((t) => t !== undefined)
        ? resolve(times as number[])
        : reject(new Error(`ceremony serve exited early:\n${output}`)),
    );
  });
}

export async function runStartup(runs = 5): Promise<StartupRow[]> {
  const build = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'build.js')], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
  if (build.status !== 0) throw new Error('the build failed');
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-startup-'));
  try {
    const z0 = path.join(dir, 'z0.zkey');
    const z1 = path.join(dir, 'z1.zkey');
    await snarkjs.zKey.newZKey(path.join(PROJECT_DATA_DIR, 'circuits', 'register.r1cs'), await devPtau(), z0, silent);
    await snarkjs.zKey.contribute(z0, z1, 'bench', 'bench entropy', silent);
    const dataDir = await newCeremonyDir({ parentDir: dir });
    await initCeremony(dataDir);
    await releaseBn128();

    const rows: StartupRow[] = [];
    const both = (what: string, measure: (prefix: string[]) => number): void => {
      const compiled: number[] = [];
      const tsx: number[] = [];
      for (let i = 0; i < runs; i++) {
        compiled.push(measure(COMPILED));
        tsx.push(measure(SOURCES));
      }
      rows.push({ what, compiledMs: median(compiled), tsxMs: median(tsx) });
    };
    both('ceremony --help', (prefix) => timeCommand(prefix, ['--help']));
    both('ceremony verify-link (register, 1 link)', (prefix) => timeCommand(prefix, ['verify-link', z0, z1]));
    const serve = { compiled: [] as number[][], tsx: [] as number[][] };
    for (let i = 0; i < runs; i++) {
      serve.compiled.push(await timeServe(COMPILED, dataDir, [/coordinator listening on/, /embedded verifier ready/]));
      serve.tsx.push(await timeServe(SOURCES, dataDir, [/coordinator listening on/, /embedded verifier ready/]));
    }
    rows.push({
      what: 'ceremony serve → listening',
      compiledMs: median(serve.compiled.map((t) => t[0]!)),
      tsxMs: median(serve.tsx.map((t) => t[0]!)),
    });
    rows.push({
      what: 'ceremony serve → verifier ready',
      compiledMs: median(serve.compiled.map((t) => t[1]!)),
      tsxMs: median(serve.tsx.map((t) => t[1]!)),
    });
    return rows;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function printStartup(rows: StartupRow[], runs: number): void {
  process.stdout.write(`\nstart-up (median of ${runs} processes each)\n`);
  process.stdout.write(
    `${'what'.padEnd(40)} ${'compiled (dist/)'.padStart(17)} ` +
      `${'sources (tsx)'.padStart(14)} ${'speed-up'.padStart(9)}\n`,
  );
  for (const row of rows) {
    process.stdout.write(
      `${row.what.padEnd(40)} ` +
        `${`${(row.compiledMs / 1000).toFixed(2)} s`.padStart(17)} ` +
        `${`${(row.tsxMs / 1000).toFixed(2)} s`.padStart(14)} ` +
        `${`${(row.tsxMs / row.compiledMs).toFixed(1)}×`.padStart(9)}\n`,
    );
  }
}
