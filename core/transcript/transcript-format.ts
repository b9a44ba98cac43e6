/**
 * The transcript's format rules, shared by the coordinator's reader and writer (transcript.ts) and
 * the receipt check's reader (core/receipts/public-transcript.ts). No imports: the page runs it.
 *
 * Format 2 (TRANSCRIPT_VERSION): every entry carries `version: 2`, and every entry that names a key
 * (init, contribution, beacon) carries `sectionHashes`, the BLAKE2b-512 of the body of each of the
 * key's ten sections (core/zkey/zkey-hashes.ts), keyed by section id. Entries without `version`
 * are format 1 (whole-file hashes only): they parse, so a ceremony begun before format 2 goes on,
 * but the checks refuse them unless the reader allows it (legacy-transcript.ts), and nothing writes
 * them; once an entry is format 2, every later one must be too (a transcript is never downgraded).
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
 * section hashes, a format-1 entry, a `finalised` entry and a beacon announcement have none, and no
 * entry is of an older
 * format than the one before it. (The hashes' shape is each reader's schema.)
 */
export function entryFormatProblem(
  entry: { type: string; version?: number; sectionHashes?: unknown },
  previous: { version?: number } | undefined,
): string | undefined {
  const version = entryVersion(entry);
  if (previous && version < entryVersion(previous))
    return `format ${version} after an entry of format ${entryVersion(previous)} (a transcript is never downgraded)`;
  const namesKey = entry.type !== 'finalised' && entry.type !== BEACON_ANNOUNCEMENT;
  if (version >= 2 && namesKey && entry.sectionHashes === undefined)
    return `a format-${version} ${entry.type} entry without its section hashes`;
  if ((version < 2 || !namesKey) && entry.sectionHashes !== undefined)
    return `section hashes in a ${version < 2 ? 'format-1 ' : ''}${entry.type} entry`;
  return undefined;
}

/**
 * The entry that commits the ceremony to its beacon before anyone can know it: the hash of block
 * `blockNumber` of EVM chain `chainId` (EIP-155), not yet mined when announced, hashed
 * 2^`iterationsExp` times. It closes contributions: no init or contribution entry may follow it,
 * so no one can choose a last contribution knowing the beacon.
 */
export const BEACON_ANNOUNCEMENT = 'beaconAnnouncement';

/**
 * The order every reader holds a transcript to, entry by entry (`next` says why an entry cannot
 * come where it does, or takes it as read):
 *   - the `finalised` entry comes last, once, and only after every chain begun (an init entry) has
 *     its beacon, as finalise writes it. Without the rule, entries after it (a second `finalised`
 *     naming another manifest, or more links) would pass every reader, and the ceremony's
 *     identifier (the last entry's hash) would commit to them;
 *   - a beacon announcement comes at most once and before any beacon entry (after one, the beacon
 *     is known); no init or contribution entry follows it; every beacon entry after it carries its
 *     exponent. (That a beacon entry's value is the announced block's hash takes a chain to check:
 *     the audit's `--beacon-rpc`.)
 */
export class TranscriptOrder {
  private readonly unsealed = new Set<string>();
  private previousType: string | undefined;
  private announcedExp: number | undefined;
  private beacons = 0;

  /** The chains begun without their beacon so far. */
  get unsealedChains(): string[] {
    return [...this.unsealed];
  }

  next(entry: { type: string; circuit?: unknown; iterationsExp?: unknown }): string | undefined {
    const problem = this.problem(entry);
    if (problem !== undefined) return problem;
    this.previousType = entry.type;
    if (entry.type === 'init') this.unsealed.add(String(entry.circuit));
    else if (entry.type === 'beacon') {
      this.unsealed.delete(String(entry.circuit));
      this.beacons += 1;
    } else if (entry.type === BEACON_ANNOUNCEMENT) this.announcedExp = Number(entry.iterationsExp);
    return undefined;
  }

  private problem(entry: { type: string; iterationsExp?: unknown }): string | undefined {
    if (this.previousType === 'finalised')
      return `a ${entry.type} entry after the finalised entry, which closes the transcript`;
    if (entry.type === 'finalised' && this.unsealed.size > 0)
      return `the finalised entry comes before the beacon of ${[...this.unsealed].join(', ')}`;
    if (entry.type === BEACON_ANNOUNCEMENT) {
      if (this.announcedExp !== undefined) return 'a second beacon announcement (the beacon is announced once)';
      if (this.beacons > 0) return 'a beacon announcement after a beacon was applied, when the beacon was known';
    }
    if (this.announcedExp !== undefined) {
      if (entry.type === 'init' || entry.type === 'contribution')
        return `a ${entry.type} entry after the beacon announcement, which closes contributions`;
      if (entry.type === 'beacon' && entry.iterationsExp !== this.announcedExp)
        return (
          `a beacon hashed 2^${String(entry.iterationsExp)} times ` +
          `where the announcement says 2^${this.announcedExp}`
        );
    }
    return undefined;
  }
}
