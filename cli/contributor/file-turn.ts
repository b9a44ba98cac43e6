/**
 * A terminal contributor's turn, in one of two transfers:
 *  - `delta` (where the coordinator takes them, docs/contribution-delta.md), streamed: the head's
 *    inputs (GET /api/circuits/:name/contribution-inputs, redirected to the head's own
 *    `…/contribution-inputs/N`: the sections a contribution reads, L and H last) are read as they
 *    arrive; the record is made in memory from the small sections
 *    (contributionRecord), L and H are scaled slice by slice on the kernel's threads while they
 *    download, and the delta is uploaded by tus as it is made (metadata `format: zkey-delta-v2`,
 *    `head: N`; core/delta/streamed-delta.ts). Nothing touches the disk, and memory stays a few MiB
 *    beyond the code whatever the key's size. At 2^18 that is about a fifth of the key each way;
 *  - `whole-key` (any coordinator without deltas): the whole head downloaded to a private folder
 *    (GET /api/circuits/:name/zkeys/:index, hashed on the way against the transcript's file hash),
 *    the contribution made with the kernel on every core (contributeFast), the whole new key
 *    uploaded from the file, one tus PATCH; keys are deleted after the turn.
 * Either way a dropped upload resumes from the coordinator's offset.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tus from 'tus-js-client';
import { snarkjsProgressLogger } from '../../core/ceremony/progress.ts';
import { ExactReader, StreamEndedError } from '../../core/delta/exact-reader.ts';
import { DeltaInputsError, startStreamedDelta, UPLOAD_CHUNK_BYTES } from '../../core/delta/streamed-delta.ts';
import {
  isRetryableUploadStatus,
  streamedUploadOptions,
  type StreamedUploadSource,
} from '../../core/delta/streamed-upload-source.ts';
import { FILE_HASH_ALGORITHM } from '../../core/crypto/file-hash.ts';
import { restartRetryDelaysMs } from '../../client/restart-retry.ts';
import { ApiError } from '../../client/api-client.ts';
import { turnOpening } from '../../client/run-words.ts';
import { type CoordinatorClient } from './coordinator-client.ts';
import type { TurnProtocol, TurnRequest, TurnResult } from './turn-protocol.ts';

/** A count event at most this often for bytes moved (the renderer redraws at most every 100 ms anyway). */
const BYTE_PROGRESS_EVERY_MS = 100;
/**
 * tus retries a dropped connection (HEAD for the offset, then PATCH from it) after these delays: for
 * as long as any request rides out a coordinator restart (client/restart-retry.ts).
 */
const UPLOAD_RETRY_DELAYS_MS = restartRetryDelaysMs();

export type TurnTransfer = 'delta' | 'whole-key';

export interface FileTurnOptions {
  client: CoordinatorClient;
  /** What crosses the network: the sections a contribution changes, or the whole key. */
  transfer: TurnTransfer;
  /** A private folder for the keys of a turn (the run's; removed when the run ends). */
  workDir: string;
  /** Kernel threads (default: every core). */
  workers?: number;
}

function throttled(report: (done: number) => void): (done: number, force?: boolean) => void {
  let last = 0;
  return (done, force = false) => {
    const now = Date.now();
    if (force || now - last >= BYTE_PROGRESS_EVERY_MS) {
      last = now;
      report(done);
    }
  };
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('the turn was given up', 'AbortError');
}

export class FileTurn implements TurnProtocol {
  constructor(private readonly options: FileTurnOptions) {}

  /** Loads snarkjs and builds the curve ahead of the first turn (both take a second or so). */
  async prepare(): Promise<void> {
    const [{ getBn128 }] = await Promise.all([
      import('../../core/crypto/bn128.ts'),
      import('../../core/kernel/contribute-fast.ts'),
    ]);
    await getBn128();
  }

  takeTurn(request: TurnRequest): Promise<TurnResult> {
    return this.options.transfer === 'delta' ? this.streamedTurn(request) : this.wholeKeyTurn(request);
  }

  /** The streamed delta turn: download, compute and upload at once (core/delta/streamed-delta.ts). */
  private async streamedTurn(request: TurnRequest): Promise<TurnResult> {
    const { circuit, signal } = request;
    const started = Date.now();
    request.progress({
      type: 'step',
      circuit,
      step: `${turnOpening(request.standby ?? false)}: downloading the inputs of contribution ${request.headIndex}`,
    });
    // The kernel's threads start (a tenth of a second or more) while the inputs are asked for.
    const poolStarting = import('../../core/kernel/node-scale-pool.ts').then(({ nodeScalePool }) =>
      nodeScalePool(this.options.workers ?? availableParallelism()),
    );
    let response: Response;
    try {
      response = await this.options.client.fetch(
        'GET',
        `/api/circuits/${encodeURIComponent(circuit)}/contribution-inputs`,
        { signal, timeoutMs: Infinity },
      );
    } catch (error) {
      void poolStarting.then((pool) => pool.close()).catch(() => {});
      throw error;
    }
    // Asked while the kernel's threads start; nothing is computed before the answer.
    const taken = request.taken?.();
    taken?.catch(() => {});
    // The inputs are always the current head's: the one to contribute on, whatever the run last saw.
    const headIndex = Number(response.headers.get('x-chain-head') ?? request.headIndex);
    const total = Number(response.headers.get('content-length')) || 0;
    let downloadMs = 0;
    const reader = new ExactReader(response.body as ReadableStream<Uint8Array>, (received) => {
      if (received >= total) downloadMs = Date.now() - started;
    });
    const { contributionRecord } = await import('../../core/kernel/contribute-fast.ts');
    const pool = await poolStarting;
    // Ends this attempt's upload when the attempt fails otherwise (the download cut off): tus would
    // else go on retrying it in the background, beside the next attempt's upload.
    const attemptOver = new AbortController();
    let computeMs = 0;
    try {
      await taken;
      const delta = await startStreamedDelta({
        reader,
        scaler: pool,
        makeRecord: (smallKey) => {
          request.progress({
            type: 'step',
            circuit,
            step:
              `computing your contribution as the inputs arrive (kernel on ${pool.workers} ` +
              `thread${pool.workers === 1 ? '' : 's'}) and sending it as it is made`,
          });
          return contributionRecord(smallKey, request.name, request.entropy());
        },
        onScaled: (done) => {
          if (done > 0) computeMs = Date.now() - started;
        },
      });
      request.onHash?.(delta.hash);
      const upload = await Promise.race([
        delta.failed,
        this.upload(
          { ...request, signal: AbortSignal.any([signal, attemptOver.signal]) },
          delta.source,
          headIndex,
          delta.source.size,
        ),
      ]);
      return {
        contributionHash: delta.hash,
        contributionId: upload.contributionId,
        bytesDown: reader.received,
        bytesUp: upload.bytes,
        resumedFrom: upload.resumedFrom,
        // The stages overlap: each is timed from the turn's start to its own end.
        timings: { downloadMs, computeMs, uploadMs: Date.now() - started },
      };
    } catch (error) {
      if (signal.aborted) throw abortError(signal);
      if (error instanceof StreamEndedError || error instanceof TypeError)
        throw new ApiError(0, 'network', `the download of ${circuit} broke off: ${error.message}`);
      if (error instanceof DeltaInputsError) throw new ApiError(0, 'network', error.message);
      throw error;
    } finally {
      attemptOver.abort();
      reader.cancel();
      pool.close();
    }
  }

  private async wholeKeyTurn(request: TurnRequest): Promise<TurnResult> {
    const { circuit, signal } = request;
    const base = path.join(this.options.workDir, `${circuit}-${request.headIndex}`);
    const headPath = `${base}.head.zkey`;
    const nextPath = `${base}.next.zkey`;
    try {
      let started = Date.now();
      const bytesDown = await this.download(request, headPath);
      const downloadMs = Date.now() - started;

      started = Date.now();
      const workers = this.options.workers ?? availableParallelism();
      request.progress({
        type: 'step',
        circuit,
        step: `computing your contribution (kernel on ${workers} thread${workers === 1 ? '' : 's'})`,
      });
      const { contributeFast } = await import('../../core/kernel/contribute-fast.ts');
      const made = await contributeFast(headPath, nextPath, request.name, request.entropy(), {
        workers,
        logger: snarkjsProgressLogger(request.progress, circuit),
      });
      if (signal.aborted) throw abortError(signal);
      request.onHash?.(made.hash);
      const computeMs = Date.now() - started;
      await rm(headPath, { force: true });

      started = Date.now();
      const upload = await this.upload(request, nextPath, request.headIndex, (await stat(nextPath)).size);
      return {
        contributionHash: made.hash,
        contributionId: upload.contributionId,
        bytesDown,
        bytesUp: upload.bytes,
        resumedFrom: upload.resumedFrom,
        timings: { downloadMs, computeMs, uploadMs: Date.now() - started },
      };
    } finally {
      await rm(headPath, { force: true });
      await rm(nextPath, { force: true });
    }
  }

  /** The whole head to `target`, checked against the transcript's file hash; returns the bytes received. */
  private async download(request: TurnRequest, target: string): Promise<number> {
    const { circuit, signal, headIndex } = request;
    request.progress({
      type: 'step',
      circuit,
      step: `${turnOpening(request.standby ?? false)}: downloading contribution ${headIndex}`,
    });
    const response = await this.options.client.fetch(
      'GET',
      `/api/circuits/${encodeURIComponent(circuit)}/zkeys/${headIndex}`,
      { signal, timeoutMs: Infinity },
    );
    // Asked while the key downloads, answered before it is contributed to.
    const taken = request.taken?.();
    taken?.catch(() => {});
    const total = Number(response.headers.get('content-length')) || 0;
    const hash = createHash(FILE_HASH_ALGORITHM);
    let received = 0;
    const report = throttled((done) =>
      request.progress({ type: 'count', circuit, part: 'download', done, total: Math.max(total, done) }),
    );
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        received += chunk.length;
        hash.update(chunk);
        report(received);
        callback(null, chunk);
      },
    });
    try {
      await pipeline(Readable.fromWeb(response.body as never), counter, createWriteStream(target, { mode: 0o600 }), {
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw abortError(signal);
      throw new ApiError(
        0,
        'network',
        `the download of ${circuit} #${headIndex} broke off after ${received} bytes: ${(error as Error).message}`,
      );
    }
    report(received, true);
    if (total && received !== total)
      throw new ApiError(
        0,
        'network',
        `the download of ${circuit} #${headIndex} ended after ${received} of ${total} bytes`,
      );
    if (request.headFileHash && hash.digest('hex') !== request.headFileHash) {
      // Damaged on the way (or not the key the transcript records): contributing to it would only
      // be refused. The run takes the turn again with a fresh download.
      throw new ApiError(
        0,
        'network',
        `the downloaded ${circuit} #${headIndex} does not match the transcript's file hash (damaged on the way)`,
      );
    }
    await taken;
    return received;
  }

  /** Uploads `file` (a path: the whole key) or a streamed delta's source, of `size` bytes. */
  private async upload(
    request: TurnRequest,
    file: string | StreamedUploadSource,
    headIndex: number,
    size: number,
  ): Promise<{ contributionId: string | undefined; bytes: number; resumedFrom: number }> {
    const { circuit, signal } = request;
    const streamed = typeof file !== 'string';
    if (!streamed) request.progress({ type: 'step', circuit, step: 'uploading your contribution' });
    const report = throttled((done) => request.progress({ type: 'count', circuit, part: 'upload', done, total: size }));
    let contributionId: string | undefined;
    let resumedFrom = 0;
    let sentBefore = 0; // bytes sent by earlier (broken) PATCHes
    let attemptFrom = 0; // the offset the current PATCH started at
    let sent = 0; // tus's progress: the offset reached (not the bytes of this PATCH)
    await new Promise<void>((resolve, reject) => {
      const upload = new tus.Upload(streamed ? new Blob() : createReadStream(file), {
        ...(streamed
          ? streamedUploadOptions(file, circuit, headIndex, UPLOAD_CHUNK_BYTES)
          : {
              metadata: { filename: `${circuit}.zkey` },
              uploadSize: size,
              // One PATCH for the whole file: a dropped connection resumes from the server's offset anyway.
              chunkSize: Infinity,
              storeFingerprintForResuming: false,
            }),
        endpoint: `${this.options.client.baseUrl}/api/circuits/${encodeURIComponent(circuit)}/contributions`,
        headers: this.options.client.sessionHeaders(),
        retryDelays: UPLOAD_RETRY_DELAYS_MS,
        onShouldRetry: (error) => !signal.aborted && isRetryableUploadStatus(error.originalResponse?.getStatus() ?? 0),
        onAfterResponse: (req, res) => {
          if (req.getMethod() === 'HEAD' && res.getStatus() < 300) {
            resumedFrom = Number(res.getHeader('Upload-Offset') ?? 0);
            sentBefore += Math.max(0, sent - attemptFrom);
            attemptFrom = resumedFrom;
          }
          const id = res.getHeader('X-Contribution-Id');
          if (req.getMethod() === 'PATCH' && id) contributionId = id;
        },
        onProgress: (bytesSent) => {
          sent = bytesSent;
          report(bytesSent);
        },
        onError: (error) => {
          const response = (error as tus.DetailedError).originalResponse;
          if (signal.aborted) return reject(abortError(signal));
          if (!response) return reject(new ApiError(0, 'network', `the upload of ${circuit} failed: ${error.message}`));
          const body = response.getBody() ?? '';
          try {
            const parsed = JSON.parse(body) as { error?: { code?: string; message?: string } };
            if (parsed.error?.code)
              return reject(
                new ApiError(
                  response.getStatus(),
                  parsed.error.code,
                  `upload of ${circuit}: ${parsed.error.message ?? ''}`,
                ),
              );
          } catch {
            // not our JSON: fall through
          }
          reject(
            new ApiError(
              response.getStatus(),
              `http.${response.getStatus()}`,
              `upload of ${circuit}: HTTP ${response.getStatus()} ${body.slice(0, 200)}`,
            ),
          );
        },
        onSuccess: () => {
          signal.removeEventListener('abort', terminate);
          resolve();
        },
      });
      // Given up: the upload is terminated on the coordinator (DELETE) rather than left for its sweep.
      // tus calls neither onError nor onSuccess once aborted: the turn ends here.
      const terminate = (): void => {
        void upload.abort(true).catch(() => {});
        reject(abortError(signal));
      };
      signal.addEventListener('abort', terminate, { once: true });
      upload.start();
    });
    report(size, true);
    return { contributionId, bytes: sentBefore + (size - attemptFrom), resumedFrom };
  }
}
