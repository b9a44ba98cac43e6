/**
 * Hashes of whole files, streamed through node:crypto (BLAKE2b-512, as snarkjs uses for its own
 * hashes, but native: about 30× faster than snarkjs's pure-JS blake2b on large zkeys).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

export const FILE_HASH_ALGORITHM = 'blake2b512';

export async function hashFile(filePath: string): Promise<string> {
  const hash = createHash(FILE_HASH_ALGORITHM);
  for await (const chunk of createReadStream(filePath, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}
