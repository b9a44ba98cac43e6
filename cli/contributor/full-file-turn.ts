/**
 * A turn on today's protocol, the page's: the whole head key downloaded
 * (GET /api/circuits/:name/zkeys/:index, streamed to a file and hashed on the way against the
 * transcript's file hash), the contribution made with the kernel on every core (contributeFast:
 * snarkjs's own contribution with L and H scaled on worker threads), the new key uploaded with tus
 * from the file (one PATCH; a dropped connection resumes from the coordinator's offset). Keys
 * stay on disk in a private folder, never whole in memory, and are deleted after the turn.
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
import { FILE_HASH_ALGORITHM } from '../../core/crypto/file-hash.ts';
import { CoordinatorApiError, type CoordinatorClient } from './coordinator-client.ts';
import type { TurnProtocol, TurnRequest, TurnResult } from './turn-protocol.ts';

/** A count event at most this often for bytes moved (the renderer redraws at most every 100 ms anyway). */
const BYTE_PROGRESS_EVERY_MS = 100;
/** tus retries a dropped connection (HEAD for the offset, then PATCH from it) after these delays. */
const UPLOAD_RETRY_DELAYS_MS = [0, 1000, 3000, 5000, 10_000, 10_000];

export interface FullFileTurnOptions {
  client: CoordinatorClient;
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

export class FullFileTurn implements TurnProtocol {
  constructor(private readonly options: FullFileTurnOptions) {}

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
      const computeMs = Date.now() - started;
      await rm(headPath, { force: true });

      started = Date.now();
      const upload = await this.upload(request, nextPath);
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

  private async download(request: TurnRequest, target: string): Promise<number> {
    const { circuit, headIndex, signal } = request;
    request.progress({ type: 'step', circuit, step: `your turn: downloading contribution ${headIndex}` });
    const response = await this.options.client.fetch(
      'GET',
      `/api/circuits/${encodeURIComponent(circuit)}/zkeys/${headIndex}`,
      { signal, timeoutMs: Infinity },
    );
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
    if (request.headFileHash && hash.digest('hex') !== request.headFileHash) {
      // Damaged on the way (or not the key the transcript records): contributing to it would only
      // be refused. The run takes the turn again with a fresh download.
      throw new CoordinatorApiError(
        0,
        'network',
        `the downloaded ${circuit} #${headIndex} does not match the transcript's file hash (damaged on the way)`,
      );
    }
    return received;
  }

  private async upload(
    request: TurnRequest,
    file: string,
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
        metadata: { filename: `${circuit}.zkey` },
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
