/**
 * A home link on loopback: an HTTP proxy that shapes every connection through it together to
 * `downMbit` (towards the client) and `upMbit` (from the client), Mbit/s of 10^6 bits, with one
 * token bucket per direction shared by all connections, as one access line is. For Chromium:
 * `--proxy-server=<url>` with `--proxy-bypass-list=<-loopback>` (see `chromiumProxyArgs`), so
 * loopback pages, their fetches and their Web Workers' fetches all go through it. It forwards
 * plain-HTTP proxy requests (absolute-form `GET http://host/path`) and CONNECT tunnels; with
 * `target`, it is also a reverse proxy for that origin (origin-form requests), so a client that
 * takes a base URL but no proxy setting (a CLI) can be shaped by pointing it at `url`.
 *
 * Bodies and tunnelled bytes are shaped; request and status lines and headers pass at once (a few
 * hundred bytes a request). Backpressure does the rest: a sender ahead of its bucket is paused,
 * as TCP pauses a sender on a slow line. `stop()` closes every connection it holds, both sides.
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface ShapedProxyOptions {
  /** Towards the client (downloads), Mbit/s. */
  downMbit: number;
  /** From the client (uploads), Mbit/s. */
  upMbit: number;
  /** Reverse-proxy origin for origin-form requests (e.g. the coordinator's URL); without it they are refused (400). */
  target?: string;
  /** Bucket depth in milliseconds of the rate (default 50): how far a burst may run ahead of the average. */
  burstMs?: number;
}

export interface ShapedProxy {
  /** http://127.0.0.1:PORT: the proxy for --proxy-server, or the reverse-proxied origin when `target` is set. */
  url: string;
  port: number;
  /** Shaped bytes moved so far: down (to clients) and up (from clients). */
  bytes(): { down: number; up: number };
  stop(): Promise<void>;
}

/** Chromium's switches that send every request, loopback included, through the proxy. */
export function chromiumProxyArgs(proxy: ShapedProxy): string[] {
  // Chromium never proxies loopback unless told so: `<-loopback>` removes that implicit rule.
  return [`--proxy-server=${proxy.url}`, '--proxy-bypass-list=<-loopback>'];
}

/** Parses `100/20` (down/up, Mbit/s). */
export function parseLink(text: string): { downMbit: number; upMbit: number } {
  const match = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)\s*$/.exec(text);
  const downMbit = Number(match?.[1]);
  const upMbit = Number(match?.[2]);
  if (!match || !(downMbit > 0) || !(upMbit > 0))
    throw new Error(`a link is DOWN/UP in Mbit/s, both above 0 (e.g. 100/20), not "${text}"`);
  return { downMbit, upMbit };
}

/** Slices a chunk is cut into before it asks the bucket, so connections interleave finely. */
const SLICE_BYTES = 16 * 1024;

/** Tokens are bytes; waiters are served first come, first served, so connections share the rate fairly. */
class TokenBucket {
  private tokens: number;
  private last = performance.now();
  private readonly queue: Array<{ bytes: number; resolve: () => void }> = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly bytesPerSecond: number,
    private readonly depth: number,
  ) {
    this.tokens = depth;
  }

  take(bytes: number): Promise<void> {
    return new Promise((resolve) => {
      this.queue.push({ bytes: Math.min(bytes, this.depth), resolve });
      this.serve();
    });
  }

  /** Releases every waiter (their streams are being torn down) and stops the clock. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const waiter of this.queue.splice(0)) waiter.resolve();
  }

  private serve(): void {
    if (this.timer !== undefined) return;
    const now = performance.now();
    this.tokens = Math.min(this.depth, this.tokens + ((now - this.last) * this.bytesPerSecond) / 1000);
    this.last = now;
    while (this.queue.length > 0 && (this.stopped || this.tokens >= this.queue[0]!.bytes)) {
      const waiter = this.queue.shift()!;
      this.tokens -= waiter.bytes;
      waiter.resolve();
    }
    if (this.queue.length > 0 && !this.stopped) {
      const wait = Math.max(1, Math.ceil(((this.queue[0]!.bytes - this.tokens) * 1000) / this.bytesPerSecond));
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.serve();
      }, wait);
    }
  }
}

/** A stream that passes bytes on only as fast as its bucket allows, and counts them. */
class ShapedStream extends Transform {
  constructor(
    private readonly bucket: TokenBucket,
    private readonly counted: (bytes: number) => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    void (async () => {
      for (let at = 0; at < chunk.length; at += SLICE_BYTES) {
        const slice = chunk.subarray(at, at + SLICE_BYTES);
        await this.bucket.take(slice.length);
        if (this.destroyed) return;
        this.counted(slice.length);
        this.push(slice);
      }
      callback();
    })();
  }
}

/** Connection-level headers, which belong to one hop and are not forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
]);

function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase()),
  );
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.has(name)) out[name] = value;
  }
  return out;
}

export async function startShapedProxy(options: ShapedProxyOptions): Promise<ShapedProxy> {
  const { downMbit, upMbit } = options;
  if (!(downMbit > 0) || !(upMbit > 0))
    throw new Error(`the link's rates must be above 0 Mbit/s (down ${downMbit}, up ${upMbit})`);
  const burstMs = options.burstMs ?? 50;
  const bucketFor = (mbit: number): TokenBucket => {
    const bytesPerSecond = (mbit * 1e6) / 8;
    return new TokenBucket(bytesPerSecond, Math.max(4 * SLICE_BYTES, (bytesPerSecond * burstMs) / 1000));
  };
  const down = bucketFor(downMbit);
  const up = bucketFor(upMbit);
  const moved = { down: 0, up: 0 };
  const shapedDown = (): ShapedStream => new ShapedStream(down, (n) => (moved.down += n));
  const shapedUp = (): ShapedStream => new ShapedStream(up, (n) => (moved.up += n));
  const target = options.target ? new URL(options.target) : undefined;
  const upstreamAgent = new Agent({ keepAlive: true });
  const tunnels = new Set<Socket>();

  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const raw = req.url ?? '/';
    const destination = /^https?:\/\//i.test(raw) ? new URL(raw) : target ? new URL(raw, target) : undefined;
    if (!destination || destination.protocol !== 'http:') {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('this proxy forwards plain http:// requests (absolute-form), or origin-form ones with a target\n');
      return;
    }
    const upstream = httpRequest({
      host: destination.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: destination.port || 80,
      method: req.method,
      path: `${destination.pathname}${destination.search}`,
      headers: forwardedHeaders(req.headers),
      agent: upstreamAgent,
    });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardedHeaders(answer.headers));
      pipeline(answer, shapedDown(), res).catch(() => {
        answer.destroy();
        res.destroy();
      });
    });
    upstream.on('error', () => {
      if (!res.headersSent)
        res.writeHead(502, { 'content-type': 'text/plain' }).end('the proxy could not reach the destination\n');
      else res.destroy();
    });
    pipeline(req, shapedUp(), upstream).catch(() => upstream.destroy());
    // The client went away mid-answer: so does the request it made.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
  };

  const server = createServer(forward);
  server.keepAliveTimeout = 60_000;
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const [host, port] = (req.url ?? '').split(/:(?=\d+$)/);
    const remote = connect({ host: host!.replace(/^\[(.*)\]$/, '$1'), port: Number(port) });
    tunnels.add(client).add(remote);
    const close = (): void => {
      client.destroy();
      remote.destroy();
      tunnels.delete(client);
      tunnels.delete(remote);
    };
    remote.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) remote.write(head); // already read with the CONNECT line; too little to shape
      pipeline(client, shapedUp(), remote).catch(close);
      pipeline(remote, shapedDown(), client).catch(close);
    });
    remote.once('error', () => {
      if (client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      close();
    });
    client.once('error', close);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let stopping: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    bytes: () => ({ ...moved }),
    stop: () =>
      (stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        for (const socket of tunnels) socket.destroy();
        tunnels.clear();
        down.stop();
        up.stop();
        upstreamAgent.destroy();
        await closed;
      })()),
  };
}
