/**
 * The shaped proxy of the benches and browser tests (tests/helpers/shaped-proxy.ts), against a
 * real origin server over loopback: bytes pass intact both ways (forward proxy, reverse proxy,
 * CONNECT tunnel) and are counted; the link is never faster than its rate, and two connections
 * share it (together they take as long as one carrying both bodies); stop() ends what it holds.
 * Only lower bounds on time are asserted: a busy machine can make a transfer slower, never faster.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
  type Server,
} from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { parseLink, startShapedProxy, type ShapedProxy } from '../helpers/shaped-proxy.ts';

let origin: Server;
let originUrl: string;
/** The last upload the origin received: its length and SHA-256. */
let lastUpload: { bytes: number; sha256: string } | undefined;
const proxies: ShapedProxy[] = [];

/** Deterministic bytes: n of them from a seed. */
function bytesOf(n: number, seed: number): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed * 7 + (i >> 8)) & 0xff;
  return out;
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

before(async () => {
  origin = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://origin');
    if (url.pathname === '/bytes') {
      const body = bytesOf(Number(url.searchParams.get('n')), Number(url.searchParams.get('seed') ?? 0));
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
    } else if (url.pathname === '/sink' && req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      lastUpload = { bytes: body.length, sha256: sha256(body) };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(lastUpload));
    } else {
      res.writeHead(404).end();
    }
  });
  origin.listen(0, '127.0.0.1');
  await once(origin, 'listening');
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
});

after(async () => {
  for (const proxy of proxies) await proxy.stop();
  origin.closeAllConnections();
  origin.close();
});

async function proxy(downMbit: number, upMbit: number, target?: string): Promise<ShapedProxy> {
  const started = await startShapedProxy({ downMbit, upMbit, target });
  proxies.push(started);
  return started;
}

/** One request through `via` (absolute-form, as a browser configured with the proxy sends it). */
async function throughProxy(
  via: ShapedProxy,
  url: string,
  options: { method?: string; body?: Buffer } = {},
): Promise<{ status: number; body: Buffer }> {
  const request: RequestOptions = {
    host: '127.0.0.1',
    port: via.port,
    method: options.method ?? 'GET',
    path: url,
    headers: options.body ? { 'content-length': options.body.length } : {},
  };
  const req = httpRequest(request);
  req.end(options.body);
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return { status: res.statusCode ?? 0, body: Buffer.concat(chunks) };
}

describe('the shaped proxy', () => {
  test('a link is read as DOWN/UP Mbit/s', () => {
    assert.deepEqual(parseLink('100/20'), { downMbit: 100, upMbit: 20 });
    assert.deepEqual(parseLink(' 2.5 / 0.5 '), { downMbit: 2.5, upMbit: 0.5 });
    for (const bad of ['100', '100/0', 'fast/slow', '-1/2']) assert.throws(() => parseLink(bad), /DOWN\/UP/);
  });

  test('forwards downloads and uploads intact and counts the shaped bytes each way', async () => {
    const via = await proxy(400, 400);
    const download = await throughProxy(via, `${originUrl}/bytes?n=300000&seed=1`);
    assert.equal(download.status, 200);
    assert.equal(sha256(download.body), sha256(bytesOf(300_000, 1)));
    const body = bytesOf(200_000, 2);
    const upload = await throughProxy(via, `${originUrl}/sink`, { method: 'POST', body });
    assert.equal(upload.status, 200);
    assert.deepEqual(lastUpload, { bytes: body.length, sha256: sha256(body) });
    // Bodies only: the JSON answer to the upload also came down.
    assert.deepEqual(via.bytes(), { down: 300_000 + upload.body.length, up: 200_000 });
  });

  test('never faster than its rate, and two connections share one link', async () => {
    // 8 Mbit/s down = 1,000,000 bytes/s; bucket depth 64 KiB (the floor of 50 ms of rate).
    const via = await proxy(8, 4);
    const started = performance.now();
    const [a, b] = await Promise.all([
      throughProxy(via, `${originUrl}/bytes?n=600000&seed=3`),
      throughProxy(via, `${originUrl}/bytes?n=600000&seed=4`),
    ]);
    const downSeconds = (performance.now() - started) / 1000;
    assert.equal(a.body.length + b.body.length, 1_200_000);
    // Apart, each connection alone would have its 600 kB in 0.6 s; shared, both need 1.2 s less one burst.
    assert.ok(
      downSeconds >= (1_200_000 - 65_536) / 1_000_000,
      `1.2 MB came down in ${downSeconds.toFixed(3)} s at 8 Mbit/s`,
    );
    // 4 Mbit/s up = 500,000 bytes/s.
    const upStarted = performance.now();
    await throughProxy(via, `${originUrl}/sink`, { method: 'POST', body: bytesOf(400_000, 5) });
    const upSeconds = (performance.now() - upStarted) / 1000;
    assert.ok(upSeconds >= (400_000 - 65_536) / 500_000, `400 kB went up in ${upSeconds.toFixed(3)} s at 4 Mbit/s`);
  });

  test('with a target, origin-form requests are reverse-proxied to it', async () => {
    const via = await proxy(400, 400, originUrl);
    const response = await fetch(`${via.url}/bytes?n=1000&seed=6`);
    assert.equal(response.status, 200);
    assert.equal(sha256(Buffer.from(await response.arrayBuffer())), sha256(bytesOf(1000, 6)));
    // Without a target there is nowhere to send them.
    const plain = await proxy(400, 400);
    assert.equal((await fetch(`${plain.url}/bytes?n=10`)).status, 400);
  });

  test('CONNECT opens a shaped tunnel', async () => {
    const via = await proxy(400, 400);
    const socket = connect({ host: '127.0.0.1', port: via.port });
    await once(socket, 'connect');
    const originPort = new URL(originUrl).port;
    socket.write(`CONNECT 127.0.0.1:${originPort} HTTP/1.1\r\nHost: 127.0.0.1:${originPort}\r\n\r\n`);
    socket.write(`GET /bytes?n=5000&seed=7 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    const chunks: Buffer[] = [];
    for await (const chunk of socket) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks);
    assert.match(text.toString('latin1'), /^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    assert.equal(sha256(text.subarray(text.length - 5000)), sha256(bytesOf(5000, 7)));
    assert.ok(via.bytes().down >= 5000, 'the tunnelled answer was counted');
  });

  test('stop() ends the transfers it holds and returns', async () => {
    const via = await startShapedProxy({ downMbit: 0.8, upMbit: 0.8 });
    // 10 s of transfer at 100 kB/s: still under way when the proxy stops.
    const transfer = throughProxy(via, `${originUrl}/bytes?n=1000000&seed=8`).then(
      (r) => r.body.length,
      () => -1,
    );
    while (via.bytes().down === 0) await new Promise((r) => setTimeout(r, 20));
    await via.stop();
    const received = await transfer;
    assert.ok(received < 1_000_000, `the transfer went on after stop() (${received} bytes)`);
    await assert.rejects(fetch(`${via.url}/bytes?n=10`), 'nothing listens any more');
  });
});
