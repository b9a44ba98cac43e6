/**
 * What the long work did, counted: points summed by the kernel's MSMs per group and scalar width,
 * bytes hashed, transforms by size. A benchmark sets these counts against rates it measures in
 * the same run to state the work's floor (bench/audit-floor.ts): the time the work cannot take
 * less than on this machine, whatever the code around it does. Counting is a map update per MSM
 * call, per hashed chunk (a MiB) and per transform, so it is always on; the counts are written to
 * stderr as lines `stage-work <scope>: <item> <count>` only with CEREMONY_STAGE_TIMES=1, as the
 * stage times are (stage-timings.ts).
 */

const REPORTED = process.env.CEREMONY_STAGE_TIMES === '1';

/** The line prefix the benchmarks parse. */
export const WORK_TALLY_PREFIX = 'stage-work';

let counts = new Map<string, number>();

/** Adds `amount` to `item`'s count (items are phrases such as "msm G1 128-bit" or "blake2b512 bytes"). */
export function tallyWork(item: string, amount: number): void {
  counts.set(item, (counts.get(item) ?? 0) + amount);
}

/** The counts since the last take, and starts again from nothing (a bench measuring one run at a time). */
export function takeWorkTally(): Map<string, number> {
  const taken = counts;
  counts = new Map();
  return taken;
}

/** Writes the counts since the last take to stderr (nothing without CEREMONY_STAGE_TIMES=1), keeping them. */
export function reportWorkTally(scope: string): void {
  if (!REPORTED) return;
  const lines = [...counts].map(([item, count]) => `${WORK_TALLY_PREFIX} ${scope}: ${item} ${count}\n`);
  process.stderr.write(lines.join(''));
}

/**
 * The item an MSM is counted under (its points): its group, its scalars' width, whether its points
 * were checked first.
 */
export function msmWorkItem(group: 'G1' | 'G2', scalarBytes: number, checked: boolean): string {
  return `msm ${group} ${scalarBytes * 8}-bit${checked ? ' checked' : ''}`;
}

/** The item bytes hashed with the files' hash (BLAKE2b-512) are counted under, each pass over a byte once. */
export const HASH_WORK_ITEM = 'blake2b512 bytes';

/** The item an inverse FFT of 2^log values is counted under (how many were made). */
export const fftWorkItem = (log: number): string => `inverse fft 2^${log}`;
