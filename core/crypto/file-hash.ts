/**
 * Hashes of whole files, streamed through node:crypto (BLAKE2b-512, as snarkjs uses for its own
 * hashes, but native: about 30× faster than snarkjs's pure-JS blake2b on large zkeys).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { threadExecArgv } from '../runtime/thread-exec-argv.ts';
import { HASH_WORK_ITEM, tallyWork } from '../runtime/work-tally.ts';

export const FILE_HASH_ALGORITHM = 'blake2b512';

/** The BLAKE2b-512 (hex) of bytes or of a text's UTF-8, as `hashFile` gives of a file holding them. */
export function hashBytes(data: Uint8Array | string): string {
  return createHash(FILE_HASH_ALGORITHM).update(data).digest('hex');
}

export async function hashFile(filePath: string): Promise<string> {
  const hash = createHash(FILE_HASH_ALGORITHM);
  for await (const chunk of createReadStream(filePath, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
    tallyWork(HASH_WORK_ITEM, (chunk as Buffer).length);
  }
  return hash.digest('hex');
}

/** Plain CommonJS, evaluated: the same in the sources (tsx) and the compiled app. */
const FILE_HASH_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { createReadStream } = require('node:fs');
(async () => {
  const hash = createHash(workerData.algorithm);
  for await (const chunk of createReadStream(workerData.path, { highWaterMark: 1 << 20 })) hash.update(chunk);
  parentPort.postMessage({ hash: hash.digest('hex') });
})().catch((error) => parentPort.postMessage({ error: { message: error.message, code: error.code } }));
`;

/**
 * Below this size a file is hashed on the calling thread: starting a thread (50–70 ms of CPU here)
 * costs about what hashing 32 MiB does, and an audit of small circuits hashes dozens of keys.
 */
export const HASH_THREAD_MIN_BYTES = 32 * 1024 * 1024;

/**
 * hashFile's result on a worker thread of its own, ended with the call: for a large file hashed
 * while this thread hashes or computes something else (below HASH_THREAD_MIN_BYTES, on this
 * thread). A read error carries its errno code.
 */
export async function hashFileOnThread(filePath: string): Promise<string> {
  const { size } = await stat(filePath);
  if (size < HASH_THREAD_MIN_BYTES) return hashFile(filePath);
  tallyWork(HASH_WORK_ITEM, size);
  return new Promise((resolve, reject) => {
    const worker = new Worker(FILE_HASH_THREAD, {
      eval: true,
      workerData: { path: filePath, algorithm: FILE_HASH_ALGORITHM },
      execArgv: threadExecArgv(import.meta.url),
    });
    worker.once('message', (reply: { hash?: string; error?: { message: string; code?: string } }) => {
      void worker.terminate();
      if (reply.hash !== undefined) return resolve(reply.hash);
      reject(Object.assign(new Error(reply.error?.message), reply.error?.code ? { code: reply.error.code } : {}));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the hashing thread stopped (exit code ${code})`)));
  });
}
