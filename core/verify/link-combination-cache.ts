/**
 * The cache of verified files' random combinations of L and H under the coordinator's circuit
 * keys (link-challenge.ts): state/link-cache/FILEHASH.bin, one small file per verified candidate,
 * authenticated with the circuit key, so that an entry is only ever used for the file hash and
 * circuit it was written for. A cached combination is derived from the secret scalars and stays
 * as private as they are (mode 0600, never in an error message or a log).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write.ts';

export const LINK_CACHE_DIR = 'link-cache';
const G1_BYTES = 64;
const CACHE_VERSION = 1;
const CACHE_ENTRY_BYTES = 1 + 2 * G1_BYTES + 32;
/** File hashes as the transcript records them (hex); anything else never names a cache file. */
const FILE_HASH = /^[0-9a-f]{32,128}$/;

/** Σ r_i·P_i over a file's L and over its H, each a G1 point as 64 bytes (ffjavascript's affine LEM). */
export interface LinkCombination {
  l: Uint8Array;
  h: Uint8Array;
}

function entryMac(key: Uint8Array, fileHash: string, combination: LinkCombination): Buffer {
  return createHmac('sha256', key).update(`link combination v${CACHE_VERSION}\0${fileHash}\0`).update(combination.l).update(combination.h).digest();
}

function cachePath(stateDir: string, fileHash: string): string {
  return path.join(stateDir, LINK_CACHE_DIR, `${fileHash}.bin`);
}

/**
 * The cached combination of the file with this hash under this circuit key, or undefined when
 * there is none or it does not authenticate (another circuit's, another seed's, damaged): the
 * caller then computes it again, so the cache can only save work, never change a verdict.
 */
export async function readCachedCombination(stateDir: string, key: Uint8Array, fileHash: string): Promise<LinkCombination | undefined> {
  if (!FILE_HASH.test(fileHash)) return undefined;
  const bytes = await readFile(cachePath(stateDir, fileHash)).catch(() => undefined);
  if (!bytes || bytes.length !== CACHE_ENTRY_BYTES || bytes[0] !== CACHE_VERSION) return undefined;
  const combination = { l: new Uint8Array(bytes.subarray(1, 1 + G1_BYTES)), h: new Uint8Array(bytes.subarray(1 + G1_BYTES, 1 + 2 * G1_BYTES)) };
  const mac = bytes.subarray(1 + 2 * G1_BYTES);
  return timingSafeEqual(mac, entryMac(key, fileHash, combination)) ? combination : undefined;
}

/** Records a verified file's combination (crash-safe: temporary file and rename, mode 0600). */
export async function writeCachedCombination(stateDir: string, key: Uint8Array, fileHash: string, combination: LinkCombination): Promise<void> {
  if (!FILE_HASH.test(fileHash)) throw new Error('a link combination can only be cached under a file hash');
  if (combination.l.length !== G1_BYTES || combination.h.length !== G1_BYTES) throw new Error('a link combination is two G1 points');
  const entry = Buffer.concat([Buffer.from([CACHE_VERSION]), combination.l, combination.h, entryMac(key, fileHash, combination)]);
  const target = cachePath(stateDir, fileHash);
  await writeFileAtomic(target, entry, { mode: 0o600, directoryMode: 0o700 });
}
