/**
 * Where a section of G1 points holds the point at infinity (all-zero coordinates), and the digest
 * that names that pattern: SHA-256 over the section id and point count (u32 little-endian each),
 * then the indices of those points (u32 little-endian), in order. The digest depends on the points
 * alone, not on how they were read, so a section read from a file in chunks and one summed chunk
 * by chunk as it arrives over the network (an upload, server/files/delta-intake.ts) get the same
 * one. docs/link-check.md says why the pattern is checked before any sum.
 */
import { createHash, type Hash } from 'node:crypto';

const G1_BYTES = 64;
const WORDS_PER_POINT = G1_BYTES / 4;

/** The indices (from `first`) of the points at infinity among the whole G1 points of `bytes`. */
export function identityIndices(bytes: Uint8Array, first: number): number[] {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 4));
  const count = Math.floor(bytes.byteLength / G1_BYTES);
  const found: number[] = [];
  for (let i = 0; i < count; i++) {
    let w = i * WORDS_PER_POINT;
    const end = w + WORDS_PER_POINT;
    while (w < end && words[w] === 0) w++;
    if (w === end) found.push(first + i);
  }
  return found;
}

/** The pattern digest of one section, fed with its points in order. */
export class IdentityPatternDigest {
  private readonly hash: Hash = createHash('sha256');

  constructor(section: number, pointCount: number) {
    const header = Buffer.alloc(8);
    header.writeUInt32LE(section, 0);
    header.writeUInt32LE(pointCount, 4);
    this.hash.update(header);
  }

  /** Adds the indices of points at infinity found in the next points of the section. */
  add(indices: number[]): void {
    if (indices.length === 0) return;
    const bytes = Buffer.alloc(indices.length * 4);
    indices.forEach((index, i) => bytes.writeUInt32LE(index, i * 4));
    this.hash.update(bytes);
  }

  digest(): Uint8Array {
    return new Uint8Array(this.hash.digest());
  }
}
