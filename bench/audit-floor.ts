/**
 * The audit's floor on this machine, in the same run: the work `ceremony audit` counted
 * (core/runtime/work-tally.ts: the points of each kind of MSM, the bytes it hashed, its inverse FFTs),
 * each priced at a rate measured here after the audit (once a process: the first audit's counts
 * size the samples):
 *  - an MSM kind at the kernel pool's wall time a point (all threads, as the audit runs it), over
 *    msmSamplePoints of the kind (random points repeated, random scalars of its width; checked MSMs
 *    check their points first, as the audit's do);
 *  - hashing at one thread's BLAKE2b-512 rate over a buffer in memory, on two threads at once at best
 *    (the audit hashes a key's whole file and its sections side by side);
 *  - an inverse FFT of each size at one thread's time, the transforms shared among the cores.
 * The floor leaves out reading from disk (the files are taken to be in the page cache), parsing, the
 * r1cs pass, pairings and every cost of the code around the work, so it is a lower bound: no
 * implementation of the same checks on this machine takes less, and the audit ÷ its floor is how
 * much the code adds. Work that is not priced (an item this file does not know) is listed, not
 * guessed.
 */
import { createHash, randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { buildBn128, type Bn128Curve } from 'ffjavascript';
import { frInverseFft } from '../core/kernel/fr-fft.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { closeMultiExp, g1CheckedMultiExp, g1MultiExp, g2MultiExp } from '../core/kernel/multi-exp.ts';
import { MSM_POINT_BYTES } from '../core/kernel/msm-kernel.ts';
import { HASH_WORK_ITEM, WORK_TALLY_PREFIX } from '../core/runtime/work-tally.ts';
import { g1GeneratorMultiples } from './g1-bench-points.ts';

/**
 * Points an MSM kind's rate is measured on: as many as the audit summed of that kind, from 2^14 to
 * 2^17 (the audit's chunks are 2^17–2^18 points; a small audit's MSMs cost more a point, as its
 * sample does).
 */
const msmSamplePoints = (count: number): number => Math.min(1 << 17, Math.max(1 << 14, count));
/** Distinct points in a sample (repeated to its size: the MSM's cost does not depend on them being distinct). */
const DISTINCT_POINTS = 4096;
/** Bytes the hash rate is measured on: what the audit hashed, from 16 MiB to 128 MiB. */
const hashSampleBytes = (count: number): number => Math.min(128 << 20, Math.max(16 << 20, count));
/** The audit hashes a key's file and its sections on two threads at once. */
const HASH_THREADS = 2;

export interface FloorPart {
  item: string;
  count: number;
  /** What this work costs at the measured rate (ms of wall time). */
  ms: number;
  rate: string;
}

export interface AuditFloor {
  ms: number;
  parts: FloorPart[];
  /** Work counted that this file has no rate for (left out of the floor). */
  unpriced: string[];
}

/** The work tally lines (`stage-work SCOPE: ITEM COUNT`) a process wrote on stderr. */
export function parseWorkTally(stderr: string, scope = 'audit'): Map<string, number> {
  const counts = new Map<string, number>();
  const prefix = `${WORK_TALLY_PREFIX} ${scope}: `;
  for (const line of stderr.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const match = /^(.*) (\d+)$/.exec(line.slice(prefix.length));
    if (match) counts.set(match[1]!, (counts.get(match[1]!) ?? 0) + Number(match[2]));
  }
  return counts;
}

const best = async (runs: number, work: () => Promise<unknown>): Promise<number> => {
  let fastest = Infinity;
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    await work();
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
};

function repeated(pattern: Uint8Array, pointBytes: number, points: number): Uint8Array {
  const out = new Uint8Array(points * pointBytes);
  for (let first = 0; first < points; first += DISTINCT_POINTS)
    out.set(pattern.subarray(0, Math.min(DISTINCT_POINTS, points - first) * pointBytes), first * pointBytes);
  return out;
}

/** Uniform scalars of `bytes` bytes each, below r when they are field elements (32 bytes: the top 3 bits cleared). */
function randomScalars(points: number, bytes: number): Uint8Array {
  const scalars = new Uint8Array(randomBytes(points * bytes));
  if (bytes === 32) for (let i = 31; i < scalars.length; i += 32) scalars[i]! &= 0x1f;
  return scalars;
}

/**
 * `work` on a curve of its own, built without worker threads and stopped after: the bench's process
 * may end once its stages are done, which a shared curve's threads would keep alive.
 */
async function withCurve<T>(work: (curve: Bn128Curve) => T): Promise<T> {
  const curve = await buildBn128(true);
  try {
    return work(curve);
  } finally {
    await curve.terminate();
  }
}

/** DISTINCT_POINTS valid points of `group` in the key's layout. */
function benchPoints(curve: Bn128Curve, group: 'G1' | 'G2'): Uint8Array {
  if (group === 'G1') return g1GeneratorMultiples(curve, DISTINCT_POINTS);
  const pattern = new Uint8Array(DISTINCT_POINTS * MSM_POINT_BYTES.G2);
  let p = curve.G2.timesScalar(curve.G2.g, randomBytes(32));
  for (let i = 0; i < DISTINCT_POINTS; i++) {
    p = curve.G2.add(p, curve.G2.g);
    curve.G2.toRprLEM(pattern, i * MSM_POINT_BYTES.G2, curve.G2.toAffine(p));
  }
  return pattern;
}

/** Wall ms a point of an MSM kind (`msm G1 128-bit checked`), on the pool; undefined for a kind not known. */
async function msmMsPerPoint(item: string, count: number): Promise<number | undefined> {
  const match = /^msm (G1|G2) (\d+)-bit( checked)?$/.exec(item);
  if (!match) return undefined;
  const group = match[1] as 'G1' | 'G2';
  const scalarBytes = Number(match[2]) / 8;
  const checked = match[3] !== undefined;
  const pattern = await withCurve((curve) => benchPoints(curve, group));
  const points = msmSamplePoints(count);
  const bases = repeated(pattern, MSM_POINT_BYTES[group], points);
  const scalars = randomScalars(points, scalarBytes);
  const sum = () =>
    group === 'G2'
      ? g2MultiExp(bases, scalars, scalarBytes)
      : checked
        ? g1CheckedMultiExp(bases, scalars, scalarBytes)
        : g1MultiExp(bases, scalars, scalarBytes);
  await sum(); // the pool started and warm
  return (await best(2, sum)) / points;
}

/** One thread's BLAKE2b-512 rate, bytes a ms. */
async function hashBytesPerMs(count: number): Promise<number> {
  const buffer = randomBytes(hashSampleBytes(count));
  const ms = await best(3, async () => createHash('blake2b512').update(buffer).digest());
  return buffer.length / ms;
}

/** One inverse FFT of 2^log 16-byte scalars (the ptau check's width), on this thread. */
async function fftMs(log: number): Promise<number> {
  const values = randomScalars(1 << log, 16);
  const omega = await withCurve((curve) => curve.Fr.toObject(curve.Fr.w[log]!) as bigint);
  return best(2, () => frInverseFft(values, omega, 16));
}

/** Rates are measured once a process (the first floor that needs them) and kept for the others. */
const measured = new Map<string, Promise<number | undefined>>();
const once = (key: string, measure: () => Promise<number | undefined>): Promise<number | undefined> => {
  if (!measured.has(key)) measured.set(key, measure());
  return measured.get(key)!;
};

/** The floor of the work `counts` holds (parseWorkTally, or takeWorkTally in process), priced in this run. */
export async function auditFloor(counts: Map<string, number>): Promise<AuditFloor> {
  const cores = availableParallelism();
  const parts: FloorPart[] = [];
  const unpriced: string[] = [];
  for (const [item, count] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
    if (item === HASH_WORK_ITEM) {
      const perMs = (await once(item, () => hashBytesPerMs(count)))!;
      const threads = Math.min(HASH_THREADS, cores);
      parts.push({
        item,
        count,
        ms: count / perMs / threads,
        rate: `${(perMs / 1000).toFixed(0)} MB/s a thread, ${threads} threads`,
      });
      continue;
    }
    const fft = /^inverse fft 2\^(\d+)$/.exec(item);
    if (fft) {
      const ms = (await once(item, () => fftMs(Number(fft[1]))))!;
      parts.push({ item, count, ms: (count * ms) / cores, rate: `${ms.toFixed(0)} ms each, shared by ${cores} cores` });
      continue;
    }
    const perPoint = await once(item, () => msmMsPerPoint(item, count));
    if (perPoint === undefined) {
      unpriced.push(`${item} ${count}`);
      continue;
    }
    parts.push({ item, count, ms: count * perPoint, rate: `${(perPoint * 1000).toFixed(2)} µs a point, all threads` });
  }
  // The MSMs' pool and the curve they add their partial sums on are this process's: stopped, so a
  // bench whose stages are done can end (the next floor starts them again if it must measure).
  await closeMultiExp();
  await releaseBn128();
  return { ms: parts.reduce((sum, part) => sum + part.ms, 0), parts, unpriced };
}

/** The floor's lines for a bench's table: each part, then the total against the measured audit. */
export function auditFloorLines(floor: AuditFloor, auditMs: number, indent = '  '): string[] {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return [
    ...floor.parts.map(
      (part) =>
        `${indent}${part.item.padEnd(26)} ${part.count.toLocaleString('en').padStart(15)}  ${s(part.ms).padStart(8)}` +
        `  (${part.rate})`,
    ),
    ...(floor.unpriced.length > 0 ? [`${indent}not priced (left out of the floor): ${floor.unpriced.join(', ')}`] : []),
    `${indent}floor ${s(floor.ms)}; the audit ${s(auditMs)} = ${(auditMs / floor.ms).toFixed(2)} × its floor`,
  ];
}
