/**
 * The one place where errors become HTTP responses: a CoordinatorError keeps its code and answers
 * with its status (error-status.ts); anything else is `internal` (500) whose details go to the log,
 * not the client, or, for the 4xx errors Express and its body parsers raise, the code that says
 * the same. Every body is `{"error":{"code","message"}}` with a code of core/errors.ts.
 */
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { isCoordinatorError, type ErrorCode } from '../../core/errors.ts';
import { errorStatus } from './error-status.ts';

function send(res: Response, code: ErrorCode, message: string): void {
  res.status(errorStatus(code)).json({ error: { code, message } });
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
      send(res, code, code === 'not_found' ? 'no such file' : String(error?.message ?? 'bad request'));
      return;
    }
    log.warn('unhandled error', { method: req.method, path: req.path, error: String(error?.stack ?? error) });
    send(res, 'internal', 'internal error; the coordinator logged it');
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  send(res, 'not_found', `no route for ${req.method} ${req.path}`);
};
