/**
 * g1MultiExp and g2MultiExp: Σ s_i·P_i over BN254 G1 or G2 with the kernel's Pippenger MSMs
 * (g1-msm.c, g2-msm.c) on one thread per core. The entry points for link verification (G1, 64-bit
 * scalars) and the audit (G1 with 32-byte scalars below r, G1 and G2 with 16-byte ones); the same
 * threads serve both groups.
 *
 * The threads are started on first use and shared by every later call of the process. They hold
 * the event loop only while a call is running (ref'd when busy, unref'd when idle), so a command
 * exits as soon as its own work is done, without having to close anything; `closeMultiExp`
 * stops them explicitly (tests, servers shutting down). A thread that dies fails the calls waiting
 * on it and the next call starts a new pool.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Bn128Curve, CurveGroup } from 'ffjavascript';
import { getBn128 } from '../crypto/bn128.ts';
import { MAX_SUBGROUP_WINDOW_BITS, MSM_POINT_BYTES, msmWindowCount, type MsmGroup } from './msm-kernel.ts';
import type { MsmReply, MsmRequest } from './msm-messages.ts';
import { firstPointOffCurve } from '../zkey/point-checks.ts';
import { threadExecArgv } from '../runtime/thread-exec-argv.ts';
import { kernelThreadEntry } from '../runtime/kernel-thread-entry.ts';
import { msmWorkItem, tallyWork } from '../runtime/work-tally.ts';

/**
 * Below this many points a second thread costs more in messages than it saves. A G2 point costs
 * the kernel about 3.3 times a G1 one (one thread, 65,536 points, 16-byte scalars), so a third as many.
 */
const MIN_POINTS_PER_THREAD: Record<MsmGroup, number> = { G1: 4096, G2: 1365 };

/** A slice's reply: its partial sums, or the index (in the slice) of its first bad point. */
type SliceResult = { sums: Uint8Array } | { invalidPoint: number };

interface Pending {
  resolve(result: SliceResult): void;
  reject(error: Error): void;
}

class MsmPool {
  private nextId = 0;
  private busy = 0;
  private readonly pending: Array<Map<number, Pending>>;
  broken = false;

  private constructor(private readonly workers: Worker[]) {
    this.pending = workers.map(() => new Map());
  }

  static async start(threads: number): Promise<MsmPool> {
    const entry = kernelThreadEntry(import.meta.url, 'msm');
    const pool = new MsmPool(
      Array.from({ length: threads }, () => new Worker(entry, { execArgv: threadExecArgv(import.meta.url) })),
    );
    try {
      await Promise.all(
        pool.workers.map(
          (worker, index) =>
            new Promise<void>((ready, failed) => {
              worker.on('message', (reply: MsmReply) => {
                if ('ready' in reply) return ready();
                if (reply.id === -1 && 'error' in reply)
                  return failed(new Error(`MSM thread could not start: ${reply.error}`));
                const waiting = pool.pending[index]!.get(reply.id);
                if (!waiting) return;
                pool.pending[index]!.delete(reply.id);
                if ('error' in reply) waiting.reject(new Error(`MSM thread: ${reply.error}`));
                else waiting.resolve(reply);
              });
              const fail = (error: Error): void => {
                pool.broken = true;
                failed(error);
                for (const waiting of pool.pending[index]!.values()) waiting.reject(error);
                pool.pending[index]!.clear();
              };
              worker.on('error', fail);
              worker.on('exit', (code) => fail(new Error(`MSM thread exited with code ${code}`)));
            }),
        ),
      );
    } catch (error) {
      await pool.close();
      throw error;
    }
    pool.idle();
    return pool;
  }

  private idle(): void {
    for (const worker of this.workers) worker.unref();
  }

  /**
   * The partial sums (affine points of `group`, concatenated) of the slices, one slice per thread;
   * with `checkPoints` (G1), the index of the first bad point instead when there is one (-1 otherwise).
   */
  async partialSums(
    group: MsmGroup,
    bases: Uint8Array,
    scalars: Uint8Array,
    scalarBytes: number,
    checkPoints = false,
    windowBits?: number,
  ): Promise<{ parts: Uint8Array[]; invalidPoint: number }> {
    const pointBytes = MSM_POINT_BYTES[group];
    const total = bases.byteLength / pointBytes;
    tallyWork(msmWorkItem(group, scalarBytes, checkPoints), total);
    const slices = Math.max(1, Math.min(this.workers.length, Math.floor(total / MIN_POINTS_PER_THREAD[group])));
    if (this.busy++ === 0) for (const worker of this.workers) worker.ref();
    try {
      const results = await Promise.all(
        Array.from({ length: slices }, (_, index) => {
          const first = Math.floor((total * index) / slices);
          const end = Math.floor((total * (index + 1)) / slices);
          // Copies the threads own (transferred, not cloned again). Copied through the Uint8Array
          // constructor: a Buffer's slice() is a view, and transferring it would detach the caller's memory.
          const request: MsmRequest = {
            id: this.nextId++,
            group,
            bases: new Uint8Array(bases.subarray(first * pointBytes, end * pointBytes)),
            scalars: new Uint8Array(scalars.subarray(first * scalarBytes, end * scalarBytes)),
            scalarBytes,
            checkPoints,
            ...(windowBits === undefined ? {} : { windowBits }),
          };
          return new Promise<SliceResult>((resolve, reject) => {
            if (this.broken) return reject(new Error('the MSM pool has stopped'));
            this.pending[index]!.set(request.id, { resolve, reject });
            this.workers[index]!.postMessage(request, [
              request.bases.buffer as ArrayBuffer,
              request.scalars.buffer as ArrayBuffer,
            ]);
          });
        }),
      );
      const bad = results.findIndex((result) => 'invalidPoint' in result);
      if (bad >= 0)
        return {
          parts: [],
          invalidPoint: Math.floor((total * bad) / slices) + (results[bad] as { invalidPoint: number }).invalidPoint,
        };
      return { parts: results.map((result) => (result as { sums: Uint8Array }).sums), invalidPoint: -1 };
    } finally {
      if (--this.busy === 0) this.idle();
    }
  }

  async close(): Promise<void> {
    this.broken = true;
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}

let pool: Promise<MsmPool> | undefined;

function currentPool(): Promise<MsmPool> {
  if (!pool) {
    const starting = MsmPool.start(Math.max(1, availableParallelism()));
    pool = starting;
    // A pool that could not start is not kept: the next call tries again.
    starting.catch(() => {
      if (pool === starting) pool = undefined;
    });
  }
  return pool;
}

/** The sum, or (when the points were checked) the index of the first point off the curve or not canonical. */
export type CheckedSum = { sum: Uint8Array } | { invalidPoint: number };

/**
 * Σ scalars_i · bases_i in `group` on the pool, as a point of ffjavascript's curve; with `checkPoints` (G1) the
 * points are checked first.
 */
async function multiExpOnThreads(
  group: MsmGroup,
  bases: Uint8Array,
  scalars: Uint8Array,
  scalarBytes: number,
  checkPoints: boolean,
): Promise<CheckedSum> {
  let curveReady: Promise<Bn128Curve> | undefined;
  const result = await partialSumsOnThreads(group, bases, scalars, scalarBytes, checkPoints, () => {
    // The curve is only needed to add the partial sums: in a fresh process it is built (on this
    // thread) once the slices are posted, while the threads work.
    curveReady = getBn128();
    curveReady.catch(() => undefined);
  });
  if ('invalidPoint' in result) return result;
  return { sum: addAffineParts((await (curveReady ?? getBn128()))[group], group, result.parts) };
}

/** The pool's partial sums (affine points, concatenated), or the first bad point's index when checked. */
async function partialSumsOnThreads(
  group: MsmGroup,
  bases: Uint8Array,
  scalars: Uint8Array,
  scalarBytes: number,
  checkPoints: boolean,
  onPosted: () => void = () => {},
): Promise<{ parts: Uint8Array[] } | { invalidPoint: number }> {
  const pointBytes = MSM_POINT_BYTES[group];
  if (!Number.isInteger(scalarBytes) || scalarBytes < 1 || scalarBytes > 32)
    throw new RangeError('scalars must be 1 to 32 bytes wide');
  if (bases.byteLength % pointBytes !== 0)
    throw new RangeError(`the base buffer is not a whole number of ${group} points`);
  if (scalars.byteLength !== (bases.byteLength / pointBytes) * scalarBytes)
    throw new RangeError('there must be one scalar per point');
  if (bases.byteLength === 0) return { parts: [] };
  const threads = await currentPool();
  try {
    const summing = threads.partialSums(group, bases, scalars, scalarBytes, checkPoints);
    onPosted();
    const result = await summing;
    return result.invalidPoint >= 0 ? { invalidPoint: result.invalidPoint } : { parts: result.parts };
  } catch (error) {
    // A dead thread: the next call starts a new pool; this one's remaining threads are stopped.
    if (threads.broken) {
      if (pool && (await pool.catch(() => undefined)) === threads) pool = undefined;
      await threads.close();
    }
    throw error;
  }
}

/**
 * Adds partial sums as the pool answers them (affine points in the zkey layout, concatenated; all
 * zero is the point at infinity) into one point of ffjavascript's curve.
 */
export function addAffineParts(G: CurveGroup, group: MsmGroup, parts: Uint8Array[]): Uint8Array {
  const pointBytes = MSM_POINT_BYTES[group];
  let sum = G.zero;
  for (const part of parts) {
    for (let offset = 0; offset < part.byteLength; offset += pointBytes) {
      // All zero is infinity; ffjavascript decodes it as a zero point its add does not treat as one.
      if (part.subarray(offset, offset + pointBytes).every((byte) => byte === 0)) continue;
      sum = G.add(sum, G.fromRprLEM(part, offset));
    }
  }
  return G.isZero(sum) ? G.zero : sum;
}

/**
 * The partial sums of g1CheckedMultiExp without adding them, so that a process which never builds
 * ffjavascript's curve (the coordinator's HTTP process, summing an upload as it arrives) can hand
 * them to one that has it (the verifier: addAffineParts). Kernel only.
 */
export function g1CheckedPartialSums(
  bases: Uint8Array,
  scalars: Uint8Array,
  scalarBytes: number,
): Promise<{ parts: Uint8Array[] } | { invalidPoint: number }> {
  return partialSumsOnThreads('G1', bases, scalars, scalarBytes, true);
}

async function multiExp(
  group: MsmGroup,
  bases: Uint8Array,
  scalars: Uint8Array,
  scalarBytes: number,
): Promise<Uint8Array> {
  return ((await multiExpOnThreads(group, bases, scalars, scalarBytes, false)) as { sum: Uint8Array }).sum;
}

/** The kernel's sum, or ffjavascript's where the kernel cannot run; a RangeError is the caller's and is thrown. */
async function multiExpOrFallback(
  group: MsmGroup,
  bases: Uint8Array,
  scalars: Uint8Array,
  scalarBytes: number,
): Promise<Uint8Array> {
  try {
    return await multiExp(group, bases, scalars, scalarBytes);
  } catch (error) {
    if (error instanceof RangeError) throw error;
    return (await getBn128())[group].multiExpAffine(bases, scalars);
  }
}

/**
 * Σ scalars_i · bases_i over G1, as a point of ffjavascript's bn128 curve (what
 * `curve.G1.multiExpAffine` returns; `curve.G1.toAffine`, `eq`, `add` take it).
 *
 * @param bases n affine points in the zkey/ptau layout: x then y, 32 bytes each, little-endian,
 *   Montgomery form, fully reduced; (0,0) is the point at infinity. Not modified.
 * @param scalars n little-endian unsigned integers of `scalarBytes` bytes each (8 for link checks;
 *   32 for field elements, which must then be below r, in plain form, not Montgomery).
 * @param scalarBytes 1 to 32.
 * Rejects when the kernel cannot run (threads that cannot start or die); callers that must not
 * depend on it fall back to ffjavascript.
 */
export function g1MultiExp(bases: Uint8Array, scalars: Uint8Array, scalarBytes: number): Promise<Uint8Array> {
  return multiExp('G1', bases, scalars, scalarBytes);
}

/**
 * g1MultiExp of points read from a file nobody vouches for: the threads first check each point is
 * on the curve and canonically encoded (core/zkey/point-checks.ts says why), and answer with the
 * first bad one's index instead of a sum. Kernel only, like g1MultiExp.
 */
export function g1CheckedMultiExp(bases: Uint8Array, scalars: Uint8Array, scalarBytes: number): Promise<CheckedSum> {
  return multiExpOnThreads('G1', bases, scalars, scalarBytes, true);
}

/**
 * g1MultiExp, or ffjavascript's `multiExpAffine` (the same point, slower) where the kernel cannot
 * run: threads that cannot start or die. What the link check and the audit call; a bad argument
 * (RangeError) is still thrown, since ffjavascript would only compute the wrong sum from it.
 */
export function g1MultiExpOrFallback(bases: Uint8Array, scalars: Uint8Array, scalarBytes: number): Promise<Uint8Array> {
  return multiExpOrFallback('G1', bases, scalars, scalarBytes);
}

/**
 * Σ scalars_i · bases_i over G2, as a point of ffjavascript's bn128 curve (what
 * `curve.G2.multiExpAffine` returns).
 *
 * @param bases n affine points of the twist in the zkey layout: x.c0, x.c1, y.c0, y.c1, 32 bytes
 *   each, little-endian, Montgomery form, fully reduced; all zero is the point at infinity. Points
 *   on the twist but outside the order-r subgroup are summed as they are (the caller checks
 *   membership where it matters). Not modified.
 * @param scalars n little-endian unsigned integers of `scalarBytes` bytes each.
 * @param scalarBytes 1 to 32.
 * Rejects when the kernel cannot run, as g1MultiExp does.
 */
export function g2MultiExp(bases: Uint8Array, scalars: Uint8Array, scalarBytes: number): Promise<Uint8Array> {
  return multiExp('G2', bases, scalars, scalarBytes);
}

/** g2MultiExp, or ffjavascript's `G2.multiExpAffine` where the kernel cannot run (as g1MultiExpOrFallback). */
export function g2MultiExpOrFallback(bases: Uint8Array, scalars: Uint8Array, scalarBytes: number): Promise<Uint8Array> {
  return multiExpOrFallback('G2', bases, scalars, scalarBytes);
}

/**
 * The window sums of Σ s_i·P_i over G2, in windows of `windowBits` bits over the scalars' full
 * width, lowest first: W_w = Σ_i d_{w,i}·P_i with the kernel's signed digits d_{w,i} of s_i (each
 * from 2^windowBits consecutive integers, Σ_w 2^(windowBits·w)·d_{w,i} = s_i), so that Σ_w
 * 2^(windowBits·w)·W_w is the sum. Points of ffjavascript's curve. For the audit's test that every
 * point lies in the order-r subgroup (g2-msm.c says why the windows serve it); the same work as
 * g2MultiExp. Kernel only (see g2WindowSumsOrFallback).
 */
export async function g2WindowSums(
  bases: Uint8Array,
  scalars: Uint8Array,
  scalarBytes: number,
  windowBits: number,
): Promise<Uint8Array[]> {
  const pointBytes = MSM_POINT_BYTES.G2;
  if (!Number.isInteger(windowBits) || windowBits < 2 || windowBits > MAX_SUBGROUP_WINDOW_BITS) {
    throw new RangeError(`the window must be 2 to ${MAX_SUBGROUP_WINDOW_BITS} bits`);
  }
  if (!Number.isInteger(scalarBytes) || scalarBytes < 1 || scalarBytes > 32) {
    throw new RangeError('scalars must be 1 to 32 bytes wide');
  }
  if (bases.byteLength % pointBytes !== 0) throw new RangeError('the base buffer is not a whole number of G2 points');
  if (scalars.byteLength !== (bases.byteLength / pointBytes) * scalarBytes) {
    throw new RangeError('there must be one scalar per point');
  }
  const windows = msmWindowCount(8 * scalarBytes, windowBits);
  const threads = await currentPool();
  let parts: Uint8Array[] = [];
  try {
    if (bases.byteLength > 0) {
      parts = (await threads.partialSums('G2', bases, scalars, scalarBytes, false, windowBits)).parts;
    }
  } catch (error) {
    if (threads.broken) {
      if (pool && (await pool.catch(() => undefined)) === threads) pool = undefined;
      await threads.close();
    }
    throw error;
  }
  const G = (await getBn128()).G2;
  const sums = Array.from({ length: windows }, () => G.zero);
  for (const part of parts) {
    for (let offset = 0; offset < part.byteLength; offset += pointBytes) {
      if (part.subarray(offset, offset + pointBytes).every((byte) => byte === 0)) continue;
      const w = (offset / pointBytes) % windows;
      sums[w] = G.add(sums[w]!, G.fromRprLEM(part, offset));
    }
  }
  return sums;
}

/**
 * g2WindowSums, or where the kernel cannot run the same kind of window sums on ffjavascript: with
 * unsigned digits (each window's digits from [0, 2^windowBits), which the subgroup argument takes
 * as well), two-byte scalars, one multiExpAffine a window. Slow, and only a fallback.
 */
export async function g2WindowSumsOrFallback(
  bases: Uint8Array,
  scalars: Uint8Array,
  scalarBytes: number,
  windowBits: number,
): Promise<Uint8Array[]> {
  try {
    return await g2WindowSums(bases, scalars, scalarBytes, windowBits);
  } catch (error) {
    if (error instanceof RangeError) throw error;
    return ffjavascriptG2WindowSums(bases, scalars, scalarBytes, windowBits);
  }
}

/** The fallback of g2WindowSumsOrFallback: unsigned window digits, one ffjavascript multiExpAffine a window. */
export async function ffjavascriptG2WindowSums(
  bases: Uint8Array,
  scalars: Uint8Array,
  scalarBytes: number,
  windowBits: number,
): Promise<Uint8Array[]> {
  const G = (await getBn128()).G2;
  const n = bases.byteLength / MSM_POINT_BYTES.G2;
  const windows = msmWindowCount(8 * scalarBytes, windowBits);
  const sums: Uint8Array[] = [];
  for (let w = 0; w < windows; w++) {
    const digits = new Uint8Array(2 * n);
    for (let i = 0; i < n; i++) {
      const digit = windowDigit(scalars.subarray(i * scalarBytes, (i + 1) * scalarBytes), w * windowBits, windowBits);
      digits[2 * i] = digit & 0xff;
      digits[2 * i + 1] = digit >> 8;
    }
    sums.push(n === 0 ? G.zero : await G.multiExpAffine(bases, digits));
  }
  return sums;
}

/** Bits [offset, offset + width) of a little-endian scalar (width ≤ 16). */
function windowDigit(scalar: Uint8Array, offset: number, width: number): number {
  let value = 0;
  for (let bit = 0; bit < width; bit++) {
    const at = offset + bit;
    if (at >> 3 >= scalar.length) break;
    value |= ((scalar[at >> 3]! >> (at & 7)) & 1) << bit;
  }
  return value;
}

/** g1CheckedMultiExp, or where the kernel cannot run the same check on ffjavascript's main thread and its MSM. */
export async function g1CheckedMultiExpOrFallback(
  bases: Uint8Array,
  scalars: Uint8Array,
  scalarBytes: number,
): Promise<CheckedSum> {
  try {
    return await g1CheckedMultiExp(bases, scalars, scalarBytes);
  } catch (error) {
    if (error instanceof RangeError) throw error;
    const curve = await getBn128();
    const invalidPoint = firstPointOffCurve(curve, 'G1', bases);
    return invalidPoint >= 0 ? { invalidPoint } : { sum: await curve.G1.multiExpAffine(bases, scalars) };
  }
}

/**
 * Starts the MSM threads now rather than on the first call, for a caller that has other work to do
 * first (the threads compile the kernel meanwhile). A pool that cannot start is reported by that call.
 */
export function startMultiExpThreads(): void {
  currentPool().catch(() => undefined);
}

/** Stops the MSM threads, if started (the next g1MultiExp or g2MultiExp starts new ones). */
export async function closeMultiExp(): Promise<void> {
  const current = pool;
  pool = undefined;
  if (current) await (await current.catch(() => undefined))?.close();
}
