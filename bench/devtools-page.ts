/**
 * One page in a fresh headless Chromium, driven over the DevTools protocol directly (its debugging
 * pipe), for the benches that measure the page itself. Playwright enables the DevTools Network
 * domain on every page; Chromium then keeps copies of request and response bodies in the renderer
 * and reports every transfer to the driver, which at a large key costs the page memory (about 55 MB
 * at 2^16, growing with the key) and the driver a core (0.69 of 2 over a 2^20 turn at loopback
 * speed). Here only Runtime and Page are on: evaluations, bindings the page calls, a script run
 * in every new document, and the page's errors echoed. Chromium leaves when its pipe closes, so a
 * bench killed outright (no `close()`) leaves no browser behind (checked: kill -9 of the bench).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { CHROMIUM_ARGS, CHROMIUM_BIN } from '../tests/helpers/chromium.ts';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface DevtoolsMessage {
  id?: number;
  method?: string;
  params?: any;
  sessionId?: string;
  result?: any;
  error?: { message: string };
}

interface DevtoolsClient {
  send(method: string, params?: object, sessionId?: string): Promise<any>;
  /** Events of one method (any session). */
  on(method: string, handler: (params: any) => void): void;
}

/**
 * A DevTools protocol client over Chromium's debugging pipe (`--remote-debugging-pipe`: commands
 * written to its fd 3, answers and events read from its fd 4, each message ending with a NUL byte).
 */
function devtoolsOverPipe(toChrome: Writable, fromChrome: Readable): DevtoolsClient {
  let nextId = 0;
  let buffered = '';
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  const handlers = new Map<string, Array<(params: any) => void>>();
  fromChrome.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let end = buffered.indexOf('\0'); end >= 0; end = buffered.indexOf('\0')) {
      const message = JSON.parse(buffered.slice(0, end)) as DevtoolsMessage;
      buffered = buffered.slice(end + 1);
      if (message.method) for (const handler of handlers.get(message.method) ?? []) handler(message.params);
      const pending = message.id === undefined ? undefined : waiting.get(message.id);
      if (!pending) continue;
      waiting.delete(message.id!);
      if (message.error) pending.reject(new Error(message.error.message));
      else pending.resolve(message.result);
    }
  });
  return {
    send: (method, params = {}, sessionId) =>
      new Promise((resolve, reject) => {
        const id = ++nextId;
        waiting.set(id, { resolve, reject });
        toChrome.write(`${JSON.stringify({ id, method, params, sessionId })}\0`);
      }),
    on: (method, handler) => handlers.set(method, [...(handlers.get(method) ?? []), handler]),
  };
}

export interface DevtoolsPageOptions {
  url: string;
  /** Chromium's arguments beyond CHROMIUM_ARGS (a proxy, say). */
  extraArgs?: readonly string[];
  /** Prefix of the page's errors echoed to stderr. */
  label: string;
  /** Functions the page can call as `window[name](payload: string)`, from every document it loads. */
  bindings?: Record<string, (payload: string) => void>;
  /** Run in every new document before its own scripts (as a string: a page has no tsx helpers). */
  initScript?: string;
}

export interface DevtoolsPage {
  /** The browser's root process (its process group's leader), for samplers. */
  pid: number;
  /** The expression's value (JSON-able), in the page's current document. */
  evaluate(expression: string): Promise<unknown>;
  /** Waits until the expression is truthy (polled every 100 ms; a navigation in between is waited out). */
  until(expression: string, timeoutMs?: number): Promise<void>;
  /** Stops the browser and all its processes, and removes its profile. */
  close(): Promise<void>;
}

export async function openDevtoolsPage(options: DevtoolsPageOptions): Promise<DevtoolsPage> {
  const profile = await mkdtemp(path.join(tmpdir(), 'bench-chromium-profile-'));
  const chrome = spawn(
    CHROMIUM_BIN,
    [
      ...CHROMIUM_ARGS,
      ...(options.extraArgs ?? []),
      '--window-size=1100,900',
      '--remote-debugging-pipe',
      `--user-data-dir=${profile}`,
    ],
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], detached: true },
  );
  const close = async (): Promise<void> => {
    if (chrome.exitCode === null && chrome.signalCode === null) {
      const exited = once(chrome, 'exit');
      try {
        process.kill(-chrome.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
    }
    await rm(profile, { recursive: true, force: true });
  };
  try {
    const client = devtoolsOverPipe(chrome.stdio[3] as Writable, chrome.stdio[4] as Readable);
    const { targetId } = await client.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await client.send('Target.attachToTarget', { targetId, flatten: true });
    client.on('Runtime.bindingCalled', ({ name, payload }: { name: string; payload: string }) =>
      options.bindings?.[name]?.(payload),
    );
    client.on('Runtime.exceptionThrown', ({ exceptionDetails }) =>
      console.error(
        `[${options.label}] page error: ${exceptionDetails?.exception?.description ?? exceptionDetails?.text}`,
      ),
    );
    client.on(
      'Runtime.consoleAPICalled',
      ({ type, args }: { type: string; args: Array<{ value?: unknown; description?: string }> }) => {
        if (type === 'error')
          console.error(
            `[${options.label}] console error: ${args.map((arg) => arg.value ?? arg.description).join(' ')}`,
          );
      },
    );
    await client.send('Runtime.enable', {}, sessionId);
    await client.send('Page.enable', {}, sessionId);
    for (const name of Object.keys(options.bindings ?? {}))
      await client.send('Runtime.addBinding', { name }, sessionId);
    if (options.initScript)
      await client.send('Page.addScriptToEvaluateOnNewDocument', { source: options.initScript }, sessionId);
    await client.send('Page.navigate', { url: options.url }, sessionId);
    const evaluate = async (expression: string): Promise<unknown> => {
      const answer = await client.send('Runtime.evaluate', { expression, returnByValue: true }, sessionId);
      if (answer.exceptionDetails) throw new Error(`the page threw: ${answer.exceptionDetails.text}`);
      return answer.result?.value;
    };
    return {
      pid: chrome.pid!,
      evaluate,
      async until(expression, timeoutMs = 60_000) {
        // While the page navigates (the sign-in) it has no context to evaluate in for a moment.
        for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(100))
          if (await evaluate(expression).catch(() => false)) return;
        throw new Error(`the page never reached: ${expression}`);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
