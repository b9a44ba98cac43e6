/**
 * Uploads a contribution with the resumable tus protocol (tus-js-client). The fingerprint names
 * the ceremony, contributor, circuit, base head and size, so after a reload the same candidate
 * finds its earlier upload URL (kept by tus-js-client in localStorage) and continues from the
 * server's offset instead of starting over. Chunks are a twentieth of the file (64 KiB to 8 MiB):
 * each chunk is a point the upload can resume from.
 */
import * as tus from 'tus-js-client';
import { ApiError, apiErrorFromBody } from '../../../client/api-client.ts';
import { chunkSizeFor } from './upload-chunks.ts';
import { isRetryableUploadStatus } from '../../../core/delta/streamed-upload-source.ts';
import { restartRetryDelaysMs } from '../../../client/restart-retry.ts';

export interface UploadRequest {
  circuit: string;
  zkey: Uint8Array;
  fingerprint: string;
  csrfToken: string;
  onProgress: (sent: number, total: number) => void;
  /** Called once with the offset the upload continues from (0 for a fresh upload). */
  onStart: (resumedFrom: number) => void;
  signal: AbortSignal;
}

/** The server's refusal inside a tus error (status and `{error: {code, message}}` body), if any. */
function refusalOf(error: Error): ApiError {
  const response = (error as tus.DetailedError).originalResponse;
  if (response) return apiErrorFromBody(response.getStatus(), response.getBody() ?? '');
  return new ApiError(0, 'network', error.message);
}

export function uploadContribution(request: UploadRequest): Promise<void> {
  return new Promise((resolve, reject) => {
    const file = new Blob([request.zkey as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' });
    const upload = new tus.Upload(file, {
      endpoint: `/api/circuits/${encodeURIComponent(request.circuit)}/contributions`,
      headers: { 'X-CSRF-Token': request.csrfToken },
      metadata: { filename: `${request.circuit}.zkey` },
      chunkSize: chunkSizeFor(file.size),
      // As long as any request rides out a coordinator restart (client/restart-retry.ts).
      retryDelays: restartRetryDelaysMs(),
      fingerprint: async () => request.fingerprint,
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      // 4xx refusals (not your turn, too large, …) are answers, not glitches: do not retry them.
      onShouldRetry: (error) => isRetryableUploadStatus(error.originalResponse?.getStatus() ?? 0),
      // A HEAD answer is a resumed upload's offset on the server; a POST answer starts a new one.
      onAfterResponse: (req, res) => {
        if (req.getMethod() === 'HEAD' && res.getStatus() < 300)
          request.onStart(Number(res.getHeader('Upload-Offset') ?? 0));
        else if (req.getMethod() === 'POST' && res.getStatus() < 300) request.onStart(0);
      },
      onProgress: (sent, total) => request.onProgress(sent, total),
      onError: (error) => reject(refusalOf(error)),
      onSuccess: () => resolve(),
    });
    request.signal.addEventListener('abort', () => {
      void upload.abort(false);
      reject(new DOMException('upload abandoned', 'AbortError'));
    });
    upload
      .findPreviousUploads()
      .then((previous) => {
        const earlier = previous[0];
        if (earlier) upload.resumeFromPreviousUpload(earlier);
        upload.start();
      })
      .catch(() => upload.start());
  });
}
