/**
 * The audit's r1cs pass (r1cs-scan.c) on the calling thread (and init's, R1csInitPass, at the end):
 * per constraint, the random combinations u, v, w of its A, B and C rows and w + σ1·u + σ2·v, as
 * 32-byte little-endian scalars below r; and the key's coefficients section compared entry by entry.
 * One instance per r1cs pass.
 */
import { kernelWasm } from './kernel-wasm.generated.ts';

const N8 = 32;
/** Bytes of one section-4 entry: matrix, constraint, signal, coefficient. */
export const COEFFICIENT_ENTRY_BYTES = 12 + N8;

interface ScanExports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  fr_to_montgomery(scalars: number, n: number, width: number, out: number): void;
  r1cs_scan(
    constraints: number,
    n: number,
    first: number,
    rho: number,
    nWires: number,
    sigma: number,
    entries: number,
    u: number,
    v: number,
    w: number,
    combined: number,
    where: number,
  ): number;
}

/** Why a batch was refused, and at which constraint. */
export type ScanFailure = { kind: 'signal_out_of_range' | 'coefficient_mismatch'; constraint: number };

export interface ScanBatchResult {
  u: Uint8Array;
  v: Uint8Array;
  w: Uint8Array;
  combined: Uint8Array;
}

export class R1csScanKernel {
  /** Memory layout: ρ in Montgomery form, σ1 and σ2, the failing index, then each batch. */
  private constructor(
    private readonly exports: ScanExports,
    private readonly nWires: number,
    private readonly at: { rho: number; sigma: number; where: number; batch: number },
  ) {}

  /**
   * @param rho one scalar per signal, `width` bytes little-endian each (below r).
   * @param sigma σ1 and σ2, below r.
   */
  static async instantiate(
    rho: Uint8Array,
    width: number,
    nWires: number,
    sigma: [bigint, bigint],
  ): Promise<R1csScanKernel> {
    if (rho.byteLength !== nWires * width) throw new RangeError('there must be one scalar per signal');
    const instance = await WebAssembly.instantiate(await WebAssembly.compile(kernelWasm()), {});
    const exports = instance.exports as unknown as ScanExports;
    const base = Math.ceil(Number(exports.__heap_base.value) / 64) * 64;
    const at = { rho: base, sigma: base + nWires * N8, where: base + nWires * N8 + 2 * N8, batch: 0 };
    const raw = at.where + 64;
    at.batch = raw + Math.ceil((rho.byteLength + 2 * N8) / 64) * 64;
    const kernel = new R1csScanKernel(exports, nWires, at);
    const memory = kernel.reserve(at.batch);
    memory.set(rho, raw);
    exports.fr_to_montgomery(raw, nWires, width, at.rho);
    const sigmaBytes = new Uint8Array(2 * N8);
    sigma.forEach((value, i) => {
      for (let b = 0; b < N8; b++) sigmaBytes[i * N8 + b] = Number((value >> BigInt(8 * b)) & 0xffn);
    });
    kernel.reserve(at.batch).set(sigmaBytes, raw);
    exports.fr_to_montgomery(raw, 2, N8, at.sigma);
    return kernel;
  }

  private reserve(end: number): Uint8Array {
    const have = this.exports.memory.buffer.byteLength;
    if (end > have) this.exports.memory.grow(Math.ceil((end - have) / 65536));
    return new Uint8Array(this.exports.memory.buffer);
  }

  /**
   * Scans `count` whole constraints (their r1cs bytes), the first numbered `first`; `entries` holds
   * the key's section-4 entries for their A and B terms, or is undefined not to compare.
   */
  scan(
    constraints: Uint8Array,
    count: number,
    first: number,
    entries: Uint8Array | undefined,
  ): ScanBatchResult | ScanFailure {
    const entriesAt = this.at.batch + Math.ceil(constraints.byteLength / 64) * 64;
    const outAt = entriesAt + Math.ceil((entries?.byteLength ?? 0) / 64) * 64;
    const size = count * N8;
    const memory = this.reserve(outAt + 4 * size);
    memory.set(constraints, this.at.batch);
    if (entries) memory.set(entries, entriesAt);
    const status = this.exports.r1cs_scan(
      this.at.batch,
      count,
      first,
      this.at.rho,
      this.nWires,
      this.at.sigma,
      entries ? entriesAt : 0,
      outAt,
      outAt + size,
      outAt + 2 * size,
      outAt + 3 * size,
      this.at.where,
    );
    const after = new Uint8Array(this.exports.memory.buffer);
    if (status !== 0) {
      const constraint = new DataView(after.buffer).getUint32(this.at.where, true);
      return { kind: status === 1 ? 'signal_out_of_range' : 'coefficient_mismatch', constraint };
    }
    return {
      u: after.subarray(outAt, outAt + size),
      v: after.subarray(outAt + size, outAt + 2 * size),
      w: after.subarray(outAt + 2 * size, outAt + 3 * size),
      combined: after.subarray(outAt + 3 * size, outAt + 4 * size),
    };
  }
}

interface InitPassExports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  r1cs_init_pass(
    constraints: number,
    n: number,
    first: number,
    nWires: number,
    shift: number,
    counts: number,
    out: number,
    written: number,
    where: number,
  ): number;
}

/** A batch's r1cs names a signal beyond its wires, in the batch's constraint `constraint`. */
export type InitPassFailure = { badSignal: number };

/**
 * init's two passes over the r1cs (r1cs-scan.c) on the calling thread: the number of terms of each
 * matrix per block of 2^shift signals, and the coefficients section's entries, a batch of whole
 * constraints at a time.
 */
export class R1csInitPass {
  private constructor(
    private readonly exports: InitPassExports,
    private readonly nWires: number,
    private readonly shift: number,
    private readonly at: { counts: number; where: number; written: number; batch: number },
  ) {}

  static async instantiate(nWires: number, shift: number): Promise<R1csInitPass> {
    const instance = await WebAssembly.instantiate(await WebAssembly.compile(kernelWasm()), {});
    const exports = instance.exports as unknown as InitPassExports;
    const base = Math.ceil(Number(exports.__heap_base.value) / 64) * 64;
    const countsBytes = 3 * 4 * ((nWires >> shift) + 1);
    const where = base + Math.ceil(countsBytes / 64) * 64;
    const pass = new R1csInitPass(exports, nWires, shift, {
      counts: base,
      where,
      written: where + 4,
      batch: where + 64,
    });
    pass.reserve(pass.at.batch).fill(0, base, where);
    return pass;
  }

  private reserve(end: number): Uint8Array {
    const have = this.exports.memory.buffer.byteLength;
    if (end > have) this.exports.memory.grow(Math.ceil((end - have) / 65536));
    return new Uint8Array(this.exports.memory.buffer);
  }

  /** Adds the terms of `count` whole constraints to the counts. */
  count(constraints: Uint8Array, count: number): InitPassFailure | undefined {
    this.reserve(this.at.batch + constraints.byteLength).set(constraints, this.at.batch);
    const status = this.exports.r1cs_init_pass(
      this.at.batch,
      count,
      0,
      this.nWires,
      this.shift,
      this.at.counts,
      0,
      0,
      this.at.where,
    );
    if (status !== 0) return { badSignal: new DataView(this.exports.memory.buffer).getUint32(this.at.where, true) };
    return undefined;
  }

  /** The counts so far: [A, B, C] terms of block b at 3·b, 3·b + 1, 3·b + 2. */
  counts(): Uint32Array {
    const blocks = (this.nWires >> this.shift) + 1;
    return new Uint32Array(this.exports.memory.buffer.slice(this.at.counts, this.at.counts + 3 * 4 * blocks));
  }

  /**
   * The coefficients section's entries of `count` whole constraints, the first numbered `first`: a
   * view of this instance's memory, valid until its next call.
   */
  coefficients(constraints: Uint8Array, count: number, first: number): Uint8Array | InitPassFailure {
    const outAt = this.at.batch + Math.ceil(constraints.byteLength / 64) * 64;
    // An entry (44 bytes) per A or B term, which takes at least 36 bytes of the r1cs.
    const memory = this.reserve(outAt + Math.ceil((constraints.byteLength * COEFFICIENT_ENTRY_BYTES) / 36) + 64);
    memory.set(constraints, this.at.batch);
    const status = this.exports.r1cs_init_pass(
      this.at.batch,
      count,
      first,
      this.nWires,
      this.shift,
      0,
      outAt,
      this.at.written,
      this.at.where,
    );
    const view = new DataView(this.exports.memory.buffer);
    if (status !== 0) return { badSignal: view.getUint32(this.at.where, true) };
    const entries = view.getUint32(this.at.written, true);
    return new Uint8Array(this.exports.memory.buffer, outAt, entries * COEFFICIENT_ENTRY_BYTES);
  }
}
