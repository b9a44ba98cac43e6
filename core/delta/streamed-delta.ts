/**
 * A contribution delta (docs/contribution-delta.md) made while the head's inputs are still
 * arriving, for the streamed turn of the page (web/src/contribute/streamed-turn.ts) and of the
 * terminal client (cli/contributor/file-turn.ts):
 *
 *  1. The inputs (`GET …/contribution-inputs`) list the small sections first (the header, δ, the
 *     history) and L and H last. As soon as the small ones are in, the caller's `makeRecord` runs
 *     snarkjs's contribution on them alone (L holding one placeholder point, H empty): the new
 *     header and δ, the record and its proof of knowledge, the contribution hash, and the kernel's
 *     chain for the secret's inverse.
 *  2. The delta's exact length follows from the header (L and H do not change size), so the caller
 *     creates its tus upload now, before a point of L has arrived.
 *  3. L and H are read in slices of 512 KiB as they arrive, each slice handed whole to the least
 *     busy kernel worker and queued for the upload in order. At most a few slices per worker are in
 *     flight or waiting: when the upload lags, reading stops and TCP holds the download back, and
 *     slice buffers are reused, so memory stays a few MiB whatever the key's size.
 * A dropped upload request is resent out of the window the upload source holds, never recomputed.
 * Nothing here is kept anywhere: the chain (the secret in another form) lives only in memory,
 * until the turn ends.
 */
import type { ScaleChain } from '../kernel/g1-scale-chain.ts';
import { DELTA_FORMAT, deltaSectionOrder } from './delta-format.ts';
import type { ExactReader } from './exact-reader.ts';
import { StreamedUploadSource, type PieceSource } from './streamed-upload-source.ts';

/** The inputs are not what a streamed contribution can be made on (order, sizes, trailing bytes). */
export class DeltaInputsError extends Error {}

/** The kernel pool, as a streamed contribution uses it (core/kernel/scale-pool.ts). */
export interface SliceScaler {
  readonly workers: number;
  scaleOne(points: Uint8Array, chain: ScaleChain): Promise<Uint8Array>;
}

/** What snarkjs's contribution on the small key gives back. */
export interface ContributionRecord {
  /** The new small key: its sections 2 (header, δ) and 10 (history) are the contribution's. */
  zkey: Uint8Array;
  hash: string;
  /** The secret's scaling chain (it is the secret: keep it no longer than the turn). */
  chain: ScaleChain;
}

export interface StreamedDeltaOptions {
  reader: ExactReader;
  scaler: SliceScaler;
  /** Contributes on the small key (the head's small sections, one placeholder point in L). */
  makeRecord(smallKey: Uint8Array): Promise<ContributionRecord>;
  /** The points of L and H, once the header is read. */
  onPoints?(total: number): void;
  /** Points scaled so far, after each slice. */
  onScaled?(done: number): void;
}

export interface StreamedDelta {
  hash: string;
  /** The tus source of the delta, `size` bytes, made as the upload reads it. */
  source: StreamedUploadSource;
  /** Rejects when reading or scaling fails: the caller stops its upload with this reason. */
  failed: Promise<never>;
}

/** Bytes of one affine G1 point of L or H. */
const POINT_BYTES = 64;
/** What a kernel worker is handed at a time (8,192 points). */
const SLICE_BYTES = 1 << 19;
/** Each tus PATCH of the delta: small enough that the upload follows the compute closely. */
export const UPLOAD_CHUNK_BYTES = 2 << 20;
/** Cap on the sections read whole (header, δ, history of a few hundred records: kilobytes). */
const MAX_SMALL_SECTION_BYTES = 16 << 20;
const STREAMED_SECTIONS = [8, 9];
/** snarkjs's section 2 (Groth16 header): n8q, q, n8r, r, then nVars, nPublic, domainSize. */
const HEADER_SECTION = 2;

interface InputSections {
  version: number;
  /** The sections read whole, by id (3 to 7 empty). */
  small: Map<number, Uint8Array>;
  /** Every id of the key, ascending (the delta lists them in its format's order). */
  ids: number[];
  /** Sizes of L and H, from the header. */
  streamedSizes: Map<number, number>;
}

function littleEndian(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function sectionHead(id: number, size: number): Uint8Array {
  const head = new Uint8Array(12);
  littleEndian(head).setUint32(0, id, true);
  littleEndian(head).setBigUint64(4, BigInt(size), true);
  return head;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/** Sizes of L and H from snarkjs's Groth16 header: (nVars − nPublic − 1) and domainSize points. */
function streamedSizesOf(header: Uint8Array): Map<number, number> {
  const view = littleEndian(header);
  const n8q = view.getUint32(0, true);
  const n8r = view.getUint32(4 + n8q, true);
  const at = 8 + n8q + n8r;
  if (header.byteLength < at + 12) throw new DeltaInputsError('the key’s header section is too short');
  const nVars = view.getUint32(at, true);
  const nPublic = view.getUint32(at + 4, true);
  const domainSize = view.getUint32(at + 8, true);
  return new Map([
    [8, (nVars - nPublic - 1) * POINT_BYTES],
    [9, domainSize * POINT_BYTES],
  ]);
}

/** Reads the inputs up to the head of L: the file head and every small section, whole. */
async function readSmallSections(reader: ExactReader): Promise<InputSections> {
  const fileHead = littleEndian(await reader.read(12));
  const magic = String.fromCharCode(
    fileHead.getUint8(0),
    fileHead.getUint8(1),
    fileHead.getUint8(2),
    fileHead.getUint8(3),
  );
  if (magic !== 'zkey') throw new DeltaInputsError('the contribution inputs are not a zkey');
  const version = fileHead.getUint32(4, true);
  const count = fileHead.getUint32(8, true);
  const small = new Map<number, Uint8Array>();
  for (let i = 0; i < count - STREAMED_SECTIONS.length; i++) {
    const head = littleEndian(await reader.read(12));
    const id = head.getUint32(0, true);
    const size = Number(head.getBigUint64(4, true));
    if (STREAMED_SECTIONS.includes(id) || small.has(id) || size > MAX_SMALL_SECTION_BYTES)
      throw new DeltaInputsError(
        `the contribution inputs are not in the order a streamed contribution reads (section ${id})`,
      );
    small.set(id, await reader.read(size));
  }
  const header = small.get(HEADER_SECTION);
  if (!header || !small.has(10)) throw new DeltaInputsError('the contribution inputs lack the header or the history');
  const ids = [...small.keys(), ...STREAMED_SECTIONS].sort((a, b) => a - b);
  return { version, small, ids, streamedSizes: streamedSizesOf(header) };
}

function fileHeadOf(version: number, count: number): Uint8Array {
  const head = new Uint8Array(12);
  head.set([0x7a, 0x6b, 0x65, 0x79]); // "zkey"
  littleEndian(head).setUint32(4, version, true);
  littleEndian(head).setUint32(8, count, true);
  return head;
}

/**
 * The small key snarkjs contributes on: the head's small sections, L with one placeholder point
 * (so snarkjs asks for L's scaling once, which hands over the chain) and H empty.
 */
function recordInputs(inputs: InputSections): Uint8Array {
  const parts = [fileHeadOf(inputs.version, inputs.ids.length)];
  for (const id of inputs.ids) {
    const data = id === 8 ? new Uint8Array(POINT_BYTES) : (inputs.small.get(id) ?? new Uint8Array(0));
    parts.push(sectionHead(id, data.byteLength), data);
  }
  return concat(parts);
}

/** The sections of a small binfile (snarkjs's new small key), by id. */
function sectionsOf(file: Uint8Array): Map<number, Uint8Array> {
  const view = littleEndian(file);
  const sections = new Map<number, Uint8Array>();
  let at = 12;
  for (let i = 0; i < view.getUint32(8, true); i++) {
    const id = view.getUint32(at, true);
    const size = Number(view.getBigUint64(at + 4, true));
    sections.set(id, file.subarray(at + 12, at + 12 + size));
    at += 12 + size;
  }
  return sections;
}

/**
 * The delta's pieces in order: bytes ready now, or a slice of L or H being scaled (wrapped: an
 * async generator awaits a promise it yields, which would scale one slice at a time).
 */
type Piece = Uint8Array | { scaling: Promise<Uint8Array> };

/**
 * The delta in `zkey-delta-v2`'s order (docs/contribution-delta.md): the small sections in ascending
 * ids (the new header and history among them, so the coordinator checks the record before any
 * point), then L and H scaled slice by slice as the download delivers them.
 */
async function* deltaPieces(
  inputs: InputSections,
  made: Map<number, Uint8Array>,
  reader: ExactReader,
  scale: (slice: Uint8Array) => Promise<Uint8Array>,
  buffers: SliceBuffers,
): AsyncGenerator<Piece> {
  yield fileHeadOf(inputs.version, inputs.ids.length);
  for (const id of deltaSectionOrder(DELTA_FORMAT, inputs.ids)) {
    if (!STREAMED_SECTIONS.includes(id)) {
      const data = id === 2 || id === 10 ? made.get(id)! : inputs.small.get(id)!;
      yield concat([sectionHead(id, data.byteLength), data]);
      continue;
    }
    const size = inputs.streamedSizes.get(id)!;
    const head = littleEndian(await reader.read(12));
    if (head.getUint32(0, true) !== id || Number(head.getBigUint64(4, true)) !== size)
      throw new DeltaInputsError(`section ${id} of the contribution inputs is not where or what the header says`);
    yield sectionHead(id, size);
    for (let done = 0; done < size; done += SLICE_BYTES) {
      const slice = await reader.readInto(buffers.take(Math.min(SLICE_BYTES, size - done)));
      yield { scaling: scale(slice) };
    }
  }
  if (!(await reader.atEnd())) throw new DeltaInputsError('the contribution inputs go on after H');
}

/**
 * The pieces in order for the upload, read ahead (and their slices scaling) up to `depth` at a
 * time, so the kernel keeps working while an upload request is on the wire and the upload finds
 * its next bytes ready; beyond `depth` the reading pauses, and with it the download. A failure
 * of the pieces fails `failed` (the caller stops the upload with the real reason) and ends `next`.
 */
function readAhead(
  pieces: AsyncGenerator<Piece>,
  depth: number,
  release: (piece: Uint8Array) => void,
): { source: PieceSource; failed: Promise<never> } {
  const queue: Array<Promise<Uint8Array>> = [];
  let finished = false;
  let wakeReader: (() => void) | undefined;
  let wakePump: (() => void) | undefined;
  let fail: (error: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => {});
  void (async () => {
    for await (const piece of pieces) {
      while (queue.length >= depth) await new Promise<void>((resolve) => (wakePump = resolve));
      const ready = piece instanceof Uint8Array ? Promise.resolve(piece) : piece.scaling;
      ready.catch(fail);
      queue.push(ready);
      wakeReader?.();
    }
    finished = true;
    wakeReader?.();
  })().catch((error: unknown) => {
    finished = true;
    fail(error);
    wakeReader?.();
  });
  const source: PieceSource = {
    async next() {
      while (queue.length === 0 && !finished) await new Promise<void>((resolve) => (wakeReader = resolve));
      const next = queue.shift();
      wakePump?.();
      return next ? await next : undefined;
    },
    release,
  };
  return { source, failed };
}

/**
 * Buffers of one slice, reused: a slice goes from the download into one, to a kernel worker and
 * back (transferred, not copied) and into the upload's buffer, then returns here. The turn's
 * memory is then these few buffers, with no garbage left for the collector to catch up on.
 */
class SliceBuffers {
  private readonly free: ArrayBuffer[] = [];

  constructor(private readonly keep: number) {}

  take(length: number): Uint8Array {
    return new Uint8Array(this.free.pop() ?? new ArrayBuffer(SLICE_BYTES), 0, length);
  }

  give(piece: Uint8Array): void {
    if (piece.buffer.byteLength === SLICE_BYTES && this.free.length < this.keep)
      this.free.push(piece.buffer as ArrayBuffer);
  }
}

/** Reads the inputs' small sections, makes the record, and returns the delta as an upload source. */
export async function startStreamedDelta(options: StreamedDeltaOptions): Promise<StreamedDelta> {
  const { reader, scaler } = options;
  const inputs = await readSmallSections(reader);
  const points = [...inputs.streamedSizes.values()].reduce((n, size) => n + size, 0) / POINT_BYTES;
  options.onPoints?.(points);
  const record = await options.makeRecord(recordInputs(inputs));
  const made = sectionsOf(record.zkey);
  let scaled = 0;
  const scale = async (slice: Uint8Array): Promise<Uint8Array> => {
    const out = await scaler.scaleOne(slice, record.chain);
    scaled += out.byteLength / POINT_BYTES;
    options.onScaled?.(scaled);
    return out;
  };
  const size =
    12 +
    inputs.ids.reduce((n, id) => {
      const length = STREAMED_SECTIONS.includes(id)
        ? inputs.streamedSizes.get(id)!
        : (made.get(id) ?? inputs.small.get(id)!).byteLength;
      return n + 12 + length;
    }, 0);
  // Slices in flight or waiting for the upload: enough for every worker to have work queued
  // behind the slice it is on, and for an upload request to find its next bytes ready.
  const depth = 3 * scaler.workers + 2;
  const buffers = new SliceBuffers(depth + 1);
  const { source, failed } = readAhead(deltaPieces(inputs, made, reader, scale, buffers), depth, (piece) =>
    buffers.give(piece),
  );
  return { hash: record.hash, source: new StreamedUploadSource(source, size, UPLOAD_CHUNK_BYTES), failed };
}
