/**
 * The link check's sums over a candidate's points as the coordinator's intake makes them
 * (g1CheckedPartialSums: each point checked on the curve, 64-bit scalars, the kernel's MSM threads
 * on every core), the same points cut into calls of different sizes: the splice's chunks (2^15
 * points) against the intake's batches (core/link-check/streamed-candidate-sums.ts, 2^17) and
 * larger. A multi-exponentiation's buckets are summed once per call, so larger calls cost less a
 * point; what bounds them is the memory a batch holds and the sum left after an upload's last byte.
 *
 * Each size's CPU time (this process, every thread: the MSM threads are its own) and wall time over
 * all the points; sizes alternate, round after round, and each keeps its best round. The points are
 * --distinct random points repeated (with random scalars the repeats spread over the buckets as
 * distinct points would), valid, so every call checks and sums them all.
 *
 * Usage: tsx bench/link-sum-batches.ts [--points N (default 1048576)] [--sizes 32768,131072,262144]
 *   [--distinct N (default 16384)] [--rounds N (default 2)]
 */
import { randomBytes } from 'node:crypto';
import { closeMultiExp, g1CheckedPartialSums } from '../core/kernel/multi-exp.ts';
import { LINK_SCALAR_BYTES } from '../core/link-check/verify-link-from-head.ts';
import { G1_POINT_BYTES, g1BenchPoints } from './g1-bench-points.ts';
import { parseBenchArgs } from './bench-args.ts';

export interface BatchFigures {
  points: number;
  rows: Array<{ size: number; cpuMs: number; wallMs: number }>;
}

async function repeatedPoints(total: number, distinct: number): Promise<Uint8Array> {
  const base = await g1BenchPoints(Math.min(distinct, total));
  const points = new Uint8Array(total * G1_POINT_BYTES);
  for (let at = 0; at < points.length; at += base.length) points.set(base.subarray(0, points.length - at), at);
  return points;
}

export async function runLinkSumBatches(total: number, sizes: number[], distinct: number, rounds: number) {
  const points = await repeatedPoints(total, distinct);
  const scalars = new Uint8Array(randomBytes(total * LINK_SCALAR_BYTES));
  const best = new Map(sizes.map((size) => [size, { cpuMs: Infinity, wallMs: Infinity }]));
  // The MSM threads start on the first call: started here, untimed, so no size pays for them.
  await g1CheckedPartialSums(
    points.subarray(0, G1_POINT_BYTES),
    scalars.subarray(0, LINK_SCALAR_BYTES),
    LINK_SCALAR_BYTES,
  );
  for (let round = 0; round < rounds; round++) {
    for (const size of sizes) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let first = 0; first < total; first += size) {
        const end = Math.min(total, first + size);
        const result = await g1CheckedPartialSums(
          points.subarray(first * G1_POINT_BYTES, end * G1_POINT_BYTES),
          scalars.subarray(first * LINK_SCALAR_BYTES, end * LINK_SCALAR_BYTES),
          LINK_SCALAR_BYTES,
        );
        if (!('parts' in result)) throw new Error('a valid point was refused');
      }
      const used = process.cpuUsage(cpu);
      const figures = best.get(size)!;
      figures.cpuMs = Math.min(figures.cpuMs, (used.user + used.system) / 1000);
      figures.wallMs = Math.min(figures.wallMs, performance.now() - started);
    }
  }
  return { points: total, rows: sizes.map((size) => ({ size, ...best.get(size)! })) } satisfies BatchFigures;
}

export function printLinkSumBatches(f: BatchFigures): void {
  const reference = f.rows[0]!;
  process.stdout.write(
    `\nThe link check's sums over ${f.points} points (checked on the curve, 64-bit scalars, every core), ` +
      `by call size; best round\n${'points a call'.padStart(13)}  ${'CPU ms'.padStart(8)}  ${'wall ms'.padStart(8)}  ` +
      `${'µs CPU/pt'.padStart(9)}  CPU ÷ the first size\n`,
  );
  for (const row of f.rows) {
    process.stdout.write(
      `${String(row.size).padStart(13)}  ${row.cpuMs.toFixed(0).padStart(8)}  ${row.wallMs.toFixed(0).padStart(8)}  ` +
        `${((row.cpuMs * 1000) / f.points).toFixed(2).padStart(9)}  ${(row.cpuMs / reference.cpuMs).toFixed(2)}×\n`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: {
      points: { type: 'string', default: String(1 << 20) },
      sizes: { type: 'string', default: `${1 << 15},${1 << 17},${1 << 18}` },
      distinct: { type: 'string', default: String(1 << 14) },
      rounds: { type: 'string', default: '2' },
    },
  });
  const numbers = [values.points, values.distinct, values.rounds, ...values.sizes.split(',')].map(Number);
  if (numbers.some((n) => !Number.isInteger(n) || n < 1)) {
    process.stderr.write('--points, --sizes, --distinct and --rounds take positive whole numbers\n');
    process.exit(2);
  }
  const [points, distinct, rounds, ...sizes] = numbers as [number, number, number, ...number[]];
  try {
    printLinkSumBatches(await runLinkSumBatches(points, sizes, distinct, rounds));
  } finally {
    await closeMultiExp();
  }
}
