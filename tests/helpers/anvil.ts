/**
 * A real anvil node for tests: the binary from @foundry-rs/anvil's platform package, on 127.0.0.1
 * with a free port chosen by the OS (never a fixed one, so parallel test files cannot collide).
 * Start it once per test file and stop it in `after`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** anvil's first well-known dev account: a public test key, funded on every fresh anvil node. */
export const ANVIL_DEV_PRIVATE_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;

export interface AnvilNode {
  rpcUrl: string;
  port: number;
  stop(): Promise<void>;
  /** One JSON-RPC call and its result; an error answer throws. */
  rpc<T>(method: string, params?: unknown[]): Promise<T>;
  /** The latest block's number. */
  latestBlock(): Promise<number>;
  /** Mines `blocks` blocks at once (anvil_mine). */
  mine(blocks: number): Promise<void>;
}

async function rpcCall<T>(rpcUrl: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`anvil refused ${method}: ${body.error.message}`);
  return body.result as T;
}

const STARTUP_TIMEOUT_MS = 15_000;

function anvilBinaryPath(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const platformPackage = `@foundry-rs/anvil-${process.platform}-${arch}`;
  const require = createRequire(import.meta.url);
  const binary = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  return join(dirname(require.resolve(`${platformPackage}/package.json`)), 'bin', binary);
}

/**
 * A port that was free a moment ago. anvil cannot be told to pick one itself and report it, so
 * the OS picks one for a throwaway listener; the tiny race with other processes is retried below.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port from the OS');
  return address.port;
}

async function answersRpc(rpcUrl: string): Promise<boolean> {
  try {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    return response.ok;
  } catch {
    return false;
  }
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}

async function startOnce(port: number, args: readonly string[]): Promise<AnvilNode | undefined> {
  const child = spawn(anvilBinaryPath(), ['--host', '127.0.0.1', '--port', String(port), '--silent', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.on('error', (error) => {
    stderr += String(error);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const rpcUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
      // Most likely the port was taken between freePort() and the spawn: the caller retries.
      if (/address already in use/i.test(stderr)) return undefined;
      throw new Error(`anvil exited with code ${child.exitCode}: ${stderr.trim()}`);
    }
    if (await answersRpc(rpcUrl)) {
      return {
        rpcUrl,
        port,
        stop: () => stopProcess(child),
        rpc: (method, params) => rpcCall(rpcUrl, method, params),
        latestBlock: async () => Number(await rpcCall<string>(rpcUrl, 'eth_blockNumber')),
        mine: async (blocks) => void (await rpcCall(rpcUrl, 'anvil_mine', [`0x${blocks.toString(16)}`])),
      };
    }
    await sleep(100);
  }
  await stopProcess(child);
  throw new Error(`anvil did not answer on ${rpcUrl} within ${STARTUP_TIMEOUT_MS} ms: ${stderr.trim()}`);
}

/**
 * Starts anvil on a free port and resolves once it answers eth_chainId. `args` go to anvil, e.g.
 * `['--chain-id', '1']` for a node that reports mainnet's chain id (anvil's own is 31337).
 */
export async function startAnvil(args: readonly string[] = []): Promise<AnvilNode> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const node = await startOnce(await freePort(), args);
    if (node) return node;
  }
  throw new Error('anvil could not bind a free port in 3 attempts');
}
