/**
 * frInverseFft on a worker thread started for the one call, so that a caller with several
 * transforms (the audit's check of the ptau: four at 2^k and 2^(k+1)) can run them on every core:
 * the kernel's transform is one thread's work. The thread ends with the call, and the transform's
 * memory (the values and their twiddles, 384 MiB at 2^23) with it; the caller receives a copy of
 * the coefficients. Where no thread can start, the transform runs on the calling thread, and the
 * process is warned once (CEREMONY_FFT_THREAD): the result is the same, only slower, and a silent
 * fallback would hide a broken thread entry (e.g. in a build) behind an audit that is merely slow.
 */
import { Worker } from 'node:worker_threads';
import { frInverseFft } from './fr-fft.ts';
import { threadExecArgv } from '../runtime/thread-exec-argv.ts';
import { kernelThreadEntry } from '../runtime/kernel-thread-entry.ts';

/** What the thread is given: frInverseFft's arguments. */
export interface FftJob {
  values: Uint8Array;
  omega: bigint;
  width: number;
}

/** The thread's answer: the coefficients, or the error (`range`: a RangeError, the caller's fault). */
export type FftReply = { coefficients: Uint8Array } | { error: string; range: boolean };

/** The warning's code, for a listener on process 'warning' (the CLI prints warnings on stderr). */
export const FFT_THREAD_WARNING_CODE = 'CEREMONY_FFT_THREAD';

let warned = false;

function warnOnce(error: unknown): void {
  if (warned) return;
  warned = true;
  const reason = error instanceof Error ? error.message : String(error);
  process.emitWarning(
    `an inverse FFT ran on the calling thread, its own thread failed (${reason}); later ones may too`,
    {
      code: FFT_THREAD_WARNING_CODE,
    },
  );
}

function onThread(job: FftJob): Promise<Uint8Array> {
  const entry = kernelThreadEntry(import.meta.url, 'fr-fft');
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
    warnOnce(error);
    return (await frInverseFft(values, omega, width)).slice();
  }
}
