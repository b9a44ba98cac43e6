/**
 * The Solidity compiler this project ships: solc-js from npm (`solc`, WebAssembly, no download:
 * its `loadRemoteVersion` is never called), whose package version is the compiler's release. It
 * is loaded only when something is compiled (about a second and 100 MB), never to read its
 * version, and it runs on a worker thread of its own: a compile takes seconds of one synchronous
 * call, which on the calling thread would stall every socket and timer of the command (an HTTP
 * keep-alive connection closed by its server meanwhile is then reused, and fails).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { threadExecArgv } from '../runtime/thread-exec-argv.ts';

const require = createRequire(import.meta.url);

/** The release of the bundled compiler, e.g. `0.8.37`. */
export function bundledSolcVersion(): string {
  const manifest = JSON.parse(readFileSync(require.resolve('solc/package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

export interface SolcStandardOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts?: Record<
    string,
    Record<string, { evm: { deployedBytecode: { object: string; immutableReferences?: Record<string, unknown> } } }>
  >;
}

/** Plain CommonJS, evaluated: the same in the sources (tsx) and the compiled app. One request at a time. */
const SOLC_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
let solc;
parentPort.on('message', (input) => {
  try {
    solc ??= require(workerData.solcPath);
    parentPort.postMessage({ output: solc.compile(input) });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message).slice(0, 500) });
  }
});
`;

let thread: Worker | undefined;
/** Compiles run one after another: each waits for the one before. */
let queue: Promise<unknown> = Promise.resolve();

function solcThread(): Worker {
  if (thread === undefined) {
    const worker = new Worker(SOLC_THREAD, {
      eval: true,
      workerData: { solcPath: require.resolve('solc') },
      execArgv: threadExecArgv(import.meta.url),
    });
    // A thread that failed or ended is started again by the next compile.
    worker.once('exit', () => {
      if (thread === worker) thread = undefined;
    });
    worker.unref();
    thread = worker;
  }
  return thread;
}

function compileOnThread(input: string): Promise<string> {
  const worker = solcThread();
  return new Promise<string>((resolve, reject) => {
    const done = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      worker.unref();
    };
    const onMessage = (reply: { output?: string; error?: string }) => {
      done();
      if (reply.output !== undefined) resolve(reply.output);
      else reject(new Error(reply.error ?? 'solc failed'));
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    const onExit = (code: number) => {
      done();
      reject(new Error(`the compiler's thread stopped (exit code ${code})`));
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    // Held while it works, so the command waits for it; let go when idle, so it never keeps one alive.
    worker.ref();
    worker.postMessage(input);
  });
}

/**
 * Outputs of the last few inputs compiled, by input text. One compiler and one input always give
 * the same output, and a check that runs for several addresses or chains (one per deployment it
 * reads) compiles the same verifiers each time: seconds of solc each, for nothing.
 */
const outputs = new Map<string, Promise<string>>();
const REMEMBERED_OUTPUTS = 4;

function compiledOutput(text: string): Promise<string> {
  const remembered = outputs.get(text);
  if (remembered !== undefined) return remembered;
  const compiled = queue.then(() => compileOnThread(text));
  queue = compiled.catch(() => undefined);
  outputs.set(text, compiled);
  // A failed compile (the thread died) is not an answer to remember: the next call tries again.
  compiled.catch(() => {
    if (outputs.get(text) === compiled) outputs.delete(text);
  });
  if (outputs.size > REMEMBERED_OUTPUTS) outputs.delete(outputs.keys().next().value!);
  return compiled;
}

/** Runs the bundled compiler on a Standard JSON input; solc reports its own errors in the output. */
export async function compileWithBundledSolc(input: unknown): Promise<SolcStandardOutput> {
  // Parsed anew for each caller, so no caller sees another's changes to it.
  return JSON.parse(await compiledOutput(JSON.stringify(input))) as SolcStandardOutput;
}
