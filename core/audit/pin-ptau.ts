/**
 * The auditor's pin on the powers of tau. Everything the audit proves about contribution 0 is
 * relative to the ptau: a coordinator that made its own (so knows τ, α, β) could publish it with
 * keys that pass every other check and forge proofs at will. So the audit trusts a ptau only when
 * the auditor can name it: its BLAKE2b-512 (as `b2sum` prints it) is either one of the known public
 * files shipped with the project (core/ptau/known-ptau-files.json: the Hermez ceremony's final
 * files, with their published hashes), the one the auditor gives with `--ptau-hash`, or the one the
 * auditor's own ceremony.json pins (`ptauHash`, their checkout's, as trusted as the list of known
 * files beside it). What the coordinator wrote (the folder's ptau, ptau-source.json, the
 * publication's ceremony.json) is never a pin.
 *
 * There is no way to pass an audit with an unpinned ptau, not even on a test network: the
 * development ptau the tests and `npm start` use is made deterministically from a public secret,
 * so whoever wants to audit such a ceremony can pin it by the hash of the file they made
 * themselves (the tests and the demo do), and an audit that passes is then still marked insecure
 * (the file carries the development marker). A switch that accepted any ptau would only make
 * "audit passed" mean nothing.
 */
import { CoordinatorError } from '../errors.ts';
import { knownPtauFile, type KnownPtauFile } from '../ptau/known-ptau-files.ts';

const HASH = /^[0-9a-f]{128}$/;

/** How the ptau was pinned: by the shipped list of public files, by the auditor, or both. */
export interface PtauPin {
  blake2b512: string;
  /** The known public file it is, if any. */
  known?: KnownPtauFile;
  /** True when the auditor gave this hash with --ptau-hash. */
  byAuditor: boolean;
  /** True when the auditor's own ceremony.json pins this hash (`ptauHash`). */
  byAuditorConfig: boolean;
}

/** The auditor's pins on the ptau: --ptau-hash, and their ceremony.json's `ptauHash`. */
export interface PtauPins {
  option?: string;
  config?: string;
}

/**
 * A BLAKE2b-512 as the auditor typed it: 128 hex digits, any case, or `b2sum`'s whole line
 * (`HASH  FILE`). A malformed value is a usage error.
 */
export function parsePtauHash(value: string): string {
  const hash = value.trim().split(/\s+/)[0]!.toLowerCase();
  if (!HASH.test(hash)) {
    throw new CoordinatorError(
      'usage.invalid_arguments',
      `--ptau-hash must be a BLAKE2b-512 (128 hex digits, as \`b2sum FILE\` prints it), got ${JSON.stringify(value)}`,
    );
  }
  return hash;
}

/**
 * Checks the ptau whose BLAKE2b-512 is `blake2b512` (`name` is how messages call it) against each of
 * the auditor's `pins` given (--ptau-hash, their ceremony.json's ptauHash), else against the known
 * public files: `audit.ptau_hash_mismatch` or `audit.ptau_unpinned` (with the file's hash and how to
 * pin it) otherwise.
 */
export function checkPtauPin(blake2b512: string, name: string, pins: PtauPins = {}): PtauPin {
  const known = knownPtauFile(blake2b512);
  const given: Array<[string | undefined, string]> = [
    [pins.option, 'pinned with --ptau-hash'],
    [pins.config, 'your ceremony.json pins (ptauHash)'],
  ];
  for (const [pin, whose] of given) {
    if (pin !== undefined && blake2b512 !== pin) {
      throw new CoordinatorError(
        'audit.ptau_hash_mismatch',
        `the powers of tau ${name} is not the one ${whose}: its BLAKE2b-512 is ${blake2b512}, the pin ${pin}`,
      );
    }
  }
  const byAuditor = pins.option !== undefined;
  const byAuditorConfig = pins.config !== undefined;
  if (!known && !byAuditor && !byAuditorConfig) {
    throw new CoordinatorError(
      'audit.ptau_unpinned',
      `the powers of tau ${name} (BLAKE2b-512 ${blake2b512}) is not a known public ptau, ` +
        'and an audit cannot trust a ptau the coordinator chose (whoever made it may know its secret). ' +
        'If you know where this file comes from (a public ' +
        'ceremony you checked, or the development ptau of a test network you made yourself), pin it: ' +
        `ceremony audit DIR --ptau-hash ${blake2b512}`,
    );
  }
  return { blake2b512, byAuditor, byAuditorConfig, ...(known ? { known } : {}) };
}
