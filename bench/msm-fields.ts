/**
 * The kernel's multi-exponentiation in its two base fields, on one thread, same run: in G1 `msm`
 * (g1-msm.c, bn254-fq-rr.h's reduced radix, what the link check and the audit run) against
 * `msm_fq32` (g1-compose.c, the key's 32-bit field, what G1's MSM ran before); with --group G2,
 * `g2_msm` (g2-msm.c, the audit's B2 sums) against `g2_msm_fq32` (g2-compose.c). Same inputs,
 * alternating, the two sums compared byte for byte (and, for the first size, with ffjavascript's)
 * before any figure is printed. CPU time of the thread, which on a shared machine moves far less
 * with the other sessions' load than wall time; the best of --runs is kept.
 *
 * The points are `--distinct` random points repeated to each size (the MSM's cost does not depend
 * on the points being distinct: with random scalars the repeats spread over the buckets as distinct
 * points would). Scalars are uniform of each --widths bytes: 8 the link check's, 16 the audit's.
 *
 * Usage: tsx bench/msm-fields.ts [--group G1 | G2] [--sizes 262144,1048576] [--widths 8,16]
 *   [--distinct N (default 4096)] [--runs N (default 2)]
 */
import { randomBytes } from 'node:crypto';
import { getBn128, releaseBn128 } from '../core/crypto/bn128.ts';
import { MsmKernel, MSM_POINT_BYTES, type MsmGroup } from '../core/kernel/msm-kernel.ts';
import { parseBenchArgs } from './bench-args.ts';

const { values } = parseBenchArgs(import.meta.url, {
  options: {
    group: { type: 'string', default: 'G1' },
    sizes: { type: 'string', default: `${1 << 18},${1 << 20}` },
    widths: { type: 'string', default: '8,16' },
    distinct: { type: 'string', default: '4096' },
    runs: { type: 'string', default: '2' },
  },
});
const list = (text: string, name: string): number[] =>
  text.split(',').map((item) => {
    const value = Number(item);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} takes positive integers`);
    return value;
  });
const sizes = list(values.sizes, 'sizes');
const widths = list(values.widths, 'widths');
const [distinct] = list(values.distinct, 'distinct');
const [runs] = list(values.runs, 'runs');
if (widths.some((width) => width > 32)) throw new Error('--widths are 1 to 32 bytes');

if (values.group !== 'G1' && values.group !== 'G2') throw new Error('--group is G1 or G2');
const group: MsmGroup = values.group;
const POINT_BYTES = MSM_POINT_BYTES[group];
const curve = await getBn128();
const G = curve[group];
const kernel = await MsmKernel.instantiate();

const pattern = new Uint8Array(distinct! * POINT_BYTES);
const seeds = Array.from({ length: 8 }, () => G.timesScalar(G.g, randomBytes(32)));
let p = seeds[0]!;
for (let i = 0; i < distinct!; i++) {
  p = G.add(p, seeds[i % seeds.length]!);
  G.toRprLEM(pattern, i * POINT_BYTES, G.toAffine(p));
}

/** The sum of the kernel's partial sums (one a call of at most 2^18 points), in the zkey layout. */
function total(parts: Uint8Array): Uint8Array {
  let sum = G.zero;
  for (let at = 0; at < parts.byteLength; at += POINT_BYTES) {
    if (parts.subarray(at, at + POINT_BYTES).some((byte) => byte !== 0)) sum = G.add(sum, G.fromRprLEM(parts, at));
  }
  const out = new Uint8Array(POINT_BYTES);
  if (!G.isZero(sum)) G.toRprLEM(out, 0, G.toAffine(sum));
  return out;
}

function cpuMs(work: () => Uint8Array): { ms: number; out: Uint8Array } {
  const started = process.cpuUsage();
  const out = work();
  const used = process.cpuUsage(started);
  return { ms: (used.user + used.system) / 1000, out };
}

process.stdout.write(`${group} MSM on one thread, CPU ms (best of ${runs}), ${distinct} distinct points repeated\n`);
process.stdout.write(`  ${'points'.padStart(9)} ${'scalars'.padStart(8)} ${'key field'.padStart(10)} `);
process.stdout.write(`${'reduced radix'.padStart(14)} ${'speed-up'.padStart(9)}\n`);
for (const [index, n] of sizes.entries()) {
  const bases = new Uint8Array(n * POINT_BYTES);
  for (let first = 0; first < n; first += distinct!) {
    bases.set(pattern.subarray(0, Math.min(distinct!, n - first) * POINT_BYTES), first * POINT_BYTES);
  }
  for (const width of widths) {
    const scalars = new Uint8Array(randomBytes(n * width));
    let keyField = Infinity;
    let reducedRadix = Infinity;
    for (let run = 0; run < runs!; run++) {
      const old = cpuMs(() => kernel.multiExpParts(bases, scalars, width, group, undefined, true));
      const now = cpuMs(() => kernel.multiExpParts(bases, scalars, width, group));
      if (!Buffer.from(old.out).equals(Buffer.from(now.out))) throw new Error('the two fields disagree');
      if (run === 0 && index === 0) {
        const reference = new Uint8Array(POINT_BYTES);
        const sum = await G.multiExpAffine(bases, scalars);
        if (!G.isZero(sum)) G.toRprLEM(reference, 0, G.toAffine(sum));
        if (!Buffer.from(total(now.out)).equals(Buffer.from(reference)))
          throw new Error('msm and ffjavascript disagree');
      }
      keyField = Math.min(keyField, old.ms);
      reducedRadix = Math.min(reducedRadix, now.ms);
    }
    process.stdout.write(
      `  ${String(n).padStart(9)} ${`${8 * width}-bit`.padStart(8)} ${keyField.toFixed(0).padStart(10)} ` +
        `${reducedRadix.toFixed(0).padStart(14)} ${`${(keyField / reducedRadix).toFixed(2)} ×`.padStart(9)}\n`,
    );
  }
}
await releaseBn128();
