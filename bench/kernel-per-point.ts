/**
 * Per-point cost of scaling G1 points by one scalar, single-threaded, for each kernel tried for
 * contributions: ffjavascript's batchApplyKey (what snarkjs uses; its curve built
 * single-threaded here), mcl-wasm's G1 mul (GLV; one call per point, plus normalize to affine, NOT
 * counting the conversion from and to the zkey's Montgomery layout, so a lower bound for it), and
 * this project's kernel (core/kernel, WebAssembly: GLV, width-5 NAF, lockstep batch-affine). The
 * kernel's output is checked against ffjavascript's before any figure is printed. The three take
 * turns, round after round, and each one's best round is kept: on a machine shared with other
 * work, a single run of each mostly measures how the load moved between them.
 *
 * Usage: tsx bench/kernel-per-point.ts [--points N (default 8192)] [--rounds N (default 3)]
 */
import { randomBytes } from 'node:crypto';
import { buildBn128 } from 'ffjavascript';
import * as mcl from 'mcl-wasm';
import { BN254_R, planScaleChain } from '../core/kernel/g1-scale-chain.ts';
import { G1ScaleKernel } from '../core/kernel/g1-scale-kernel.ts';
import { g1GeneratorMultiples } from './g1-bench-points.ts';
import { parseBenchArgs } from './bench-args.ts';

export interface PerPointFigures {
  points: number;
  rounds: number;
  rows: Array<{ kernel: string; usPerPoint: number; note: string }>;
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

    const kernel = await G1ScaleKernel.instantiate();
    const chain = planScaleChain(k);
    if (!chain) throw new Error('no chain for the bench scalar');

    await mcl.init(mcl.BN_SNARK1);
    const base = mcl.hashAndMapToG1('bench');
    const scalar = new mcl.Fr();
    scalar.setStr(k.toString());
    const mclPoints: mcl.G1[] = [];
    let q = base;
    for (let i = 0; i < points; i++) mclPoints.push((q = mcl.add(q, base)));

    const best = { ffjs: Infinity, mcl: Infinity, kernel: Infinity };
    for (let round = 0; round < rounds; round++) {
      let started = performance.now();
      const reference = await batchApplyKey.call(curve.G1, input.slice(), Fr.e(k), Fr.one);
      best.ffjs = Math.min(best.ffjs, performance.now() - started);

      const mine = input.slice();
      started = performance.now();
      kernel.scale(mine, chain);
      best.kernel = Math.min(best.kernel, performance.now() - started);
      if (!Buffer.from(mine).equals(Buffer.from(reference))) throw new Error('the kernel and ffjavascript disagree');

      started = performance.now();
      for (const point of mclPoints) mcl.mul(point, scalar).normalize();
      best.mcl = Math.min(best.mcl, performance.now() - started);
    }

    const us = (ms: number): number => (ms * 1000) / points;
    return {
      points,
      rounds,
      rows: [
        { kernel: 'ffjavascript batchApplyKey (snarkjs)', usPerPoint: us(best.ffjs), note: 'one thread' },
        {
          kernel: 'mcl-wasm 2.4.1 G1 mul + normalize',
          usPerPoint: us(best.mcl),
          note: 'layout conversion not counted',
        },
        {
          kernel: 'core/kernel (WebAssembly, this project)',
          usPerPoint: us(best.kernel),
          note: 'same bytes as ffjavascript',
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
