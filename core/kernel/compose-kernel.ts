/**
 * init's sparse combinations of ptau points (sparse-compose.h: g1_compose, g2_compose) behind a
 * typed face, for one thread and one job: the accumulators of its share of the signals of one
 * key section, fed chunk after chunk of r1cs constraints with their bases, then read back as affine
 * points in the zkey layout. Each job has an instance of the module of its own; a thread hands a
 * finished job's instance to its next job (its memory, grown for the largest job so far, is reused
 * rather than left to the garbage collector beside a new one).
 */
import { kernelWasm } from './kernel-wasm.generated.ts';
import { MSM_POINT_BYTES, type MsmGroup } from './msm-kernel.ts';
import type { MatrixBases, SignalShare } from './compose-messages.ts';

/** Terms multiplied in one lockstep batch (about 1.6 MB of scratch in G1, 3.1 MB in G2, with the additions'). */
const BATCH_TERMS = 2048;

interface FixedBaseExports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  g1_fixed_scratch_bytes(n: number): number;
  g2_fixed_scratch_bytes(n: number): number;
  g1_fixed_table(g: number, table: number, scratch: number): void;
  g2_fixed_table(g: number, table: number, scratch: number): void;
  g1_fixed_times(table: number, scalars: number, n: number, out: number, scratch: number): void;
  g2_fixed_times(table: number, scalars: number, n: number, out: number, scratch: number): void;
}

interface ComposeExports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  g1_compose_scratch_bytes(maxTerms: number): number;
  g2_compose_scratch_bytes(maxTerms: number): number;
  g1_compose(...args: number[]): number;
  g2_compose(...args: number[]): number;
}

let compiled: Promise<WebAssembly.Module> | undefined;

/** local[s] of a signal the thread does not own (sparse-compose.h's CP_NOT_MINE). */
const NOT_MINE = 0xffffffff;

/** Outcome of adding a chunk: done, or the chunk's constraint whose term names a signal out of range. */
export type AddResult = { ok: true } | { badSignal: number };

export class ComposeKernel {
  private readonly pointBytes: number;
  private readonly accAt: number;
  private readonly localAt: number;
  private readonly slotsAt: number;
  private readonly scratchAt: number;
  private readonly chunkAt: number;
  /** Index of each owned block's first accumulator (blocks in `share.blocks` order). */
  private readonly firstOfBlock: Uint32Array;

  private constructor(
    readonly instance: WebAssembly.Instance,
    private readonly exports: ComposeExports,
    private readonly group: MsmGroup,
    private readonly share: SignalShare,
    private readonly nWires: number,
  ) {
    this.pointBytes = MSM_POINT_BYTES[group];
    const { shift, blocks } = share;
    this.firstOfBlock = new Uint32Array(blocks.length);
    let owned = 0;
    blocks.forEach((block, k) => {
      this.firstOfBlock[k] = owned;
      owned += Math.min(nWires, (block + 1) << shift) - (block << shift);
    });
    const align = (n: number): number => Math.ceil(n / 64) * 64;
    // Accumulators first (affine, zero: every one at infinity), then a word per owned signal for
    // the kernel's batching (zero between calls), then each signal's accumulator (or none), then
    // the batch scratch, then each chunk.
    this.accAt = align(Number(exports.__heap_base.value));
    this.slotsAt = this.accAt + align(owned * this.pointBytes);
    this.localAt = this.slotsAt + align(owned * 4);
    this.scratchAt = this.localAt + align(nWires * 4);
    const scratch = group === 'G1' ? exports.g1_compose_scratch_bytes : exports.g2_compose_scratch_bytes;
    this.chunkAt = this.scratchAt + align(scratch(BATCH_TERMS));
    const memory = this.reserve(this.chunkAt);
    // Every accumulator at infinity (all zero) and every batching word zero: a reused instance holds the last job's.
    memory.fill(0, this.accAt, this.localAt);
    const local = new Uint32Array(memory.buffer, this.localAt, nWires).fill(NOT_MINE);
    blocks.forEach((block, k) => {
      const first = block << shift;
      const end = Math.min(nWires, (block + 1) << shift);
      for (let s = first; s < end; s++) local[s] = this.firstOfBlock[k]! + s - first;
    });
  }

  /** A job over a share of the signals of a section in `group`; `reuse`: a finished job's instance. */
  static async open(
    group: MsmGroup,
    share: SignalShare,
    nWires: number,
    reuse?: WebAssembly.Instance,
  ): Promise<ComposeKernel> {
    compiled ??= WebAssembly.compile(kernelWasm());
    const instance = reuse ?? (await WebAssembly.instantiate(await compiled, {}));
    return new ComposeKernel(instance, instance.exports as unknown as ComposeExports, group, share, nWires);
  }

  private reserve(end: number): Uint8Array {
    const have = this.exports.memory.buffer.byteLength;
    if (end > have) this.exports.memory.grow(Math.ceil((end - have) / 65536));
    return new Uint8Array(this.exports.memory.buffer);
  }

  /** Adds the terms of `count` whole constraints (r1cs bytes) with these bases per matrix. */
  add(constraints: Uint8Array, count: number, bases: MatrixBases): AddResult {
    let at = this.chunkAt;
    const place = (bytes: Uint8Array | null): number => {
      if (!bytes) return 0;
      if (bytes.byteLength !== count * this.pointBytes) throw new RangeError('one base per constraint is needed');
      const where = at;
      at = Math.ceil((at + bytes.byteLength) / 64) * 64;
      return where;
    };
    const basesAt = bases.map(place);
    const constraintsAt = at;
    const whereAt = Math.ceil((constraintsAt + constraints.byteLength) / 64) * 64;
    const memory = this.reserve(whereAt + 64);
    bases.forEach((bytes, i) => bytes && memory.set(bytes, basesAt[i]!));
    memory.set(constraints, constraintsAt);
    const compose = this.group === 'G1' ? this.exports.g1_compose : this.exports.g2_compose;
    const status = compose(
      constraintsAt,
      count,
      this.nWires,
      basesAt[0]!,
      basesAt[1]!,
      basesAt[2]!,
      this.localAt,
      this.accAt,
      this.slotsAt,
      this.scratchAt,
      BATCH_TERMS,
      whereAt,
    );
    if (status !== 0) return { badSignal: new DataView(this.exports.memory.buffer).getUint32(whereAt, true) };
    return { ok: true };
  }

  /**
   * Writes the outputs of the signals of [from, to) this thread owns, affine points in the zkey
   * layout (the accumulators' own), at their places in `into` (signal s at (s − from)·pointBytes);
   * the other signals' places are left as they are.
   */
  affine(from: number, to: number, into: Uint8Array): void {
    if (from > to || into.byteLength < (to - from) * this.pointBytes) throw new RangeError('no room for the outputs');
    const { shift, blocks } = this.share;
    const memory = new Uint8Array(this.exports.memory.buffer);
    // The first owned block that can reach `from`.
    let lo = 0;
    let hi = blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((blocks[mid]! + 1) << shift <= from) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < blocks.length && blocks[k]! << shift < to; k++) {
      const first = Math.max(from, blocks[k]! << shift);
      const end = Math.min(to, this.nWires, (blocks[k]! + 1) << shift);
      if (first >= end) continue;
      const acc = this.accAt + (this.firstOfBlock[k]! + first - (blocks[k]! << shift)) * this.pointBytes;
      into.set(memory.subarray(acc, acc + (end - first) * this.pointBytes), (first - from) * this.pointBytes);
    }
  }
}

/** Scalars per fixed-base call (the batch of one window's additions). */
const FIXED_BATCH = 4096;
const TABLE_POINTS = 32 * 255;

/**
 * Fixed-base multiplications s·G by the kernel's comb (sparse-compose.h: g1_fixed_times,
 * g2_fixed_times): a table of 8,160 multiples of the generator, made once, then at most 32 affine
 * additions per scalar. For the development ptau (core/ptau/fixed-base-times.ts).
 */
export class FixedBaseKernel {
  private constructor(
    private readonly exports: FixedBaseExports,
    private readonly group: MsmGroup,
    private readonly at: { table: number; scratch: number; batch: number },
  ) {}

  static async create(group: MsmGroup, generator: Uint8Array): Promise<FixedBaseKernel> {
    compiled ??= WebAssembly.compile(kernelWasm());
    const exports = (await WebAssembly.instantiate(await compiled, {})).exports as unknown as FixedBaseExports;
    const pointBytes = MSM_POINT_BYTES[group];
    const base = Math.ceil(Number(exports.__heap_base.value) / 64) * 64;
    const table = base + 256;
    const scratch = table + Math.ceil((TABLE_POINTS * pointBytes) / 64) * 64;
    const scratchBytes = group === 'G1' ? exports.g1_fixed_scratch_bytes : exports.g2_fixed_scratch_bytes;
    const batch = scratch + Math.ceil(scratchBytes(FIXED_BATCH) / 64) * 64;
    const kernel = new FixedBaseKernel(exports, group, { table, scratch, batch });
    kernel.reserve(batch + FIXED_BATCH * (32 + pointBytes)).set(generator, base);
    (group === 'G1' ? exports.g1_fixed_table : exports.g2_fixed_table)(base, table, scratch);
    return kernel;
  }

  private reserve(end: number): Uint8Array {
    const have = this.exports.memory.buffer.byteLength;
    if (end > have) this.exports.memory.grow(Math.ceil((end - have) / 65536));
    return new Uint8Array(this.exports.memory.buffer);
  }

  /** s·G for each 32-byte scalar (Fr in Montgomery form, below r), affine points in the zkey layout. */
  times(scalars: Uint8Array): Uint8Array {
    if (scalars.byteLength % 32 !== 0) throw new RangeError('scalars must be whole Fr elements');
    const pointBytes = MSM_POINT_BYTES[this.group];
    const n = scalars.byteLength / 32;
    const out = new Uint8Array(n * pointBytes);
    const times = this.group === 'G1' ? this.exports.g1_fixed_times : this.exports.g2_fixed_times;
    for (let first = 0; first < n; first += FIXED_BATCH) {
      const m = Math.min(FIXED_BATCH, n - first);
      const memory = this.reserve(this.at.batch + m * (32 + pointBytes));
      memory.set(scalars.subarray(first * 32, (first + m) * 32), this.at.batch);
      const outAt = this.at.batch + m * 32;
      times(this.at.table, this.at.batch, m, outAt, this.at.scratch);
      out.set(new Uint8Array(this.exports.memory.buffer, outAt, m * pointBytes), first * pointBytes);
    }
    return out;
  }
}
