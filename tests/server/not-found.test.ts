/** A request under /api that no route takes is 404 not_found naming the whole path asked for, bounded. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { notFoundHandler } from '../../server/http/error-handler.ts';

let server: Server;
let base: string;

before(async () => {
  // Mounted as server/app.ts mounts it, under /api.
  const app = express();
  app.use('/api', notFoundHandler);
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('the 404 of an unknown API route names the path with its /api', async () => {
  const response = await fetch(`${base}/api/no-such-route?x=1`, { method: 'POST' });
  assert.equal(response.status, 404);
  assert.deepEqual(await response.json(), {
    error: { code: 'not_found', message: 'no route for POST /api/no-such-route' },
  });
  const long = await fetch(`${base}/api/${'a'.repeat(5000)}`);
  const { error } = (await long.json()) as { error: { message: string } };
  assert.ok(error.message.length < 240, `a message of ${error.message.length} characters`);
});
