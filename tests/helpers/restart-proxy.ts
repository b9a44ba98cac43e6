/**
 * A proxy in front of a coordinator that crashes it at chosen steps of a client's run: each kill
 * point names a request (method and path, optionally a condition), and when that request comes,
 * the proxy has `crash()` kill the coordinator at the chosen moment:
 *  - `request`: as the request arrives, before it reaches the coordinator;
 *  - `body`:    once `atByte` bytes of its body have reached the coordinator (an upload cut off);
 *  - `response`: once the coordinator answered (the request was carried out), before the client
 *    sees the answer: a lost answer, the case that makes sending a request again unsafe unless it
 *    is idempotent; with `atByte`, after the answer's headers and that many bytes of its body
 *    reached the client (a download cut off).
 * The client's connection is then reset, as a dead coordinator's would be, and `restart()` starts
 * the coordinator again while the client retries: what it sends meanwhile gets a reset connection
 * too (or, with `whileDown: 502`, a gateway's 502 page, as a proxy such as Caddy answers). Each kill
 * point fires once, on its first matching request while the coordinator is up; `fired` lists them.
 * Requests and answers are otherwise streamed through unchanged, headers included (Host, so the
 * coordinator's upload URLs name the proxy).
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface KillPoint {
  label: string;
  method: string;
  path: RegExp;
  at: 'request' | 'body' | 'response';
  /** `body`: the request-body byte after which the coordinator dies; `response`: of the answer's body. */
  atByte?: number;
  /** Fires only when this holds (checked as the request arrives, or, for `response`, as it is answered). */
  when?: (context: { response?: http.IncomingMessage }) => boolean;
}

export interface RestartProxy {
  url: string;
  /** The kill points that fired, in order. */
  fired: string[];
  /** Every request seen: `METHOD path`, in order. */
  requests: string[];
  /** Kills or restarts that failed (the coordinator may then be down). */
  failures: string[];
  close(): Promise<void>;
}

export interface RestartProxyOptions {
  target: string;
  points: KillPoint[];
  /** Kills the coordinator (resolved once it is gone). */
  crash(): Promise<void>;
  /** Starts it again (resolved once it listens). */
  restart(): Promise<void>;
  /** What a request gets while the coordinator is down: a reset connection (default) or a 502 page. */
  whileDown?: 'reset' | 502;
}

export async function startRestartProxy(options: RestartProxyOptions): Promise<RestartProxy> {
  const upstream = new URL(options.target);
  const pending = [...options.points];
  const fired: string[] = [];
  const requests: string[] = [];
  const failures: string[] = [];
  let down: Promise<void> | undefined;
  let markUp: () => void = () => {};
  /** Crashes asked for and not yet done: two points may fire together (see crashNow). */
  let crashesPending = 0;
  let crashes = Promise.resolve();
  const sockets = new Set<Socket>();

  /**
   * Kills the coordinator, resets the client, and starts the coordinator again (in the background).
   * Points that fire while a crash is under way (a `body` or `atByte` point fires 200 ms after it was
   * taken, so another may be taken meanwhile) wait for it: crash and restart run one at a time, so
   * a second kill never meets a coordinator still starting, and two starts never race for its data
   * folder. The coordinator is down until the last of them has restarted it.
   */
  const crashNow = (point: KillPoint, client: http.ServerResponse): Promise<void> => {
    fired.push(point.label);
    if (crashesPending++ === 0) down = new Promise<void>((resolve) => (markUp = resolve));
    crashes = crashes.then(async () => {
      try {
        await options.crash();
        client.destroy();
        await options.restart();
      } catch (error) {
        // The test then fails on what its client saw; this says why the coordinator stayed down.
        failures.push(`${point.label}: ${(error as Error).message}`);
      } finally {
        if (--crashesPending === 0) {
          down = undefined;
          markUp();
        }
      }
    });
    return crashes;
  };
  const take = (method: string, path: string, at: KillPoint['at'], response?: http.IncomingMessage) => {
    if (down) return undefined;
    const index = pending.findIndex(
      (p) => p.at === at && p.method === method && p.path.test(path) && (p.when?.({ response }) ?? true),
    );
    return index < 0 ? undefined : pending.splice(index, 1)[0];
  };

  const server = http.createServer((req, res) => {
    const method = req.method ?? '';
    const path = req.url ?? '/';
    requests.push(`${method} ${path}`);
    if (down) {
      if (options.whileDown === 502) {
        res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>502 Bad Gateway</body></html>');
      } else res.destroy();
      return;
    }
    const atRequest = take(method, path, 'request');
    if (atRequest) {
      void crashNow(atRequest, res);
      return;
    }
    const atBody = take(method, path, 'body');
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method, path, headers: req.headers },
      (answer) => {
        const atResponse = take(method, path, 'response', answer);
        if (atResponse?.atByte === undefined && atResponse) {
          answer.resume();
          void crashNow(atResponse, res);
          return;
        }
        if (atResponse) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          let sent = 0;
          answer.on('data', (chunk: Buffer) => {
            if (sent >= atResponse.atByte!) return;
            const part = chunk.subarray(0, atResponse.atByte! - sent);
            sent += part.length;
            res.write(part);
            if (sent >= atResponse.atByte!) {
              answer.pause();
              setTimeout(() => void crashNow(atResponse, res), 200);
            }
          });
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    forward.on('error', () => res.destroy());
    req.on('close', () => {
      if (!req.complete) forward.destroy();
    });
    let seen = 0;
    let crashing = false;
    req.on('data', (chunk: Buffer) => {
      if (crashing) return;
      seen += chunk.length;
      forward.write(chunk);
      if (atBody && seen >= (atBody.atByte ?? 1)) {
        crashing = true;
        // The bytes sent so far reach the coordinator before it dies.
        setTimeout(() => void crashNow(atBody, res), 200);
      }
    });
    req.on('end', () => {
      if (!crashing) forward.end();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    fired,
    requests,
    failures,
    async close() {
      await down;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
