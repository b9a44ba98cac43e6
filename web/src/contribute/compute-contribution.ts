/**
 * Page side of one contribution: starts a fresh Web Worker for it (snarkjs) and, where the browser
 * can run it, a pool of kernel Web Workers (one per logical core) that scale L and H for it; relays
 * progress and the kernel's work between them, and terminates them all when the contribution is
 * made, fails or is abandoned, so nothing secret outlives the circuit. Where the kernel cannot run
 * (contribution-engine.ts), snarkjs does all the work in its worker, and the progress says so.
 */
import { kernelWasm } from '../../../core/kernel/kernel-wasm.generated.ts';
import { ScalePool, type ScaleEndpoint } from '../../../core/kernel/scale-pool.ts';
import type { ScaleReply } from '../../../core/kernel/scale-messages.ts';
import type { ContributionRecord } from '../../../core/delta/streamed-delta.ts';
import { pageContributionEngine } from './contribution-engine.ts';
import type { ScaledMessage, WorkerReply, WorkerRequest } from './contribution-messages.ts';

export interface ComputedContribution {
  zkey: Uint8Array;
  /** The contribution hash as snarkjs computes it (hex); the coordinator must report the same. */
  hash: string;
  /** Kernel workers used (0: snarkjs alone, the fallback). */
  kernelWorkers: number;
}

function kernelWorkerEndpoint(): ScaleEndpoint {
  const worker = new Worker(new URL('./kernel-worker.ts', import.meta.url), { type: 'module', name: 'kernel' });
  return {
    post: (request, transfer) => worker.postMessage(request, transfer),
    listen: (onReply, onFailure) => {
      worker.onmessage = (event: MessageEvent<ScaleReply>) => onReply(event.data);
      worker.onerror = (event) =>
        onFailure(new Error(`a kernel worker stopped: ${event.message || 'it could not be loaded'}`));
    },
    terminate: () => worker.terminate(),
  };
}

/** The kernel pool, or why there is none (the fallback's reason, shown on the page). */
export async function startKernelPool(): Promise<{ pool?: ScalePool; note: string }> {
  const choice = pageContributionEngine(kernelWasm);
  if (choice.engine !== 'kernel') return { note: `snarkjs in one worker (${choice.reason})` };
  try {
    const pool = await ScalePool.start(Array.from({ length: choice.workers }, kernelWorkerEndpoint));
    const workers = `fast kernel on ${pool.workers} worker${pool.workers === 1 ? '' : 's'}`;
    // A browser without WebAssembly SIMD runs the kernel's scalar walk: the same bytes, about 1.5× the time.
    return { pool, note: pool.simd ? `${workers}, SIMD` : `${workers}, without SIMD (this browser has none: slower)` };
  } catch {
    return { note: 'snarkjs in one worker (the fast kernel could not start in this browser)' };
  }
}

export async function computeContribution(
  request: WorkerRequest,
  onProgress: (percent: number, step: string) => void,
  signal: AbortSignal,
): Promise<ComputedContribution> {
  if (signal.aborted) throw new DOMException('contribution abandoned', 'AbortError');
  onProgress(1, 'starting the workers');
  const { pool, note } = await startKernelPool();
  const message: WorkerRequest = { ...request, kernelWorkers: pool?.workers ?? 0, engineNote: note };
  try {
    // The head is transferred, not copied: the page does not need it any more.
    const reply = await runContributionWorker(message, pool, onProgress, signal);
    if (reply.type !== 'done') throw new Error('the contribution worker answered out of turn');
    return { zkey: reply.zkey, hash: reply.hash, kernelWorkers: pool?.workers ?? 0 };
  } finally {
    pool?.close();
  }
}

/** Runs snarkjs's contribution on a head's small sections (`record` request) in a fresh worker. */
export async function recordContribution(
  request: Omit<WorkerRequest, 'type'>,
  signal: AbortSignal,
): Promise<ContributionRecord> {
  const reply = await runContributionWorker({ ...request, type: 'record' }, undefined, () => {}, signal);
  if (reply.type !== 'recorded') throw new Error('the contribution worker answered out of turn');
  return { zkey: reply.zkey, hash: reply.hash, chain: reply.chain };
}

type FinalReply = Extract<WorkerReply, { type: 'done' | 'recorded' }>;

/** One contribution worker from start to its final answer; it is terminated whatever happens. */
function runContributionWorker(
  message: WorkerRequest,
  pool: ScalePool | undefined,
  onProgress: (percent: number, step: string) => void,
  signal: AbortSignal,
): Promise<FinalReply> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./contribution-worker.ts', import.meta.url), {
      type: 'module',
      name: 'contribution',
    });
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
      else if (reply.type === 'scale') {
        const answer = (scaled: ScaledMessage, transfer: Transferable[] = []): void =>
          worker.postMessage(scaled, transfer);
        if (!pool) return answer({ type: 'scaled', id: reply.id, error: 'no kernel pool' });
        pool.scale(reply.points, reply.chain).then(
          (points) => answer({ type: 'scaled', id: reply.id, points }, [points.buffer]),
          (error: Error) => answer({ type: 'scaled', id: reply.id, error: error.message }),
        );
      } else if (reply.type === 'failed') {
        finish();
        reject(new Error(`the contribution failed in the browser: ${reply.message}`));
      } else {
        finish();
        resolve(reply);
      }
    };
    worker.onerror = (event) => {
      finish();
      reject(new Error(`the contribution worker stopped: ${event.message || 'it could not be loaded'}`));
    };
    worker.postMessage(message, [message.head.buffer]);
  });
}
