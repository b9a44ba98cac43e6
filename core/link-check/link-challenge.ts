/**
 * The coordinator's secret challenge for link verification: the seed file in the data folder's
 * private state/ (created once, mode 0600), the key each circuit derives from it, and the scalar
 * stream that key defines. docs/link-check.md says why fixed secret scalars are sound; this module
 * keeps them secret (link-combination-cache.ts keeps what is computed with them).
 *
 * A circuit key is never used directly: it is the root of two subkeys, one the ChaCha20 key of the
 * scalar stream (linkScalarKey), one the HMAC key of the cache entries (linkCacheMacKey), derived
 * with HMAC-SHA-256 under distinct labels, so that no output of one primitive is ever computed
 * under the other's key (before, one key served both).
 *
 * Nothing here ever puts the seed or a key into an error message or a log.
 */
import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { makeDirectory, writeFileAtomic } from '../fs/atomic-write.ts';

/** The private state folder of a data folder (also home of the SQLite file and the receipt key). */
export function stateDirFor(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'state');
}

export const CHALLENGE_SEED_FILE = 'link-challenge.seed';
const SEED_BYTES = 32;

class ChallengeStateError extends Error {}

/**
 * Creates the seed if there is none, in a way that is safe when several verifiers start at once on
 * the same folder: each writes its own temporary file and links it to the final name, which fails
 * if another got there first (writeFileAtomic's keepExisting); everyone then reads the one that won.
 */
async function createSeedOnce(stateDir: string, target: string): Promise<void> {
  await makeDirectory(stateDir, 0o700);
  await writeFileAtomic(target, randomBytes(SEED_BYTES), { mode: 0o600, keepExisting: true });
}

async function loadSeed(stateDir: string): Promise<Buffer> {
  const target = path.join(stateDir, CHALLENGE_SEED_FILE);
  let seed = await readFile(target).catch((error: NodeJS.ErrnoException) =>
    error.code === 'ENOENT' ? undefined : Promise.reject(error),
  );
  if (!seed) {
    await createSeedOnce(stateDir, target);
    seed = await readFile(target);
  }
  if (seed.length !== SEED_BYTES)
    throw new ChallengeStateError('the link challenge seed in the state folder is corrupt');
  return seed;
}

const seeds = new Map<string, Promise<Buffer>>();

/** The data folder's challenge seed, created on first use and then held in memory. */
export function linkChallengeSeed(stateDir: string): Promise<Buffer> {
  const key = path.resolve(stateDir);
  let seed = seeds.get(key);
  if (!seed) {
    seed = loadSeed(key);
    seeds.set(key, seed);
    // A failed load (a disk error) is not remembered: the next verification tries again.
    seed.catch(() => seeds.delete(key));
  }
  return seed;
}

/** The circuit's own secret: circuits never share scalars, and one key never names another circuit. */
export function circuitChallengeKey(seed: Uint8Array, circuit: string): Buffer {
  return createHmac('sha256', seed).update('ceremony link challenge v1\0').update(circuit).digest();
}

/** The ChaCha20 key of a circuit key's scalar stream. */
export function linkScalarKey(circuitKey: Uint8Array): Buffer {
  return createHmac('sha256', circuitKey).update('ceremony link challenge scalars v2').digest();
}

/** The HMAC key of a circuit key's cache entries (link-combination-cache.ts). */
export function linkCacheMacKey(circuitKey: Uint8Array): Buffer {
  return createHmac('sha256', circuitKey).update('ceremony link combination mac v2').digest();
}

/**
 * `count` scalars of `bytesPerScalar` bytes each for the points `first`… of a section: the ChaCha20
 * keystream under the circuit key's scalar subkey (linkScalarKey), with the section id as nonce and
 * the position as block counter, so a chunk gets the same scalars whether the section is streamed
 * or read at once.
 */
export function challengeScalars(
  circuitKey: Uint8Array,
  section: number,
  first: number,
  count: number,
  bytesPerScalar: number,
): Uint8Array {
  const start = first * bytesPerScalar;
  const block = Math.floor(start / 64);
  const skip = start - block * 64;
  const iv = Buffer.alloc(16);
  iv.writeUInt32LE(block, 0);
  iv.writeUInt32LE(section, 4);
  const cipher = createCipheriv('chacha20', linkScalarKey(circuitKey), iv);
  const stream = cipher.update(Buffer.alloc(skip + count * bytesPerScalar));
  // A plain Uint8Array with its own buffer: ffjavascript posts slices of it to its workers.
  return new Uint8Array(stream.subarray(skip));
}
