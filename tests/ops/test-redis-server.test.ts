/**
 * The tests' throw-away redis-server (tests/helpers/redis-server.ts) is the test's own: a server
 * answering on the port it chose, but started by someone else, is not taken for it. Otherwise two
 * test files that drew the same free port would share one Redis and one default queue, and each
 * one's `ceremony worker` would take the other's verification jobs.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRedisServer, startRedisServerOnPort, type RedisServer } from '../helpers/redis-server.ts';

const servers: RedisServer[] = [];

after(async () => {
  for (const server of servers) await server.stop();
});

test('a port where another redis-server answers is not taken as our own server', async () => {
  const first = await startRedisServer();
  servers.push(first);
  const started = Date.now();
  await assert.rejects(
    startRedisServerOnPort(first.port).then((second) => {
      servers.push(second);
      return second;
    }),
    /stayed taken/,
  );
  assert.ok(Date.now() - started >= 4000, 'gave up before its deadline');
});
