/**
 * The HTTP server's own bounds on a connection, for what no route sees: a client that never
 * finishes its request's head, a request body that trickles in, an idle keep-alive connection, and
 * more connections than the process has descriptors for.
 *
 * - `headersTimeout`: a request's head (its line and headers, at most 16 kB) must be in within 20 s
 *   of its first byte (or of the connection), else `408` and the connection closes (Node's own check,
 *   looked at every 5 s).
 * - `requestTimeout`: a whole request, body included, within the longest turn plus a minute. An upload
 *   of a contribution is one request for as long as the terminal client computes it, so this is the
 *   longest a turn can last (MAX_TURN_MS); no upload outlives its turn anyway.
 * - `bodyDeadline`: every other body (JSON of at most 16 kB, server/http/json-body.ts) within 30 s of
 *   its head, else the connection is closed: a body sent at 1 byte/s holds a socket for that long only.
 * - `keepAliveTimeout`: an idle connection is kept HTTP_KEEP_ALIVE_MS (65 s by default): above a reverse
 *   proxy's own idle timeout for its connections to the coordinator, so the proxy never sends a
 *   request on a connection the coordinator is closing.
 * - `maxConnections` (descriptor-budget.ts): beyond it, a new connection is closed at once.
 *
 * Answers are bounded elsewhere: the minimum transfer rate (slow-reader-guard.ts), the downloads at
 * once (download-slots.ts), the presence streams (routes/presence-stream.ts).
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { RequestHandler } from 'express';

export const HTTP_TIMEOUT_DEFAULTS = Object.freeze({
  headersTimeoutMs: 20_000,
  bodyDeadlineMs: 30_000,
  /** How often Node looks for requests past headersTimeout or requestTimeout. */
  checkEveryMs: 5000,
});

export interface ServerBounds {
  keepAliveMs: number;
  maxConnections: number;
  /** The longest a turn lasts (MAX_TURN_MS): an upload is one request at most this long. */
  longestTurnMs: number;
  headersTimeoutMs?: number;
}

/** An HTTP server for `handler`, with the bounds above (not listening yet). */
export function createBoundedServer(handler: RequestListener, bounds: ServerBounds): Server {
  const server = createServer(
    {
      headersTimeout: bounds.headersTimeoutMs ?? HTTP_TIMEOUT_DEFAULTS.headersTimeoutMs,
      requestTimeout: bounds.longestTurnMs + 60_000,
      keepAliveTimeout: bounds.keepAliveMs,
      connectionsCheckingInterval: HTTP_TIMEOUT_DEFAULTS.checkEveryMs,
    },
    handler,
  );
  server.maxConnections = bounds.maxConnections;
  return server;
}

/**
 * Closes the connection of a request whose body has not all arrived within `ms` of its head. For
 * every route but the uploads (mounted after them), whose bodies are small.
 */
export function bodyDeadline(
  ms: number,
  onLate: (req: Parameters<RequestHandler>[0]) => void = () => {},
): RequestHandler {
  return (req, _res, next) => {
    const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    if (hasBody && !req.complete) {
      const timer = setTimeout(() => {
        if (req.complete) return;
        onLate(req);
        req.socket.destroy();
      }, ms).unref();
      const done = (): void => clearTimeout(timer);
      req.once('end', done);
      req.once('close', done);
    }
    next();
  };
}
