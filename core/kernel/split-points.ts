/**
 * How a pool shares one buffer of 64-byte points among its workers: contiguous slices of nearly
 * equal length (no slice for a worker that would get none), each a copy the worker can own.
 */
export function splitPoints(points: Uint8Array, parts: number): Uint8Array[] {
  const total = points.byteLength / 64;
  const count = Math.max(1, Math.min(parts, total));
  const slices: Uint8Array[] = [];
  let first = 0;
  for (let i = 0; i < count; i++) {
    const n = Math.floor(total / count) + (i < total % count ? 1 : 0);
    slices.push(points.slice(first * 64, (first + n) * 64));
    first += n;
  }
  return slices;
}

/** Concatenates the workers' slices back in order. */
export function joinPoints(slices: Uint8Array[], byteLength: number): Uint8Array {
  const out = new Uint8Array(byteLength);
  let offset = 0;
  for (const slice of slices) {
    out.set(slice, offset);
    offset += slice.byteLength;
  }
  return out;
}
