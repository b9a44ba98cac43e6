/**
 * The embedded verifier: a child process that `ceremony serve` forks when there is no Redis
 * (server/verification-dispatch/embedded-dispatcher.ts, which finds this file, and the messages both sides
 * exchange, in the verifier contract: core/verifier-contract/verifier-contract.ts). It runs
 * verifyRequest for each request the coordinator sends over the IPC channel, so the HTTP event
 * loop never waits on a zkey being read or checked.
 *
 * Why a process rather than a worker thread: ffjavascript spreads every multi-exponentiation over
 * worker threads of its own (through the `web-worker` package), which it can only start from a
 * main thread. In a worker thread the curve had to be built single-threaded, so each verification
 * took about twice as long on 2 cores. A process also keeps a verifier that runs out of memory
 * from taking the coordinator down with it.
 *
 * The curve is built before the process says it is ready, so the first upload does not pay for
 * it. The process leaves when the coordinator asks (after finishing what it is verifying) or when
 * the IPC channel closes, which is what happens when the coordinator dies, even by kill -9.
 */
import { boundedText } from '../core/bounded-text.ts';
import { getBn128, releaseBn128 } from '../core/crypto/bn128.ts';
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';
import {
  parseHeadPreparationRequest,
  parseVerificationRequest,
  type FromEmbeddedVerifier,
  type ToEmbeddedVerifier,
} from '../core/verifier-contract/verifier-contract.ts';
import { prepareHead } from './prepare-head.ts';
import { verifyRequest } from './verify-request.ts';

/** A failure's text for the coordinator's log, bounded: an error may quote what an uploader sent. */
function describe(error: unknown): string {
  if (error instanceof Error)
    return boundedText(
      (error as NodeJS.ErrnoException).code
        ? `${(error as NodeJS.ErrnoException).code}: ${error.message}`
        : error.message,
    );
  return boundedText(String(error));
}

function post(message: FromEmbeddedVerifier): void {
  // After a disconnect there is nobody to tell; the coordinator re-verifies on its next start.
  if (process.connected) process.send?.(message);
}

const running = new Set<Promise<void>>();
/** Requests that arrive while the curve is being built wait for it rather than build a second one. */
let curveReady: Promise<unknown> = Promise.resolve();

function verify(data: unknown): void {
  const contributionId = (data as { contributionId?: unknown } | null)?.contributionId;
  const task = (async () => {
    try {
      await curveReady;
      post({ type: 'outcome', outcome: await verifyRequest(parseVerificationRequest(data)) });
    } catch (error) {
      post({ type: 'failure', contributionId: String(contributionId), message: describe(error) });
    }
  })();
  running.add(task);
  void task.finally(() => running.delete(task));
}

function prepare(data: unknown): void {
  const circuit = String((data as { circuit?: unknown } | null)?.circuit);
  const task = (async () => {
    try {
      post({ type: 'head-prepared', prepared: await prepareHead(parseHeadPreparationRequest(data)) });
    } catch (error) {
      post({ type: 'head-preparation-failed', circuit, message: describe(error) });
    }
  })();
  running.add(task);
  void task.finally(() => running.delete(task));
}

let stopping: Promise<never> | undefined;
function shutdown(): Promise<never> {
  return (stopping ??= (async () => {
    process.off('message', onMessage);
    // Let running verifications finish: cutting the curve from under them would only turn them
    // into errors, and a coordinator that is closing ignores late results anyway.
    await Promise.allSettled([...running]);
    await releaseBn128();
    if (process.connected) process.disconnect();
    process.exit(0);
  })());
}

function onMessage(message: ToEmbeddedVerifier): void {
  if (message.type === 'verify') verify(message.request);
  else if (message.type === 'prepare-head') prepare(message.request);
  else if (message.type === 'shutdown') void shutdown();
}

if (!process.send)
  throw new Error("embedded-verifier.ts runs only as the coordinator's child process (forked with an IPC channel)");
silenceSnarkjsHandleWarnings();
process.on('message', onMessage);
process.once('disconnect', () => void shutdown());
curveReady = getBn128();
await curveReady;
post({ type: 'ready' });
