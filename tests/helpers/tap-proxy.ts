/**
 * A small HTTP proxy in front of a coordinator, for what a bad network does to a client that has
 * no hook for it (the terminal client is a separate process): every request is forwarded as it
 * comes, streamed both ways, and logged (method, path, Upload-Offset); a rule can, once, for the
 * first request whose method and path match,
 *  - `corrupt`: flip one byte of the request body at `atByte` (a faulty link);
 *  - `drop`:    cut the connection (both sides) after `atByte` bytes of the request body;
 *  - `hold`:    forward `atByte` bytes of the body, then stop (the client waits) until released or
 *               the client goes away (a process killed mid-upload);
 *  - `holdResponse`: keep the response from the client until released (a slow download).
 * Each rule's `reached` resolves when it fires.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transform } from 'node:stream';

export interface ProxiedRequest {
  method: string;
  path: string;
  uploadOffset?: string;
}

export interface TapRule {
  method: string;
  path: RegExp;
  action: 'corrupt' | 'drop' | 'hold' | 'holdResponse';
  /** corrupt, drop, hold: the body byte where it happens. */
  atByte?: number;
  /** Resolves when the rule fires. */
  reached: Promise<void>;
  /** hold, holdResponse: let the request (or response) go on. */
  release(): void;
}

export interface TapProxy {
  url: string;
  requests: ProxiedRequest[];
  /** Arms a rule for the next matching request. */
  once(method: string, path: RegExp, action: TapRule['action'], atByte?: number): TapRule;
  close(): Promise<void>;
}

interface ArmedRule extends TapRule {
  fired: boolean;
  fire(): void;
  released: Promise<void>;
}

/** How long the bytes before a drop have to reach the coordinator. */
const DROP_AFTER_MS = 200;

export async function startTapProxy(target: string): Promise<TapProxy> {
  const upstream = new URL(target);
  const requests: ProxiedRequest[] = [];
  const rules: ArmedRule[] = [];

  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push({ method: req.method ?? '', path, uploadOffset: req.headers['upload-offset'] as string | undefined });
    const rule = rules.find((r) => !r.fired && r.method === req.method && r.path.test(path));
    if (rule) rule.fired = true;

    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path, headers: req.headers },
      async (answer) => {
        if (rule?.action === 'holdResponse') {
          rule.fire();
          await rule.released;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.on('close', () => {
      // The client went away (killed, or the connection cut): so does the request upstream.
      if (!req.complete) forward.destroy();
    });

    let seen = 0;
    let cut = false; // dropped: nothing after the cut may reach the coordinator
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        if (cut) return callback();
        const start = seen;
        seen += chunk.length;
        if (
          !rule ||
          rule.action === 'holdResponse' ||
          rule.atByte === undefined ||
          seen <= rule.atByte ||
          start > rule.atByte
        )
          return callback(null, chunk);
        const at = rule.atByte - start;
        if (rule.action === 'corrupt') {
          const damaged = Buffer.from(chunk);
          damaged[at]! ^= 0xff;
          rule.fire();
          return callback(null, damaged);
        }
        this.push(chunk.subarray(0, at));
        rule.fire();
        if (rule.action === 'drop') {
          // Both ends at once, as a broken link does, once the bytes before the break have had
          // time to reach the coordinator (a client that writes its whole body at once would
          // otherwise see them lost with the buffers and the drop look like no byte arrived).
          // The chunk is not acknowledged until then, so the request's end never reaches the
          // coordinator: a body cut short must not look like a complete one.
          cut = true;
          setTimeout(() => {
            forward.destroy();
            req.socket.destroy();
            callback();
          }, DROP_AFTER_MS);
          return;
        }
        // hold: the rest waits until released (or the client is gone).
        void rule.released.then(() => callback(null, chunk.subarray(at)));
      },
    });
    req.pipe(tap).pipe(forward);
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    once(method, path, action, atByte) {
      let fire!: () => void;
      let release!: () => void;
      const reached = new Promise<void>((resolve) => (fire = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      const rule: ArmedRule = { method, path, action, atByte, reached, release, released, fire, fired: false };
      rules.push(rule);
      return rule;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const rule of rules) rule.release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
