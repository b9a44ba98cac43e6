/**
 * The WebAssembly G1 kernel behind a small typed face: scales any number of zkey points (affine,
 * Montgomery, little-endian; 64 bytes each) in place by the scalar a ScaleChain was planned for,
 * one batch at a time. Two walks of the same chain with the same bytes out: g1-scale-x4.c, four
 * points in the lanes of WebAssembly SIMD vectors (kernel-simd-wasm.generated.ts), where the
 * runtime validates SIMD; else g1-scale.c, plain WebAssembly (kernel-wasm.generated.ts). Runs the
 * same in Node and in a browser worker: it needs only the module's bytes, no threads.
 */
import { fieldBytesLe } from '../crypto/bn254-moduli.ts';
import { BN254_Q, GLV_BETA, walkSchedule, type ScaleChain } from './g1-scale-chain.ts';
import { kernelSimdWasm } from './kernel-simd-wasm.generated.ts';
import { kernelWasm } from './kernel-wasm.generated.ts';

const POINT_BYTES = 64;
/** A field element in the walk's working form (bn254-fq-rr.h: 9 words of 32 bits). */
const WORK_FIELD_BYTES = 36;
const TABLE_POINTS = 8;
/** The schedule's room in the module's memory: (op, digit) byte pairs, ~170 of them for a 254-bit scalar. */
const SCHEDULE_BYTES = 4096;

/** Which walk a kernel runs: 'simd' (g1-scale-x4.c) or 'scalar' (g1-scale.c). */
export type ScaleKernelKind = 'simd' | 'scalar';

interface WalkShape {
  bytes: () => Uint8Array<ArrayBuffer>;
  /** Points walked together; the SIMD walk's lanes take them by fours. */
  lanes: number;
  /** The table's bytes for `lanes` points (odd multiples, and in the SIMD walk beta·x beside them). */
  tableBytesPerLanes: number;
  /** The scratch's bytes for `lanes` points (walking points, per-step field elements, flags). */
  scratchBytesPerLanes: number;
  /**
   * Points per lockstep batch. One field inversion (366 products; the SIMD walk's four lanes, 317)
   * is shared by the batch, so larger is cheaper per point until the batch's tables leave the CPU
   * cache (docs/kernel.md).
   */
  batchPoints: number;
}

const WALKS: Record<ScaleKernelKind, WalkShape> = {
  scalar: {
    bytes: kernelWasm,
    lanes: 1,
    tableBytesPerLanes: TABLE_POINTS * 2 * WORK_FIELD_BYTES,
    // The walking point, three field elements of the lockstep's scratch, and a flag.
    scratchBytesPerLanes: 2 * WORK_FIELD_BYTES + 3 * WORK_FIELD_BYTES + 1,
    batchPoints: 1024,
  },
  simd: {
    bytes: kernelSimdWasm,
    lanes: 4,
    // Per entry x, y and beta·x, each four lanes wide.
    tableBytesPerLanes: TABLE_POINTS * 3 * 4 * WORK_FIELD_BYTES,
    // The walking points, three field elements of scratch a step, and a flag a lane.
    scratchBytesPerLanes: 4 * (2 * WORK_FIELD_BYTES + 3 * WORK_FIELD_BYTES + 1),
    // What a step touches, about 330 bytes a point, stays within a core's L2 (2 MB here) at 4096.
    batchPoints: 4096,
  },
};

let simdValid: boolean | undefined;

/** Whether this runtime's WebAssembly takes the SIMD module (checked once). */
export function simdKernelAvailable(): boolean {
  if (simdValid === undefined) {
    try {
      simdValid = WebAssembly.validate(kernelSimdWasm());
    } catch {
      simdValid = false;
    }
  }
  return simdValid;
}

interface KernelExports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  scale_batch(pts: number, n: number, tab: number, scratch: number, sched: number, nsched: number, beta: number): void;
}

export interface ScaleKernelOptions {
  /** The walk; by default 'simd' where the runtime validates it, else 'scalar'. */
  kind?: ScaleKernelKind;
  /** Points per lockstep batch (tests use small ones to cover a batch's edges). */
  batchPoints?: number;
}

export class G1ScaleKernel {
  private constructor(
    private readonly exports: KernelExports,
    readonly kind: ScaleKernelKind,
    private readonly batchPoints: number,
    private readonly layout: { pts: number; tab: number; scratch: number; beta: number; sched: number },
  ) {}

  /**
   * Compiles and instantiates the chosen walk's module. By default the SIMD walk where the runtime
   * validates it, and the scalar walk where it does not or where the SIMD module fails to start.
   */
  static async instantiate(options: ScaleKernelOptions = {}): Promise<G1ScaleKernel> {
    if (options.kind) return G1ScaleKernel.instantiateWalk(options.kind, options.batchPoints);
    if (simdKernelAvailable()) {
      try {
        return await G1ScaleKernel.instantiateWalk('simd', options.batchPoints);
      } catch {
        // A runtime that validates SIMD but cannot compile or run the module: the scalar walk.
      }
    }
    return G1ScaleKernel.instantiateWalk('scalar', options.batchPoints);
  }

  private static async instantiateWalk(kind: ScaleKernelKind, batchOption?: number): Promise<G1ScaleKernel> {
    const walk = WALKS[kind];
    const batchPoints = batchOption ?? walk.batchPoints;
    if (!Number.isInteger(batchPoints) || batchPoints < 1)
      throw new RangeError('batchPoints must be a positive integer');
    const instance = await WebAssembly.instantiate(await WebAssembly.compile(walk.bytes()), {});
    const exports = instance.exports as unknown as KernelExports;
    const base = Math.ceil(Number(exports.__heap_base.value) / 64) * 64;
    const laneGroups = Math.ceil(batchPoints / walk.lanes);
    const layout = { beta: base, sched: base + 64, pts: base + 64 + SCHEDULE_BYTES, tab: 0, scratch: 0 };
    layout.tab = layout.pts + batchPoints * POINT_BYTES;
    layout.scratch = layout.tab + laneGroups * walk.tableBytesPerLanes;
    const end = layout.scratch + laneGroups * walk.scratchBytesPerLanes;
    const have = exports.memory.buffer.byteLength;
    if (end > have) exports.memory.grow(Math.ceil((end - have) / 65536));
    // β in the key's Montgomery form (β·2^256 mod q), which the kernel converts like the points.
    new Uint8Array(exports.memory.buffer, layout.beta, 32).set(fieldBytesLe((GLV_BETA << 256n) % BN254_Q));
    return new G1ScaleKernel(exports, kind, batchPoints, layout);
  }

  /** Scales every point of `points` (a whole number of 64-byte points) in place. */
  scale(points: Uint8Array, chain: ScaleChain): void {
    if (points.byteLength % POINT_BYTES !== 0) throw new Error('the point buffer is not a whole number of G1 points');
    const { schedule, steps } = walkSchedule(chain, this.kind === 'simd');
    if (schedule.byteLength > SCHEDULE_BYTES) throw new Error('the chain is longer than the kernel takes');
    const memory = new Uint8Array(this.exports.memory.buffer);
    memory.set(new Uint8Array(schedule.buffer, schedule.byteOffset, schedule.byteLength), this.layout.sched);
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
        steps,
        this.layout.beta,
      );
      slice.set(memory.subarray(this.layout.pts, this.layout.pts + n * POINT_BYTES));
    }
  }
}
