/**
 * A real, throw-away redis-server for tests: on a free loopback port, without persistence, killed
 * with the test process at the latest. REDIS_SERVER_BIN overrides the binary (default: the one on
 * PATH; CI installs Debian's).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, createServer } from 'node:net';

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * The process id of the redis-server answering on `port`, or undefined if none answers (yet).
 * Asked rather than assumed: a port found free can be taken by another test's redis-server before
 * ours binds it, and ours then exits while the other answers; two test files would share one Redis
 * (and one default queue, where each one's workers take the other's jobs).
 */
function answeringPid(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (pid: number | undefined): void => {
      socket.destroy();
      resolve(pid);
    };
    socket.setTimeout(500, () => done(undefined));
    socket.on('error', () => done(undefined));
    socket.on('connect', () => socket.write('INFO server\r\n'));
    socket.on('data', (data) => {
      reply += data.toString();
      if (reply.startsWith('-')) return done(undefined); // e.g. -LOADING: not ready yet
      const pid = /\r\nprocess_id:(\d+)\r\n/.exec(reply)?.[1];
      if (pid !== undefined) done(Number(pid));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

async function startOnce(port: number): Promise<RedisServer | undefined> {
  const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));

  let takenByAnother = false;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break; // e.g. the port was taken in the meantime
    const failed = await Promise.race([spawnError, new Promise<undefined>((r) => setTimeout(r, 50))]);
    if (failed) throw new Error(`cannot start ${binary}: ${failed.message}`);
    const pid = await answeringPid(port);
    if (pid !== undefined && pid !== child.pid) {
      takenByAnother = true; // ours cannot bind it (REDIS_SERVER_BIN must exec redis-server itself)
      break;
    }
    if (pid !== undefined) {
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        async stop() {
          process.off('exit', killOnExit);
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM');
            const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
            await exited(child);
            clearTimeout(timer);
          }
        },
      };
    }
  }
  child.kill('SIGKILL');
  await exited(child);
  process.off('exit', killOnExit);
  if (!takenByAnother && !/Address already in use/i.test(stderr))
    throw new Error(`redis-server did not answer on port ${port}: ${stderr.trim()}`);
  return undefined;
}

/** Starts redis-server and resolves once it answers, as itself, on its port. */
export async function startRedisServer(): Promise<RedisServer> {
  for (let tries = 0; tries < 5; tries++) {
    const server = await startOnce(await freePort());
    if (server) return server;
  }
  throw new Error('could not find a free port for redis-server');
}

/**
 * Starts redis-server on a given port, e.g. again on the port of one that was stopped (clients
 * reconnect to the same URL). Retries for a few seconds while the port is still taken.
 */
export async function startRedisServerOnPort(port: number): Promise<RedisServer> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const server = await startOnce(port);
    if (server) return server;
    if (Date.now() > deadline) throw new Error(`port ${port} stayed taken; cannot start redis-server on it`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
