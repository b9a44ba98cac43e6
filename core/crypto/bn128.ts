/**
 * One shared bn128 curve instance (ffjavascript, the one snarkjs uses). ffjavascript caches the
 * curve on globalThis, where snarkjs's getCurveFromName finds it, so both share one set of worker
 * threads; `releaseBn128` stops them so a command can exit.
 *
 * Built from ffjavascript directly rather than through snarkjs: loading snarkjs costs a command
 * such as `ceremony verify-link`, which needs nothing else from it, a few hundred milliseconds.
 */
import { buildBn128, type Bn128Curve } from 'ffjavascript';

/** The build in flight: ffjavascript caches only a finished curve, so two early callers would build two. */
let building: Promise<Bn128Curve> | undefined;

export function getBn128(): Promise<Bn128Curve> {
  const cached = (globalThis as { curve_bn128?: Bn128Curve | null }).curve_bn128;
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

/** Terminates the curve's worker threads if the curve was ever built. Safe to call repeatedly. */
export async function releaseBn128(): Promise<void> {
  const cached = (globalThis as { curve_bn128?: { terminate(): Promise<void> | void } | null }).curve_bn128;
  if (cached) {
    delete (globalThis as { curve_bn128?: unknown }).curve_bn128;
    await cached.terminate();
  }
}
