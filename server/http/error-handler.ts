/**
 * The one place where errors become HTTP responses: a CoordinatorError keeps its code and answers
 * with its status (error-status.ts); anything else is `internal` (500) whose details go to the log,
 * not the client, or, for the 4xx errors Express and its body parsers raise, the code that says
 * the same. Every body is `{"error":{"code","message"}}` with a code of core/errors.ts, its message
 * at most MESSAGE_MAX_CHARS: a refusal that quotes what the client sent (a path, a name, a list of
 * problems) never answers with more than that, whatever was sent.
 */
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { isCoordinatorError, type ErrorCode } from '../../core/errors.ts';
import { errorStatus } from './error-status.ts';

/** The longest message an error answer carries; the longest a refusal of ours writes is a few hundred characters. */
const MESSAGE_MAX_CHARS = 1000;

function send(res: Response, code: ErrorCode, message: string): void {
  // An answer already under way cannot become a refusal: it ends where it is.
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A refusal is about this request, at this moment: never for a cache to keep.
  res.setHeader('Cache-Control', 'no-store');
  res.status(errorStatus(code)).json({ error: { code, message: bounded(message, MESSAGE_MAX_CHARS) } });
}

/** The code for a 4xx error that is not ours (body-parser, Express's file sending), by its status. */
function codeOfClientError(status: number): ErrorCode {
  if (status === 404) return 'not_found';
  if (status === 413) return 'request.too_large';
  return 'request.invalid';
}

export function errorHandler(log: {
  warn(message: string, fields?: Record<string, unknown>): void;
}): ErrorRequestHandler {
  return (error, req, res, _next) => {
    if (isCoordinatorError(error)) {
      // Refusals that end by themselves (rate limits, full tables) say when to come back.
      const retryAfter = error.details?.retryAfterSeconds;
      if (typeof retryAfter === 'number' && !res.headersSent)
        res.setHeader('Retry-After', String(Math.max(1, Math.ceil(retryAfter))));
      send(res, error.code, error.message);
      return;
    }
    const status: unknown = error?.status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      const code = codeOfClientError(status);
      send(res, code, code === 'not_found' ? 'no such file' : bounded(String(error?.message ?? 'bad request'), 300));
      return;
    }
    log.warn('unhandled error', {
      method: req.method,
      path: bounded(req.path, 200),
      error: bounded(String(error?.stack ?? error), 4000),
    });
    send(res, 'internal', 'internal error; the coordinator logged it');
  };
}

/** Mounted under a prefix (`/api`): the path it names is the whole one the client asked for, bounded. */
export const notFoundHandler: RequestHandler = (req, res) => {
  send(res, 'not_found', `no route for ${req.method} ${bounded(`${req.baseUrl}${req.path}`, 200)}`);
};

/** A client's text (a path, up to the 16 kB of a request's head) at a bounded length. */
function bounded(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length)}…` : text;
}
