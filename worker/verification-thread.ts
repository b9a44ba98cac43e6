/**
 * The in-process verifier: a worker thread that `ceremony serve` starts when there is no Redis
 * (server/verification/in-process-dispatcher.ts). It runs verifyRequest for each request the
 * coordinator posts, so the HTTP event loop never waits on a zkey being read or checked, and it
 * releases the bn128 curve on shutdown so the thread (and the server) can exit.
 *
 * Loaded through verification-thread-entry.js, which registers tsx inside the thread first.
 *
 * snarkjs inside a worker thread: its field library (ffjavascript) starts its own threads through
 * the `web-worker` package, which, loaded in any thread but the main one, takes that thread for
 * one of its own workers (reading `workerData.mod`, listening on parentPort) and exports no Worker
 * class. So the dispatcher starts this thread with the workerData web-worker expects (an empty
 * module to load) plus a MessagePort of our own, which web-worker cannot intercept; the curve is
 * built single-threaded here, before any verification, and cached where snarkjs looks for it.
 * Verification in this thread therefore uses one core; BullMQ workers use them all.
 */
import { isMainThread, workerData, type MessagePort } from 'node:worker_threads';
import { buildBn128 } from 'ffjavascript';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';
import type { VerificationRequest } from '../server/verification/verification-job.ts';
import { parseVerificationRequest, verifyRequest, type DecidedOutcome } from './verify-request.ts';

/** Coordinator → thread. */
export type ToVerificationThread = { type: 'verify'; request: VerificationRequest } | { type: 'shutdown' };

/** Thread → coordinator. `failure` is a verification that could not be carried out (retryable). */
export type FromVerificationThread =
  | { type: 'outcome'; outcome: DecidedOutcome }
  | { type: 'failure'; contributionId: string; message: string };

function describe(error: unknown): string {
  if (error instanceof Error) return (error as NodeJS.ErrnoException).code ? `${(error as NodeJS.ErrnoException).code}: ${error.message}` : error.message;
  return String(error);
}

function serve(port: MessagePort): void {
  const running = new Set<Promise<void>>();
  const post = (message: FromVerificationThread): void => port.postMessage(message);

  const verify = (data: unknown): void => {
    const contributionId = (data as { contributionId?: unknown } | null)?.contributionId;
    const task = (async () => {
      try {
        post({ type: 'outcome', outcome: await verifyRequest(parseVerificationRequest(data)) });
      } catch (error) {
        post({ type: 'failure', contributionId: String(contributionId), message: describe(error) });
      }
    })();
    running.add(task);
    void task.finally(() => running.delete(task));
  };

  const shutdown = async (): Promise<void> => {
    port.off('message', onMessage);
    // Let running verifications finish: terminating the curve under them would only turn them
    // into errors, and the coordinator ignores late results once it is closing anyway.
    await Promise.allSettled([...running]);
    await releaseBn128();
    port.close();
    // web-worker's listener on parentPort would keep the thread alive forever.
    process.exit(0);
  };

  const onMessage = (message: ToVerificationThread): void => {
    if (message.type === 'verify') verify(message.request);
    else if (message.type === 'shutdown') void shutdown();
  };
  port.on('message', onMessage);
}

const port = (workerData as { port?: MessagePort } | null)?.port;
if (isMainThread || !port) throw new Error('verification-thread.ts runs only as the in-process dispatcher\'s worker thread');
silenceSnarkjsHandleWarnings();
// ffjavascript's bn128 module has reset the cache to null on load; snarkjs and core reuse this one.
(globalThis as { curve_bn128?: unknown }).curve_bn128 = await buildBn128(true);
serve(port);
