/**
 * One shared bn128 curve instance (ffjavascript, the one snarkjs uses). ffjavascript caches the
 * curve on globalThis, where snarkjs's getCurveFromName finds it, so both share one set of worker
 * threads; `releaseBn128` stops them so a command can exit.
 *
 * Built from ffjavascript directly rather than through snarkjs: loading snarkjs costs a command
 * such as `ceremony verify-link`, which needs nothing else from it, a few hundred milliseconds.
 */
import { buildBn128, type Bn128Curve } from 'ffjavascript';
import { cachedBn128, forgetCachedBn128 } from './bn128-cache.ts';

/** The build in flight: ffjavascript caches only a finished curve, so two early callers would build two. */
let building: Promise<Bn128Curve> | undefined;
/** A curve without worker threads, when the process asked for one (ffjavascript does not cache those). */
let singleThreaded: Promise<Bn128Curve> | undefined;
let preferSingleThread = false;

/**
 * Makes getBn128 build ffjavascript's curve without its worker threads, for a short command whose
 * heavy work runs elsewhere (`ceremony verify-link`: the sums on the kernel's threads, only
 * pairings and point arithmetic on the curve). Starting and stopping those threads, each compiling
 * the curve's WebAssembly, costs such a command a few hundred milliseconds of its two cores. Call
 * it before the first getBn128.
 */
export function preferSingleThreadedBn128(): void {
  preferSingleThread = true;
}

export function getBn128(): Promise<Bn128Curve> {
  if (preferSingleThread) return (singleThreaded ??= buildBn128(true));
  const cached = cachedBn128<Bn128Curve>();
  if (cached) return Promise.resolve(cached);
  if (!building) {
    const started = buildBn128();
    building = started;
    const forget = (): void => {
      if (building === started) building = undefined;
    };
    started.then(forget, forget);
  }
  return building;
}

/** What releaseBn128 reaches of the cached curve: its own terminate, and its thread manager's threads. */
interface CachedCurve {
  terminate(): Promise<void> | void;
  tm?: { workers?: Array<{ terminate?: () => unknown } | undefined> };
}

/** Terminates the curve's worker threads if the curve was ever built. Safe to call repeatedly. */
export async function releaseBn128(): Promise<void> {
  const cached = cachedBn128<CachedCurve>();
  if (cached) {
    forgetCachedBn128();
    // ffjavascript's own terminate asks each thread to close, then sleeps 200 ms whatever they do:
    // every command paid it before exiting. The threads are stopped here instead, at once.
    const workers = cached.tm?.workers ?? [];
    if (workers.length > 0 && workers.every((worker) => typeof worker?.terminate === 'function'))
      await Promise.all(workers.map((worker) => worker!.terminate!()));
    else await cached.terminate();
  }
}
