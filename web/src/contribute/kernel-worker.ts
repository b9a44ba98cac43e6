/**
 * One Web Worker of the page's kernel pool: instantiates the G1 kernel (plain WebAssembly from
 * bytes, which a CSP allows with 'wasm-unsafe-eval'; its SIMD walk where the browser has
 * WebAssembly SIMD, else the scalar one, and says which when ready) and scales the slices of L and H
 * it is sent. The page terminates it when the contribution ends. `?walk=scalar` (or `simd`) on the
 * worker's URL forces a walk: the page never sets it; bench/kernel-in-chromium.ts does, to time both
 * walks in one browser.
 */
import { G1ScaleKernel } from '../../../core/kernel/g1-scale-kernel.ts';
import type { ScaleReply, ScaleRequest } from '../../../core/kernel/scale-messages.ts';

interface DedicatedWorkerScope {
  onmessage: ((event: MessageEvent<ScaleRequest>) => void) | null;
  postMessage(message: ScaleReply, transfer?: Transferable[]): void;
}
// web/tsconfig.json types `self` as a Window (the DOM library, for the pages); this module runs as a
// dedicated worker, whose scope is the part declared above, so the cast goes through unknown.
const scope = self as unknown as DedicatedWorkerScope;

const forced = new URLSearchParams(self.location.search).get('walk');
const kernel = G1ScaleKernel.instantiate(forced === 'simd' || forced === 'scalar' ? { kind: forced } : {});
kernel.then(
  (ready) => scope.postMessage({ id: -1, ready: true, kind: ready.kind }),
  (error: Error) => scope.postMessage({ id: -1, error: error.message ?? String(error) }),
);

scope.onmessage = async (event) => {
  const request = event.data;
  try {
    (await kernel).scale(request.points, { schedule: request.schedule, steps: request.steps });
    scope.postMessage({ id: request.id, points: request.points }, [request.points.buffer]);
  } catch (error) {
    scope.postMessage({ id: request.id, error: (error as Error).message ?? String(error) });
  }
};
