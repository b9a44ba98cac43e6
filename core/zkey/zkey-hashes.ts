/**
 * A zkey's BLAKE2b-512, whole and section by section, in one pass over its bytes. The transcript
 * commits to both (core/transcript/transcript.ts, format 2): the whole-file hash names the file,
 * and the section hashes let a reader who fetched only some sections by range (the receipt check)
 * check those bytes against the hash-chained transcript.
 *
 * A section's hash is BLAKE2b-512 of its body: the bytes after its 12-byte header (u32 id, u64
 * size), as core/binfile/section-table.ts lays them out. `ZkeyHasher` takes the file's bytes in
 * order, in pieces of any size, so a writer that already hashes what it writes (the streamed
 * splice) hashes sections at no extra read; `hashZkeyFile` streams a file through it. Native
 * BLAKE2b (node:crypto): Node only.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { FILE_HASH_ALGORITHM } from '../crypto/file-hash.ts';
import { HASH_WORK_ITEM, tallyWork } from '../runtime/work-tally.ts';
import { CoordinatorError } from '../errors.ts';

/** Section id (decimal, as a JSON key) → BLAKE2b-512 of the section's body, lower-case hex. */
export type SectionHashes = Record<string, string>;

export interface ZkeyHashes {
  fileHash: string;
  /** Absent when the bytes are not a well-formed sectioned file (the file hash still names them). */
  sectionHashes?: SectionHashes;
}

const FILE_HEAD_BYTES = 12;
const SECTION_HEAD_BYTES = 12;
/**
 * A zkey has ten sections. A file that declares more is no sectioned key to hash by section: it
 * gets its file hash only, so hashing never keeps a digest per section of a table of millions.
 */
export const MAX_HASHED_SECTIONS = 32;

type Parse =
  | { at: 'head'; bytes: Uint8Array; filled: number; sectionsLeft: number }
  | { at: 'body'; id: number; left: number; sectionsLeft: number; hash: Hash }
  | { at: 'done' }
  | { at: 'malformed' };

/** Hashes a zkey's bytes given in order: the whole file and each section's body. */
export class ZkeyHasher {
  private readonly file: Hash | undefined;
  private readonly sections = new Map<number, string>();
  private parse: Parse = { at: 'head', bytes: new Uint8Array(FILE_HEAD_BYTES), filled: 0, sectionsLeft: -1 };

  /** `wholeFile: false` hashes the sections only (a caller hashing the whole file on another thread). */
  constructor(options: { wholeFile?: boolean } = {}) {
    this.file = options.wholeFile === false ? undefined : createHash(FILE_HASH_ALGORITHM);
  }

  update(bytes: Uint8Array): this {
    this.file?.update(bytes);
    // The sections' hashes pass over (about) every byte once more.
    tallyWork(HASH_WORK_ITEM, this.file ? 2 * bytes.length : bytes.length);
    let at = 0;
    while (at < bytes.length) {
      const parse = this.parse;
      if (parse.at === 'done' || parse.at === 'malformed') {
        this.parse = { at: 'malformed' };
        return this;
      }
      if (parse.at === 'head') {
        const take = Math.min(parse.bytes.length - parse.filled, bytes.length - at);
        parse.bytes.set(bytes.subarray(at, at + take), parse.filled);
        parse.filled += take;
        at += take;
        if (parse.filled === parse.bytes.length) this.headDone(parse);
        continue;
      }
      const take = Math.min(parse.left, bytes.length - at);
      parse.hash.update(bytes.subarray(at, at + take));
      parse.left -= take;
      at += take;
      if (parse.left === 0) this.bodyDone(parse);
    }
    return this;
  }

  digest(): ZkeyHashes {
    if (!this.file) throw new Error('this hasher hashes the sections only');
    const fileHash = this.file.digest('hex');
    const sectionHashes = this.sectionDigests();
    return sectionHashes ? { fileHash, sectionHashes } : { fileHash };
  }

  /** The sections' hashes, or undefined when the bytes are not a well-formed sectioned file. */
  sectionDigests(): SectionHashes | undefined {
    if (this.parse.at !== 'done') return undefined;
    const sectionHashes: SectionHashes = {};
    for (const id of [...this.sections.keys()].sort((a, b) => a - b))
      sectionHashes[String(id)] = this.sections.get(id)!;
    return sectionHashes;
  }

  private headDone(parse: Extract<Parse, { at: 'head' }>): void {
    const view = new DataView(parse.bytes.buffer, parse.bytes.byteOffset, parse.bytes.byteLength);
    if (parse.sectionsLeft < 0) {
      // The file's head: 4 magic bytes, u32 version, u32 section count.
      const count = view.getUint32(8, true);
      if (count > MAX_HASHED_SECTIONS) {
        this.parse = { at: 'malformed' };
        return;
      }
      this.parse =
        count === 0
          ? { at: 'done' }
          : { at: 'head', bytes: new Uint8Array(SECTION_HEAD_BYTES), filled: 0, sectionsLeft: count };
      return;
    }
    const id = view.getUint32(0, true);
    const size = view.getUint32(4, true) + view.getUint32(8, true) * 2 ** 32;
    if (this.sections.has(id) || !Number.isSafeInteger(size)) {
      this.parse = { at: 'malformed' };
      return;
    }
    const body = {
      at: 'body',
      id,
      left: size,
      sectionsLeft: parse.sectionsLeft,
      hash: createHash(FILE_HASH_ALGORITHM),
    } as const;
    this.parse = body;
    if (size === 0) this.bodyDone(body);
  }

  private bodyDone(parse: Extract<Parse, { at: 'body' }>): void {
    this.sections.set(parse.id, parse.hash.digest('hex'));
    const left = parse.sectionsLeft - 1;
    this.parse =
      left === 0
        ? { at: 'done' }
        : { at: 'head', bytes: new Uint8Array(SECTION_HEAD_BYTES), filled: 0, sectionsLeft: left };
  }
}

/** The hashes a transcript entry naming a key records. */
export type KeyHashes = Required<ZkeyHashes>;

/** The file's hash and its sections' hashes, in one streamed read. */
export async function hashZkeyFile(filePath: string): Promise<ZkeyHashes> {
  const hasher = new ZkeyHasher();
  for await (const chunk of createReadStream(filePath, { highWaterMark: 1 << 20 })) hasher.update(chunk as Buffer);
  return hasher.digest();
}

/** `hashes` with their section hashes, or `zkey.malformed` naming `what` (a key that is no sectioned file). */
function requireSectionHashes(hashes: ZkeyHashes, what: string): KeyHashes {
  if (!hashes.sectionHashes)
    throw new CoordinatorError(
      'zkey.malformed',
      `${what} is not a well-formed sectioned file (its sections cannot be hashed)`,
    );
  return { fileHash: hashes.fileHash, sectionHashes: hashes.sectionHashes };
}

/** The hashes of a key about to be recorded in the transcript, in one read. */
export async function hashKeyFile(filePath: string, what: string): Promise<KeyHashes> {
  return requireSectionHashes(await hashZkeyFile(filePath), what);
}
