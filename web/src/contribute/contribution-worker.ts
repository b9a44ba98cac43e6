/**
 * The Web Worker that makes one contribution with snarkjs's browser build, off the page's main
 * thread. Its randomness is 64 bytes from crypto.getRandomValues, mixed (by snarkjs, with BLAKE2b)
 * with whatever text the person typed. Neither leaves this worker; the page terminates the worker
 * as soon as the contribution is made, which drops the toxic waste with the whole heap.
 */
import { zKey, type MemFile } from 'snarkjs';
import { toHex } from '../ui/format-units.ts';
import type { WorkerReply, WorkerRequest } from './contribution-messages.ts';

interface DedicatedWorkerScope {
  onmessage: ((event: MessageEvent<WorkerRequest>) => void) | null;
  postMessage(message: WorkerReply, transfer?: Transferable[]): void;
}
const scope = self as unknown as DedicatedWorkerScope;
/** Room for the contribution record the new key adds (a few hundred bytes plus the name). */
const OUTPUT_SLACK_BYTES = 64 * 1024;

function post(message: WorkerReply, transfer: Transferable[] = []): void {
  scope.postMessage(message, transfer);
}

/** snarkjs logs "Applying key: L Section: 0/N" and "… H Section: …"; those two sections are the work. */
function progressOf(message: string): { percent: number; step: string } | undefined {
  const match = /(L|H) Section: (\d+)\/(\d+)/.exec(message);
  if (!match) return undefined;
  const [, section, done, total] = match;
  const fraction = Number(total) > 0 ? Number(done) / Number(total) : 0;
  return section === 'L' ? { percent: 10 + Math.round(40 * fraction), step: 'updating the L section' } : { percent: 50 + Math.round(40 * fraction), step: 'updating the H section' };
}

scope.onmessage = async (event) => {
  const request = event.data;
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
        const progress = progressOf(message);
        if (progress) post({ type: 'progress', ...progress });
      },
      info: () => post({ type: 'progress', percent: 95, step: 'writing your contribution' }),
      warn: () => {},
      error: (message: string) => post({ type: 'progress', percent: 95, step: message }),
    };
    post({ type: 'progress', percent: 5, step: 'drawing your secret' });
    const hash = await zKey.contribute(request.head, output, request.name, entropy, logger);
    if (!output.data) throw new Error('snarkjs produced no key');
    post({ type: 'done', zkey: output.data, hash: toHex(hash) }, [output.data.buffer]);
  } catch (error) {
    post({ type: 'failed', message: (error as Error).message ?? String(error) });
  }
};
