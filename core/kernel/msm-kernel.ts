/**
 * The kernel's multi-exponentiations (g1-msm.c over G1, g2-msm.c over G2, one WebAssembly module)
 * behind a typed face, for one thread: Σ s_i·P_i over zkey-layout points (affine, Montgomery,
 * little-endian: 64 bytes in G1, 128 in G2; all zero the point at infinity) and little-endian
 * scalars of a fixed byte width. Chooses the window for the size and the scalars' actual bit
 * length; inputs larger than one call takes are summed in parts, whose affine partial
 * sums are returned for the caller to add (ffjavascript's G1.add or G2.add does it).
 */
import { kernelWasm } from './kernel-wasm.generated.ts';

export type MsmGroup = 'G1' | 'G2';

/** Bytes of one affine point of each group, in the zkey layout. */
export const MSM_POINT_BYTES: Record<MsmGroup, number> = { G1: 64, G2: 128 };
/**
 * Points per kernel call: bounds the module's memory (at 32-byte scalars about 95 MB in G1, 160 MB in
 * G2, of which a copy of the points in the reduced radix, 19 and 38 MB; at 8-byte scalars 78 MB in G1).
 */
const MSM_POINTS_PER_CALL = 1 << 18;

type MsmFunction = (
  bases: number,
  scalars: number,
  n: number,
  scalarBytes: number,
  bits: number,
  c: number,
  scratch: number,
  out: number,
) => void;
type MsmScratchBytes = (n: number, bits: number, c: number) => number;

interface MsmExports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  msm_scratch_bytes: MsmScratchBytes;
  msm: MsmFunction;
  msm_fq32_scratch_bytes: MsmScratchBytes;
  msm_fq32: MsmFunction;
  g2_msm_scratch_bytes: MsmScratchBytes;
  g2_msm: MsmFunction;
  g2_msm_fq32_scratch_bytes: MsmScratchBytes;
  g2_msm_fq32: MsmFunction;
  g2_msm_windows: MsmFunction;
  g1_first_invalid(points: number, n: number): number;
}

/**
 * The widest window g2_msm_windows may use for the audit's subgroup argument: its digits span 2^c
 * consecutive integers, which must be fewer than 10069, the smallest prime factor of the twist's
 * cofactor (g2-msm.c).
 */
export const MAX_SUBGROUP_WINDOW_BITS = 13;

/** Windows of an MSM over scalars below 2^bits in windows of c bits (pippenger-msm.h's windows_for). */
export function msmWindowCount(bits: number, c: number): number {
  return Math.floor(bits / c) + 1;
}

/** Highest bit length among the scalars (0 when all are zero): windows above it would be empty. */
export function scalarBitLength(scalars: Uint8Array, scalarBytes: number): number {
  let top = -1;
  const n = scalars.byteLength / scalarBytes;
  for (let i = 0; i < n; i++) {
    const base = i * scalarBytes;
    for (let b = scalarBytes - 1; b > top; b--) {
      if (scalars[base + b] !== 0) {
        top = b;
        break;
      }
    }
    if (top === scalarBytes - 1) break;
  }
  if (top < 0) return 0;
  let bits = 8 * top;
  for (let i = 0; i < n; i++) bits = Math.max(bits, 8 * top + (32 - Math.clz32(scalars[i * scalarBytes + top]!)));
  return bits;
}

/**
 * Window width for n points and scalars of `bits` bits, in either group. The kernel's cost per
 * window is about one affine addition a point (bucket filling) plus about 4.5 of them a bucket
 * (2^(c-1) buckets summed by running sums in Jacobian coordinates); there are floor(bits / c) + 1
 * windows. In G2 every operation costs about 3.3 times its G1 counterpart, points and buckets
 * alike, so the same weight holds: measured on one thread in CPU time with 16-byte scalars, the
 * widths it picks (12 at 65,536 points, 13 at 116,500) were the fastest (`bench/g2-msm.ts --sweep`).
 */
export function msmWindowBits(n: number, bits: number): number {
  let best = 2;
  let bestCost = Infinity;
  for (let c = 2; c <= 20; c++) {
    const cost = (Math.floor(bits / c) + 1) * (n + 4.5 * 2 ** (c - 1));
    if (cost < bestCost) {
      best = c;
      bestCost = cost;
    }
  }
  return best;
}

export class MsmKernel {
  private constructor(
    private readonly exports: MsmExports,
    private readonly base: number,
  ) {}

  /** Compiles (or reuses) the module; pass a compiled WebAssembly.Module to skip compilation in a worker. */
  static async instantiate(module?: WebAssembly.Module): Promise<MsmKernel> {
    const compiled = module ?? (await WebAssembly.compile(kernelWasm()));
    const instance = await WebAssembly.instantiate(compiled, {});
    const exports = instance.exports as unknown as MsmExports;
    return new MsmKernel(exports, Math.ceil(Number(exports.__heap_base.value) / 64) * 64);
  }

  /**
   * The index of the first point of `bases` that is off the curve or not canonically encoded, or -1
   * (point-check.c; the same verdict as core/zkey/point-checks.ts's firstPointOffCurve).
   */
  firstInvalidPoint(bases: Uint8Array): number {
    if (bases.byteLength % MSM_POINT_BYTES.G1 !== 0)
      throw new Error('the base buffer is not a whole number of G1 points');
    const total = bases.byteLength / MSM_POINT_BYTES.G1;
    for (let first = 0; first < total; first += MSM_POINTS_PER_CALL) {
      const n = Math.min(MSM_POINTS_PER_CALL, total - first);
      const end = this.base + n * MSM_POINT_BYTES.G1;
      const have = this.exports.memory.buffer.byteLength;
      if (end > have) this.exports.memory.grow(Math.ceil((end - have) / 65536));
      new Uint8Array(this.exports.memory.buffer).set(
        bases.subarray(first * MSM_POINT_BYTES.G1, (first + n) * MSM_POINT_BYTES.G1),
        this.base,
      );
      const bad = this.exports.g1_first_invalid(this.base, n);
      if (bad >= 0) return first + bad;
    }
    return -1;
  }

  /**
   * Partial sums of Σ s_i·P_i in `group`, one affine point (MSM_POINT_BYTES) per part of at most
   * MSM_POINTS_PER_CALL points (concatenated; their sum is the result). `scalars` holds scalarBytes
   * bytes per point. `window` overrides the window width (benchmarks measure the choice with it).
   * `keyField` sums in the key's 32-bit field (msm_fq32, g2_msm_fq32) instead of the reduced radix
   * (msm, g2_msm): the same points, for the tests and benchmarks that compare the two.
   */
  multiExpParts(
    bases: Uint8Array,
    scalars: Uint8Array,
    scalarBytes: number,
    group: MsmGroup = 'G1',
    window?: number,
    keyField = false,
  ): Uint8Array {
    const pointBytes = MSM_POINT_BYTES[group];
    const { exports } = this;
    const [msm, scratchBytes] =
      group === 'G2'
        ? keyField
          ? [exports.g2_msm_fq32, exports.g2_msm_fq32_scratch_bytes]
          : [exports.g2_msm, exports.g2_msm_scratch_bytes]
        : keyField
          ? [exports.msm_fq32, exports.msm_fq32_scratch_bytes]
          : [exports.msm, exports.msm_scratch_bytes];
    if (!Number.isInteger(scalarBytes) || scalarBytes < 1 || scalarBytes > 32)
      throw new Error('scalars must be 1 to 32 bytes wide');
    if (window !== undefined && (!Number.isInteger(window) || window < 2 || window > 20))
      throw new Error('the window must be 2 to 20 bits');
    if (bases.byteLength % pointBytes !== 0)
      throw new Error(`the base buffer is not a whole number of ${group} points`);
    const total = bases.byteLength / pointBytes;
    if (scalars.byteLength !== total * scalarBytes) throw new Error('there must be one scalar per point');
    const parts = Math.max(1, Math.ceil(total / MSM_POINTS_PER_CALL));
    const out = new Uint8Array(parts * pointBytes);
    for (let part = 0; part < parts; part++) {
      const first = part * MSM_POINTS_PER_CALL;
      const n = Math.min(MSM_POINTS_PER_CALL, total - first);
      const partScalars = scalars.subarray(first * scalarBytes, (first + n) * scalarBytes);
      const bits = scalarBitLength(partScalars, scalarBytes);
      if (n === 0 || bits === 0) continue; // all-zero scalars: the part sums to infinity, (0,0)
      const c = window ?? msmWindowBits(n, bits);
      const basesAt = this.base;
      const scalarsAt = basesAt + n * pointBytes;
      const outAt = Math.ceil((scalarsAt + n * scalarBytes) / 64) * 64;
      const scratchAt = outAt + pointBytes;
      const end = scratchAt + scratchBytes(n, bits, c);
      const have = this.exports.memory.buffer.byteLength;
      if (end > have) this.exports.memory.grow(Math.ceil((end - have) / 65536));
      const memory = new Uint8Array(this.exports.memory.buffer);
      memory.set(bases.subarray(first * pointBytes, (first + n) * pointBytes), basesAt);
      memory.set(partScalars, scalarsAt);
      msm(basesAt, scalarsAt, n, scalarBytes, bits, c, scratchAt, outAt);
      out.set(memory.subarray(outAt, outAt + pointBytes), part * pointBytes);
    }
    return out;
  }

  /**
   * The window sums of Σ s_i·P_i over G2 (g2_msm_windows) in windows of exactly `window` bits over
   * the full width of the scalars (8·scalarBytes bits, whatever their actual length, so every call
   * has the same windows): msmWindowCount(8·scalarBytes, window) affine points per part of at most
   * MSM_POINTS_PER_CALL points, lowest window first, parts one after another. Σ_w 2^(window·w)·W_w
   * is the sum; g2-msm.c says what the windows are for.
   */
  g2WindowSumParts(bases: Uint8Array, scalars: Uint8Array, scalarBytes: number, window: number): Uint8Array {
    const pointBytes = MSM_POINT_BYTES.G2;
    if (!Number.isInteger(scalarBytes) || scalarBytes < 1 || scalarBytes > 32) {
      throw new Error('scalars must be 1 to 32 bytes wide');
    }
    if (!Number.isInteger(window) || window < 2 || window > MAX_SUBGROUP_WINDOW_BITS) {
      throw new Error(`the window must be 2 to ${MAX_SUBGROUP_WINDOW_BITS} bits`);
    }
    if (bases.byteLength % pointBytes !== 0) throw new Error('the base buffer is not a whole number of G2 points');
    const total = bases.byteLength / pointBytes;
    if (scalars.byteLength !== total * scalarBytes) throw new Error('there must be one scalar per point');
    const bits = 8 * scalarBytes;
    const windows = msmWindowCount(bits, window);
    const parts = Math.max(1, Math.ceil(total / MSM_POINTS_PER_CALL));
    const out = new Uint8Array(parts * windows * pointBytes);
    for (let part = 0; part < parts; part++) {
      const first = part * MSM_POINTS_PER_CALL;
      const n = Math.min(MSM_POINTS_PER_CALL, total - first);
      if (n === 0) continue; // no points: every window sums to infinity, (0,0)
      const basesAt = this.base;
      const scalarsAt = basesAt + n * pointBytes;
      const outAt = Math.ceil((scalarsAt + n * scalarBytes) / 64) * 64;
      const scratchAt = Math.ceil((outAt + windows * pointBytes) / 64) * 64;
      const end = scratchAt + this.exports.g2_msm_scratch_bytes(n, bits, window);
      const have = this.exports.memory.buffer.byteLength;
      if (end > have) this.exports.memory.grow(Math.ceil((end - have) / 65536));
      const memory = new Uint8Array(this.exports.memory.buffer);
      memory.set(bases.subarray(first * pointBytes, (first + n) * pointBytes), basesAt);
      memory.set(scalars.subarray(first * scalarBytes, (first + n) * scalarBytes), scalarsAt);
      this.exports.g2_msm_windows(basesAt, scalarsAt, n, scalarBytes, bits, window, scratchAt, outAt);
      out.set(memory.subarray(outAt, outAt + windows * pointBytes), part * windows * pointBytes);
    }
    return out;
  }
}
