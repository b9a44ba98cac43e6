/**
 * A turn through files on disk, in one of two transfers:
 *  - `delta` (where the coordinator takes them, docs/contribution-delta.md): only the head's
 *    skeleton is downloaded (GET /api/circuits/:name/contribution-inputs: the sections a
 *    contribution reads), the contribution is made on it, and only the new skeleton is uploaded
 *    (tus metadata `format: zkey-delta-v1`, `head: N`); the coordinator fills it back into the key.
 *    At 2^18 that is about a fifth of the key each way;
 *  - `whole-key` (the page's today, and any coordinator without deltas): the whole head downloaded
 *    (GET /api/circuits/:name/zkeys/:index, hashed on the way against the transcript's file hash)
 *    and the whole new key uploaded.
 * The contribution is made with the kernel on every core (contributeFast: snarkjs's own
 * contribution with L and H scaled on worker threads); the upload is one tus PATCH from the file (a
 * dropped connection resumes from the coordinator's offset). Keys stay on disk in a private
 * folder, never whole in memory, and are deleted after the turn.
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
import { DELTA_FORMAT } from '../../core/delta/delta-format.ts';
import { FILE_HASH_ALGORITHM } from '../../core/crypto/file-hash.ts';
import { CoordinatorApiError, type CoordinatorClient } from './coordinator-client.ts';
import type { TurnProtocol, TurnRequest, TurnResult } from './turn-protocol.ts';

/** A count event at most this often for bytes moved (the renderer redraws at most every 100 ms anyway). */
const BYTE_PROGRESS_EVERY_MS = 100;
/** tus retries a dropped connection (HEAD for the offset, then PATCH from it) after these delays. */
const UPLOAD_RETRY_DELAYS_MS = [0, 1000, 3000, 5000, 10_000, 10_000];

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

  async takeTurn(request: TurnRequest): Promise<TurnResult> {
    const { circuit, signal } = request;
    const base = path.join(this.options.workDir, `${circuit}-${request.headIndex}`);
    const headPath = `${base}.head.zkey`;
    const nextPath = `${base}.next.zkey`;
    try {
      let started = Date.now();
      const { bytes: bytesDown, headIndex } = await this.download(request, headPath);
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
      const computeMs = Date.now() - started;
      await rm(headPath, { force: true });

      started = Date.now();
      const upload = await this.upload(request, nextPath, headIndex);
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

  /** The head (or its skeleton) to `target`; returns the bytes received and the head's index. */
  private async download(request: TurnRequest, target: string): Promise<{ bytes: number; headIndex: number }> {
    const { circuit, signal } = request;
    const delta = this.options.transfer === 'delta';
    request.progress({
      type: 'step',
      circuit,
      step: `your turn: downloading ${delta ? 'the inputs of ' : ''}contribution ${request.headIndex}`,
    });
    const route = delta ? 'contribution-inputs' : `zkeys/${request.headIndex}`;
    const response = await this.options.client.fetch('GET', `/api/circuits/${encodeURIComponent(circuit)}/${route}`, {
      signal,
      timeoutMs: Infinity,
    });
    // The inputs are always the current head's: the one to contribute on, whatever the run last saw.
    const headIndex = delta ? Number(response.headers.get('x-chain-head') ?? request.headIndex) : request.headIndex;
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
      throw new CoordinatorApiError(
        0,
        'network',
        `the download of ${circuit} #${headIndex} broke off after ${received} bytes: ${(error as Error).message}`,
      );
    }
    report(received, true);
    if (total && received !== total)
      throw new CoordinatorApiError(
        0,
        'network',
        `the download of ${circuit} #${headIndex} ended after ${received} of ${total} bytes`,
      );
    // A skeleton has no hash in the transcript: the coordinator checks it against the head instead.
    if (!delta && request.headFileHash && hash.digest('hex') !== request.headFileHash) {
      // Damaged on the way (or not the key the transcript records): contributing to it would only
      // be refused. The run takes the turn again with a fresh download.
      throw new CoordinatorApiError(
        0,
        'network',
        `the downloaded ${circuit} #${headIndex} does not match the transcript's file hash (damaged on the way)`,
      );
    }
    return { bytes: received, headIndex };
  }

  private async upload(
    request: TurnRequest,
    file: string,
    headIndex: number,
  ): Promise<{ contributionId: string | undefined; bytes: number; resumedFrom: number }> {
    const { circuit, signal } = request;
    const { size } = await stat(file);
    request.progress({ type: 'step', circuit, step: 'uploading your contribution' });
    const report = throttled((done) => request.progress({ type: 'count', circuit, part: 'upload', done, total: size }));
    let contributionId: string | undefined;
    let resumedFrom = 0;
    let sentBefore = 0; // bytes sent by earlier (broken) PATCHes
    let attemptFrom = 0; // the offset the current PATCH started at
    let sent = 0; // tus's progress: the offset reached (not the bytes of this PATCH)
    await new Promise<void>((resolve, reject) => {
      const upload = new tus.Upload(createReadStream(file), {
        endpoint: `${this.options.client.baseUrl}/api/circuits/${encodeURIComponent(circuit)}/contributions`,
        headers: this.options.client.sessionHeaders(),
        metadata: {
          filename: `${circuit}.zkey`,
          ...(this.options.transfer === 'delta' ? { format: DELTA_FORMAT, head: String(headIndex) } : {}),
        },
        uploadSize: size,
        // One PATCH for the whole file: a dropped connection resumes from the server's offset anyway.
        chunkSize: Infinity,
        retryDelays: UPLOAD_RETRY_DELAYS_MS,
        storeFingerprintForResuming: false,
        // 4xx refusals (not your turn, too large, …) are answers, not glitches: do not retry them.
        onShouldRetry: (error) => {
          const status = error.originalResponse?.getStatus() ?? 0;
          return !signal.aborted && (status === 0 || status === 423 || status >= 500);
        },
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
          if (!response)
            return reject(new CoordinatorApiError(0, 'network', `the upload of ${circuit} failed: ${error.message}`));
          const body = response.getBody() ?? '';
          try {
            const parsed = JSON.parse(body) as { error?: { code?: string; message?: string } };
            if (parsed.error?.code)
              return reject(
                new CoordinatorApiError(
                  response.getStatus(),
                  parsed.error.code,
                  `upload of ${circuit}: ${parsed.error.message ?? ''}`,
                ),
              );
          } catch {
            // not our JSON: fall through
          }
          reject(
            new CoordinatorApiError(
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
      const terminate = (): void => void upload.abort(true).catch(() => {});
      signal.addEventListener('abort', terminate, { once: true });
      upload.start();
    });
    report(size, true);
    return { contributionId, bytes: sentBefore + (size - attemptFrom), resumedFrom };
  }
}
