/**
 * The coordinator's own work on a real-shaped circuit, each on the kernel against what it replaced,
 * in the same run:
 *   init      `ceremony init` (compiled; contribution 0 on the kernel) against `snarkjs zkey new`
 *             (its CLI), each a child process: wall time, the peak RSS of every process (VmHWM),
 *             and the two keys' BLAKE2b-512 (they must be equal: init is byte for byte snarkjs's);
 *   finalise  `ceremony finalise` (compiled; the beacon on the kernel, the link check from the
 *             head) against today's finalise before it (snarkjs's `zkey beacon`, then the check
 *             from contribution 0, verifyLinkFromInit, then the same hash and exports), on a head
 *             with one contribution (made by `contributeLocally`); the two final keys must be equal.
 * Each side's CPU time (every thread) is printed beside its wall time, and the kernel commands'
 * stage timings (CEREMONY_STAGE_TIMES=1, core/runtime/stage-timings.ts) after them, with the
 * before-finalise's own stages. Only the circuit's r1cs and ptau are needed (cached): no snarkjs
 * chain is built beforehand.
 *
 * Usage: tsx bench/coordinator-work.ts [--circuit rs18 | --circuit P (a generated real-shaped circuit of domain 2^P)]
 *                                      [--skip-snarkjs]
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as snarkjs from 'snarkjs';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { hashFile } from '../core/crypto/file-hash.ts';
import { ceremonyPaths } from '../core/data-folder/ceremony-paths.ts';
import { verifyLinkFromInit } from '../core/link-check/verify-link-from-init.ts';
import { exportSolidityVerifier } from '../core/finalise/solidity-verifier.ts';
import { FINAL_BEACON_NAME } from '../core/finalise/finalise-ceremony.ts';
import { REPO_ROOT, TEST_BEACON, TEST_BEACON_ITERATIONS } from '../tests/fixtures/ceremony-fixture.ts';
import { devPtau } from '../tests/fixtures/ceremony-fixture.ts';
import { contributeLocally } from '../core/ceremony/extend-chain.ts';
import { benchLog as log, ptauPowerFor, REAL_SHAPED_PTAU_POWER, REAL_SHAPES, realShapedR1cs } from './bench-chain.ts';
import { BENCH_PUBLIC_INPUTS, generateRealShapedCircuit } from './generate-circuit.ts';

interface Chain {
  name: string;
  publicInputs: number;
  r1cs: string;
  ptau: string;
}
import { finaliseArgv, megabytes, runStage, seconds, type StageResult } from './stage-run.ts';
import { STAGE_TIME_PREFIX } from '../core/runtime/stage-timings.ts';
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';
import { parseBenchArgs } from './bench-args.ts';

const CIRCUIT = 'mul';
const quiet: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };

export interface CoordinatorWorkFigures {
  circuit: string;
  keyBytes: number;
  init: { kernel: StageResult; snarkjs?: StageResult; sameBytes?: boolean };
  finalise: { kernel: StageResult; before?: { ms: number; cpuMs: number; stages: StageTimes }; sameBytes?: boolean };
}

/** Each stage's wall time (ms) by scope then stage, in the order reported. */
type StageTimes = Map<string, Map<string, number>>;

/**
 * Each child reports its CPU time (every thread's, user and system) as it exits: on a machine
 * others share, CPU time moves far less with their load than wall time does.
 */
const CPU_TIME_REPORT = `data:text/javascript,${encodeURIComponent(
  'process.on("exit",()=>{const u=process.cpuUsage();' +
    'process.stderr.write(`cpu-time ${((u.user+u.system)/1000).toFixed(0)} ms\\n`)})',
)}`;
const CPU_TIME_ENV = { NODE_OPTIONS: `--import=${CPU_TIME_REPORT}` };

/** The kernel commands also report where their time goes (core/runtime/stage-timings.ts). */
const STAGE_TIMES_ENV = { ...CPU_TIME_ENV, CEREMONY_STAGE_TIMES: '1' };

/** The CPU time a child reported (CPU_TIME_ENV), in ms. */
function cpuTime(stage: StageResult): number | undefined {
  const match = /^cpu-time (\d+) ms$/m.exec(stage.stderr);
  return match ? Number(match[1]) : undefined;
}

/** The `stage-time <scope>: <stage> <ms> ms` lines of a command's stderr. */
function stageTimes(stderr: string): StageTimes {
  const times: StageTimes = new Map();
  for (const match of stderr.matchAll(new RegExp(`^${STAGE_TIME_PREFIX} (.+?): (.+) (\\d+) ms$`, 'gm'))) {
    const scope = times.get(match[1]!) ?? new Map<string, number>();
    scope.set(match[2]!, (scope.get(match[2]!) ?? 0) + Number(match[3]));
    times.set(match[1]!, scope);
  }
  return times;
}

/** A one-circuit test-network ceremony folder on the chain's r1cs and ptau, not initialised. */
async function ceremonyFolder(chain: Chain): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-coordinator-work-'));
  await mkdir(path.join(dir, 'circuits'));
  await mkdir(path.join(dir, 'ptau'));
  await symlink(chain.r1cs, path.join(dir, 'circuits', `${CIRCUIT}.r1cs`));
  await symlink(chain.ptau, path.join(dir, 'ptau', 'dev.ptau'));
  const config = {
    id: `bench-coordinator-work-${chain.name.replace(/[^a-z0-9]+/g, '-')}`,
    title: 'coordinator work benchmark',
    testNetwork: true,
    ptau: 'ptau/dev.ptau',
    circuits: [
      { name: CIRCUIT, verifier: 'VerifierMul', publicInputs: chain.publicInputs, r1cs: `circuits/${CIRCUIT}.r1cs` },
    ],
  };
  await writeFile(path.join(dir, 'ceremony.json'), JSON.stringify(config, null, 2));
  return dir;
}

/**
 * Finalise as it was before the kernel, per circuit: snarkjs's beacon, the check from contribution 0,
 * the hash, the exports.
 */
async function finaliseBefore(
  chain: Chain,
  z0: string,
  head: string,
  out: string,
): Promise<{ ms: number; cpuMs: number; stages: StageTimes }> {
  const started = performance.now();
  // This process's every thread: ffjavascript's workers are threads of it.
  const cpu = process.cpuUsage();
  const stages = new Map<string, number>();
  let at = started;
  const lap = (stage: string): void => {
    const now = performance.now();
    stages.set(stage, now - at);
    at = now;
  };
  const made = await snarkjs.zKey.beacon(head, out, FINAL_BEACON_NAME, TEST_BEACON, TEST_BEACON_ITERATIONS, quiet);
  if (!made) throw new Error('snarkjs refused the beacon');
  lap('snarkjs zkey beacon');
  await verifyLinkFromInit({
    initZkeyPath: z0,
    ptauPath: chain.ptau,
    headZkeyPath: head,
    candidatePath: out,
    expect: { kind: 'beacon', beaconHex: TEST_BEACON, iterationsExp: TEST_BEACON_ITERATIONS },
  });
  lap('check from contribution 0 (verifyLinkFromInit)');
  await hashFile(out);
  lap('final key hashed');
  await snarkjs.zKey.exportVerificationKey(out);
  await exportSolidityVerifier(out, 'VerifierMul');
  lap('verification key and Solidity verifier exported');
  const used = process.cpuUsage(cpu);
  return {
    ms: performance.now() - started,
    cpuMs: (used.user + used.system) / 1000,
    stages: new Map([['finalise before', stages]]),
  };
}

/**
 * A real-shaped circuit's r1cs and ptau (cached), or for a number P a generated real-shaped circuit
 * of 2^P − 13 constraints.
 */
async function benchCircuit(name: string): Promise<Chain> {
  if (/^\d+$/.test(name)) {
    const constraints = 2 ** Number(name) - BENCH_PUBLIC_INPUTS - 1;
    const dir = await mkdtemp(path.join(tmpdir(), 'bench-coordinator-work-circuit-'));
    const r1cs = await generateRealShapedCircuit('small', constraints, BENCH_PUBLIC_INPUTS, dir);
    return {
      name: `2^${name}`,
      publicInputs: BENCH_PUBLIC_INPUTS,
      r1cs,
      ptau: await devPtau(ptauPowerFor(constraints)),
    };
  }
  const shape = REAL_SHAPES[name as keyof typeof REAL_SHAPES];
  if (!shape) throw new Error(`unknown circuit "${name}" (known: ${Object.keys(REAL_SHAPES).join(', ')}, or a power)`);
  const r1cs = await realShapedR1cs(name);
  const power = Math.ceil(Math.log2(shape.constraints + shape.publicInputs + 1));
  log(`dev ptau of power ${Math.max(power, REAL_SHAPED_PTAU_POWER)} (cached)`);
  return { name, publicInputs: shape.publicInputs, r1cs, ptau: await devPtau(Math.max(power, REAL_SHAPED_PTAU_POWER)) };
}

export async function runCoordinatorWork(name: string, withSnarkjs: boolean): Promise<CoordinatorWorkFigures> {
  // The finalise before the kernel checks through snarkjs's verifyFromInit, which opens the ptau
  // (for its H check) and never closes it: Node closes that handle on garbage collection with a
  // warning, which the CLI and the worker drop the same way.
  silenceSnarkjsHandleWarnings();
  const build = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'build.js')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (build.status !== 0) throw new Error('the build failed');
  const chain = await benchCircuit(name);
  const dir = await ceremonyFolder(chain);
  const scratch = await mkdtemp(path.join(tmpdir(), 'bench-coordinator-work-keys-'));
  try {
    log(`ceremony init (compiled, kernel) on ${name}`);
    const cli = path.join(REPO_ROOT, 'bin', 'ceremony.js');
    const kernelInit = await runStage([process.execPath, cli, 'init', '--data', dir], {
      cwd: REPO_ROOT,
      env: STAGE_TIMES_ENV,
    });
    if (/running the sources through tsx/.test(kernelInit.stderr)) throw new Error('dist/ is stale: build first');
    const z0 = ceremonyPaths(dir).zkeyPath(CIRCUIT, 0);
    const keyBytes = (await stat(z0)).size;
    const figures: CoordinatorWorkFigures = {
      circuit: name,
      keyBytes,
      init: { kernel: kernelInit },
      finalise: {} as never,
    };
    if (withSnarkjs) {
      log('snarkjs zkey new (its CLI) on the same r1cs and ptau');
      const theirs = path.join(scratch, 'snarkjs-z0.zkey');
      const snarkjsCli = path.join(REPO_ROOT, 'node_modules', 'snarkjs', 'build', 'cli.cjs');
      figures.init.snarkjs = await runStage(
        [process.execPath, snarkjsCli, 'zkey', 'new', chain.r1cs, chain.ptau, theirs],
        { cwd: REPO_ROOT, env: CPU_TIME_ENV },
      );
      figures.init.sameBytes = (await hashFile(theirs)) === (await hashFile(z0));
      await rm(theirs, { force: true });
    }

    log('one contribution on it (ceremony contribute on the kernel, as a local contributor)');
    await contributeLocally(dir, CIRCUIT, 'bench');
    log('ceremony finalise (compiled: the beacon on the kernel, the link check from the head)');
    figures.finalise.kernel = await runStage(finaliseArgv(dir), { cwd: REPO_ROOT, env: STAGE_TIMES_ENV });
    if (withSnarkjs) {
      log("today's finalise before it: snarkjs zkey beacon, then the check from contribution 0");
      const before = path.join(scratch, 'final-before.zkey');
      const head = ceremonyPaths(dir).zkeyPath(CIRCUIT, 1);
      figures.finalise.before = await finaliseBefore(chain, z0, head, before);
      figures.finalise.sameBytes =
        (await hashFile(before)) === (await hashFile(ceremonyPaths(dir).finalZkeyPath(CIRCUIT)));
    }
    return figures;
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  }
}

export function printCoordinatorWork(f: CoordinatorWorkFigures): void {
  const peak = (r: StageResult): string => `${r.peaks[0]?.name ?? '?'} ${megabytes(r.peaks[0]?.bytes ?? 0)}`;
  const time = (r: StageResult): string => seconds(r.ms).padStart(9);
  const ratio = (a: number, b: number): string => `${(a / b).toFixed(2).padStart(8)}×`;
  const cpu = (kernel: number | undefined, before: number | undefined): string =>
    kernel === undefined || before === undefined
      ? '  CPU time: not reported'
      : `  CPU time (every thread): kernel ${seconds(kernel)}, before ${seconds(before)}, ` +
        `before ÷ kernel ${(before / kernel).toFixed(2)}×`;
  const lines = [
    '',
    `the coordinator's work on ${f.circuit} (key ${megabytes(f.keyBytes)}), same run`,
    `  init, ceremony init (kernel)         ${time(f.init.kernel)}   peak RSS ${peak(f.init.kernel)} = ` +
      `${((f.init.kernel.peaks[0]?.bytes ?? 0) / f.keyBytes).toFixed(2)} × key (goal ≤ 1.5)`,
  ];
  if (f.init.snarkjs) {
    lines.push(
      `  init, snarkjs zkey new (its CLI)     ${time(f.init.snarkjs)}   peak RSS ${peak(f.init.snarkjs)} = ` +
        `${((f.init.snarkjs.peaks[0]?.bytes ?? 0) / f.keyBytes).toFixed(2)} × key`,
      `  snarkjs ÷ kernel                     ${ratio(f.init.snarkjs.ms, f.init.kernel.ms)}   (goal ≥ 5); ` +
        `the same key byte for byte: ${f.init.sameBytes ? 'yes' : 'NO'}`,
      cpu(cpuTime(f.init.kernel), cpuTime(f.init.snarkjs)),
    );
  }
  lines.push(`  finalise, ceremony finalise (kernel) ${time(f.finalise.kernel)}   peak RSS ${peak(f.finalise.kernel)}`);
  if (f.finalise.before) {
    lines.push(
      '  finalise before (snarkjs beacon + check from contribution 0, in this process) ' +
        seconds(f.finalise.before.ms),
      `  before ÷ kernel                      ${ratio(f.finalise.before.ms, f.finalise.kernel.ms)}   (goal ≥ 4); ` +
        `the same final key byte for byte: ${f.finalise.sameBytes ? 'yes' : 'NO'}`,
      cpu(cpuTime(f.finalise.kernel), f.finalise.before.cpuMs),
    );
  }
  lines.push('', '  where the time goes (wall time of each stage; overlapping stages each count their own)');
  for (const times of [
    stageTimes(f.init.kernel.stderr),
    stageTimes(f.finalise.kernel.stderr),
    f.finalise.before?.stages ?? new Map(),
  ])
    for (const [scope, stages] of times) {
      lines.push(`    ${scope}`);
      for (const [stage, ms] of stages) lines.push(`      ${stage.padEnd(60)} ${seconds(ms).padStart(9)}`);
    }
  lines.push(
    '',
    "  (the kernel figures include each command's start-up, checks, transcript and, for finalise, the verification",
    "   key and Solidity verifier; 'before' includes the same hash and exports. Both on the machine's cores.)",
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: { circuit: { type: 'string', default: 'rs18' }, 'skip-snarkjs': { type: 'boolean', default: false } },
  });
  printCoordinatorWork(await runCoordinatorWork(values.circuit!, !values['skip-snarkjs']));
  await releaseBn128();
}
