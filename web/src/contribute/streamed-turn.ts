/**
 * The page's turn with contribution deltas (docs/contribution-delta.md), streamed: download,
 * compute and upload run at once, and the browser never holds a key.
 *
 *  1. `GET …/contribution-inputs` answers the head's skeleton with its small sections first (the
 *     header, δ, the history) and L and H last. As soon as the small ones are in, snarkjs makes the
 *     contribution on them alone (a fresh worker: the new header and δ, the record and its proof of
 *     knowledge, the contribution hash) and hands back the secret's scaling chain.
 *  2. The delta's exact length follows from the header (L and H do not change size), so its tus
 *     upload is created now, before a point of L has arrived.
 *  3. L and H are read in slices of 1 MiB as they arrive, each slice scaled by the kernel pool
 *     and queued for the upload in order. At most a few slices are in flight or waiting: when the
 *     upload lags, reading stops and TCP holds the download back, so memory stays a few MiB
 *     whatever the key's size.
 * A dropped upload resumes from the coordinator's offset out of the slice tus still holds, never
 * recomputing what was sent. A reload cannot resume (nothing is kept, the secret least of all): it
 * starts a new contribution with new entropy, whose upload replaces the earlier one.
 */
import * as tus from 'tus-js-client';
import { DELTA_FORMAT } from '../../../core/delta/delta-format.ts';
import type { ScalePool } from '../../../core/kernel/scale-pool.ts';
import { ApiError, apiErrorFromBody } from '../api/api-client.ts';
import { recordContribution, startKernelPool } from './compute-contribution.ts';
import { ExactReader, StreamEndedError } from './exact-reader.ts';
import { StreamedUploadSource, type PieceSource } from './upload-source.ts';

/** Bytes of one affine G1 point of L or H. */
const POINT_BYTES = 64;
/** What a kernel worker is handed at a time (8,192 points). */
const SLICE_BYTES = 1 << 19;
/** Each tus PATCH of the delta: small enough that the upload follows the compute closely. */
const UPLOAD_CHUNK_BYTES = 2 << 20;
/** Cap on the sections read whole (header, δ, history of a few hundred records: kilobytes). */
const MAX_SMALL_SECTION_BYTES = 16 << 20;
const STREAMED_SECTIONS = [8, 9];
/** snarkjs's section 2 (Groth16 header): n8q, q, n8r, r, then nVars, nPublic, domainSize. */
const HEADER_SECTION = 2;
const PROGRESS_EVERY_MS = 100;

export interface Tally {
  done: number;
  total: number;
}

export interface StreamedTurnProgress {
  step: string;
  /** Bytes of the inputs received, of their Content-Length. */
  down: Tally;
  /** Bytes of the delta the coordinator holds, of its length (0 until the upload is created). */
  up: Tally;
  /** Points of L and H scaled by the kernel, of their count (0 until the header is read). */
  scaled: Tally;
  /** Where the upload resumed after a drop (the coordinator's offset), if it did. */
  resumedFrom: number | null;
}

export interface StreamedTurnRequest {
  circuit: string;
  /** The contribution record's name (public). */
  name: string;
  /** The text the person typed as extra entropy; taken only once the turn is sure to stream. */
  takeTypedEntropy: () => string;
  csrfToken: string;
  signal: AbortSignal;
  onProgress(progress: StreamedTurnProgress): void;
  /** Called once the contribution hash is known, before the upload ends. */
  onHash?(hash: string): void;
}

export interface StreamedTurnResult {
  hash: string;
  /** The head the contribution was made on. */
  headIndex: number;
  kernelWorkers: number;
}

/** This browser cannot stream (no kernel): the caller takes the turn with whole keys instead. */
export class StreamingUnavailable extends Error {}

interface InputSections {
  version: number;
  /** The sections read whole, by id (3 to 7 empty). */
  small: Map<number, Uint8Array>;
  /** Every id of the key, ascending: the delta's order. */
  ids: number[];
  /** Sizes of L and H, from the header. */
  streamedSizes: Map<number, number>;
}

function littleEndian(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function browserError(message: string): ApiError {
  return new ApiError(0, 'browser', message);
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
  if (header.byteLength < at + 12) throw browserError('the key’s header section is too short');
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
  if (magic !== 'zkey') throw browserError('the contribution inputs are not a zkey');
  const version = fileHead.getUint32(4, true);
  const count = fileHead.getUint32(8, true);
  const small = new Map<number, Uint8Array>();
  for (let i = 0; i < count - STREAMED_SECTIONS.length; i++) {
    const head = littleEndian(await reader.read(12));
    const id = head.getUint32(0, true);
    const size = Number(head.getBigUint64(4, true));
    if (STREAMED_SECTIONS.includes(id) || small.has(id) || size > MAX_SMALL_SECTION_BYTES)
      throw browserError(`the contribution inputs are not in the order this page streams (section ${id})`);
    small.set(id, await reader.read(size));
  }
  const header = small.get(HEADER_SECTION);
  if (!header || !small.has(10)) throw browserError('the contribution inputs lack the header or the history');
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
 * The delta, ascending ids (docs/contribution-delta.md): the new header and history, the head's
 * other small sections, and L and H scaled slice by slice as the download delivers them.
 */
async function* deltaPieces(
  inputs: InputSections,
  made: Map<number, Uint8Array>,
  reader: ExactReader,
  scale: (slice: Uint8Array) => Promise<Uint8Array>,
  buffers: SliceBuffers,
): AsyncGenerator<Piece> {
  yield fileHeadOf(inputs.version, inputs.ids.length);
  for (const id of inputs.ids) {
    if (!STREAMED_SECTIONS.includes(id)) {
      const data = id === 2 || id === 10 ? made.get(id)! : inputs.small.get(id)!;
      yield concat([sectionHead(id, data.byteLength), data]);
      continue;
    }
    const size = inputs.streamedSizes.get(id)!;
    const head = littleEndian(await reader.read(12));
    if (head.getUint32(0, true) !== id || Number(head.getBigUint64(4, true)) !== size)
      throw browserError(`section ${id} of the contribution inputs is not where or what the header says`);
    yield sectionHead(id, size);
    for (let done = 0; done < size; done += SLICE_BYTES) {
      const slice = await reader.readInto(buffers.take(Math.min(SLICE_BYTES, size - done)));
      yield { scaling: scale(slice) };
    }
  }
  if (!(await reader.atEnd())) throw browserError('the contribution inputs go on after H');
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

function refusalOf(error: Error): ApiError {
  const response = (error as tus.DetailedError).originalResponse;
  if (response) return apiErrorFromBody(response.getStatus(), response.getBody() ?? '');
  return new ApiError(0, 'network', error.message);
}

/** A failed fetch or body read is the connection: the same `network` error the API client raises. */
function asNetworkError(error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted || error instanceof ApiError || (error instanceof DOMException && error.name === 'AbortError'))
    return error;
  if (error instanceof StreamEndedError) return new ApiError(0, 'network', `the download broke off: ${error.message}`);
  if (error instanceof TypeError) return new ApiError(0, 'network', error.message);
  return error;
}

export async function streamedTurn(request: StreamedTurnRequest): Promise<StreamedTurnResult> {
  const { circuit, signal } = request;
  if (signal.aborted) throw new DOMException('turn abandoned', 'AbortError');
  const { pool, note } = await startKernelPool();
  if (!pool) throw new StreamingUnavailable(note);
  const stop = new AbortController();
  const abort = (): void => stop.abort();
  signal.addEventListener('abort', abort);
  const progress: StreamedTurnProgress = {
    step: 'downloading the current key’s header',
    down: { done: 0, total: 0 },
    up: { done: 0, total: 0 },
    scaled: { done: 0, total: 0 },
    resumedFrom: null,
  };
  let lastReport = 0;
  const report = (force = false): void => {
    const now = Date.now();
    if (!force && now - lastReport < PROGRESS_EVERY_MS) return;
    lastReport = now;
    request.onProgress({
      ...progress,
      down: { ...progress.down },
      up: { ...progress.up },
      scaled: { ...progress.scaled },
    });
  };
  let reader: ExactReader | undefined;
  try {
    const response = await fetch(`/api/circuits/${encodeURIComponent(circuit)}/contribution-inputs`, {
      signal: stop.signal,
      cache: 'no-store',
    });
    if (!response.ok || !response.body) throw apiErrorFromBody(response.status, await response.text());
    const headIndex = Number(response.headers.get('x-chain-head'));
    if (!Number.isInteger(headIndex) || headIndex < 0)
      throw browserError('the coordinator did not say which head it sent');
    progress.down.total = Number(response.headers.get('content-length')) || 0;
    reader = new ExactReader(response.body, (received) => {
      progress.down.done = received;
      report();
    });
    const inputs = await readSmallSections(reader);
    const points = [...inputs.streamedSizes.values()].reduce((n, size) => n + size, 0) / POINT_BYTES;
    progress.scaled.total = points;
    progress.step = `drawing your secret and making your record (${note})`;
    report(true);

    const record = await recordContribution(
      { head: recordInputs(inputs), name: request.name, typedEntropy: request.takeTypedEntropy() },
      stop.signal,
    );
    request.onHash?.(record.hash);
    const made = sectionsOf(record.zkey);
    const scale = async (slice: Uint8Array): Promise<Uint8Array> => {
      const scaled = await (pool as ScalePool).scaleOne(slice, record.chain);
      progress.scaled.done += scaled.byteLength / POINT_BYTES;
      report();
      return scaled;
    };
    const total =
      12 +
      inputs.ids.reduce((n, id) => {
        const size = STREAMED_SECTIONS.includes(id)
          ? inputs.streamedSizes.get(id)!
          : (made.get(id) ?? inputs.small.get(id)!).byteLength;
        return n + 12 + size;
      }, 0);
    progress.up.total = total;
    progress.step = `mixing your secret into the key as it arrives (${note}) and sending it back`;
    report(true);

    // Slices in flight or waiting for the upload: enough for every worker to have one queued
    // behind the one it is on, and for an upload request to find the next bytes ready.
    const depth = 3 * pool.workers + 2;
    const buffers = new SliceBuffers(depth + 1);
    const { source, failed } = readAhead(deltaPieces(inputs, made, reader, scale, buffers), depth, (piece) =>
      buffers.give(piece),
    );
    const uploadSource = new StreamedUploadSource(source, total, UPLOAD_CHUNK_BYTES);
    await Promise.race([failed, upload(request, uploadSource, headIndex, progress, report, stop.signal)]);
    progress.step = 'sent';
    report(true);
    return { hash: record.hash, headIndex, kernelWorkers: pool.workers };
  } catch (error) {
    throw asNetworkError(error, signal);
  } finally {
    stop.abort();
    signal.removeEventListener('abort', abort);
    reader?.cancel();
    pool.close();
  }
}

function upload(
  request: StreamedTurnRequest,
  source: StreamedUploadSource,
  headIndex: number,
  progress: StreamedTurnProgress,
  report: (force?: boolean) => void,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const total = source.size;
    const upload = new tus.Upload(new Blob(), {
      // The bytes come from the source, made as the upload runs; the Blob only satisfies the type.
      fileReader: { openFile: async () => source },
      endpoint: `/api/circuits/${encodeURIComponent(request.circuit)}/contributions`,
      headers: { 'X-CSRF-Token': request.csrfToken },
      metadata: { filename: `${request.circuit}.zkey`, format: DELTA_FORMAT, head: String(headIndex) },
      uploadSize: total,
      chunkSize: UPLOAD_CHUNK_BYTES,
      retryDelays: [0, 1000, 3000, 5000, 10_000],
      // Nothing to resume after a reload: the contribution is made afresh, with a new secret.
      storeFingerprintForResuming: false,
      // 4xx refusals (not your turn, stale head, malformed) are answers, not glitches: no retry.
      onShouldRetry: (error) => {
        const status = error.originalResponse?.getStatus() ?? 0;
        return !signal.aborted && (status === 0 || status === 423 || status >= 500);
      },
      onAfterResponse: (req, res) => {
        if (req.getMethod() === 'HEAD' && res.getStatus() < 300) {
          progress.resumedFrom = Number(res.getHeader('Upload-Offset') ?? 0);
          report(true);
        }
      },
      onProgress: (sent) => {
        progress.up.done = sent;
        report();
      },
      onError: (error) => {
        signal.removeEventListener('abort', terminate);
        reject(signal.aborted ? new DOMException('turn abandoned', 'AbortError') : refusalOf(error));
      },
      onSuccess: () => {
        signal.removeEventListener('abort', terminate);
        progress.up.done = total;
        resolve();
      },
    });
    // Given up (or another part failed): the upload is terminated on the coordinator (DELETE)
    // rather than left for its sweep.
    const terminate = (): void => {
      void upload.abort(true).catch(() => {});
      reject(new DOMException('turn abandoned', 'AbortError'));
    };
    signal.addEventListener('abort', terminate, { once: true });
    upload.start();
  });
}
