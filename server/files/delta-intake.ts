/**
 * A contribution delta taken in while it uploads, so that the coordinator's share of a turn after
 * the last byte is small (issue 21): as tus appends the upload's bytes to its file, the intake reads
 * them back in order (from the page cache) and
 *  - splices the full key as it goes, hashing it (core/delta/streamed-splice.ts);
 *  - sums L and H for the link check under the circuit's secret key, checking every point
 *    (core/link-check/streamed-candidate-sums.ts).
 * When the last byte arrives only the last chunk is left; the finished delta is checked against the
 * head as a whole-delta splice checks it, and the key renamed over the upload.
 *
 * The upload's file is the truth: the intake reads only bytes tus has written (it is told each time a
 * write ends, and tus only ever appends at its offset), so a dropped request and its resumption,
 * or a restart of the coordinator mid-upload (a new intake reads from byte 0), change nothing.
 * Whatever goes wrong in here (a layout the head does not imply, a read error, the kernel unable
 * to run) only turns the intake off: the upload is then spliced whole when it ends, and verified
 * in full, as before; refusals come from the same checks either way.
 */
import { open, stat, type FileHandle } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { FileStore } from '@tus/file-store';
import { commitFile, tempPathFor } from '../../core/fs/atomic-write.ts';
import { checkSkeletonAgainstHead } from '../../core/delta/skeleton-zkey.ts';
import { NotStreamable, StreamedSplice } from '../../core/delta/streamed-splice.ts';
import { StreamedCandidateSums } from '../../core/link-check/streamed-candidate-sums.ts';
import type { CandidateSums } from '../../core/link-check/link-combination-cache.ts';
import type { SectionHashes } from '../../core/zkey/zkey-hashes.ts';

/** Bytes read back from the upload at a time. */
const READ_BYTES = 4 << 20;

/** A tus FileStore that says, after each write to an upload's file (whole or cut short), how long the file is. */
export class FollowedFileStore extends FileStore {
  constructor(
    options: ConstructorParameters<typeof FileStore>[0],
    private readonly onWritten: (id: string, size: number) => void,
  ) {
    super(options);
  }

  override async write(readable: IncomingMessage | Readable, id: string, offset: number): Promise<number> {
    try {
      const end = await super.write(readable, id, offset);
      this.onWritten(id, end);
      return end;
    } catch (error) {
      // Cut short: what reached the file stays (tus resumes from the file's length).
      const size = await stat(path.join(this.directory, id)).then(
        (s) => s.size,
        () => undefined,
      );
      if (size !== undefined) this.onWritten(id, size);
      throw error;
    }
  }
}

/** The intake's result: the spliced key's hash, and the link check's sums when they ran to the end. */
export interface TakenDelta {
  fileHash: string;
  /** Its sections' hashes, taken in the same pass (the transcript records them). */
  sectionHashes?: SectionHashes;
  sums?: CandidateSums;
  /** Why there are no sums (for the log): a point off the curve, another pattern, no key… */
  sumsOff?: string;
}

export interface DeltaIntakeOptions {
  uploadPath: string;
  /** The head the delta is declared on: its index (the caller checks it is still the head at the end) and file. */
  headIndex: number;
  headPath: string;
  /** The circuit's link-challenge key; without it, no sums. */
  circuitKey?: Uint8Array;
  /** Told once why the intake turned itself off, for the coordinator's log. */
  onOff?: (why: string) => void;
}

export class DeltaIntake {
  private available = 0;
  private taken = 0;
  private pumping: Promise<void> | undefined;
  private off: string | undefined;
  private upload: FileHandle | undefined;

  private constructor(
    private readonly options: DeltaIntakeOptions,
    private readonly splice: StreamedSplice,
    private readonly sums: StreamedCandidateSums | undefined,
  ) {}

  get headIndex(): number {
    return this.options.headIndex;
  }

  static async start(options: DeltaIntakeOptions): Promise<DeltaIntake> {
    const sums = options.circuitKey
      ? await StreamedCandidateSums.start(options.circuitKey, options.headPath).catch(() => undefined)
      : undefined;
    const splice = await StreamedSplice.open(
      options.headPath,
      tempPathFor(options.uploadPath),
      (section, first, points) => sums?.add(section, first, points),
    );
    return new DeltaIntake(options, splice, sums);
  }

  /** The upload's file now holds `size` bytes. */
  written(size: number): void {
    if (size <= this.available || this.off !== undefined) return;
    this.available = size;
    this.pumping ??= this.pump().finally(() => (this.pumping = undefined));
  }

  /**
   * The upload is complete at `size` bytes: the key, checked against the head and renamed over the
   * upload, with its hash. Throws the delta's refusal (delta.malformed, delta.stale_head); resolves
   * undefined when the intake had turned itself off (the caller splices the upload whole).
   */
  async finish(size: number): Promise<TakenDelta | undefined> {
    this.written(size);
    while (this.pumping) await this.pumping;
    if (this.off === undefined && !this.splice.complete) this.turnOff('the upload ended before the delta did');
    if (this.off !== undefined) {
      await this.abort();
      return undefined;
    }
    try {
      await checkSkeletonAgainstHead(this.options.headPath, this.options.uploadPath);
      const [fileHash, sums] = await Promise.all([this.splice.finish(), this.sums?.result()]);
      await commitFile(this.splice.outPath, this.options.uploadPath);
      const hashes = { fileHash, sectionHashes: this.splice.sectionHashes };
      if (sums) return { ...hashes, sums };
      return { ...hashes, sumsOff: this.sums ? (this.sums.stopped ?? 'stopped') : 'not started' };
    } catch (error) {
      await this.abort();
      throw error;
    } finally {
      await this.upload?.close().catch(() => undefined);
    }
  }

  /** Stops and removes what the intake wrote (the upload was replaced, swept, or refused). */
  async abort(): Promise<void> {
    this.off ??= 'stopped';
    while (this.pumping) await this.pumping.catch(() => undefined);
    await this.splice.abort();
    await this.upload?.close().catch(() => undefined);
    this.upload = undefined;
  }

  private turnOff(why: string): void {
    if (this.off !== undefined) return;
    this.off = why;
    this.options.onOff?.(why);
  }

  private async pump(): Promise<void> {
    try {
      this.upload ??= await open(this.options.uploadPath, 'r');
      const buffer = Buffer.alloc(READ_BYTES);
      while (this.off === undefined && this.taken < this.available) {
        await this.sums?.room();
        const length = Math.min(buffer.length, this.available - this.taken);
        const { bytesRead } = await this.upload.read(buffer, 0, length, this.taken);
        if (bytesRead === 0) throw new Error('the upload file is shorter than tus said');
        // The splice keeps no reference to the bytes past this call (chunks for the sums are copies).
        await this.splice.push(buffer.subarray(0, bytesRead));
        this.taken += bytesRead;
      }
    } catch (error) {
      this.turnOff(error instanceof NotStreamable ? error.message : `read error (${String(error)})`);
    }
  }
}
