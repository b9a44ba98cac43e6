/**
 * The names and versions of the contribution delta format (docs/contribution-delta.md), as an
 * upload declares it (tus metadata `format`) and `GET /api/ceremony` lists it. Its own module,
 * free of Node's modules, so the browser page and the server share the one spelling.
 *
 * Both versions carry the same sections; they differ in order only:
 *  - `zkey-delta-v2` (what the clients send): every section but L and H in ascending order, then L,
 *    then H. The new record (section 10) arrives before any point, so the coordinator checks the
 *    history and the record's proof of knowledge before it sums a point or copies a head section;
 *  - `zkey-delta-v1` (still taken, for older clients and deltas snarkjs writes): ascending ids, the
 *    record after H. Such a delta is checked and spliced only once it is complete.
 */
export const DELTA_FORMAT = 'zkey-delta-v2';
export const DELTA_FORMAT_V1 = 'zkey-delta-v1';
export const DELTA_FORMATS = [DELTA_FORMAT, DELTA_FORMAT_V1] as const;
export type DeltaFormat = (typeof DELTA_FORMATS)[number];

/** L and H: the sections a contribution scales point by point, last in a `zkey-delta-v2`. */
const POINT_SECTIONS = [8, 9] as const;

export function isDeltaFormat(format: string | null | undefined): format is DeltaFormat {
  return (DELTA_FORMATS as readonly string[]).includes(format ?? '');
}

/** The section order of a delta of `format` on a key with section `ids`. */
export function deltaSectionOrder(format: DeltaFormat, ids: Iterable<number>): number[] {
  const ascending = [...ids].sort((a, b) => a - b);
  if (format === DELTA_FORMAT_V1) return ascending;
  const points: readonly number[] = POINT_SECTIONS;
  return [...ascending.filter((id) => !points.includes(id)), ...points.filter((id) => ascending.includes(id))];
}
