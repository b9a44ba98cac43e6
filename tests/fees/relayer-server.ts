/**
 * A real HTTP server on 127.0.0.1 (port chosen by the OS) playing the relayer for fee tests. One
 * server holds many relayers: each route is a full path such as `/ok/quote`, so a test points
 * TARGETS.json at `${origin}/ok` and the command appends `/quote` and `/gas/quote` itself.
 * A route may also never answer, to play a dead relayer or a dead RPC endpoint.
 */
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type RelayerReply =
  /** JSON.stringify'd (a string becomes a JSON string), status 200 unless given. */
  | { json: unknown; status?: number }
  /** Raw body bytes, e.g. an HTML error page or a JSON number written by hand. */
  | { text: string; status?: number; contentType?: string }
  /** `headers`: nothing is ever sent. `body`: the 200 headers and half a body, then nothing. */
  | { hang: 'headers' | 'body' };

export interface RelayerServer {
  origin: string;
  /** Paths requested so far, in order (so a test can see a request was made). */
  requested: string[];
  stop(): Promise<void>;
}

export async function startRelayerServer(routes: Record<string, RelayerReply>): Promise<RelayerServer> {
  const requested: string[] = [];
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://relayer').pathname;
    requested.push(path);
    // The request body (an RPC call to a hanging route) is drained so the socket stays healthy.
    request.resume();
    const reply = Object.hasOwn(routes, path) ? routes[path] : undefined;
    if (reply === undefined) return send(response, 404, 'application/json', JSON.stringify({ error: 'not found' }));
    if ('hang' in reply) {
      if (reply.hang === 'body') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"feeUsdc":');
      }
      return; // closed by stop()
    }
    if ('json' in reply) return send(response, reply.status ?? 200, 'application/json', JSON.stringify(reply.json));
    return send(response, reply.status ?? 200, reply.contentType ?? 'text/plain', reply.text);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requested,
    async stop() {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

function send(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}
