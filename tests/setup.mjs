// Preloaded into every test process (node --import): quiet the known snarkjs handle warning, and
// start ffjavascript's curve threads without the test process's flags.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';

silenceSnarkjsHandleWarnings();

// `ceremony audit` remembers a verified ptau in the user's cache ($XDG_CACHE_HOME): each test process
// (and the commands it starts) keeps its own, so no test reads another's and none writes the user's.
if (isMainThread) {
  const cacheHome = mkdtempSync(path.join(tmpdir(), 'test-cache-'));
  process.env.XDG_CACHE_HOME = cacheHome;
  process.on('exit', () => rmSync(cacheHome, { recursive: true, force: true }));
}

// ffjavascript starts its threads through web-worker, whose thread runs plain JavaScript; inheriting
// tsx would cost each about 0.15 s of CPU, some 130 threads a run. They start with no flags, as our
// own threads started from the sources do (core/runtime/thread-exec-argv.ts); the app outside the
// tests is unchanged.
const require = createRequire(import.meta.url);
const threads = require('node:worker_threads');
const webWorkerThread = require.resolve('web-worker');
const InheritingWorker = threads.Worker;
threads.Worker = class Worker extends InheritingWorker {
  constructor(filename, options) {
    const fromWebWorker = String(filename) === webWorkerThread && options?.execArgv === undefined;
    super(filename, fromWebWorker ? { ...options, execArgv: [] } : options);
  }
};
syncBuiltinESMExports();
