/**
 * The ceremony's one identity: the hash of its transcript's last entry, which commits to every entry
 * before it, so to every key section by section and to the manifest. `ceremony audit` and `ceremony
 * verify-receipt` print it; given `--identifier HASH` they refuse any other transcript
 * (`transcript.identifier_mismatch`), so two readers who compared the hash out of band (before any
 * contract is deployed) know they checked one ceremony, not two views of it. Isomorphic.
 */
import { CoordinatorError } from '../errors.ts';

const HASH512 = /^[0-9a-f]{128}$/;

/** `--identifier`'s value: a BLAKE2b-512 in hex, any case; a usage error otherwise. */
export function parseIdentifier(value: string): string {
  const hash = value.trim().toLowerCase();
  if (!HASH512.test(hash)) {
    throw new CoordinatorError(
      'usage.invalid_arguments',
      '--identifier takes the ceremony identifier as `ceremony audit` and `ceremony verify-receipt` print it ' +
        "(128 hex digits: the hash of the transcript's last entry)",
    );
  }
  return hash;
}

/**
 * Refuses a transcript whose last entry's hash is not `expected` (already parsed by parseIdentifier).
 * `entries` are the transcript's, checked and in order; `source` names where it came from.
 */
export function checkCeremonyIdentifier(
  entries: ReadonlyArray<{ hash: string; seq: number }>,
  expected: string,
  source: string,
): void {
  const last = entries.at(-1);
  if (last?.hash === expected) return;
  const earlier = entries.findIndex((entry) => entry.hash === expected);
  const since = entries.length - 1 - earlier;
  const why =
    last === undefined
      ? 'it has no entry, so no identifier'
      : earlier >= 0
        ? `it is the hash of entry ${earlier} of ${entries.length}: the transcript has ${since} ` +
          `more since, and its identifier is now ${last.hash}`
        : `its identifier is ${last.hash} (the hash of entry ${last.seq}, its last), and no entry has the hash given`;
  throw new CoordinatorError(
    'transcript.identifier_mismatch',
    `${source} is not the ceremony whose identifier you gave (--identifier ${expected}): ${why}`,
  );
}
