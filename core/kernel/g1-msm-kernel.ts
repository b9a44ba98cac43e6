/**
 * The kernel's multi-exponentiation (g1-msm.c) behind a typed face, for one thread: Σ s_i·P_i over
 * zkey-layout points (affine, Montgomery, little-endian, 64 bytes; (0,0) the point at infinity)
 * and little-endian scalars of a fixed byte width. Chooses the window for the size and the
 * scalars' actual bit length; inputs larger than one call takes are summed in parts, whose
 * affine partial sums are returned for the caller to add (ffjavascript's G1.add does it).
 */
import { g1KernelWasm } from './g1-kernel-wasm.ts';

const POINT_BYTES = 64;
/** Points per kernel call: bounds the module's memory (about 70 MB at 32-byte scalars). */
export const MSM_POINTS_PER_CALL = 1 << 18;

interface MsmExports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  msm_scratch_bytes(n: number, bits: number, c: number): number;
  msm(bases: number, scalars: number, n: number, scalarBytes: number, bits: number, c: number, scratch: number, out: number): void;
  g1_first_invalid(points: number, n: number): number;
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
 * Window width for n points and scalars of `bits` bits. The kernel's cost per window is about one
 * affine addition a point (bucket filling) plus about 4.5 of them a bucket (2^(c-1) buckets summed
 * by running sums in Jacobian coordinates); there are floor(bits / c) + 1 windows.
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

export class G1MsmKernel {
  private constructor(private readonly exports: MsmExports, private readonly base: number) {}

  /** Compiles (or reuses) the module; pass a compiled WebAssembly.Module to skip compilation in a worker. */
  static async instantiate(module?: WebAssembly.Module): Promise<G1MsmKernel> {
    const compiled = module ?? (await WebAssembly.compile(g1KernelWasm()));
    const instance = await WebAssembly.instantiate(compiled, {});
    const exports = instance.exports as unknown as MsmExports;
    return new G1MsmKernel(exports, Math.ceil(Number(exports.__heap_base.value) / 64) * 64);
  }

  /**
   * The index of the first point of `bases` that is off the curve or not canonically encoded, or -1
   * (point-check.c; the same verdict as core/zkey/point-checks.ts's firstPointOffCurve).
   */
  firstInvalidPoint(bases: Uint8Array): number {
    if (bases.byteLength % POINT_BYTES !== 0) throw new Error('the base buffer is not a whole number of G1 points');
    const total = bases.byteLength / POINT_BYTES;
    for (let first = 0; first < total; first += MSM_POINTS_PER_CALL) {
      const n = Math.min(MSM_POINTS_PER_CALL, total - first);
      const end = this.base + n * POINT_BYTES;
      const have = this.exports.memory.buffer.byteLength;
      if (end > have) this.exports.memory.grow(Math.ceil((end - have) / 65536));
      new Uint8Array(this.exports.memory.buffer).set(bases.subarray(first * POINT_BYTES, (first + n) * POINT_BYTES), this.base);
      const bad = this.exports.g1_first_invalid(this.base, n);
      if (bad >= 0) return first + bad;
    }
    return -1;
  }

  /**
   * Partial sums of Σ s_i·P_i, one 64-byte affine point per part of at most MSM_POINTS_PER_CALL
   * points (concatenated; their sum is the result). `scalars` holds scalarBytes bytes per point.
   */
  multiExpParts(bases: Uint8Array, scalars: Uint8Array, scalarBytes: number): Uint8Array {
    if (!Number.isInteger(scalarBytes) || scalarBytes < 1 || scalarBytes > 32) throw new Error('scalars must be 1 to 32 bytes wide');
    if (bases.byteLength % POINT_BYTES !== 0) throw new Error('the base buffer is not a whole number of G1 points');
    const total = bases.byteLength / POINT_BYTES;
    if (scalars.byteLength !== total * scalarBytes) throw new Error('there must be one scalar per point');
    const parts = Math.max(1, Math.ceil(total / MSM_POINTS_PER_CALL));
    const out = new Uint8Array(parts * POINT_BYTES);
    for (let part = 0; part < parts; part++) {
      const first = part * MSM_POINTS_PER_CALL;
      const n = Math.min(MSM_POINTS_PER_CALL, total - first);
      const partScalars = scalars.subarray(first * scalarBytes, (first + n) * scalarBytes);
      const bits = scalarBitLength(partScalars, scalarBytes);
      if (n === 0 || bits === 0) continue; // all-zero scalars: the part sums to infinity, (0,0)
      const c = msmWindowBits(n, bits);
      const basesAt = this.base;
      const scalarsAt = basesAt + n * POINT_BYTES;
      const outAt = Math.ceil((scalarsAt + n * scalarBytes) / 64) * 64;
      const scratchAt = outAt + 64;
      const end = scratchAt + this.exports.msm_scratch_bytes(n, bits, c);
      const have = this.exports.memory.buffer.byteLength;
      if (end > have) this.exports.memory.grow(Math.ceil((end - have) / 65536));
      const memory = new Uint8Array(this.exports.memory.buffer);
      memory.set(bases.subarray(first * POINT_BYTES, (first + n) * POINT_BYTES), basesAt);
      memory.set(partScalars, scalarsAt);
      this.exports.msm(basesAt, scalarsAt, n, scalarBytes, bits, c, scratchAt, outAt);
      out.set(memory.subarray(outAt, outAt + POINT_BYTES), part * POINT_BYTES);
    }
    return out;
  }
}
