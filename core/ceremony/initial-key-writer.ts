/**
 * Contribution 0 on the kernel: writes, for an r1cs and a prepared ptau, exactly the bytes of
 * snarkjs 0.7.6's `zkey new` (src/zkey_new.js; core/audit/check-initial-key.ts lists what each
 * section holds), in bounded memory, streamed to the file in the file's order, with the file's
 * BLAKE2b-512 and each section's computed as the bytes are written (no second read).
 *
 *   1, 2  protocol and header: q, r, nVars, nPublic, domain, α1 β1 β2 (first points of ptau
 *         sections 4–6), γ2 = δ2 = the G2 generator, δ1 = the G1 generator;
 *   4     coefficients: every A and B term as [matrix, constraint, signal, coef·R² mod r], then one
 *         A row (0, n+s, s, 1) per public signal s ≤ nPublic (r1cs-scan.c, on this thread);
 *   3, 8  IC and L: K_s = Σ a_cs·β_c + b_cs·α_c + c_cs·λ_c (+ β_{n+s} for s ≤ nPublic), IC the
 *         public signals', L the rest's;
 *   9     H: the odd points of the doubled domain's Lagrange basis (ptau section 12), copied;
 *   5,6,7 A = Σ a_cs·λ_c (+ λ_{n+s}), B1 = Σ b_cs·λ_c, B2 = Σ b_cs·λ^G2_c;
 *   10    the circuit hash (BLAKE2b-512 of the header's points and of each point section as
 *         snarkjs hashes it, H as the differences τ^{i+d} − τ^i of ptau section 2), no contributions.
 *
 * The public signals' rows are written as the r1cs's own constraints n..n+nPublic (an A term of
 * coefficient 1), which is what snarkjs adds. The point sections are the kernel's sparse
 * combinations (sparse-compose.h) on the compose pool: one pass over the r1cs per section, the
 * ptau's bases read beside it in constraint order, each thread adding the terms of its share of the
 * signals (blocks of 16 dealt by a first pass that counts their terms, dealSignals) into
 * accumulators it holds; the outputs then come back in signal order and are written. What is held:
 * each thread's accumulators for one section (64 bytes a signal in G1, 128 in G2, and a word of
 * where each signal's accumulator is), a chunk of constraints with its bases, a slice of outputs,
 * and the counts (12 bytes per 16 signals).
 */
import { createHash, type Hash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import { buildBn128 } from 'ffjavascript';
import { FILE_HASH_ALGORITHM } from '../crypto/file-hash.ts';
import { BN254_Q, BN254_R } from '../crypto/bn254-moduli.ts';
import { G1_GENERATOR, G2_GENERATOR } from '../kernel/generators.ts';
import { readSectionTable, SectionTableError, type SectionLocation } from '../binfile/section-table.ts';
import { readExactlyInto } from '../binfile/read-exactly.ts';
import { SECTION } from '../zkey/zkey-file.ts';
import { G1Uncompressed } from '../kernel/g1-uncompressed.ts';
import { COEFFICIENT_ENTRY_BYTES, R1csInitPass } from '../kernel/r1cs-scan.ts';
import { ComposeSignalError, type ComposeJob, type ComposePool } from '../kernel/compose-pool.ts';
import type { MatrixBases } from '../kernel/compose-messages.ts';
import type { MsmGroup } from '../kernel/msm-kernel.ts';
import { readR1csLayout, wholeConstraints, type R1csLayout } from '../audit/initial-key-r1cs-pass.ts';
import { hashHPoints, hashU32 } from '../audit/initial-key-h.ts';
import type { AuditCurve } from '../audit/audit-curve.ts';
import { StageTimer } from '../runtime/stage-timings.ts';

const N8 = 32;
const G1_BYTES = 64;
const G2_BYTES = 128;
/** ffjavascript's two-adicity of r: at or above it `zkey new` takes H elsewhere (never at our sizes). */
const FR_TWO_ADICITY = 28;
/** Signals per counted block, log2 (the counts deal the signals between the threads by blocks). */
const COUNT_SHIFT = 4;
/** r1cs bytes per chunk sent to the threads (whole constraints; each thread copies it). */
const CHUNK_BYTES = 1 << 20;
/** Constraints per chunk at most (their bases take 192 bytes each at most: three G1 points). */
const CHUNK_CONSTRAINTS = 4096;
/** Bytes of bases a chunk's constraint may need: three G1 points (IC/L), or one G2 point (B2). */
const BASES_PER_CONSTRAINT = 3 * G1_BYTES;
/** Chunks in flight to the threads at most; the ring of slots has one more. */
const IN_FLIGHT = 2;
/** Outputs asked of the threads at once. */
const OUTPUT_SLICE = 1 << 14;
/** Bytes buffered before a write to the file. */
const WRITE_BUFFER = 1 << 20;

/** ptau sections read: α, β first points; τ^i in G1; Lagrange bases in G1 and G2, α·λ, β·λ. */
const PTAU = {
  alphaG1: 4,
  betaG1: 5,
  betaG2: 6,
  tauG1: 2,
  lagrangeG1: 12,
  lagrangeG2: 13,
  alphaLagrange: 14,
  betaLagrange: 15,
};

/** ffjavascript's curve without worker threads (see the H section's hash), built on the first key's start. */
let oneThreadCurve: ReturnType<typeof buildBn128> | undefined;

export interface InitialKeyProgress {
  (part: string, done: number, total: number): void;
}

export interface WriteInitialKeyOptions {
  pool: ComposePool;
  /** How messages name the r1cs (default "the r1cs"). */
  r1csLabel?: string;
  onProgress?: InitialKeyProgress;
  /** Where each stage's time goes (core/runtime/stage-timings.ts); default: one of its own. */
  timer?: StageTimer;
}

export interface InitialKeyWritten {
  /** The circuit hash (section 10), as snarkjs prints it. */
  csHash: Buffer;
  /** BLAKE2b-512 of the whole file, hex (core/crypto/file-hash.ts's hashFile of it). */
  fileHash: string;
  /** BLAKE2b-512 of each section's contents (without its 12-byte section header), hex, by section id. */
  sectionHashes: Map<number, string>;
  /** Bytes written. */
  size: number;
}

function littleEndian(x: bigint, bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  for (let i = 0, v = x; i < bytes; i++, v >>= 8n) out[i] = Number(v & 0xffn);
  return out;
}

/**
 * The file as it is written: sequential, buffered, its hash and the current section's updated with
 * every byte; each section declares its size first (the header is written before the contents) and
 * must end with exactly that many bytes.
 */
class ZkeyStream {
  private readonly fileHash = createHash(FILE_HASH_ALGORITHM);
  private sectionHash: Hash | undefined;
  private section: { id: number; left: number } | undefined;
  private readonly buffer = Buffer.alloc(WRITE_BUFFER);
  private used = 0;
  private position = 0;
  readonly sectionHashes = new Map<number, string>();

  constructor(private readonly handle: FileHandle) {}

  async write(bytes: Uint8Array): Promise<void> {
    this.fileHash.update(bytes);
    if (this.section) {
      this.sectionHash!.update(bytes);
      this.section.left -= bytes.byteLength;
      if (this.section.left < 0) throw new Error(`section ${this.section.id} overflows its declared size`);
    }
    if (this.used + bytes.byteLength > this.buffer.length) await this.flush();
    if (bytes.byteLength >= this.buffer.length) return this.writeOut(bytes);
    this.buffer.set(bytes, this.used);
    this.used += bytes.byteLength;
  }

  private async writeOut(bytes: Uint8Array): Promise<void> {
    let done = 0;
    while (done < bytes.byteLength) {
      const { bytesWritten } = await this.handle.write(bytes, done, bytes.byteLength - done, this.position + done);
      done += bytesWritten;
    }
    this.position += bytes.byteLength;
  }

  async flush(): Promise<void> {
    if (this.used === 0) return;
    // Written before any further write() can fill the buffer again (write awaits this).
    await this.writeOut(this.buffer.subarray(0, this.used));
    this.used = 0;
  }

  async startSection(id: number, size: number): Promise<void> {
    if (this.section) throw new Error(`section ${this.section.id} is still open`);
    const header = Buffer.alloc(12);
    header.writeUInt32LE(id, 0);
    header.writeBigUInt64LE(BigInt(size), 4);
    await this.write(header);
    this.section = { id, left: size };
    this.sectionHash = createHash(FILE_HASH_ALGORITHM);
  }

  endSection(): void {
    if (!this.section || this.section.left !== 0) throw new Error(`section ${this.section?.id} is short`);
    this.sectionHashes.set(this.section.id, this.sectionHash!.digest('hex'));
    this.section = undefined;
  }

  async finish(): Promise<{ fileHash: string; size: number }> {
    await this.flush();
    return { fileHash: this.fileHash.digest('hex'), size: this.position };
  }
}

/** Positioned exact reads of the ptau, by point. */
class PtauReader {
  constructor(
    private readonly handle: FileHandle,
    private readonly sections: Map<number, SectionLocation>,
  ) {}

  location(id: number, what: string): SectionLocation {
    const section = this.sections.get(id);
    if (!section) throw new CoordinatorError('ptau.not_prepared', `the ptau has no ${what} section (${id})`);
    return section;
  }

  /** `count` points of `pointBytes` from point `first` of section `id` (into `into` when given). */
  async points(
    id: number,
    first: number,
    count: number,
    pointBytes: number,
    what: string,
    into?: Uint8Array,
  ): Promise<Uint8Array> {
    const section = this.location(id, what);
    if ((first + count) * pointBytes > section.size)
      throw new CoordinatorError('ptau.too_small', `the ptau's ${what} section is too short for this circuit`);
    const bytes = into ? into.subarray(0, count * pointBytes) : new Uint8Array(count * pointBytes);
    await readExactlyInto(this.handle, bytes, section.offset + first * pointBytes);
    return bytes;
  }
}

/**
 * Where chunks are put for the threads: a ring of shared buffers, each a chunk's r1cs bytes then its
 * bases, reused chunk after chunk. The threads read them where they are (a view of shared memory is
 * posted, not copied), so no chunk leaves garbage in any thread's heap; a slot is reused only once
 * the chunk before in it is done (at most IN_FLIGHT chunks are in flight).
 */
class ChunkSlots {
  private readonly slots: Uint8Array[];
  private next = 0;
  readonly constraintBytes: number;

  constructor(layout: R1csLayout, rows: number) {
    this.constraintBytes = Math.min(CHUNK_BYTES, layout.constraints.size + (layout.nPublic + 1) * PUBLIC_ROW_BYTES);
    const size = this.constraintBytes + Math.min(CHUNK_CONSTRAINTS, rows) * BASES_PER_CONSTRAINT;
    this.slots = Array.from({ length: IN_FLIGHT + 1 }, () => new Uint8Array(new SharedArrayBuffer(size)));
  }

  /** The next slot of the ring. */
  take(): { constraints: Uint8Array; bases: Uint8Array } {
    const slot = this.slots[this.next++ % this.slots.length]!;
    return { constraints: slot.subarray(0, this.constraintBytes), bases: slot.subarray(this.constraintBytes) };
  }
}

/** A chunk of whole constraints: its bytes (in a slot, or its own buffer when longer), count, first number, slot. */
interface ConstraintChunk {
  bytes: Uint8Array;
  count: number;
  first: number;
  /** Where its bases go (undefined for a chunk too long for the slots: they get their own buffers). */
  bases?: Uint8Array;
}

/** Bytes of a public signal's row: A holds the signal with coefficient 1, B and C nothing. */
const PUBLIC_ROW_BYTES = 4 + 4 + N8 + 4 + 4;

/**
 * The r1cs's constraints, then the public signals' rows n..n+nPublic (one A term of coefficient 1
 * each), in chunks of whole constraints put in `slots`.
 */
async function* constraintChunks(
  r1cs: FileHandle,
  layout: R1csLayout,
  what: string,
  slots: ChunkSlots,
): AsyncGenerator<ConstraintChunk> {
  // One buffer, refilled in place (what is left of a read moves to its front): a pass over the r1cs
  // allocates nothing per chunk, so it leaves the collector nothing to catch up with.
  let buffer = Buffer.alloc(2 * slots.constraintBytes);
  let held = 0;
  let position = layout.constraints.offset;
  const end = layout.constraints.offset + layout.constraints.size;
  const fill = async (): Promise<void> => {
    while (held < buffer.length && position < end) {
      const { bytesRead } = await r1cs.read(buffer, held, Math.min(buffer.length - held, end - position), position);
      if (bytesRead === 0) throw new CoordinatorError('chain.file_unreadable', `${what} could not be read completely`);
      held += bytesRead;
      position += bytesRead;
    }
  };
  const take = (length: number): void => {
    buffer.copyWithin(0, length, held);
    held -= length;
  };
  let c = 0;
  while (c < layout.nConstraints) {
    await fill();
    const most = Math.min(CHUNK_CONSTRAINTS, layout.nConstraints - c);
    const batch = wholeConstraints(buffer.subarray(0, Math.min(held, slots.constraintBytes)), most);
    if (batch.count > 0) {
      const slot = slots.take();
      slot.constraints.set(buffer.subarray(0, batch.length));
      take(batch.length);
      yield { bytes: slot.constraints.subarray(0, batch.length), count: batch.count, first: c, bases: slot.bases };
      c += batch.count;
      continue;
    }
    // One constraint longer than a slot: a larger buffer until it is whole, and buffers of its own.
    let long = wholeConstraints(buffer.subarray(0, held), 1);
    while (long.count === 0) {
      if (position >= end) throw new CoordinatorError('r1cs.malformed', `${what} ends inside constraint ${c}`);
      const larger = Buffer.alloc(2 * buffer.length);
      buffer.copy(larger, 0, 0, held);
      buffer = larger;
      await fill();
      long = wholeConstraints(buffer.subarray(0, held), 1);
    }
    const bytes = new Uint8Array(buffer.subarray(0, long.length));
    take(long.length);
    yield { bytes, count: 1, first: c };
    c += 1;
  }
  const rows = layout.nPublic + 1;
  for (let s0 = 0; s0 < rows; s0 += CHUNK_CONSTRAINTS) {
    const count = Math.min(CHUNK_CONSTRAINTS, rows - s0);
    const slot = slots.take();
    const bytes = slot.constraints.subarray(0, count * PUBLIC_ROW_BYTES).fill(0);
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let k = 0; k < count; k++) {
      view.writeUInt32LE(1, k * PUBLIC_ROW_BYTES);
      view.writeUInt32LE(s0 + k, k * PUBLIC_ROW_BYTES + 4);
      view[k * PUBLIC_ROW_BYTES + 8] = 1; // the coefficient 1, little-endian
    }
    yield { bytes, count, first: layout.nConstraints + s0, bases: slot.bases };
  }
}

/** A block of signals holding more than this many times the mean block's terms is dealt as a hot one. */
const HOT_BLOCK = 16;

/**
 * Which thread owns each block of 2^COUNT_SHIFT signals, from the terms each block has (`weights`):
 * every thread gets the same share of the terms, and every stretch of the r1cs gives every thread
 * its share of work. A chunk of constraints names mostly signals close to each other (and a few
 * hot ones, the public inputs and the constant one, everywhere), so ranges of signals would leave
 * all threads but one idle chunk after chunk. The hot blocks are dealt first, largest first, each to
 * the thread with the fewest hot terms; the others then in turn, each to the thread furthest below
 * its share of the rest (its equal share less its hot terms), so that a stretch of constraints, with
 * its hot terms, weighs the same on every thread.
 */
function dealSignals(weights: number[], threads: number): Uint8Array {
  const owners = new Uint8Array(weights.length);
  if (threads === 1) return owners;
  const total = weights.reduce((sum, w) => sum + w, 0);
  const hotFrom = (HOT_BLOCK * total) / Math.max(1, weights.length);
  const load = new Array<number>(threads).fill(0);
  const hot = weights.flatMap((w, block) => (w > hotFrom ? [block] : [])).sort((a, b) => weights[b]! - weights[a]!);
  for (const block of hot) {
    const t = load.indexOf(Math.min(...load));
    owners[block] = t;
    load[t]! += weights[block]!;
  }
  const isHot = new Set(hot);
  const share = load.map((hotLoad) => Math.max(total / threads - hotLoad, 1));
  const dealt = new Array<number>(threads).fill(0);
  for (let block = 0; block < weights.length; block++) {
    if (isHot.has(block)) continue;
    let best = 0;
    for (let t = 1; t < threads; t++)
      if ((dealt[t]! + weights[block]!) / share[t]! < (dealt[best]! + weights[block]!) / share[best]!) best = t;
    owners[block] = best;
    dealt[best]! += weights[block]!;
  }
  return owners;
}

/** The key's point sections, each made on the pool from the bases of one or more matrices. */
interface PointSection {
  id: number;
  part: string;
  group: MsmGroup;
  /** ptau section of the bases of each matrix's terms (A, B, C), or undefined to leave it out. */
  bases: [number | undefined, number | undefined, number | undefined];
}

const K_SECTION: PointSection = {
  id: SECTION.l,
  part: 'IC and L',
  group: 'G1',
  bases: [PTAU.betaLagrange, PTAU.alphaLagrange, PTAU.lagrangeG1],
};
const LATER_SECTIONS: PointSection[] = [
  { id: SECTION.a, part: 'A', group: 'G1', bases: [PTAU.lagrangeG1, undefined, undefined] },
  { id: SECTION.b1, part: 'B1', group: 'G1', bases: [undefined, PTAU.lagrangeG1, undefined] },
  { id: SECTION.b2, part: 'B2', group: 'G2', bases: [undefined, PTAU.lagrangeG2, undefined] },
];

/** What the writer's steps share: the inputs, the circuit's sizes, and where progress and time go. */
interface WriterContext {
  r1cs: FileHandle;
  ptau: PtauReader;
  ptauHandle: FileHandle;
  layout: R1csLayout;
  what: string;
  domain: number;
  /** Rows of the matrices: the constraints, then one per public signal (and the constant one). */
  rows: number;
  slots: ChunkSlots;
  progress: InitialKeyProgress;
  timer: StageTimer;
  pool: ComposePool;
}

/** The ptau's sections, or `ptau.malformed`. */
async function ptauReader(handle: FileHandle): Promise<PtauReader> {
  try {
    return new PtauReader(handle, (await readSectionTable(handle, (await handle.stat()).size, 'ptau')).sections);
  } catch (error) {
    if (error instanceof SectionTableError) throw new CoordinatorError('ptau.malformed', `the ptau: ${error.message}`);
    throw error;
  }
}

/** The terms each matrix has per block of signals (pass 1 over the r1cs), for the coefficients and the splits. */
interface TermCounts {
  /** Entries of the coefficients section: A's and B's terms, the public signals' rows included. */
  coefficientEntries: number;
  /** Terms per block of 2^COUNT_SHIFT signals over the given matrices (0 A, 1 B, 2 C). */
  weights(matrices: number[]): number[];
}

async function countTerms(context: WriterContext, pass: R1csInitPass): Promise<TermCounts> {
  const { layout, what, progress, timer } = context;
  const started = timer.now();
  for await (const chunk of constraintChunks(context.r1cs, layout, what, context.slots)) {
    const failed = pass.count(chunk.bytes, chunk.count);
    if (failed) throw badSignal(what, chunk.first + failed.badSignal, layout.nWires);
    progress('counting the terms', Math.min(chunk.first + chunk.count, layout.nConstraints), layout.nConstraints);
  }
  const counts = pass.counts();
  timer.add('r1cs pass: counting the terms', timer.now() - started);
  const blocks = counts.length / 3;
  const matrixTotal = (m: number): number => {
    let sum = 0;
    for (let b = 0; b < blocks; b++) sum += counts[3 * b + m]!;
    return sum;
  };
  return {
    coefficientEntries: matrixTotal(0) + matrixTotal(1),
    weights: (matrices) =>
      Array.from({ length: blocks }, (_, b) => matrices.reduce((sum, m) => sum + counts[3 * b + m]!, 0)),
  };
}

/** The file's head and sections 1 and 2 (protocol, header); the header's points hashed into `csHash`. */
async function writeHeader(
  context: WriterContext,
  file: ZkeyStream,
  csHash: Hash,
  uncompressed: G1Uncompressed,
): Promise<void> {
  const { ptau, layout, domain } = context;
  const headerHead = Buffer.alloc(12);
  headerHead.write('zkey', 0, 'latin1');
  headerHead.writeUInt32LE(1, 4);
  headerHead.writeUInt32LE(10, 8);
  await file.write(headerHead);
  await file.startSection(SECTION.protocol, 4);
  await file.write(littleEndian(1n, 4)); // Groth16
  file.endSection();

  const [alpha1, beta1, beta2] = await Promise.all([
    ptau.points(PTAU.alphaG1, 0, 1, G1_BYTES, 'alpha'),
    ptau.points(PTAU.betaG1, 0, 1, G1_BYTES, 'beta'),
    ptau.points(PTAU.betaG2, 0, 1, G2_BYTES, 'beta G2'),
  ]);
  const header = Buffer.concat([
    littleEndian(BigInt(N8), 4),
    littleEndian(BN254_Q, N8),
    littleEndian(BigInt(N8), 4),
    littleEndian(BN254_R, N8),
    littleEndian(BigInt(layout.nWires), 4),
    littleEndian(BigInt(layout.nPublic), 4),
    littleEndian(BigInt(domain), 4),
    alpha1,
    beta1,
    beta2,
    G2_GENERATOR, // γ2
    G1_GENERATOR, // δ1
    G2_GENERATOR, // δ2
  ]);
  await file.startSection(SECTION.grothHeader, header.length);
  await file.write(header);
  file.endSection();
  for (const [group, point] of [
    ['G1', alpha1],
    ['G1', beta1],
    ['G2', beta2],
    ['G2', G2_GENERATOR],
    ['G1', G1_GENERATOR],
    ['G2', G2_GENERATOR],
  ] as const)
    csHash.update(uncompressed.uncompressedView(point, group));
}

/** Section 9, H: the odd points of the doubled domain's Lagrange basis, copied; then its share of the circuit hash. */
async function writeH(
  context: WriterContext,
  file: ZkeyStream,
  csHash: Hash,
  uncompressed: G1Uncompressed,
): Promise<void> {
  const { ptau, domain, progress, timer } = context;
  let started = timer.now();
  await file.startSection(SECTION.h, domain * G1_BYTES);
  const pairs = new Uint8Array(2 * OUTPUT_SLICE * G1_BYTES);
  const odds = new Uint8Array(OUTPUT_SLICE * G1_BYTES);
  for (let first = 0; first < domain; first += OUTPUT_SLICE) {
    const n = Math.min(OUTPUT_SLICE, domain - first);
    const doubled = await ptau.points(PTAU.lagrangeG1, 2 * domain - 1 + 2 * first, 2 * n, G1_BYTES, 'Lagrange', pairs);
    const odd = odds.subarray(0, n * G1_BYTES);
    for (let i = 0; i < n; i++) odd.set(doubled.subarray((2 * i + 1) * G1_BYTES, (2 * i + 2) * G1_BYTES), i * G1_BYTES);
    await file.write(odd);
    progress('H', first + n, domain);
  }
  file.endSection();
  timer.add('H: copied from the ptau', timer.now() - started);
  started = timer.now();
  const curve = (await oneThreadCurve!) as unknown as AuditCurve;
  timer.add('H: one-thread curve ready', timer.now() - started);
  started = timer.now();
  await hashHPoints(curve, uncompressed, context.ptauHandle, ptau.location(PTAU.tauG1, 'tau'), domain, csHash);
  timer.add('H: circuit hash of the differences', timer.now() - started);
}

/**
 * Writes the point sections of one section's finished job, [from, to) of its outputs, hashing
 * them into `csHash` as snarkjs does; `outputs` is where the threads put each slice.
 */
async function writePoints(
  context: WriterContext,
  file: ZkeyStream,
  csHash: Hash,
  uncompressed: G1Uncompressed,
  outputs: Uint8Array,
  job: { job: ComposeJob; id: number; group: MsmGroup; from: number; to: number },
): Promise<void> {
  const { id, group, from, to } = job;
  const bytes = group === 'G1' ? G1_BYTES : G2_BYTES;
  const started = context.timer.now();
  await file.startSection(id, (to - from) * bytes);
  hashU32(csHash, to - from);
  for (let first = from; first < to; first += OUTPUT_SLICE) {
    const last = Math.min(to, first + OUTPUT_SLICE);
    const points = await job.job.points(first, last, outputs.subarray(0, (last - first) * bytes));
    await file.write(points);
    csHash.update(uncompressed.uncompressedView(points, group));
  }
  file.endSection();
  context.timer.add(`section ${id}: outputs written and hashed`, context.timer.now() - started);
}

/**
 * Writes contribution 0 of (r1cs, ptau) to `outPath` (create or truncate; the caller writes to a
 * temporary name and renames it). Throws CoordinatorError for an r1cs or ptau that cannot make one.
 */
export async function writeInitialKey(
  r1csPath: string,
  ptauPath: string,
  outPath: string,
  options: WriteInitialKeyOptions,
): Promise<InitialKeyWritten> {
  const what = options.r1csLabel ?? 'the r1cs';
  // ffjavascript's curve hashes the pair snarkjs reads past the end of H's section (hashHPoints
  // says why); its one-thread build costs this process a few MB, not a thread per core, and is
  // compiled while the threads compose, not when H's turn comes.
  oneThreadCurve ??= buildBn128(true);
  oneThreadCurve.catch(() => undefined); // awaited when H is hashed
  const [r1cs, ptauHandle] = await Promise.all([open(r1csPath, 'r'), open(ptauPath, 'r')]);
  let out: FileHandle | undefined;
  try {
    const layout = await readR1csLayout(r1csPath, r1cs, what);
    const ptau = await ptauReader(ptauHandle);
    const { nWires, nPublic, nConstraints } = layout;
    const power = Math.ceil(Math.log2(nConstraints + nPublic + 1));
    if (power >= FR_TWO_ADICITY) throw new CoordinatorError('ptau.too_small', 'the circuit is too large for BN254');
    const rows = nConstraints + nPublic + 1;
    const context: WriterContext = {
      r1cs,
      ptau,
      ptauHandle,
      layout,
      what,
      domain: 2 ** power,
      rows,
      slots: new ChunkSlots(layout, rows),
      progress: options.onProgress ?? (() => {}),
      timer: options.timer ?? new StageTimer(`init ${what}`),
      pool: options.pool,
    };
    const pass = await R1csInitPass.instantiate(nWires, COUNT_SHIFT);
    const counts = await countTerms(context, pass);

    out = await open(outPath, 'w');
    const file = new ZkeyStream(out);
    const csHash = createHash('blake2b512');
    const uncompressed = await G1Uncompressed.instantiate();
    await writeHeader(context, file, csHash, uncompressed);
    const sections = {
      file,
      csHash,
      uncompressed,
      outputs: new Uint8Array(new SharedArrayBuffer(OUTPUT_SLICE * G2_BYTES)),
    };
    await writePointSections(context, sections, counts, await composeK(context, sections, counts, pass));

    const circuitHash = csHash.digest();
    await file.startSection(SECTION.mpc, 64 + 4);
    await file.write(circuitHash);
    await file.write(littleEndian(0n, 4));
    file.endSection();
    const { fileHash, size } = await file.finish();
    context.timer.report();
    return { csHash: circuitHash, fileHash, sectionHashes: file.sectionHashes, size };
  } finally {
    await Promise.all([r1cs.close(), ptauHandle.close(), out?.close()]);
  }
}

interface SectionsOut {
  file: ZkeyStream;
  csHash: Hash;
  uncompressed: G1Uncompressed;
  /** Where the threads put each slice of outputs (a view of shared memory). */
  outputs: Uint8Array;
}

/** Section 4 (the coefficients), written on this thread while the threads compose IC and L; returns their job. */
async function composeK(
  context: WriterContext,
  { file }: SectionsOut,
  counts: TermCounts,
  pass: R1csInitPass,
): Promise<ComposeJob> {
  const { layout, what, timer } = context;
  const started = timer.now();
  await file.startSection(SECTION.coefficients, 4 + counts.coefficientEntries * COEFFICIENT_ENTRY_BYTES);
  await file.write(littleEndian(BigInt(counts.coefficientEntries), 4));
  const k = await composeSection(context, K_SECTION, counts.weights([0, 1, 2]), async (chunk) => {
    const entries = pass.coefficients(chunk.bytes, chunk.count, chunk.first);
    if ('badSignal' in entries) throw badSignal(what, chunk.first + entries.badSignal, layout.nWires);
    await file.write(entries);
  });
  file.endSection();
  timer.add('IC and L: composition, coefficients written beside it', timer.now() - started);
  return k;
}

/**
 * The point sections from IC on, in the file's order: IC, H, L (K's job), then A, B1, B2, each
 * composed on the threads while the one before is written and hashed on this thread.
 */
async function writePointSections(
  context: WriterContext,
  out: SectionsOut,
  counts: TermCounts,
  k: ComposeJob,
): Promise<void> {
  const { file, csHash, uncompressed, outputs } = out;
  const { layout, timer } = context;
  const points = (job: ComposeJob, id: number, group: MsmGroup, from: number, to: number): Promise<void> =>
    writePoints(context, file, csHash, uncompressed, outputs, { job, id, group, from, to });
  const compose = async (section: PointSection): Promise<ComposeJob> => {
    const started = timer.now();
    const matrices = section.bases.flatMap((b, m) => (b === undefined ? [] : [m]));
    const job = await composeSection(context, section, counts.weights(matrices));
    timer.add(`${section.part}: composition (beside the writes)`, timer.now() - started);
    return job;
  };
  let writing = {
    job: k,
    write: async (): Promise<void> => {
      await points(k, SECTION.ic, 'G1', 0, layout.nPublic + 1);
      await writeH(context, file, csHash, uncompressed);
      await points(k, SECTION.l, 'G1', layout.nPublic + 1, layout.nWires);
    },
  };
  let composing: Promise<ComposeJob> | undefined;
  try {
    for (const section of [...LATER_SECTIONS, undefined]) {
      composing = section && compose(section);
      composing?.catch(() => undefined); // awaited below, or closed on the way out
      try {
        await writing.write();
      } finally {
        await writing.job.close();
      }
      if (!section || !composing) return;
      const job = await composing;
      composing = undefined;
      writing = { job, write: () => points(job, section.id, section.group, 0, layout.nWires) };
    }
  } finally {
    await composing?.then(
      (job) => job.close(),
      () => undefined,
    );
  }
}

function badSignal(what: string, constraint: number, nWires: number): CoordinatorError {
  return new CoordinatorError(
    'r1cs.malformed',
    `${what} names a signal beyond its ${nWires} in constraint ${constraint}`,
  );
}

/**
 * One pass over the r1cs for a point section: each chunk of constraints goes to every thread with
 * the ptau's bases of its constraints, two chunks in flight at most. `alongside` runs on each chunk
 * on this thread meanwhile. Returns the job, its outputs ready to be read.
 */
async function composeSection(
  context: WriterContext,
  section: PointSection,
  weights: number[],
  alongside?: (chunk: ConstraintChunk) => Promise<void>,
): Promise<ComposeJob> {
  const { pool, layout, ptau, r1cs, what, timer } = context;
  const { nWires } = layout;
  const pointBytes = section.group === 'G1' ? G1_BYTES : G2_BYTES;
  // The counts have a block past the last signal when nWires is a multiple of the block.
  const blocks = weights.slice(0, Math.ceil(nWires / 2 ** COUNT_SHIFT));
  const job = await pool.open(section.group, nWires, COUNT_SHIFT, dealSignals(blocks, pool.threads));
  const inFlight: Promise<void>[] = [];
  try {
    for await (const chunk of constraintChunks(r1cs, layout, what, context.slots)) {
      // Each distinct ptau section is read once per chunk, whatever matrices share it, into the chunk's slot.
      const read = new Map<number, Promise<Uint8Array>>();
      let at = 0;
      const bases = (await Promise.all(
        section.bases.map((id) => {
          if (id === undefined) return null;
          if (!read.has(id)) {
            const into = chunk.bases?.subarray(at, (at += chunk.count * pointBytes));
            read.set(id, ptau.points(id, context.domain - 1 + chunk.first, chunk.count, pointBytes, 'Lagrange', into));
          }
          return read.get(id)!;
        }),
      )) as MatrixBases;
      const added = job.add(chunk.bytes, chunk.count, bases).catch((error: unknown) => {
        if (error instanceof ComposeSignalError) throw badSignal(what, chunk.first + error.constraint, nWires);
        throw error;
      });
      // Awaited below; handled now so that a refusal while this thread awaits something else is not "unhandled".
      added.catch(() => undefined);
      inFlight.push(added);
      if (alongside) await alongside(chunk);
      const waited = timer.now();
      if (inFlight.length >= 2) await inFlight.shift();
      timer.add(`${section.part}: waiting for the threads`, timer.now() - waited);
      context.progress(section.part, Math.min(chunk.first + chunk.count, context.rows), context.rows);
    }
    await Promise.all(inFlight);
    return job;
  } catch (error) {
    await Promise.allSettled(inFlight);
    await job.close().catch(() => undefined);
    throw error;
  }
}
