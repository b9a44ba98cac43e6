/**
 * The hash chain of the ceremony's public logs (the transcript, the queue log): each entry's hash
 * is BLAKE2b-512 of its canonical JSON without the `hash` field, each entry names the hash of the
 * one before (`prevHash`) and its place (`seq`, from 0), and the first names a genesis hash bound
 * to the log's kind and the ceremony id, so no entry can be changed, dropped or reordered without
 * breaking every later hash, and no entry of one log passes for one of another. Isomorphic (no
 * `node:` imports): the coordinator, the audit and the browser compute exactly the same hashes.
 */
import { blake2b } from '@noble/hashes/blake2b';
import { canonicalJson } from './canonical-json.ts';

const toHex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/** BLAKE2b-512 of a text's UTF-8 bytes, hex. */
function blake2b512Hex(text: string): string {
  return toHex(blake2b(new TextEncoder().encode(text), { dkLen: 64 }));
}

/** The hash the first entry of the log `kind` ('transcript', 'queue-log') of a ceremony names as its predecessor. */
export function chainGenesisHash(kind: string, ceremonyId: string): string {
  return blake2b512Hex(`phase2-ceremony ${kind} genesis:${ceremonyId}`);
}

/** An entry's hash: over its canonical JSON, the `hash` field left out. */
export function chainEntryHash(entry: object): string {
  const { hash: _ignored, ...rest } = entry as { hash?: unknown };
  return blake2b512Hex(canonicalJson(rest));
}

/**
 * Why the entry at place `at` does not follow the entry before it, whose hash is `prevHash` (the
 * genesis for the first), in words, or undefined when it does: its seq is its place, its prevHash
 * the hash of the one before, its hash its contents'. One link at a time, for a log read as a stream.
 */
export function linkBreak(
  entry: { seq?: unknown; prevHash?: unknown; hash?: unknown },
  at: number,
  prevHash: string,
): string | undefined {
  if (entry.seq !== at) return `it is numbered ${String(entry.seq)}, expected ${at}`;
  if (entry.prevHash !== prevHash)
    return at === 0
      ? 'it does not start from the genesis of this ceremony'
      : 'it does not name the hash of the entry before it';
  if (entry.hash !== chainEntryHash(entry)) return 'its hash does not match its contents';
  return undefined;
}

/**
 * Where an entry breaks the chain that starts at `genesis` (entries in order, parsed from JSON),
 * in words, or undefined when every entry holds (linkBreak, entry by entry).
 */
export function chainBreak(
  entries: ReadonlyArray<{ seq?: unknown; prevHash?: unknown; hash?: unknown }>,
  genesis: string,
): { at: number; why: string } | undefined {
  let prevHash = genesis;
  for (const [at, entry] of entries.entries()) {
    const why = linkBreak(entry, at, prevHash);
    if (why !== undefined) return { at, why };
    prevHash = entry.hash as string;
  }
  return undefined;
}
