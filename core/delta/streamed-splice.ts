/**
 * The splice of a contribution delta (skeleton-zkey.ts) made while the delta is still arriving:
 * each byte is taken once, in order, as the upload lands, and the full key is written and hashed
 * as it goes. When the last byte is in, the key is already on disk, flushed but for the last
 * stretch, and its BLAKE2b-512 is known: the coordinator's share after the last byte loses the
 * splice and the hash (server/files/delta-intake.ts).
 *
 * The head's sections 3 to 7 (most of the key's bytes) are copied once all of L is in, when H's
 * header arrives: their place in the key is kept, L is written after it, and the hash catches up,
 * taking the copied bytes as they are copied and reading back the rest it skipped (L, the sections'
 * headers). Copying them at section 3's header instead would let anyone holding a turn make the
 * coordinator write a whole key for every kilobyte uploaded (a new upload replaces the last); this
 * way each copy costs the uploader L first, and H (longer than L in every key) still arrives while
 * the copy runs.
 *
 * The delta is a `zkey-delta-v2` (delta-format.ts): its new record (section 10) arrives before L
 * and H. The record is held in memory (the key lists it last) and handed to `checkRecord` once it
 * is in, which the splice awaits before it takes a byte of L: a delta whose record is refused
 * costs no point summed and no head section copied. The points of L and H are then handed to a
 * sink in chunks as they pass, for the link check's sums.
 *
 * Only a delta laid out as the head implies (the head's version and section ids in v2's order,
 * the fixed sections empty, δ, L and H at the head's sizes, a history longer than the head's by at
 * most a record) is spliced here. A layout that breaks one of spliceSkeleton's rules is refused as
 * soon as the section header that breaks it is in, with that rule's `delta.malformed` (the whole
 * check would refuse it the same way, once every byte had been received and stored); a history
 * whose size the head does not imply is `NotStreamable`, and the caller checks the finished upload
 * whole (checkSkeletonAgainstHead tells a stale delta from a malformed one by its count). The
 * byte rules on sections 1 and 10 are checked on the finished delta by checkSkeletonAgainstHead
 * either way, so both paths take and refuse alike, and write the same bytes (the output is
 * writeSections's, section for section, in ascending order).
 */
import { open, rm, type FileHandle } from 'node:fs/promises';
import { ZkeyHasher, type SectionHashes } from '../zkey/zkey-hashes.ts';
import { readExactlyInto } from '../binfile/read-exactly.ts';
import { readSectionTable, type SectionTable } from '../binfile/section-table.ts';
import { fileHead, FIXED_SECTIONS, malformed, sectionHead, STREAMED_SECTIONS } from './skeleton-zkey.ts';
import { NEXT_RECORD_MAX_BYTES } from '../zkey/key-table-check.ts';
import { DELTA_FORMAT, deltaSectionOrder } from './delta-format.ts';

/** The delta is not laid out as the head implies: splice it whole once it is in. */
export class NotStreamable extends Error {
  constructor(why: string) {
    super(`the delta cannot be spliced as it arrives: ${why}`);
    this.name = 'NotStreamable';
  }
}

/** Receives the points of L (8) and H (9) in order, `first` the index of the chunk's first point. */
export type PointSink = (section: number, first: number, points: Uint8Array) => void;

/** Checks the delta's header (section 2) and history (section 10) before any point; throws its refusal. */
export type RecordCheck = (header: Uint8Array, history: Uint8Array) => Promise<void>;

/** Points handed to the sink at once: 2 MiB, one upload chunk of the streaming clients. */
const SPLICE_POINT_CHUNK = 1 << 15;
const G1_BYTES = 64;
const HEADER_BYTES = 12;
const COPY_BYTES = 4 << 20;
const HEADER_SECTION = 2;
const SECTION_10 = 10;
const H_SECTION = 9;
const ZKEY_MAGIC = 'zkey';

type Parse =
  | { at: 'header'; bytes: Buffer; filled: number; sectionIndex: number }
  | { at: 'body'; id: number; left: number; sectionIndex: number; point: number }
  | { at: 'done' };

/** A fixed section's body, left to copy from the head: where it goes in the key, where it is in the head. */
interface PendingCopy {
  at: number;
  from: number;
  size: number;
}

export class StreamedSplice {
  /** The key's hash and its sections' (the transcript records both), taken as the key is written. */
  private readonly hash = new ZkeyHasher();
  private sections: SectionHashes | undefined;
  /** The delta's section ids, in the order they arrive (v2: L and H last). */
  private readonly ids: number[];
  /** The delta's section 2, kept for the record check (a few hundred bytes). */
  private deltaHeader: Uint8Array | undefined;
  /** The delta's section 10 and how much of it is in: written after H, where the key has it. */
  private record: { bytes: Uint8Array; filled: number } | undefined;
  /** Where the next byte of the key goes. */
  private position = 0;
  /** The key's bytes hashed so far: all of them before this point. */
  private hashedTo = 0;
  private pendingCopies: PendingCopy[] = [];
  private parse: Parse = { at: 'header', bytes: Buffer.alloc(HEADER_BYTES), filled: 0, sectionIndex: -1 };
  /** The chunk of L or H points being filled for the sink. */
  private chunk: Uint8Array | undefined;
  private chunkFilled = 0;
  /** The delta's bytes its file head and the section headers seen so far account for. */
  private declaredBytes = HEADER_BYTES;

  private constructor(
    private readonly head: FileHandle,
    private readonly headTable: SectionTable,
    private readonly out: FileHandle,
    readonly outPath: string,
    private readonly sink: PointSink,
    private readonly checkRecord: RecordCheck | undefined,
    private readonly uploadLength: number | undefined,
  ) {
    this.ids = deltaSectionOrder(DELTA_FORMAT, headTable.sections.keys());
  }

  /**
   * Starts a splice onto the (verified) head at `headPath`, writing the key to `outPath`; the
   * record is handed to `checkRecord` before any point is taken. `uploadLength`, the upload's
   * declared length when there is one: a delta whose sections do not add up to it is refused as
   * soon as its history's header tells its last unknown size (before any point).
   */
  static async open(
    headPath: string,
    outPath: string,
    sink: PointSink,
    checkRecord?: RecordCheck,
    uploadLength?: number,
  ): Promise<StreamedSplice> {
    const head = await open(headPath, 'r');
    try {
      const table = await readSectionTable(head, (await head.stat()).size, ZKEY_MAGIC);
      const out = await open(outPath, 'wx+', 0o644);
      return new StreamedSplice(head, table, out, outPath, sink, checkRecord, uploadLength);
    } catch (error) {
      await head.close();
      throw error;
    }
  }

  /** True once the last section's last byte has been taken. */
  get complete(): boolean {
    return this.parse.at === 'done';
  }

  /**
   * Takes the delta's next bytes (any split); throws the delta's refusal (`delta.malformed`) on a
   * layout that breaks a rule, NotStreamable on a history whose size the head does not imply.
   */
  async push(bytes: Uint8Array): Promise<void> {
    let at = 0;
    while (at < bytes.length) {
      const parse = this.parse;
      if (parse.at === 'done') throw malformed('bytes after the last section');
      if (parse.at === 'header') {
        const take = Math.min(HEADER_BYTES - parse.filled, bytes.length - at);
        parse.bytes.set(bytes.subarray(at, at + take), parse.filled);
        parse.filled += take;
        at += take;
        if (parse.filled === HEADER_BYTES) await this.header(parse.bytes, parse.sectionIndex);
        continue;
      }
      const take = Math.min(parse.left, bytes.length - at);
      const piece = bytes.subarray(at, at + take);
      if (parse.id === SECTION_10) this.keepRecord(piece);
      else await this.write(piece);
      if (parse.id === HEADER_SECTION) this.deltaHeader = concatBytes(this.deltaHeader, piece);
      if (STREAMED_SECTIONS.includes(parse.id)) this.points(parse, piece);
      parse.left -= take;
      at += take;
      if (parse.left === 0) await this.sectionEnded(parse.id, parse.sectionIndex);
    }
  }

  /** Flushes and closes the key once the delta is complete; resolves with its file hash (hex). */
  async finish(): Promise<string> {
    if (!this.complete) throw new NotStreamable('the delta ended before its last section');
    await this.copyFixedSections();
    await this.out.sync();
    await this.close();
    const { fileHash, sectionHashes } = this.hash.digest();
    this.sections = sectionHashes;
    return fileHash;
  }

  /** The key's section hashes, once `finish` has resolved. */
  get sectionHashes(): SectionHashes | undefined {
    return this.sections;
  }

  /** Stops and deletes what was written. */
  async abort(): Promise<void> {
    await this.close().catch(() => undefined);
    await rm(this.outPath, { force: true });
  }

  private closed = false;
  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.head.close(), this.out.close()]);
  }

  private async header(bytes: Buffer, sectionIndex: number): Promise<void> {
    if (sectionIndex < 0) {
      if (bytes.toString('latin1', 0, 4) !== ZKEY_MAGIC) throw malformed('it does not start with "zkey"');
      const [version, count] = [bytes.readUInt32LE(4), bytes.readUInt32LE(8)];
      if (version !== this.headTable.version) throw malformed('the file version differs from the head’s');
      if (count !== this.ids.length) throw malformed(`it declares ${count} sections, the head has ${this.ids.length}`);
      await this.write(fileHead(version, count));
      this.nextSection(sectionIndex);
      return;
    }
    const id = bytes.readUInt32LE(0);
    const size = Number(bytes.readBigUInt64LE(4));
    if (id !== this.ids[sectionIndex])
      throw malformed(`its sections are not the head’s, in the order of ${DELTA_FORMAT}`);
    const headSection = this.headTable.sections.get(id)!;
    if (FIXED_SECTIONS.has(id)) {
      if (size !== 0) throw malformed(`section ${id} must be empty`);
      this.declaredBytes += HEADER_BYTES;
      await this.write(sectionHead(id, headSection.size));
      // Its place is kept; the body is copied once L is in (see the module comment).
      this.pendingCopies.push({ at: this.position, from: headSection.offset, size: headSection.size });
      this.position += headSection.size;
      this.nextSection(sectionIndex);
      return;
    }
    if (id !== SECTION_10 && size !== headSection.size) throw malformed(`section ${id} is not the head’s size`);
    if (id === SECTION_10 && (size <= headSection.size || size > headSection.size + NEXT_RECORD_MAX_BYTES))
      throw new NotStreamable('its history is not of the size one more record implies');
    this.declaredBytes += HEADER_BYTES + size;
    if (id === SECTION_10) this.checkUploadLength(sectionIndex);
    if (id === H_SECTION) await this.copyFixedSections();
    // The key lists the history after H: it is written there (sectionEnded), its bytes kept till then.
    if (id === SECTION_10) this.record = { bytes: new Uint8Array(size), filled: 0 };
    else await this.write(bytes);
    this.parse = { at: 'body', id, left: size, sectionIndex, point: 0 };
    if (size === 0) await this.sectionEnded(id, sectionIndex);
  }

  /**
   * Once the history's size is known, every size is (L and H follow, at the head's): a delta that
   * does not fill its upload exactly would only be found short or long after all its points.
   */
  private checkUploadLength(sectionIndex: number): void {
    if (this.uploadLength === undefined) return;
    let total = this.declaredBytes;
    for (const id of this.ids.slice(sectionIndex + 1)) total += HEADER_BYTES + this.headTable.sections.get(id)!.size;
    if (total !== this.uploadLength)
      throw malformed(`its sections add up to ${total} bytes, the upload declares ${this.uploadLength}`);
  }

  private keepRecord(piece: Uint8Array): void {
    const record = this.record!;
    record.bytes.set(piece, record.filled);
    record.filled += piece.length;
  }

  /** A section's last byte is in: the record is checked before L; after H, the record is written. */
  private async sectionEnded(id: number, sectionIndex: number): Promise<void> {
    if (id === SECTION_10) await this.checkRecord?.(this.deltaHeader ?? new Uint8Array(0), this.record!.bytes);
    if (id === H_SECTION) {
      const record = this.record;
      if (!record) throw new NotStreamable('its history does not come before L and H');
      await this.write(sectionHead(SECTION_10, record.bytes.length));
      await this.write(record.bytes);
    }
    this.nextSection(sectionIndex);
  }

  private nextSection(sectionIndex: number): void {
    this.parse =
      sectionIndex + 1 === this.ids.length
        ? { at: 'done' }
        : { at: 'header', bytes: Buffer.alloc(HEADER_BYTES), filled: 0, sectionIndex: sectionIndex + 1 };
  }

  /** Feeds a piece of L or H to the chunk being filled; hands every full chunk (and the last) to the sink. */
  private points(parse: Extract<Parse, { at: 'body' }>, piece: Uint8Array): void {
    let at = 0;
    while (at < piece.length) {
      if (!this.chunk) {
        const pointsLeft = Math.ceil((parse.left - at) / G1_BYTES);
        this.chunk = new Uint8Array(Math.min(SPLICE_POINT_CHUNK, pointsLeft) * G1_BYTES);
        this.chunkFilled = 0;
      }
      const take = Math.min(this.chunk.length - this.chunkFilled, piece.length - at);
      this.chunk.set(piece.subarray(at, at + take), this.chunkFilled);
      this.chunkFilled += take;
      at += take;
      if (this.chunkFilled === this.chunk.length) {
        this.sink(parse.id, parse.point, this.chunk);
        parse.point += this.chunk.length / G1_BYTES;
        this.chunk = undefined;
      }
    }
  }

  /**
   * Copies the fixed sections' bodies from the head into the places kept for them, hashes what
   * was skipped, and flushes the bulk of the key to disk now, while H still arrives, rather than
   * after the last byte (commitFile flushes whatever is left).
   */
  private async copyFixedSections(): Promise<void> {
    if (this.pendingCopies.length === 0) return;
    const buffer = Buffer.alloc(COPY_BYTES);
    for (const { at, from, size } of this.pendingCopies.splice(0)) {
      // The hash stops at the first place kept: what lies between two (a section's header) is read
      // back, and the copied bytes are hashed as they pass rather than read back after.
      await this.hashWrittenUpTo(at, buffer);
      for (let done = 0; done < size;) {
        const length = Math.min(buffer.length, size - done);
        await readExactlyInto(this.head, buffer.subarray(0, length), from + done);
        await this.writeAt(buffer.subarray(0, length), at + done);
        this.hash.update(buffer.subarray(0, length));
        this.hashedTo += length;
        done += length;
      }
    }
    await this.hashWrittenUpTo(this.position, buffer);
    await this.out.datasync();
  }

  /** Hashes the key's bytes from where the hash stands to `end`, reading them back from the key. */
  private async hashWrittenUpTo(end: number, buffer: Buffer): Promise<void> {
    while (this.hashedTo < end) {
      const length = Math.min(buffer.length, end - this.hashedTo);
      await readExactlyInto(this.out, buffer.subarray(0, length), this.hashedTo);
      this.hash.update(buffer.subarray(0, length));
      this.hashedTo += length;
    }
  }

  /** Appends to the key, hashing on the way when everything before is hashed. */
  private async write(bytes: Uint8Array): Promise<void> {
    if (this.hashedTo === this.position) {
      this.hash.update(bytes);
      this.hashedTo += bytes.length;
    }
    await this.writeAt(bytes, this.position);
    this.position += bytes.length;
  }

  private async writeAt(bytes: Uint8Array, position: number): Promise<void> {
    if (bytes.length === 0) return;
    for (let done = 0; done < bytes.length;) {
      const { bytesWritten } = await this.out.write(bytes, done, bytes.length - done, position + done);
      done += bytesWritten;
    }
  }
}

function concatBytes(before: Uint8Array | undefined, piece: Uint8Array): Uint8Array {
  if (!before) return new Uint8Array(piece);
  const out = new Uint8Array(before.length + piece.length);
  out.set(before);
  out.set(piece, before.length);
  return out;
}
