/**
 * A key's sections against the transcript, for the receipt check (isomorphic: the page runs it).
 *
 *  - `checkServedSections`: every section the check read of a key by range (1, 2, 3, 10 of the
 *    key, 2 of contribution 0) hashes to what the key's transcript entry records, so the bytes the
 *    check goes on are the ones the coordinator committed to in the public transcript, not bytes
 *    served to this reader alone (`receipt.served_bytes_mismatch`).
 *  - `checkFixedSections`: the sections no contribution changes (1, 3, 4, 5, 6, 7: the protocol,
 *    IC, the coefficients, A, B1, B2) have, in the key's entry, contribution 0's section hashes, and
 *    the key's header has contribution 0's fields, α, β and γ byte for byte: only δ (section 2's
 *    last points), L, H (8, 9) and the history (10) may differ (`receipt.sections_changed`).
 *
 * Both need format-2 entries (section hashes); for a format-1 entry they report that they could
 * not run, and the checker says what is then left to the audit.
 */
import { blake2b } from '@noble/hashes/blake2b';
import { CoordinatorError } from '../errors.ts';
import type { PublicTranscriptEntry } from './public-transcript.ts';
import { DELTA1_AT } from './zkey-history.ts';

/** Sections every link copies from the one before, byte for byte (the link check compares them). */
const FIXED_SECTIONS: readonly number[] = [1, 3, 4, 5, 6, 7];

const SECTION_NAMES: Record<number, string> = {
  1: 'protocol',
  2: 'Groth16 header',
  3: 'IC',
  4: 'coefficients',
  5: 'A',
  6: 'B1',
  7: 'B2',
  8: 'L',
  9: 'H',
  10: 'contribution history',
};
const sectionName = (id: number): string => `section ${id} (${SECTION_NAMES[id] ?? 'unknown'})`;

/** The header's fields before δ1, in order, with where each ends: for naming the first that differs. */
const HEADER_FIELDS: Array<[string, number]> = [
  ['n8q', 4],
  ['q', 36],
  ['n8r', 40],
  ['r', 72],
  ['nVars', 76],
  ['nPublic', 80],
  ['domainSize', 84],
  ['α1', 148],
  ['β1', 212],
  ['β2', 340],
  ['γ2', DELTA1_AT],
];

const toHex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/** True when the entry records section hashes (format 2). */
export const hasSectionHashes = (
  entry: PublicTranscriptEntry,
): entry is PublicTranscriptEntry & {
  sectionHashes: Record<string, string>;
} => entry.sectionHashes !== undefined;

/**
 * Each section in `read` against `entry`'s section hashes. `what` names the key ("the final key
 * of register"), `whose` the entry ("its beacon entry"). Throws `receipt.served_bytes_mismatch`.
 */
export function checkServedSections(
  read: Map<number, Uint8Array>,
  entry: PublicTranscriptEntry & { sectionHashes: Record<string, string> },
  what: string,
  whose: string,
): void {
  for (const [id, bytes] of read) {
    if (toHex(blake2b(bytes, { dkLen: 64 })) !== entry.sectionHashes[String(id)]) {
      throw new CoordinatorError(
        'receipt.served_bytes_mismatch',
        `the bytes of ${sectionName(id)} of ${what} this check was served are not the ones the transcript's ` +
          `${whose} records (BLAKE2b-512 differs): the source serves another key than it recorded`,
      );
    }
  }
}

/**
 * The key's fixed sections as contribution 0's (transcript hashes), and its header's fields, α, β
 * and γ as contribution 0's header (bytes already checked against the transcript). Throws
 * `receipt.sections_changed` naming the first that differs.
 */
export function checkFixedSections(
  keyEntry: { sectionHashes: Record<string, string> },
  initEntry: { sectionHashes: Record<string, string> },
  keyHeader: Uint8Array,
  initHeader: Uint8Array,
  what: string,
): void {
  for (const id of FIXED_SECTIONS) {
    if (keyEntry.sectionHashes[String(id)] !== initEntry.sectionHashes[String(id)]) {
      throw new CoordinatorError(
        'receipt.sections_changed',
        `${sectionName(id)} of ${what} is not contribution 0's: the transcript records another hash for it ` +
          '(no contribution changes it; a changed IC, A, B or coefficient section can make the key accept ' +
          'forged proofs or leak from proofs)',
      );
    }
  }
  let start = 0;
  for (const [field, end] of HEADER_FIELDS) {
    const differs = keyHeader.subarray(start, end).some((byte, i) => byte !== initHeader[start + i]);
    if (differs) {
      throw new CoordinatorError(
        'receipt.sections_changed',
        `${field} in the header of ${what} is not contribution 0's (only δ changes from one contribution to the next)`,
      );
    }
    start = end;
  }
}
