/**
 * The transcript's format rules, shared by the coordinator's reader and writer (transcript.ts) and
 * the receipt check's reader (core/receipts/public-transcript.ts). No imports: the page runs it.
 *
 * Format 2 (TRANSCRIPT_VERSION): every entry carries `version: 2`, and every entry that names a key
 * (init, contribution, beacon) carries `sectionHashes`, the BLAKE2b-512 of the body of each of the
 * key's ten sections (core/zkey/zkey-hashes.ts), keyed by section id. Entries without `version`
 * are format 1 (whole-file hashes only) and are still read, so a ceremony begun before format 2
 * goes on; once an entry is format 2, every later one must be too (a transcript is never
 * downgraded).
 */

/**
 * The exponents N a beacon entry may carry (the beacon is hashed 2^N times): snarkjs's range, which
 * `finalise` takes too. A record's exponent is a byte, so a bound is needed: at 2^200 a reader
 * checking the beacon's key would never finish.
 */
export const BEACON_ITERATIONS_EXP = { min: 10, max: 63 } as const;

/** The format new entries are written in. */
export const TRANSCRIPT_VERSION = 2;

/** The sections of a Groth16 zkey, each of which a format-2 entry naming a key hashes. */
export const ZKEY_SECTION_IDS: readonly number[] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

/** The format of an entry as written: 1 for an entry from before section hashes. */
export const entryVersion = (entry: { version?: number }): number => entry.version ?? 1;

/**
 * Why an entry breaks the format rules, or undefined: a format-2 entry naming a key has its
 * section hashes, a format-1 entry and a `finalised` entry have none, and no entry is of an older
 * format than the one before it. (The hashes' shape is each reader's schema.)
 */
export function entryFormatProblem(
  entry: { type: string; version?: number; sectionHashes?: unknown },
  previous: { version?: number } | undefined,
): string | undefined {
  const version = entryVersion(entry);
  if (previous && version < entryVersion(previous))
    return `format ${version} after an entry of format ${entryVersion(previous)} (a transcript is never downgraded)`;
  const namesKey = entry.type !== 'finalised';
  if (version >= 2 && namesKey && entry.sectionHashes === undefined)
    return `a format-${version} ${entry.type} entry without its section hashes`;
  if ((version < 2 || !namesKey) && entry.sectionHashes !== undefined)
    return `section hashes in a ${version < 2 ? 'format-1 ' : ''}${entry.type} entry`;
  return undefined;
}

/**
 * Why an entry breaks the transcript's closing rule, or undefined: the `finalised` entry comes
 * last, once, and only after every chain begun has its beacon (as finalise writes it). Without the
 * rule, entries after it (a second `finalised` naming another manifest, or more links) would pass
 * every reader, and the ceremony's identifier (the last entry's hash) would commit to them.
 * `unsealed` lists the chains begun (an init entry) without their beacon so far.
 */
export function closingProblem(
  entry: { type: string },
  previous: { type: string } | undefined,
  unsealed: readonly string[],
): string | undefined {
  if (previous?.type === 'finalised')
    return `a ${entry.type} entry after the finalised entry, which closes the transcript`;
  if (entry.type === 'finalised' && unsealed.length > 0)
    return `the finalised entry comes before the beacon of ${unsealed.join(', ')}`;
  return undefined;
}
