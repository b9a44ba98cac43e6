/**
 * frInverseFft on a worker thread started for the one call, so that a caller with several
 * transforms (the audit's check of the ptau: four at 2^k and 2^(k+1)) can run them on every core:
 * the kernel's transform is one thread's work. The thread ends with the call, and the transform's
 * memory (the values and their twiddles, 384 MiB at 2^23) with it; the caller receives a copy of
 * the coefficients. Where no thread can start, the transform runs on the calling thread.
 */
import { Worker } from 'node:worker_threads';
import { frInverseFft } from './fr-fft.ts';
import { threadExecArgv } from '../runtime/thread-exec-argv.ts';

/** What the thread is given: frInverseFft's arguments. */
export interface FftJob {
  values: Uint8Array;
  omega: bigint;
  width: number;
}

/** The thread's answer: the coefficients, or the error (`range`: a RangeError, the caller's fault). */
export type FftReply = { coefficients: Uint8Array } | { error: string; range: boolean };

function onThread(job: FftJob): Promise<Uint8Array> {
  // Compiled (dist/), the thread runs its plain JS body; from sources, an entry that loads it itself.
  const entry = new URL(
    import.meta.url.endsWith('.js') ? './fr-fft-thread-body.js' : './fr-fft-thread.mjs',
    import.meta.url,
  );
  return new Promise((resolve, reject) => {
    // The values are cloned into the thread: the caller keeps its own (the audit sums with them later).
    const worker = new Worker(entry, { workerData: job, execArgv: threadExecArgv(import.meta.url) });
    worker.once('message', (reply: FftReply) => {
      void worker.terminate();
      if ('coefficients' in reply) return resolve(reply.coefficients);
      reject(reply.range ? new RangeError(reply.error) : new Error(reply.error));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the FFT thread stopped (exit code ${code})`)));
  });
}

/**
 * frInverseFft(values, omega, width) on a thread of its own: the same coefficients (32-byte
 * scalars, standard form), in a buffer of the caller's. Its RangeErrors are frInverseFft's; a
 * thread that cannot start or dies leaves the transform to the calling thread.
 */
export async function frInverseFftOnThread(values: Uint8Array, omega: bigint, width = 32): Promise<Uint8Array> {
  try {
    return await onThread({ values, omega, width });
  } catch (error) {
    if (error instanceof RangeError) throw error;
    return (await frInverseFft(values, omega, width)).slice();
  }
}
