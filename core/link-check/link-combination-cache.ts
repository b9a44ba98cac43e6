/**
 * The cache of verified files' random combinations of L and H under the coordinator's circuit
 * keys (link-challenge.ts): state/link-cache/FILEHASH.bin, one small file per verified candidate,
 * authenticated with the circuit key's MAC subkey, so that an entry is only ever used for the file
 * hash and circuit it was written for. A cached combination is derived from the secret scalars and
 * stays as private as they are (mode 0600, never in an error message or a log). Each entry also
 * carries the digests of where the file's L and H hold the point at infinity: the next candidate
 * must have exactly the same pattern (verify-link-from-head.ts says why).
 *
 * Entries of an earlier version (1: no identity digests, MAC under the circuit key itself) are
 * read as absent: the verifier then computes the head's combination again (two MSMs instead of
 * one) and writes a new entry, so an upgrade costs one slower verification per circuit, never an
 * error or a different verdict.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { linkCacheMacKey } from './link-challenge.ts';

export const LINK_CACHE_DIR = 'link-cache';
const G1_BYTES = 64;
const DIGEST_BYTES = 32;
const MAC_BYTES = 32;
const CACHE_VERSION = 2;
const CACHE_ENTRY_BYTES = 1 + 2 * G1_BYTES + 2 * DIGEST_BYTES + MAC_BYTES;
/** File hashes as the transcript records them (hex); anything else never names a cache file. */
const FILE_HASH = /^[0-9a-f]{32,128}$/;

/**
 * Σ r_i·P_i over a file's L and over its H, each a G1 point as 64 bytes (ffjavascript's affine LEM),
 * and the SHA-256 digests of where each section holds the point at infinity (identityPattern).
 */
export interface LinkCombination {
  l: Uint8Array;
  h: Uint8Array;
  lIdentities: Uint8Array;
  hIdentities: Uint8Array;
}

function entryMac(circuitKey: Uint8Array, fileHash: string, combination: LinkCombination): Buffer {
  return createHmac('sha256', linkCacheMacKey(circuitKey))
    .update(`link combination v${CACHE_VERSION}\0${fileHash}\0`)
    .update(combination.l)
    .update(combination.h)
    .update(combination.lIdentities)
    .update(combination.hIdentities)
    .digest();
}

function cachePath(stateDir: string, fileHash: string): string {
  return path.join(stateDir, LINK_CACHE_DIR, `${fileHash}.bin`);
}

/**
 * The cached combination of the file with this hash under this circuit key, or undefined when
 * there is none, it is of an earlier version, or it does not authenticate (another circuit's,
 * another seed's, damaged): the caller then computes it again, so the cache can only save work,
 * never change a verdict.
 */
export async function readCachedCombination(
  stateDir: string,
  circuitKey: Uint8Array,
  fileHash: string,
): Promise<LinkCombination | undefined> {
  if (!FILE_HASH.test(fileHash)) return undefined;
  const bytes = await readFile(cachePath(stateDir, fileHash)).catch(() => undefined);
  if (!bytes || bytes.length !== CACHE_ENTRY_BYTES || bytes[0] !== CACHE_VERSION) return undefined;
  let at = 1;
  const take = (n: number): Uint8Array => new Uint8Array(bytes.subarray(at, (at += n)));
  const combination = {
    l: take(G1_BYTES),
    h: take(G1_BYTES),
    lIdentities: take(DIGEST_BYTES),
    hIdentities: take(DIGEST_BYTES),
  };
  const mac = bytes.subarray(at);
  return timingSafeEqual(mac, entryMac(circuitKey, fileHash, combination)) ? combination : undefined;
}

/** Records a verified file's combination (crash-safe: temporary file and rename, mode 0600). */
export async function writeCachedCombination(
  stateDir: string,
  circuitKey: Uint8Array,
  fileHash: string,
  combination: LinkCombination,
): Promise<void> {
  if (!FILE_HASH.test(fileHash)) throw new Error('a link combination can only be cached under a file hash');
  if (combination.l.length !== G1_BYTES || combination.h.length !== G1_BYTES)
    throw new Error('a link combination is two G1 points');
  if (combination.lIdentities.length !== DIGEST_BYTES || combination.hIdentities.length !== DIGEST_BYTES) {
    throw new Error('a link combination carries two identity digests');
  }
  const entry = Buffer.concat([
    Buffer.from([CACHE_VERSION]),
    combination.l,
    combination.h,
    combination.lIdentities,
    combination.hIdentities,
    entryMac(circuitKey, fileHash, combination),
  ]);
  const target = cachePath(stateDir, fileHash);
  await writeFileAtomic(target, entry, { mode: 0o600, directoryMode: 0o700 });
}
