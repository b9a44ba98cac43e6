/**
 * `ceremony serve` for a test that kills it: the real command (bin/ceremony.js) in its own process
 * group on a data folder and a port of its own, resolved once it logged that it listens there.
 * `kill()` is the crash (SIGKILL to the whole group: the coordinator and its embedded verifier, as
 * `kill -9 -PGID` does); `start()` starts it again on the same folder and port; `stop()` is the end
 * (SIGTERM, then SIGKILL after a grace). Its output is kept across runs (`output()`).
 *
 * Options of `startServeProcess(options)`:
 * - `dataDir` (required): the folder it serves (the caller's; never removed here).
 * - `env`: server settings by their environment names over the test's environment (REDIS_URL and
 *   the server's other variables are not inherited from the test's environment).
 * - `open`: `--open` (default true).
 * - `port`: default a free port, kept across restarts.
 * - `label`: the prefix of error messages.
 */
import { createServer } from 'node:net';
import { startGroup, type GroupProcess } from './process-group.ts';
import { CEREMONY_BIN, environmentWith } from './run-cli.ts';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';

export interface ServeProcessOptions {
  dataDir: string;
  env?: Record<string, string | undefined>;
  open?: boolean;
  port?: number;
  label?: string;
}

export interface ServeProcess {
  url: string;
  port: number;
  dataDir: string;
  /** SIGKILL to the whole group, resolved once every process of it is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same folder and port (after kill() or stop()). */
  start(): Promise<void>;
  /** SIGTERM, then SIGKILL of what lingers. */
  stop(): Promise<void>;
  /** Everything every run printed. */
  output(): string;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
      .once('error', reject)
      .listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
  });
}

export async function startServeProcess(options: ServeProcessOptions): Promise<ServeProcess> {
  const port = options.port ?? (await freePort());
  const label = options.label ?? 'ceremony serve';
  const env = environmentWith({ REDIS_URL: undefined, OPEN_ON_START: undefined, ...options.env });
  const args = [CEREMONY_BIN, 'serve', '--data', options.dataDir, '--port', String(port)];
  if (options.open !== false) args.push('--open');
  let group: GroupProcess | undefined;
  let earlier = '';
  const start = async (): Promise<void> => {
    if (group) earlier += group.output();
    // This start's own group: if it fails, it stops this one, never a later start's.
    const started = startGroup(process.execPath, args, { cwd: REPO_ROOT, env, label });
    group = started;
    try {
      await started.waitFor(new RegExp(`"message":"coordinator listening".*:${port}\\b`), 60_000);
    } catch (error) {
      await started.stop('SIGKILL');
      throw error;
    }
  };
  await start();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dataDir: options.dataDir,
    async kill() {
      await group?.stop('SIGKILL');
    },
    start,
    async stop() {
      await group?.stop('SIGTERM');
    },
    output: () => earlier + (group?.output() ?? ''),
  };
}
