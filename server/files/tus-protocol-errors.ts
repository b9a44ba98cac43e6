/**
 * tus answers its own protocol errors (an offset that is not the upload's, an upload that is not
 * there, a lock not acquired in time, a missing header) with a line of plain text. Every other
 * answer of the coordinator is `{error:{code,message}}`, and clients branch on the code, so these
 * are given one too. tus's texts are fixed strings of the library (no path, nothing of the request),
 * and are kept as the message.
 */
import { CoordinatorError, type ErrorCode } from '../../core/errors.ts';

/** The code for a tus protocol error of `status`. */
function codeOf(status: number): ErrorCode {
  if (status === 409) return 'upload.offset_conflict';
  if (status === 404 || status === 410) return 'upload.not_found';
  // tus's lock: not acquired before its timeout (500), or a newer request of the same upload took it (400).
  return status >= 500 ? 'upload.failed' : 'upload.protocol_error';
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
