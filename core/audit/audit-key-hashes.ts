/**
 * A key's hashes for the audit (the whole file's BLAKE2b-512 and each section's, what a format-2
 * transcript entry records) on two threads: the whole-file hash on a worker thread, the sections'
 * on this one, each reading the file itself (the second read comes from the page cache). Hashing
 * is the audit's one long single-threaded phase (two BLAKE2b passes over every key: about 7 s a
 * 2.7 GB key on one core here), and nothing else runs meanwhile, so the second core halves it.
 * A key below HASH_THREAD_MIN_BYTES is hashed in one read on this thread: a thread's start would
 * cost more. The result is exactly hashZkeyFile's (core/zkey/zkey-hashes.ts), read errors included
 * (the error of this thread's read, with its errno code, is the one thrown).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { HASH_THREAD_MIN_BYTES, hashFileOnThread } from '../crypto/file-hash.ts';
import { hashZkeyFile, ZkeyHasher, type ZkeyHashes } from '../zkey/zkey-hashes.ts';

/** The sections' hashes on this thread (undefined for bytes that are not a well-formed sectioned file). */
async function hashSections(filePath: string): Promise<ZkeyHashes['sectionHashes']> {
  const hasher = new ZkeyHasher({ wholeFile: false });
  for await (const chunk of createReadStream(filePath, { highWaterMark: 1 << 20 })) hasher.update(chunk as Buffer);
  return hasher.sectionDigests();
}

/** hashZkeyFile's result, computed on two threads. */
export async function hashKeyOnTwoThreads(filePath: string): Promise<ZkeyHashes> {
  if ((await stat(filePath)).size < HASH_THREAD_MIN_BYTES) return hashZkeyFile(filePath);
  const [sections, whole] = await Promise.allSettled([hashSections(filePath), hashFileOnThread(filePath)]);
  if (sections.status === 'rejected') throw sections.reason;
  if (whole.status === 'rejected') throw whole.reason;
  return sections.value ? { fileHash: whole.value, sectionHashes: sections.value } : { fileHash: whole.value };
}
