/**
 * The WebAssembly G1 kernel (g1-scale.c) behind a small typed face: scales any number of zkey
 * points (affine, Montgomery, little-endian; 64 bytes each) in place by the scalar a ScaleChain
 * was planned for, one batch at a time. Runs the same in Node and in a browser worker: it only
 * needs the module's bytes (kernel-wasm.generated.ts) and plain WebAssembly, no threads or SIMD.
 */
import { fieldBytesLe } from '../crypto/bn254-moduli.ts';
import { BN254_Q, GLV_BETA, type ScaleChain } from './g1-scale-chain.ts';
import { kernelWasm } from './kernel-wasm.generated.ts';

const POINT_BYTES = 64;
/**
 * The kernel walks points in its own working form (g1-scale.c, bn254-fq-rr.h: a field element is
 * 9 words of 32 bits), converted from and back to the key's 64-byte layout inside each batch.
 */
const WORK_FIELD_BYTES = 36;
const WORK_POINT_BYTES = 2 * WORK_FIELD_BYTES;
const TABLE_POINTS = 8;
/**
 * Points per lockstep batch. One field inversion (~380 products) is shared by the batch, so larger
 * is cheaper per point until the batch's tables leave the CPU cache (measured: 1024 is the knee).
 */
const DEFAULT_BATCH_POINTS = 1024;

interface KernelExports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  scale_batch(pts: number, n: number, tab: number, scratch: number, sched: number, nsched: number, beta: number): void;
}

export class G1ScaleKernel {
  private constructor(
    private readonly exports: KernelExports,
    private readonly batchPoints: number,
    private readonly layout: { pts: number; tab: number; scratch: number; beta: number; sched: number },
  ) {}

  /** Compiles (or reuses) the module; pass a compiled WebAssembly.Module to skip compilation in a worker. */
  static async instantiate(module?: WebAssembly.Module, batchPoints = DEFAULT_BATCH_POINTS): Promise<G1ScaleKernel> {
    const compiled = module ?? (await WebAssembly.compile(kernelWasm()));
    const instance = await WebAssembly.instantiate(compiled, {});
    const exports = instance.exports as unknown as KernelExports;
    const base = Math.ceil(Number(exports.__heap_base.value) / 64) * 64;
    const layout = {
      beta: base,
      sched: base + 64,
      pts: base + 64 + 4096,
      tab: 0,
      scratch: 0,
    };
    layout.tab = layout.pts + batchPoints * POINT_BYTES;
    layout.scratch = layout.tab + batchPoints * TABLE_POINTS * WORK_POINT_BYTES;
    // The walking points, three field elements of the lockstep's scratch, and a flag, per point.
    const end = layout.scratch + batchPoints * (WORK_POINT_BYTES + 3 * WORK_FIELD_BYTES + 1);
    const have = exports.memory.buffer.byteLength;
    if (end > have) exports.memory.grow(Math.ceil((end - have) / 65536));
    // β in the key's Montgomery form (β·2^256 mod q), which the kernel converts like the points.
    new Uint8Array(exports.memory.buffer, layout.beta, 32).set(fieldBytesLe((GLV_BETA << 256n) % BN254_Q));
    return new G1ScaleKernel(exports, batchPoints, layout);
  }

  /** Scales every point of `points` (a whole number of 64-byte points) in place. */
  scale(points: Uint8Array, chain: ScaleChain): void {
    if (points.byteLength % POINT_BYTES !== 0) throw new Error('the point buffer is not a whole number of G1 points');
    if (chain.schedule.byteLength > 4096) throw new Error('the chain is longer than the kernel takes');
    const memory = new Uint8Array(this.exports.memory.buffer);
    memory.set(
      new Uint8Array(chain.schedule.buffer, chain.schedule.byteOffset, chain.schedule.byteLength),
      this.layout.sched,
    );
    const total = points.byteLength / POINT_BYTES;
    for (let first = 0; first < total; first += this.batchPoints) {
      const n = Math.min(this.batchPoints, total - first);
      const slice = points.subarray(first * POINT_BYTES, (first + n) * POINT_BYTES);
      memory.set(slice, this.layout.pts);
      this.exports.scale_batch(
        this.layout.pts,
        n,
        this.layout.tab,
        this.layout.scratch,
        this.layout.sched,
        chain.steps,
        this.layout.beta,
      );
      slice.set(memory.subarray(this.layout.pts, this.layout.pts + n * POINT_BYTES));
    }
  }
}
