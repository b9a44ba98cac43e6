/**
 * Per-point cost of scaling G1 points by one scalar, single-threaded, for each kernel tried for
 * contributions: ffjavascript's batchApplyKey (what snarkjs uses; its curve built
 * single-threaded here), mcl-wasm's G1 mul (GLV; one call per point, plus normalize to affine, NOT
 * counting the conversion from and to the zkey's Montgomery layout, so a lower bound for it), and
 * this project's kernel (core/kernel, WebAssembly: GLV, width-5 NAF, lockstep batch-affine) in its
 * two walks: the SIMD one (g1-scale-x4.c, four points a vector, what Node and browsers with
 * WebAssembly SIMD run) and the scalar one (g1-scale.c, the kernel before 2026-12-02 and the
 * fallback without SIMD), with the ratio of the two. Each kernel's output is checked against
 * ffjavascript's before any figure is printed. They take turns, round after round, and each one's
 * best round is kept: on a machine shared with other work, a single run of each mostly measures how
 * the load moved between them. Times are the thread's CPU time, which another process on the same
 * core does not add to.
 *
 * Usage: tsx bench/kernel-per-point.ts [--points N (default 8192)] [--rounds N (default 3)]
 */
import { randomBytes } from 'node:crypto';
import { buildBn128 } from 'ffjavascript';
import * as mcl from 'mcl-wasm';
import { BN254_R, planScaleChain, walkSchedule, type ScaleChain } from '../core/kernel/g1-scale-chain.ts';
import { G1ScaleKernel } from '../core/kernel/g1-scale-kernel.ts';
import { g1GeneratorMultiples } from './g1-bench-points.ts';
import { parseBenchArgs } from './bench-args.ts';

export interface PerPointFigures {
  points: number;
  rounds: number;
  rows: Array<{ kernel: string; usPerPoint: number; note: string }>;
  /** Field products a point each walk makes for the bench's scalar (docs/kernel.md, the SIMD walk). */
  products: { scalar: number; simd: number };
}

/**
 * Products an inversion makes, squarings counted as products. The scalar walk's rr_inv
 * (bn254-fq-rr.h): a squaring for each of the exponent's 256 bits from 1 up, and a product for each
 * of q − 2's 110 one bits. The SIMD walk's rr_inv_window (g1-scale-x4.c): a², 7 products for the odd
 * powers up to a^15, then 252 squarings and 48 products over the windows; and invert_lanes' 9.
 */
const SCALAR_INVERSION_PRODUCTS = 256 + 110;
const SIMD_INVERSION_PRODUCTS = 1 + 7 + 252 + 48 + 9;
/** The points a pass's inversion is shared by: G1ScaleKernel's batches, full at the bench's sizes. */
const SCALAR_BATCH_POINTS = 1024;
const SIMD_BATCH_POINTS = 4096;

/** The steps of a walk's schedule: doublings, additions (of them φ's), doublings followed by an addition. */
function stepCounts(schedule: Int8Array): {
  doublings: number;
  additions: number;
  phiAdditions: number;
  fused: number;
} {
  const counts = { doublings: 0, additions: 0, phiAdditions: 0, fused: 0 };
  for (let i = 0; i < schedule.length; i += 2) {
    const op = schedule[i];
    if (op === 0) {
      counts.doublings++;
      if (schedule[i + 2] === 1 || schedule[i + 2] === 2) counts.fused++;
    } else if (op === 1 || op === 2) {
      counts.additions++;
      if (op === 2) counts.phiAdditions++;
    }
  }
  return counts;
}

/**
 * Field products a point for a chain, each walk on its own schedule (walkSchedule): entry and exit
 * (4); the table (a doubling and 7 additions, and in the SIMD walk φ's 8 x); a doubling 7, an
 * addition 6 (+1 for φ's in the scalar walk), a doubling followed by an addition 11 in the SIMD walk
 * (two passes); each pass's inversion shared by the batch (8 + doublings + additions passes).
 */
function productsPerPoint(chain: ScaleChain): { scalar: number; simd: number } {
  const table = 7 + 7 * 6;
  const s = stepCounts(walkSchedule(chain, false).schedule);
  const v = stepCounts(walkSchedule(chain, true).schedule);
  return {
    scalar:
      4 +
      table +
      7 * s.doublings +
      6 * s.additions +
      s.phiAdditions +
      ((8 + s.doublings + s.additions) * SCALAR_INVERSION_PRODUCTS) / SCALAR_BATCH_POINTS,
    simd:
      4 +
      table +
      8 +
      7 * (v.doublings - v.fused) +
      11 * v.fused +
      6 * (v.additions - v.fused) +
      ((8 + v.doublings + v.additions) * SIMD_INVERSION_PRODUCTS) / SIMD_BATCH_POINTS,
  };
}

export async function runKernelPerPoint(points = 8192, rounds = 3): Promise<PerPointFigures> {
  const curve = await buildBn128(true);
  try {
    const Fr = curve.Fr;
    const k = BigInt(`0x${randomBytes(32).toString('hex')}`) % BN254_R;
    const input = g1GeneratorMultiples(curve, points);
    const batchApplyKey = curve.G1.batchApplyKey as (
      b: Uint8Array,
      first: Uint8Array,
      inc: Uint8Array,
    ) => Promise<Uint8Array>;

    const simdKernel = await G1ScaleKernel.instantiate({ kind: 'simd' });
    const scalarKernel = await G1ScaleKernel.instantiate({ kind: 'scalar' });
    const chain = planScaleChain(k);
    if (!chain) throw new Error('no chain for the bench scalar');

    await mcl.init(mcl.BN_SNARK1);
    const base = mcl.hashAndMapToG1('bench');
    const scalar = new mcl.Fr();
    scalar.setStr(k.toString());
    const mclPoints: mcl.G1[] = [];
    let q = base;
    for (let i = 0; i < points; i++) mclPoints.push((q = mcl.add(q, base)));

    const best = { ffjs: Infinity, mcl: Infinity, simd: Infinity, scalar: Infinity };
    const timed = (run: () => void): number => {
      const started = process.cpuUsage();
      run();
      const spent = process.cpuUsage(started);
      return (spent.user + spent.system) / 1000;
    };
    for (let round = 0; round < rounds; round++) {
      const startedFfjs = process.cpuUsage();
      const reference = await batchApplyKey.call(curve.G1, input.slice(), Fr.e(k), Fr.one);
      const ffjsSpent = process.cpuUsage(startedFfjs);
      best.ffjs = Math.min(best.ffjs, (ffjsSpent.user + ffjsSpent.system) / 1000);

      for (const [name, kernel] of [
        ['scalar', scalarKernel],
        ['simd', simdKernel],
      ] as const) {
        const mine = input.slice();
        best[name] = Math.min(
          best[name],
          timed(() => kernel.scale(mine, chain)),
        );
        if (!Buffer.from(mine).equals(Buffer.from(reference))) {
          throw new Error(`the kernel's ${name} walk and ffjavascript disagree`);
        }
      }

      best.mcl = Math.min(
        best.mcl,
        timed(() => {
          for (const point of mclPoints) mcl.mul(point, scalar).normalize();
        }),
      );
    }

    const us = (ms: number): number => (ms * 1000) / points;
    return {
      points,
      rounds,
      products: productsPerPoint(chain),
      rows: [
        { kernel: 'ffjavascript batchApplyKey (snarkjs)', usPerPoint: us(best.ffjs), note: 'one thread' },
        {
          kernel: 'mcl-wasm 2.4.1 G1 mul + normalize',
          usPerPoint: us(best.mcl),
          note: 'layout conversion not counted',
        },
        {
          kernel: 'core/kernel scalar walk (g1-scale.c, before)',
          usPerPoint: us(best.scalar),
          note: 'same bytes as ffjavascript; the fallback without SIMD',
        },
        {
          kernel: 'core/kernel SIMD walk (g1-scale-x4.c)',
          usPerPoint: us(best.simd),
          note: `same bytes as ffjavascript; ${(best.simd / best.scalar).toFixed(3)}× the scalar walk's time`,
        },
      ],
    };
  } finally {
    await curve.terminate();
  }
}

export function printKernelPerPoint(f: PerPointFigures): void {
  const width = Math.max(...f.rows.map((r) => r.kernel.length));
  const ffjs = f.rows[0]!.usPerPoint;
  process.stdout.write(
    `\nG1 points × one scalar, single-threaded, ${f.points} points, best of ${f.rounds} rounds taken in turn\n`,
  );
  process.stdout.write(`${'kernel'.padEnd(width)}  ${'µs/point'.padStart(9)}  ${'vs ffjs'.padStart(7)}\n`);
  for (const r of f.rows) {
    process.stdout.write(
      `${r.kernel.padEnd(width)}  ${r.usPerPoint.toFixed(1).padStart(9)}  ` +
        `${`${(ffjs / r.usPerPoint).toFixed(2)}×`.padStart(7)}  ${r.note}\n`,
    );
  }
  process.stdout.write(
    `field products a point for this scalar: scalar walk ${f.products.scalar.toFixed(0)}; SIMD walk ` +
      `${f.products.simd.toFixed(0)}, each a four-lane product but the inversions' share, scalar (docs/kernel.md)\n`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: { points: { type: 'string', default: '8192' }, rounds: { type: 'string', default: '3' } },
  });
  const points = Number(values.points);
  if (!Number.isInteger(points) || points < 1)
    throw new Error(`--points must be a positive integer, got ${values.points}`);
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
  printKernelPerPoint(await runKernelPerPoint(points, rounds));
}
