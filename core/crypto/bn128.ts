/**
 * One shared bn128 curve instance (ffjavascript, as snarkjs builds it). snarkjs caches the curve
 * on globalThis and starts worker threads with it; sharing it avoids a second set of threads, and
 * `releaseBn128` stops them so a command can exit.
 */
import * as snarkjs from 'snarkjs';
import type { Bn128Curve } from 'ffjavascript';

export async function getBn128(): Promise<Bn128Curve> {
  return (await snarkjs.curves.getCurveFromName('bn128')) as Bn128Curve;
}

/** Terminates the curve's worker threads if the curve was ever built. Safe to call repeatedly. */
export async function releaseBn128(): Promise<void> {
  const cached = (globalThis as { curve_bn128?: { terminate(): Promise<void> | void } }).curve_bn128;
  if (cached) {
    delete (globalThis as { curve_bn128?: unknown }).curve_bn128;
    await cached.terminate();
  }
}
