/**
 * The HTTP server's own bounds on connections (server/http/server-timeouts.ts), with short values
 * so they show within a test: a request head that never ends gets 408 and a close, an idle
 * keep-alive connection is closed, connections past the cap are closed at once, a small body sent
 * at a trickle has its connection closed; and the descriptor budget the defaults come from is the
 * process's real soft limit of open files (which Node raises at start), not an assumed 1024.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { bodyDeadline, createBoundedServer } from '../../server/http/server-timeouts.ts';
import { descriptorBudget } from '../../server/http/descriptor-budget.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';

/** A raw connection to `server`, with everything it receives and whether it was closed. */
async function rawClient(server: Server): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => {});
  const closed = once(socket, 'close').then(() => undefined);
  await once(socket, 'connect');
  return { socket, received: () => text, closed };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
    }),
  ]);
}

describe('the bounded server', () => {
  let server: Server;
  before(async () => {
    const app = express();
    app.use(bodyDeadline(300));
    app.use(express.json());
    app.all('/', (req, res) => {
      res.json({ got: req.body ?? null });
    });
    // The body cut short reaches here as `request aborted`, with nobody left to answer.
    app.use(((_error, _req, res, _next) => res.destroy()) satisfies express.ErrorRequestHandler);
    server = createBoundedServer(app, { keepAliveMs: 500, maxConnections: 3, longestTurnMs: 0, headersTimeoutMs: 500 });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test('a request head that never ends is answered 408 and closed', async () => {
    const client = await rawClient(server);
    client.socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
    // Node looks for late heads every few seconds (HTTP_TIMEOUT_DEFAULTS.checkEveryMs).
    await within(client.closed, 10_000, 'closed');
    assert.match(client.received(), /^HTTP\/1\.1 408 /);
  });

  test('an idle keep-alive connection is closed after its time', async () => {
    const client = await rawClient(server);
    client.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await within(client.closed, 5000, 'closed once idle');
    assert.match(client.received(), /^HTTP\/1\.1 200 /);
  });

  test('a small body sent at a trickle has its connection closed', async () => {
    const client = await rawClient(server);
    client.socket.write(
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"a"',
    );
    await within(client.closed, 5000, 'closed');
    assert.equal(client.received(), '', 'no answer: the body never came');
    const whole = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: 1 }),
    });
    assert.deepEqual(await whole.json(), { got: { a: 1 } });
  });

  test('connections past the cap are closed at once', async () => {
    const clients = [await rawClient(server), await rawClient(server), await rawClient(server)];
    const extra = await rawClient(server);
    await within(extra.closed, 2000, 'the fourth connection closed');
    for (const client of clients) client.socket.destroy();
  });
});

test('the descriptor budget comes from the real soft limit of open files, and sizes the defaults', () => {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'))!;
  const soft = Number(line.slice('Max open files'.length).trim().split(/\s+/)[0]);
  const budget = descriptorBudget();
  assert.equal(budget.softLimit, soft);
  const config = loadServerConfig({});
  assert.equal(config.maxPresenceStreams, budget.maxPresenceStreams);
  assert.equal(config.downloads.total, budget.maxDownloads);
  assert.equal(config.http.maxConnections, budget.maxConnections);
  // The usual 1024: everything fits, with room for the process's own files.
  const small = descriptorBudget(1024);
  assert.ok(small.maxConnections + small.maxDownloads <= 1024 - 200, JSON.stringify(small));
  assert.ok(small.maxPresenceStreams <= small.maxConnections / 2);
  // A container's million: bounded by memory, not by descriptors.
  assert.ok(descriptorBudget(1_048_576).maxPresenceStreams <= 10_000);
  assert.equal(loadServerConfig({ MAX_PRESENCE_STREAMS: '7', MAX_DOWNLOADS: '9' }).downloads.total, 9);
});
