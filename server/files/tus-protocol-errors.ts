/**
 * tus answers its own protocol errors (an offset that is not the upload's, an upload that is not
 * there, a lock not acquired in time, a missing header) with a line of plain text. Every other
 * answer of the coordinator is `{error:{code,message}}`, and clients branch on the code, so these
 * are given one too. tus's texts are fixed strings of the library (no path, nothing of the request),
 * and are kept as the message. The status is the code's: tus's 403s and 501s answer 400, its 410
 * 404; a tus client treats them alike (a 4xx other than 409 and 423 is not retried).
 */
import { CoordinatorError, type ErrorCode } from '../../core/errors.ts';
import type { IncomingMessage } from 'node:http';
import type { ServerOptions } from '@tus/server';
import { errorStatus } from '../http/error-status.ts';
import type { Principal } from '../auth/principal.ts';

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
function tusProtocolError(error: { status_code: number; body?: string }): CoordinatorError | undefined {
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

/**
 * What tus answers for an error it met (onResponseError): a body over the largest upload is
 * upload.too_large, tus's own protocol errors get their code, anything else is upload.failed, its
 * text only `logged` (it may name server paths). Undefined: the answer is ours already.
 */
export function tusAnswerTo(
  error: Error | { status_code: number; body?: string },
  logged: (text: string) => void,
): { status_code: number; body: string } | undefined {
  if ('status_code' in error) {
    if (error.status_code === 413)
      return tusError(
        new CoordinatorError('upload.too_large', 'the file is larger than a valid contribution to this circuit can be'),
      );
    const protocolError = tusProtocolError(error);
    return protocolError ? tusError(protocolError) : undefined;
  }
  logged(String(error));
  return tusError(new CoordinatorError('upload.failed', 'the coordinator could not store the upload'));
}

/** The request object tus hands its hooks. */
export type TusRequest = Parameters<NonNullable<ServerOptions['onIncomingRequest']>>[0];

/** The signed-in principal behind a tus request (srvx wraps the Node request; Express decorated it). */
export function principalOf(request: { runtime?: { node?: { req?: IncomingMessage } } }): Principal | undefined {
  return (request.runtime?.node?.req as (IncomingMessage & { principal?: Principal }) | undefined)?.principal;
}
