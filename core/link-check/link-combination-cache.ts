/**
 * The cache of verified files' random combinations of L and H under the coordinator's circuit
 * keys (link-challenge.ts): state/link-cache/FILEHASH.bin, one small file per verified candidate,
 * authenticated with the circuit key's MAC subkey, so that an entry is only ever used for the file
 * hash and circuit it was written for. A cached combination is derived from the secret scalars and
 * stays as private as they are (mode 0600, never in an error message or a log). Each entry also
 * carries the digests of where the file's L and H hold the point at infinity: the next candidate
 * must have exactly the same pattern (docs/link-check.md says why).
 *
 * Entries of an earlier version (1: no identity digests, MAC under the circuit key itself) are
 * read as absent: the verifier then computes the head's combination again (two MSMs instead of
 * one) and writes a new entry, so an upgrade costs one slower verification per circuit, never an
 * error or a different verdict.
 *
 * Also the sealing of a candidate's sums, made by the coordinator as it uploaded: no file here,
 * they are kept on its candidate row and carried in its verification request, authenticated with
 * the same MAC subkey under their own label.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFile, readdir, rm } from 'node:fs/promises';
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

/**
 * Caches what a verified link computed: the candidate's combination (the next link's head) and the
 * head's when it had to be computed. A cache that cannot be written only costs a later check its
 * second MSM, so a failed write is handed to `onError` and never rejects.
 */
export async function cacheLinkCombinations(
  stateDir: string,
  circuitKey: Uint8Array,
  link: { combination: LinkCombination; headCombination?: LinkCombination },
  fileHashes: { candidate: string; head?: string },
  onError: (error: NodeJS.ErrnoException) => void = () => {},
): Promise<void> {
  const entries: Array<[string, LinkCombination]> = [[fileHashes.candidate, link.combination]];
  if (link.headCombination && fileHashes.head) entries.push([fileHashes.head, link.headCombination]);
  for (const [fileHash, combination] of entries)
    await writeCachedCombination(stateDir, circuitKey, fileHash, combination).catch(onError);
}

/**
 * The coordinator's sums over a candidate's L and H, made while its upload arrived
 * (server/files/delta-intake.ts), before the verifier sees it: the kernel's partial sums (affine
 * points in the zkey layout, concatenated, unadded: the HTTP process never builds the curve) under
 * the circuit key's scalars, after every point was checked on the curve and every chunk's points
 * at infinity were found exactly where the head has them, and the pattern digests. The verifier
 * then adds the parts instead of reading and summing L and H again.
 */
export interface CandidateSums {
  l: Uint8Array[];
  h: Uint8Array[];
  lIdentities: Uint8Array;
  hIdentities: Uint8Array;
}

const SUMS_VERSION = 1;
/** A 2^20-point section in 2^15-point chunks on 64 threads is 2,048 points; far more is not an entry we wrote. */
const MAX_SUM_POINTS = 1 << 16;
const SUMS_HEADER_BYTES = 9;
/** The largest sealed sums openCandidateSums takes: a request carrying more is refused before it is decoded. */
export const MAX_SEALED_SUMS_BYTES = SUMS_HEADER_BYTES + 2 * MAX_SUM_POINTS * G1_BYTES + 2 * DIGEST_BYTES + MAC_BYTES;

function sumsMac(circuitKey: Uint8Array, fileHash: string, body: Uint8Array): Buffer {
  // Its own label: an entry of one kind never authenticates as the other.
  return createHmac('sha256', linkCacheMacKey(circuitKey))
    .update(`candidate sums v${SUMS_VERSION}\0${fileHash}\0`)
    .update(body)
    .digest();
}

function concat(parts: Uint8Array[]): Buffer {
  return Buffer.concat(parts.map((part) => Buffer.from(part.buffer, part.byteOffset, part.byteLength)));
}

/**
 * A candidate's sums as its candidate row keeps them and its verification request carries them,
 * bound to its file hash and circuit key by a MAC: a verifier then uses them only for the file and
 * circuit they were made for, whatever route the request took.
 */
export function sealCandidateSums(circuitKey: Uint8Array, fileHash: string, sums: CandidateSums): Buffer {
  if (!FILE_HASH.test(fileHash)) throw new Error('candidate sums can only be kept under a file hash');
  const l = concat(sums.l);
  const h = concat(sums.h);
  if (l.length % G1_BYTES !== 0 || h.length % G1_BYTES !== 0) throw new Error('partial sums are G1 points');
  if (l.length / G1_BYTES > MAX_SUM_POINTS || h.length / G1_BYTES > MAX_SUM_POINTS)
    throw new Error('more partial sums than a verifier takes');
  if (sums.lIdentities.length !== DIGEST_BYTES || sums.hIdentities.length !== DIGEST_BYTES)
    throw new Error('candidate sums carry two identity digests');
  const counts = Buffer.alloc(8);
  counts.writeUInt32LE(l.length / G1_BYTES, 0);
  counts.writeUInt32LE(h.length / G1_BYTES, 4);
  const body = Buffer.concat([Buffer.from([SUMS_VERSION]), counts, l, h, sums.lIdentities, sums.hIdentities]);
  return Buffer.concat([body, sumsMac(circuitKey, fileHash, body)]);
}

/**
 * The sums sealed for the candidate with this hash under this circuit key, or undefined when they
 * are malformed, too many, or do not authenticate: the verifier then reads and sums L and H itself.
 */
export function openCandidateSums(
  circuitKey: Uint8Array,
  fileHash: string,
  sealed: Uint8Array,
): CandidateSums | undefined {
  const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (!FILE_HASH.test(fileHash) || bytes.length > MAX_SEALED_SUMS_BYTES) return undefined;
  if (bytes.length < SUMS_HEADER_BYTES + 2 * DIGEST_BYTES + MAC_BYTES || bytes[0] !== SUMS_VERSION) return undefined;
  const lCount = bytes.readUInt32LE(1);
  const hCount = bytes.readUInt32LE(5);
  if (lCount > MAX_SUM_POINTS || hCount > MAX_SUM_POINTS) return undefined;
  const bodyBytes = SUMS_HEADER_BYTES + (lCount + hCount) * G1_BYTES + 2 * DIGEST_BYTES;
  if (bytes.length !== bodyBytes + MAC_BYTES) return undefined;
  const body = bytes.subarray(0, bodyBytes);
  if (!timingSafeEqual(bytes.subarray(bodyBytes), sumsMac(circuitKey, fileHash, body))) return undefined;
  let at = SUMS_HEADER_BYTES;
  const take = (n: number): Uint8Array => new Uint8Array(bytes.subarray(at, (at += n)));
  return {
    l: [take(lCount * G1_BYTES)],
    h: [take(hCount * G1_BYTES)],
    lIdentities: take(DIGEST_BYTES),
    hIdentities: take(DIGEST_BYTES),
  };
}

/**
 * Removes the sums files (FILEHASH.sums) a coordinator of an earlier version left beside the cache
 * for its verifiers: no version reads them now, and a verifier given no sums makes its own.
 */
export async function removeRetiredSumsFiles(stateDir: string): Promise<void> {
  const folder = path.join(stateDir, LINK_CACHE_DIR);
  const names = await readdir(folder).catch(() => []);
  await Promise.all(
    names.filter((name) => name.endsWith('.sums')).map((name) => rm(path.join(folder, name), { force: true })),
  );
}
