/**
 * Bytes the coordinator moves over HTTP, both directions, by route group: counted on the sockets
 * (net.Socket bytesRead / bytesWritten), so everything on the wire counts, request lines and
 * headers included, and a tus upload or a streamed zkey download counts whether Express, tus or
 * sendFile handled the body. What a contributor's turn costs the network is read from these
 * (bench/contributor-turn.ts reads /metrics before and after a turn).
 *
 * Each socket's counts since its last flush go to the route group of the request it is serving
 * when that request's response closes (and what is left when the socket closes, to the last
 * one). Browsers send one request at a time per connection (no pipelining), so every byte lands
 * on its own request's group; the total is exact in any case. The group is a fixed set of names
 * (never the path itself), so the label set stays bounded whatever clients ask for.
 */
import type { Socket } from 'node:net';
import type { RequestHandler } from 'express';

export const HTTP_ROUTE_GROUPS = [
  'contribution_upload',
  'zkey_download',
  'file_download',
  'api',
  'auth',
  'metrics',
  'web',
] as const;
export type HttpRouteGroup = (typeof HTTP_ROUTE_GROUPS)[number];

/**
 * The group of a request path: contribution uploads (tus), zkey downloads, the other large
 * downloads (r1cs, ptau, final files), the rest of the API, sign-in, /metrics, and the web app.
 */
export function httpRouteGroup(path: string): HttpRouteGroup {
  if (/^\/api\/circuits\/[^/]+\/contributions(\/|$)/.test(path)) return 'contribution_upload';
  // A head's skeleton is the delta protocol's zkey download.
  if (/^\/api\/circuits\/[^/]+\/(zkeys|contribution-inputs)(\/|$)/.test(path)) return 'zkey_download';
  if (/^\/api\/(circuits\/[^/]+\/r1cs|ptau|final)(\/|$)/.test(path)) return 'file_download';
  if (path.startsWith('/api/') || path === '/api' || path === '/healthz') return 'api';
  if (path.startsWith('/auth/') || path === '/auth') return 'auth';
  if (path === '/metrics') return 'metrics';
  return 'web';
}

export type CountHttpBytes = (group: HttpRouteGroup, requestBytes: number, responseBytes: number) => void;

interface SocketCounts {
  /** bytesRead / bytesWritten already counted. */
  read: number;
  written: number;
  /** The group of the request the socket serves (or last served). */
  group: HttpRouteGroup;
}

/** Express middleware (first in the chain): counts every request's socket bytes into `count`. */
export function httpByteCounter(count: CountHttpBytes): RequestHandler {
  const sockets = new WeakMap<Socket, SocketCounts>();
  const flush = (socket: Socket, counts: SocketCounts): void => {
    // Both only grow; read once, so a socket torn down between the two reads cannot count twice.
    const read = socket.bytesRead;
    const written = socket.bytesWritten;
    const requestBytes = read - counts.read;
    const responseBytes = written - counts.written;
    counts.read = read;
    counts.written = written;
    if (requestBytes > 0 || responseBytes > 0)
      count(counts.group, Math.max(requestBytes, 0), Math.max(responseBytes, 0));
  };
  return (req, res, next) => {
    const socket = req.socket;
    const group = httpRouteGroup(req.path);
    let counts = sockets.get(socket);
    if (counts === undefined) {
      counts = { read: 0, written: 0, group };
      sockets.set(socket, counts);
      const own = counts;
      socket.once('close', () => flush(socket, own));
    }
    counts.group = group;
    const current = counts;
    res.once('close', () => flush(socket, current));
    next();
  };
}
