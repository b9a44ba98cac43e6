/**
 * tus answers its own protocol errors (an offset that is not the upload's, an upload that is not
 * there, a lock not acquired in time, a missing header) with a line of plain text. Every other
 * answer of the coordinator is `{error:{code,message}}`, and clients branch on the code, so these
 * are given one too. tus's texts are fixed strings of the library (no path, nothing of the request),
 * and are kept as the message. The status is the code's: tus's 403s and 501s answer 400, its 410
 * 404; a tus client treats them alike (a 4xx other than 409 and 423 is not retried).
 */
import { CoordinatorError, type ErrorCode } from '../../core/errors.ts';
import { errorStatus } from '../http/error-status.ts';

/** The code for a tus protocol error of `status`. */
function codeOf(status: number): ErrorCode {
  if (status === 409) return 'upload.offset_conflict';
  if (status === 404 || status === 410) return 'upload.not_found';
  // tus's lock not acquired before its timeout, a write that failed (500): worth a retry. A newer
  // request of the same upload took the lock (400), an extension not offered (501): not, so never 5xx.
  return status >= 500 && status !== 501 ? 'upload.failed' : 'upload.protocol_error';
}

/**
 * The coordinator's error for a tus protocol error (`{status_code, body}` with a plain-text body),
 * or undefined for an answer that is already one of ours (a hook's refusal, JSON).
 */
export function tusProtocolError(error: { status_code: number; body?: string }): CoordinatorError | undefined {
  const body = error.body?.trim() ?? '';
  if (body.startsWith('{')) return undefined;
  const words = body === '' ? `the upload request was refused (HTTP ${error.status_code})` : body;
  return new CoordinatorError(codeOf(error.status_code), words.replace(/\s+/g, ' '));
}

/** A CoordinatorError in the shape tus answers a hook's refusal with: the code's status, our body. */
export function tusError(error: CoordinatorError): { status_code: number; body: string } {
  return { status_code: errorStatus(error.code), body: JSON.stringify(error.toJSON()) };
}

/** Runs `check`, turning a CoordinatorError into the error shape tus answers with. */
export async function asTusError<T>(check: () => T | Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (error instanceof CoordinatorError) throw tusError(error);
    throw error;
  }
}
