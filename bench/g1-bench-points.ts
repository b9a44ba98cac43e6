/**
 * Valid G1 points for the kernel benches, in the zkey's layout (64 bytes each: x then y,
 * little-endian, Montgomery form): 2G, 3G, … (n + 1)G, made with ffjavascript's curve.
 */
import { buildBn128, type Bn128Curve } from 'ffjavascript';

export const G1_POINT_BYTES = 64;

/** `count` successive multiples of the generator, on a curve the caller holds. */
export function g1GeneratorMultiples(curve: Bn128Curve, count: number): Uint8Array {
  const out = new Uint8Array(count * G1_POINT_BYTES);
  let p = curve.G1.g;
  for (let i = 0; i < count; i++) {
    p = curve.G1.add(p, curve.G1.g);
    curve.G1.toRprLEM(out, i * G1_POINT_BYTES, curve.G1.toAffine(p));
  }
  return out;
}

/** The same on a curve of its own, built single-threaded and stopped before it returns. */
export async function g1BenchPoints(count: number): Promise<Uint8Array> {
  const curve = await buildBn128(true);
  try {
    return g1GeneratorMultiples(curve, count);
  } finally {
    await curve.terminate();
  }
}
