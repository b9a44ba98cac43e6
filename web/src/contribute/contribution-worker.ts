/**
 * The Web Worker that makes one contribution with snarkjs's browser build, off the page's main
 * thread. When the page has a kernel pool, snarkjs's scaling of L and H (G1 batchApplyKey) is
 * handed to it (core/kernel/fast-apply-key.ts): everything else, the key, the record, the file,
 * stays snarkjs's. Its randomness is 64 bytes from crypto.getRandomValues, mixed (by snarkjs, with BLAKE2b)
 * with whatever text the person typed. Neither leaves this worker; the page terminates the worker
 * as soon as the contribution is made, which drops the toxic waste with the whole heap.
 */
import { curves, zKey, type MemFile } from 'snarkjs';
import { toHex } from '../ui/format-units.ts';
import {
  captureScaleChain,
  installFastApplyKey,
  type PatchableCurve,
  type PointScaler,
  type ScaleChainCapture,
} from '../../../core/kernel/fast-apply-key.ts';
import type { ScaleChain } from '../../../core/kernel/g1-scale-chain.ts';
import type { ScaledMessage, WorkerReply, WorkerRequest } from './contribution-messages.ts';

interface DedicatedWorkerScope {
  onmessage: ((event: MessageEvent<WorkerRequest | ScaledMessage>) => void) | null;
  postMessage(message: WorkerReply, transfer?: Transferable[]): void;
}
// web/tsconfig.json types `self` as a Window (the DOM library, for the pages); this module runs as a
// dedicated worker, whose scope is the part declared above, so the cast goes through unknown.
const scope = self as unknown as DedicatedWorkerScope;
/** Room for the contribution record the new key adds (a few hundred bytes plus the name). */
const OUTPUT_SLACK_BYTES = 64 * 1024;

function post(message: WorkerReply, transfer: Transferable[] = []): void {
  scope.postMessage(message, transfer);
}

const waiting = new Map<number, { resolve(points: Uint8Array): void; reject(error: Error): void }>();
let nextScaleId = 0;

/** The page's kernel pool, reached through the page (it owns the kernel workers). */
function pageScaler(workers: number): PointScaler {
  return {
    workers,
    scale: (points: Uint8Array, chain: ScaleChain) =>
      new Promise<Uint8Array>((resolve, reject) => {
        const id = nextScaleId++;
        waiting.set(id, { resolve, reject });
        // A copy: snarkjs's buffer may be a view of a larger one, which must not be detached.
        const copy = points.slice();
        post({ type: 'scale', id, points: copy, chain }, [copy.buffer]);
      }),
  };
}

/** snarkjs logs "Applying key: L Section: 0/N" and "… H Section: …"; those two sections are the work. */
function progressOf(message: string, note: string): { percent: number; step: string } | undefined {
  const match = /(L|H) Section: (\d+)\/(\d+)/.exec(message);
  if (!match) return undefined;
  const [, section, done, total] = match;
  const fraction = Number(total) > 0 ? Number(done) / Number(total) : 0;
  return section === 'L'
    ? { percent: 10 + Math.round(40 * fraction), step: `updating the L section: ${note}` }
    : { percent: 50 + Math.round(40 * fraction), step: `updating the H section: ${note}` };
}

scope.onmessage = async (event) => {
  const data = event.data;
  if (data.type === 'scaled') {
    const pending = waiting.get(data.id);
    waiting.delete(data.id);
    if ('error' in data) pending?.reject(new Error(data.error));
    else pending?.resolve(data.points);
    return;
  }
  const request = data;
  const note = request.engineNote ?? 'snarkjs';
  let restore = (): void => {};
  try {
    post({ type: 'progress', percent: 2, step: 'preparing the curve' });
    const random = crypto.getRandomValues(new Uint8Array(64));
    const entropy = `${toHex(random)}${request.typedEntropy}`;
    random.fill(0);
    // The new key is the head plus one contribution record: sized up front, fastfile does not
    // grow its default 1 MiB buffer by ×1.1 (about 45 copies for a 100 MB key).
    const output: MemFile = { type: 'mem', initialSize: request.head.byteLength + OUTPUT_SLACK_BYTES };
    const logger = {
      debug: (message: string) => {
        const progress = progressOf(message, note);
        if (progress) post({ type: 'progress', ...progress });
      },
      info: () => post({ type: 'progress', percent: 95, step: 'writing your contribution' }),
      warn: () => {},
      error: (message: string) => post({ type: 'progress', percent: 95, step: message }),
    };
    let capture: ScaleChainCapture | undefined;
    if (request.type === 'record') {
      // The record is made on a key of a few kilobytes, so its curve runs on this thread alone:
      // the default starts a thread per core, each with its own heap and WebAssembly memory, all
      // of it added to the page's memory early in a turn (up to 15 MB at its peak on 2 cores).
      // snarkjs's contribute takes the curve ffjavascript caches on globalThis, so this one is put
      // there; the chain is captured on whichever curve the cache then gives, the one contribute
      // will use (an ffjavascript that caches elsewhere would just cost the threads again).
      (globalThis as { curve_bn128?: unknown }).curve_bn128 = await curves.getCurveFromName('bn128', {
        singleThread: true,
      });
      const curve = (await curves.getCurveFromName('bn128')) as PatchableCurve;
      // The kernel's chain for s⁻¹ is kept, for the page's pool to apply to the real L and H.
      capture = captureScaleChain(curve);
      restore = capture.restore;
    } else if (request.kernelWorkers && request.kernelWorkers > 0) {
      // The same cached curve object zKey.contribute will get (ffjavascript keeps one per page).
      const curve = (await curves.getCurveFromName('bn128')) as PatchableCurve;
      restore = installFastApplyKey(curve, pageScaler(request.kernelWorkers));
    }
    post({ type: 'progress', percent: 5, step: `drawing your secret (${note})` });
    const hash = await zKey.contribute(request.head, output, request.name, entropy, logger);
    if (!output.data) throw new Error('snarkjs produced no key');
    if (request.type === 'record') {
      // A secret whose chain the kernel cannot follow (never seen for a random one) is not used:
      // the page draws a new one.
      const chain = capture?.chain;
      if (!chain) throw new Error('the secret drawn cannot be applied by the fast kernel; drawing another');
      const zkey = output.data.slice();
      post({ type: 'recorded', zkey, hash: toHex(hash), chain }, [zkey.buffer]);
      return;
    }
    post({ type: 'done', zkey: output.data, hash: toHex(hash) }, [output.data.buffer]);
  } catch (error) {
    post({ type: 'failed', message: (error as Error).message ?? String(error) });
  } finally {
    restore();
  }
};
