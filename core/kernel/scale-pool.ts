/**
 * A pool of kernel workers (Node worker threads or browser Web Workers, behind ScaleEndpoint):
 * each call splits the points into one slice per worker, transfers the slices out and joins the
 * scaled slices back in order. A worker that fails or dies fails the call that was waiting on it.
 */
import type { ScaleChain } from './g1-scale-chain.ts';
import type { ScaleKernelKind } from './g1-scale-kernel.ts';
import type { PointScaler } from './fast-apply-key.ts';
import type { ScaleReply, ScaleRequest } from './scale-messages.ts';
import { joinPoints, splitPoints } from './split-points.ts';

export interface ScaleEndpoint {
  post(request: ScaleRequest, transfer: ArrayBuffer[]): void;
  /** Calls back with every reply, and with an Error if the worker dies. */
  listen(onReply: (reply: ScaleReply) => void, onFailure: (error: Error) => void): void;
  terminate(): void;
}

interface Pending {
  resolve(points: Uint8Array): void;
  reject(error: Error): void;
}

export class ScalePool implements PointScaler {
  private nextId = 0;
  private readonly pending: Array<Map<number, Pending>>;
  /** The walk each worker's kernel runs, as it said when ready. */
  private readonly kinds: ScaleKernelKind[] = [];

  private constructor(private readonly endpoints: ScaleEndpoint[]) {
    this.pending = endpoints.map(() => new Map());
  }

  get workers(): number {
    return this.endpoints.length;
  }

  /** Whether every worker runs the SIMD walk (else some run the scalar one: a runtime without WebAssembly SIMD). */
  get simd(): boolean {
    return this.kinds.length === this.endpoints.length && this.kinds.every((kind) => kind === 'simd');
  }

  /** Starts listening on every endpoint and resolves once each worker has its kernel ready. */
  static async start(endpoints: ScaleEndpoint[]): Promise<ScalePool> {
    const pool = new ScalePool(endpoints);
    try {
      await Promise.all(
        endpoints.map(
          (endpoint, index) =>
            new Promise<void>((ready, failed) => {
              endpoint.listen(
                (reply) => {
                  if ('ready' in reply) {
                    pool.kinds[index] = reply.kind;
                    return ready();
                  }
                  if ('error' in reply && reply.id === -1)
                    return failed(new Error(`kernel worker could not start: ${reply.error}`));
                  const waiting = pool.pending[index]!.get(reply.id);
                  if (!waiting) return;
                  pool.pending[index]!.delete(reply.id);
                  if ('error' in reply) waiting.reject(new Error(`kernel worker: ${reply.error}`));
                  else waiting.resolve(reply.points);
                },
                (error) => {
                  failed(error);
                  for (const waiting of pool.pending[index]!.values()) waiting.reject(error);
                  pool.pending[index]!.clear();
                },
              );
            }),
        ),
      );
    } catch (error) {
      pool.close();
      throw error;
    }
    return pool;
  }

  async scale(points: Uint8Array, chain: ScaleChain): Promise<Uint8Array> {
    const slices = splitPoints(points, this.endpoints.length);
    const scaled = await Promise.all(
      slices.map(
        (slice, index) =>
          new Promise<Uint8Array>((resolve, reject) => {
            const id = this.nextId++;
            this.pending[index]!.set(id, { resolve, reject });
            this.endpoints[index]!.post({ id, points: slice, schedule: chain.schedule, steps: chain.steps }, [
              slice.buffer as ArrayBuffer,
            ]);
          }),
      ),
    );
    return joinPoints(scaled, points.byteLength);
  }

  /**
   * Scales `points` on one worker, the one with the fewest calls waiting, without a copy: the
   * buffer is transferred to it and the same buffer comes back scaled. For a caller that keeps
   * several calls in flight (a stream of slices), so every worker stays fed without the split and
   * join of `scale`.
   */
  scaleOne(points: Uint8Array, chain: ScaleChain): Promise<Uint8Array> {
    let index = 0;
    for (let i = 1; i < this.pending.length; i++) if (this.pending[i]!.size < this.pending[index]!.size) index = i;
    return new Promise<Uint8Array>((resolve, reject) => {
      const id = this.nextId++;
      this.pending[index]!.set(id, { resolve, reject });
      this.endpoints[index]!.post({ id, points, schedule: chain.schedule, steps: chain.steps }, [
        points.buffer as ArrayBuffer,
      ]);
    });
  }

  close(): void {
    for (const endpoint of this.endpoints) endpoint.terminate();
  }
}
