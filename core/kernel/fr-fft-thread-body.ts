/**
 * One inverse FFT on a thread of its own (fr-fft-on-thread.ts): takes its job from workerData,
 * answers with the coefficients (a copy out of the kernel's memory, transferred) or the error, and
 * ends, so that the transform's memory goes with the thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { frInverseFft } from './fr-fft.ts';
import type { FftJob, FftReply } from './fr-fft-on-thread.ts';

const port = parentPort;
if (!port) throw new Error('fr-fft-thread-body runs only as a worker thread');
const job = workerData as FftJob;
try {
  const coefficients = (await frInverseFft(job.values, job.omega, job.width)).slice();
  port.postMessage({ coefficients } satisfies FftReply, [coefficients.buffer]);
} catch (error) {
  port.postMessage({ error: (error as Error).message, range: error instanceof RangeError } satisfies FftReply);
}
