/**
 * The kernel pool of `ceremony contribute`: one worker thread per core (os.availableParallelism),
 * stopped by `close()`.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ScalePool, type ScaleEndpoint } from './scale-pool.ts';
import type { ScaleReply } from './scale-messages.ts';
import { threadExecArgv } from '../runtime/thread-exec-argv.ts';
import { kernelThreadEntry } from '../runtime/kernel-thread-entry.ts';

function threadEndpoint(): ScaleEndpoint {
  const worker = new Worker(kernelThreadEntry(import.meta.url, 'scale'), { execArgv: threadExecArgv(import.meta.url) });
  return {
    post: (request, transfer) => worker.postMessage(request, transfer),
    listen: (onReply, onFailure) => {
      worker.on('message', (reply: ScaleReply) => onReply(reply));
      worker.on('error', (error) => onFailure(error));
      worker.on('exit', (code) => onFailure(new Error(`kernel thread exited with code ${code}`)));
    },
    terminate: () => void worker.terminate(),
  };
}

export async function nodeScalePool(workers = availableParallelism()): Promise<ScalePool> {
  return ScalePool.start(Array.from({ length: Math.max(1, workers) }, threadEndpoint));
}
