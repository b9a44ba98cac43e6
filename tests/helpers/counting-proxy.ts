/**
 * A reverse proxy in front of a coordinator that records every request it forwards and the bytes
 * the coordinator sent back for it (status line and headers as received, and the body), so a test
 * can say how much of a file a client fetched. Optionally drops the Range header, to play a server
 * that does not serve byte ranges. Stopped with `close()`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  method: string;
  url: string;
  range: string | undefined;
  status: number;
  /** Status line and headers, as the coordinator sent them (approximately: re-serialised). */
  headerBytes: number;
  bodyBytes: number;
}

export interface CountingProxy {
  url: string;
  requests: ProxiedRequest[];
  /** Bytes the coordinator sent (headers and bodies) for the requests whose path starts with `prefix`. */
  bytesSent(prefix?: string): number;
  close(): Promise<void>;
}

export async function startCountingProxy(
  target: string,
  options: { dropRange?: boolean } = {},
): Promise<CountingProxy> {
  const targetUrl = new URL(target);
  const requests: ProxiedRequest[] = [];
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, host: targetUrl.host };
    if (options.dropRange) delete headers.range;
    const upstream = http.request(
      { host: targetUrl.hostname, port: targetUrl.port, method: req.method, path: req.url, headers },
      (answer) => {
        const record: ProxiedRequest = {
          method: req.method ?? 'GET',
          url: req.url ?? '',
          range: req.headers.range,
          status: answer.statusCode ?? 0,
          // The status line, "Name: value\r\n" per header (": " after a name, "\r\n" after a value), a blank line.
          headerBytes:
            `HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}\r\n`.length +
            answer.rawHeaders.reduce((sum, h) => sum + h.length + 2, 0) +
            2,
          bodyBytes: 0,
        };
        requests.push(record);
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.on('data', (chunk: Buffer) => (record.bodyBytes += chunk.length));
        answer.pipe(res);
        // A client that stops reading (a refused 200) ends the exchange: stop the upstream too.
        res.on('close', () => answer.destroy());
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    bytesSent: (prefix = '') =>
      requests.filter((r) => r.url.startsWith(prefix)).reduce((sum, r) => sum + r.headerBytes + r.bodyBytes, 0),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
