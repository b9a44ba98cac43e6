/**
 * The restart proxy (tests/helpers/restart-proxy.ts) that contribute-remote-restarts crashes its
 * coordinator through: two kill points that fire together (a `body` point fires 200 ms after it is
 * taken, and a streamed turn's upload creation is answered while the head's inputs download) crash
 * and restart one after the other, never at once. At once, the second kill met a coordinator
 * still starting and two starts raced for one data folder; the run was left with no coordinator,
 * its client retrying for ten minutes (about one run in five).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRestartProxy, type RestartProxy } from '../helpers/restart-proxy.ts';

let upstream: http.Server;
let proxy: RestartProxy;
/** Crash-to-restarted sequences under way, and the most seen at once. */
let underWay = 0;
let mostAtOnce = 0;
const steps: string[] = [];

before(async () => {
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('up'));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const { port } = upstream.address() as AddressInfo;
  proxy = await startRestartProxy({
    target: `http://127.0.0.1:${port}`,
    points: [
      { label: 'upload (mid-body)', method: 'POST', path: /^\/upload$/, at: 'body', atByte: 1 },
      { label: 'ceremony (before)', method: 'GET', path: /^\/ceremony$/, at: 'request' },
    ],
    crash: async () => {
      mostAtOnce = Math.max(mostAtOnce, ++underWay);
      steps.push('crash');
      await sleep(300);
    },
    restart: async () => {
      await sleep(1000);
      steps.push('restarted');
      underWay--;
    },
    whileDown: 502,
  });
});

after(async () => {
  await proxy?.close();
  await new Promise<void>((resolve) => upstream?.close(() => resolve()));
});

/** A request through the proxy: its status, or 'reset' when the connection was cut. */
function send(method: string, path: string, body?: string): Promise<number | 'reset'> {
  return new Promise((resolve) => {
    const request = http.request(`${proxy.url}${path}`, { method }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve('reset'));
    });
    request.on('error', () => resolve('reset'));
    if (body === undefined) request.end();
    else request.write(body); // left open: the body point cuts it off
  });
}

const ONE_AT_A_TIME = 'two kill points that fire together crash and restart one after the other, down until the last';
test(ONE_AT_A_TIME, async () => {
  const upload = send('POST', '/upload', 'x');
  // Within the body point's 200 ms: taken before the first crash has begun.
  await sleep(50);
  const ceremony = send('GET', '/ceremony');
  assert.equal(await ceremony, 'reset', 'the request a point fires on is cut off');
  // At about 1.9 s: the first crash has restarted (at about 1.35 s), the second not yet (2.65 s).
  await sleep(1500);
  assert.equal(await send('GET', '/other'), 502, 'down until the last crash has restarted it');
  assert.equal(await upload, 'reset');
  assert.deepEqual([...proxy.fired].sort(), ['ceremony (before)', 'upload (mid-body)']);
  await proxy.close();
  assert.deepEqual(steps, ['crash', 'restarted', 'crash', 'restarted']);
  assert.equal(mostAtOnce, 1, 'never two crashes or restarts at once');
  assert.deepEqual(proxy.failures, []);
});
