/**
 * G1 (and G2) points in snarkjs's uncompressed form (g1-uncompressed.c), on the calling thread: what
 * ffjavascript's `batchLEMtoU` and its affine subtraction give, for the audit's recomputation of the
 * circuit hash and init's computation of it. One instance of the kernel's module per caller; not shared across threads.
 */
import { kernelWasm } from './kernel-wasm.generated.ts';

const POINT_BYTES = 64;

interface UncompressedExports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  g1_to_uncompressed(points: number, n: number, out: number): void;
  g2_to_uncompressed(points: number, n: number, out: number): void;
  g1_sub_scratch_bytes(n: number): number;
  g1_sub_to_uncompressed(a: number, b: number, n: number, scratch: number, out: number): void;
}

export class G1Uncompressed {
  private constructor(
    private readonly exports: UncompressedExports,
    private readonly base: number,
  ) {}

  static async instantiate(): Promise<G1Uncompressed> {
    const instance = await WebAssembly.instantiate(await WebAssembly.compile(kernelWasm()), {});
    const exports = instance.exports as unknown as UncompressedExports;
    return new G1Uncompressed(exports, Math.ceil(Number(exports.__heap_base.value) / 64) * 64);
  }

  private reserve(end: number): Uint8Array {
    const have = this.exports.memory.buffer.byteLength;
    if (end > have) this.exports.memory.grow(Math.ceil((end - have) / 65536));
    return new Uint8Array(this.exports.memory.buffer);
  }

  /** Affine points (zkey layout) → uncompressed, as ffjavascript's batchLEMtoU. */
  toUncompressed(points: Uint8Array): Uint8Array {
    if (points.byteLength % POINT_BYTES !== 0) throw new RangeError('the buffer is not a whole number of G1 points');
    const memory = this.reserve(this.base + points.byteLength);
    memory.set(points, this.base);
    this.exports.g1_to_uncompressed(this.base, points.byteLength / POINT_BYTES, this.base);
    return memory.slice(this.base, this.base + points.byteLength);
  }

  /**
   * Affine points of `group` (zkey layout) → uncompressed, as ffjavascript's batchLEMtoU, as a view
   * of this instance's memory valid until its next call (for a hash fed at once: init's circuit
   * hash; no copy left behind for the collector).
   */
  uncompressedView(points: Uint8Array, group: 'G1' | 'G2'): Uint8Array {
    const pointBytes = group === 'G1' ? POINT_BYTES : 2 * POINT_BYTES;
    if (points.byteLength % pointBytes !== 0)
      throw new RangeError(`the buffer is not a whole number of ${group} points`);
    const memory = this.reserve(this.base + points.byteLength);
    memory.set(points, this.base);
    const convert = group === 'G1' ? this.exports.g1_to_uncompressed : this.exports.g2_to_uncompressed;
    convert(this.base, points.byteLength / pointBytes, this.base);
    return memory.subarray(this.base, this.base + points.byteLength);
  }

  /** a_i − b_i for pairs of affine points (zkey layout), uncompressed. */
  differencesUncompressed(a: Uint8Array, b: Uint8Array): Uint8Array {
    if (a.byteLength % POINT_BYTES !== 0 || a.byteLength !== b.byteLength)
      throw new RangeError('the two buffers must hold the same whole number of G1 points');
    const n = a.byteLength / POINT_BYTES;
    const at = {
      a: this.base,
      b: this.base + a.byteLength,
      out: this.base + 2 * a.byteLength,
      scratch: this.base + 3 * a.byteLength,
    };
    const memory = this.reserve(at.scratch + this.exports.g1_sub_scratch_bytes(n));
    memory.set(a, at.a);
    memory.set(b, at.b);
    this.exports.g1_sub_to_uncompressed(at.a, at.b, n, at.scratch, at.out);
    return new Uint8Array(this.exports.memory.buffer).slice(at.out, at.out + a.byteLength);
  }
}
