/**
 * The entropy of a contribution made by a terminal client: 64 fresh bytes from the OS for every
 * contribution, optionally mixed with text the contributor typed (for those who trust their own
 * keystrokes more than the machine). snarkjs hashes the string it is given (BLAKE2b) together
 * with its own crypto.randomBytes, so the secret is at least as random as the OS makes it,
 * whatever was typed.
 *
 * The typed text is reduced to a digest as soon as it is read and only the digest is kept, for
 * the length of the run; neither is ever printed or written anywhere.
 */
import { createHash, randomBytes } from 'node:crypto';

/** A one-way digest of the typed text: what is kept in memory instead of the text. */
export function digestTypedEntropy(text: string): Buffer {
  return createHash('sha512').update('ceremony typed entropy\0').update(text, 'utf8').digest();
}

/**
 * The entropy string for one contribution: OS randomness, then the typed text's digest if any.
 * Fresh on every call: never reuse it for a second contribution.
 */
export function contributionEntropy(typedDigest?: Uint8Array): string {
  const random = randomBytes(64);
  const entropy = random.toString('hex') + (typedDigest ? Buffer.from(typedDigest).toString('hex') : '');
  random.fill(0);
  return entropy;
}
