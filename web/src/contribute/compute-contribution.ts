/**
 * Page side of one contribution: starts a fresh Web Worker for it, relays its progress, and
 * terminates it when the contribution is made, fails or is abandoned, so nothing secret outlives
 * the circuit. One worker per circuit costs a curve set-up (well under a second); it buys that
 * guarantee.
 */
import type { WorkerReply, WorkerRequest } from './contribution-messages.ts';

export interface ComputedContribution {
  zkey: Uint8Array;
  /** The contribution hash as snarkjs computes it (hex); the coordinator must report the same. */
  hash: string;
}

export function computeContribution(request: WorkerRequest, onProgress: (percent: number, step: string) => void, signal: AbortSignal): Promise<ComputedContribution> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./contribution-worker.ts', import.meta.url), { type: 'module', name: 'contribution' });
    const finish = (): void => {
      worker.terminate();
      signal.removeEventListener('abort', abort);
    };
    const abort = (): void => {
      finish();
      reject(new DOMException('contribution abandoned', 'AbortError'));
    };
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort);
    worker.onmessage = (event: MessageEvent<WorkerReply>) => {
      const reply = event.data;
      if (reply.type === 'progress') onProgress(reply.percent, reply.step);
      else if (reply.type === 'done') {
        finish();
        resolve({ zkey: reply.zkey, hash: reply.hash });
      } else {
        finish();
        reject(new Error(`the contribution failed in the browser: ${reply.message}`));
      }
    };
    worker.onerror = (event) => {
      finish();
      reject(new Error(`the contribution worker stopped: ${event.message || 'it could not be loaded'}`));
    };
    // The head is transferred, not copied: the page does not need it any more.
    worker.postMessage(request, [request.head.buffer]);
  });
}
