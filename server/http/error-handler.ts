/**
 * The one place where errors become HTTP responses: a CoordinatorError keeps its code and maps to
 * its status (error-status.ts); anything else is a 500 whose details go to the log, not the client.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isCoordinatorError } from '../../core/errors.ts';
import { errorStatus } from './error-status.ts';

export function errorHandler(log: { warn(message: string, fields?: Record<string, unknown>): void }): ErrorRequestHandler {
  return (error, req, res, _next) => {
    if (isCoordinatorError(error)) {
      // Refusals that end by themselves (rate limits, full tables) say when to come back.
      const retryAfter = error.details?.retryAfterSeconds;
      if (typeof retryAfter === 'number' && !res.headersSent) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(retryAfter))));
      res.status(errorStatus(error.code)).json(error.toJSON());
      return;
    }
    const status = typeof error?.status === 'number' && error.status >= 400 && error.status < 500 ? error.status : 500;
    if (status === 500) log.warn('unhandled error', { method: req.method, path: req.path, error: String(error?.stack ?? error) });
    res.status(status).json({
      error:
        status === 500
          ? { code: 'internal', message: 'internal error; the coordinator logged it' }
          : { code: status === 404 ? 'not_found' : 'request.invalid', message: status === 404 ? 'no such file' : String(error?.message ?? 'bad request') },
    });
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  res.status(404).json({ error: { code: 'not_found', message: `no route for ${req.method} ${req.path}` } });
};
