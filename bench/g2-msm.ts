/**
 * The G2 multi-exponentiation of the audit's check of contribution 0 (Σ ρ_s·B2_s over the key's
 * B2 section, 16-byte scalars), the kernel's (g2MultiExp on its thread pool, what the check runs)
 * next to ffjavascript's `G2.multiExpAffine` (what it ran before), on the same inputs, same run,
 * alternating; the sums are compared before any figure is printed.
 *
 * The points are random points of the order-r subgroup: `--distinct` of them (sums of a few random
 * multiples of the generator, which is fast), repeated to `--points` (default: the rs18 shape's
 * B2, about 233,000 points). The MSM's cost does not depend on the points being distinct, and
 * with random scalars the repeats spread over the buckets as distinct points would.
 *
 * --sweep adds a table of the kernel's CPU time on one thread against its window width, for a slice
 * of the size each pool thread gets: how the window model (msmWindowBits) was checked for G2.
 *
 * Usage: tsx bench/g2-msm.ts [--points N] [--distinct N (default 4096)] [--runs N (default 3)] [--sweep]
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { getBn128, releaseBn128 } from '../core/crypto/bn128.ts';
import { MsmKernel, MSM_POINT_BYTES, msmWindowBits } from '../core/kernel/msm-kernel.ts';
import { closeMultiExp, g2MultiExp } from '../core/kernel/multi-exp.ts';
import { INITIAL_KEY_SCALAR_BYTES } from '../core/audit/check-initial-key.ts';
import { REAL_SHAPES } from './bench-chain.ts';
import { parseBenchArgs } from './bench-args.ts';

const { values } = parseBenchArgs(import.meta.url, {
  options: {
    points: { type: 'string', default: String(REAL_SHAPES.rs18.constraints) },
    distinct: { type: 'string', default: '4096' },
    runs: { type: 'string', default: '3' },
    sweep: { type: 'boolean', default: false },
  },
});
const points = Number(values.points);
const distinct = Math.min(points, Number(values.distinct));
const runs = Number(values.runs);
for (const [name, value] of [
  ['points', points],
  ['distinct', distinct],
  ['runs', runs],
] as const) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
}

const POINT_BYTES = MSM_POINT_BYTES.G2;
const SCALAR_BYTES = INITIAL_KEY_SCALAR_BYTES;
const curve = await getBn128();
const G2 = curve.G2;

/** `count` random subgroup points in the zkey layout: running sums of eight random multiples of g. */
function randomSubgroupPoints(count: number): Uint8Array {
  const seeds = Array.from({ length: 8 }, () => G2.timesScalar(G2.g, randomBytes(32)));
  const out = new Uint8Array(count * POINT_BYTES);
  let p = seeds[0]!;
  for (let i = 0; i < count; i++) {
    p = G2.add(p, seeds[i % seeds.length]!);
    G2.toRprLEM(out, i * POINT_BYTES, G2.toAffine(p));
  }
  return out;
}

const pattern = randomSubgroupPoints(distinct);
const bases = new Uint8Array(points * POINT_BYTES);
for (let first = 0; first < points; first += distinct) {
  bases.set(pattern.subarray(0, Math.min(distinct, points - first) * POINT_BYTES), first * POINT_BYTES);
}
const scalars = new Uint8Array(randomBytes(points * SCALAR_BYTES));

/** Wall time, and the CPU time of the whole process (every thread: the pool's, ffjavascript's workers). */
async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; cpuMs: number; value: T }> {
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  const value = await work();
  const cpu = process.cpuUsage(cpuStarted);
  return { ms: performance.now() - started, cpuMs: (cpu.user + cpu.system) / 1000, value };
}

const median = (samples: number[]): number => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;

await g2MultiExp(bases.subarray(0, POINT_BYTES), scalars.subarray(0, SCALAR_BYTES), SCALAR_BYTES); // threads started
const kernelRuns: Array<{ ms: number; cpuMs: number }> = [];
const ffjavascriptRuns: Array<{ ms: number; cpuMs: number }> = [];
for (let run = 0; run < runs; run++) {
  const kernel = await timed(() => g2MultiExp(bases, scalars, SCALAR_BYTES));
  const reference = await timed(() => G2.multiExpAffine(bases, scalars));
  if (!G2.eq(kernel.value, reference.value)) throw new Error('the kernel G2 MSM and ffjavascript disagree');
  kernelRuns.push(kernel);
  ffjavascriptRuns.push(reference);
}
const threads = availableParallelism();
const row = (name: string, samples: Array<{ ms: number; cpuMs: number }>): [number, number] => {
  const wall = median(samples.map((s) => s.ms));
  const cpu = median(samples.map((s) => s.cpuMs));
  process.stdout.write(
    `  ${name.padEnd(34)} ${wall.toFixed(0).padStart(7)} ms wall ` +
      `(${samples.map((s) => s.ms.toFixed(0)).join(', ')})   ` +
      `${cpu.toFixed(0).padStart(7)} ms CPU\n`,
  );
  return [wall, cpu];
};
process.stdout.write(
  `\nG2 MSM, ${points} points (${distinct} distinct subgroup points ` +
    `repeated), ${SCALAR_BYTES}-byte scalars, median of ${runs}\n`,
);
const [ffWall, ffCpu] = row('ffjavascript G2.multiExpAffine', ffjavascriptRuns);
const [kernelWall, kernelCpu] = row(`kernel g2MultiExp, ${threads} thread(s)`, kernelRuns);
process.stdout.write(
  `  ffjavascript ÷ kernel              ` +
    `${(ffWall / kernelWall).toFixed(2).padStart(7)} × ` +
    `wall${' '.repeat(28)}${(ffCpu / kernelCpu).toFixed(2).padStart(7)} × CPU\n`,
);
await closeMultiExp();

if (values.sweep) {
  const kernel = await MsmKernel.instantiate();
  const slice = Math.ceil(points / threads);
  const bits = 8 * SCALAR_BYTES;
  const chosen = msmWindowBits(slice, bits);
  const sliceBases = bases.subarray(0, slice * POINT_BYTES);
  const sliceScalars = scalars.subarray(0, slice * SCALAR_BYTES);
  // CPU time, not wall time: on a shared machine it moves far less with the other sessions' load.
  process.stdout.write(
    `\nkernel G2 MSM on one thread, ${slice} points (one thread's slice), ` +
      `CPU ms by window width (best of ${runs}; the model picks ${chosen})\n`,
  );
  for (let c = Math.max(2, chosen - 3); c <= Math.min(20, chosen + 3); c++) {
    let best = Infinity;
    for (let run = 0; run < runs; run++) {
      const started = process.cpuUsage();
      kernel.multiExpParts(sliceBases, sliceScalars, SCALAR_BYTES, 'G2', c);
      const used = process.cpuUsage(started);
      best = Math.min(best, (used.user + used.system) / 1000);
    }
    process.stdout.write(
      `  c = ${String(c).padStart(2)}   ${best.toFixed(0).padStart(7)} ms${c === chosen ? '   ← chosen' : ''}\n`,
    );
  }
}
await releaseBn128();
