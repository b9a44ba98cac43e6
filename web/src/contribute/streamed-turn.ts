/**
 * The page's turn with contribution deltas (zkey-delta-v2, docs/contribution-delta.md), streamed: download,
 * compute and upload run at once, and the browser never holds a key. The delta is made by
 * core/delta/streamed-delta.ts while the inputs arrive: snarkjs makes the record on the small
 * sections in a fresh Web Worker (recordContribution), the page's kernel workers scale L and H
 * slice by slice, and tus uploads the delta as it is made.
 * A dropped upload resumes from the coordinator's offset out of the window the upload source still
 * holds, never recomputing what was sent. A reload cannot resume (nothing is kept, the secret least
 * of all): it starts a new contribution with new entropy, whose upload replaces the earlier one.
 */
import * as tus from 'tus-js-client';
import { ExactReader, StreamEndedError } from '../../../core/delta/exact-reader.ts';
import { DeltaInputsError, UPLOAD_CHUNK_BYTES, startStreamedDelta } from '../../../core/delta/streamed-delta.ts';
import {
  isRetryableUploadStatus,
  streamedUploadOptions,
  type StreamedUploadSource,
} from '../../../core/delta/streamed-upload-source.ts';
import { restartRetryDelaysMs } from '../../../client/restart-retry.ts';
import { ApiError, apiErrorFromBody } from '../../../client/api-client.ts';
import { recordContribution, startKernelPool } from './compute-contribution.ts';

/**
 * How often the turn's progress reaches the page. Each report re-renders the status card (layout,
 * paint, a compositor frame) on the cores the kernel workers need: four a second keeps the bars
 * moving, and over a 2^17 turn the renderer's main, compositor and GPU threads used 14 % less CPU
 * than at ten.
 */
const PROGRESS_EVERY_MS = 250;

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
  /** Awaited once the inputs are answered, before anything is computed (DriverTurn.taken: standby). */
  taken?(): Promise<void>;
}

export interface StreamedTurnResult {
  hash: string;
  /** The head the contribution was made on. */
  headIndex: number;
  kernelWorkers: number;
}

/** This browser cannot stream (no kernel): the caller takes the turn with whole keys instead. */
export class StreamingUnavailable extends Error {}

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
  if (error instanceof DeltaInputsError) return new ApiError(0, 'browser', error.message);
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
    // The moving URL redirects to the head's own inputs (`…/contribution-inputs/N`), immutable: a
    // reload that takes the turn again may find them in the browser's cache (or a CDN's).
    const response = await fetch(`/api/circuits/${encodeURIComponent(circuit)}/contribution-inputs`, {
      signal: stop.signal,
    });
    if (!response.ok || !response.body) throw apiErrorFromBody(response.status, await response.text());
    const headIndex = Number(response.headers.get('x-chain-head'));
    if (!Number.isInteger(headIndex) || headIndex < 0)
      throw new ApiError(0, 'browser', 'the coordinator did not say which head it sent');
    progress.down.total = Number(response.headers.get('content-length')) || 0;
    reader = new ExactReader(response.body, (received) => {
      progress.down.done = received;
      report();
    });
    await request.taken?.();
    const delta = await startStreamedDelta({
      reader,
      scaler: pool,
      makeRecord: (smallKey) => {
        progress.step = `drawing your secret and making your record (${note})`;
        report(true);
        return recordContribution(
          { head: smallKey, name: request.name, typedEntropy: request.takeTypedEntropy() },
          stop.signal,
        );
      },
      onPoints: (total) => (progress.scaled.total = total),
      onScaled: (done) => {
        progress.scaled.done = done;
        report();
      },
    });
    request.onHash?.(delta.hash);
    progress.up.total = delta.source.size;
    progress.step = `mixing your secret into the key as it arrives (${note}) and sending it back`;
    report(true);
    const { source, failed } = delta;
    await Promise.race([failed, upload(request, source, headIndex, progress, report, stop.signal)]);
    progress.step = 'sent';
    report(true);
    return { hash: delta.hash, headIndex, kernelWorkers: pool.workers };
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
      ...streamedUploadOptions(source, request.circuit, headIndex, UPLOAD_CHUNK_BYTES),
      endpoint: `/api/circuits/${encodeURIComponent(request.circuit)}/contributions`,
      headers: { 'X-CSRF-Token': request.csrfToken },
      // As long as any request rides out a coordinator restart (client/restart-retry.ts).
      retryDelays: restartRetryDelaysMs(),
      onShouldRetry: (error) => !signal.aborted && isRetryableUploadStatus(error.originalResponse?.getStatus() ?? 0),
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
