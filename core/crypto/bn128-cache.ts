/**
 * Where ffjavascript keeps the bn128 curve it built with threads (globalThis.curve_bn128), where
 * snarkjs's getCurveFromName finds it too. Read here without loading either library: a command
 * that built no curve learns so without paying for ffjavascript's load (cli/main.ts).
 */
export function cachedBn128<T>(): T | undefined {
  return (globalThis as { curve_bn128?: T | null }).curve_bn128 ?? undefined;
}

/** Drops the cached curve, so the next build makes a new one (releaseBn128, after stopping its threads). */
export function forgetCachedBn128(): void {
  delete (globalThis as { curve_bn128?: unknown }).curve_bn128;
}
