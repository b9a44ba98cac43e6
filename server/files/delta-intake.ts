/**
 * A contribution delta (`zkey-delta-v2`) taken in while it uploads, so that the coordinator's share
 * of a turn after the last byte is small: as tus appends the upload's bytes to its file, the intake
 * reads them back in order (from the page cache) and
 *  - checks the new record (history, proof of knowledge: core/delta/check-delta-record.ts) as soon
 *    as it is in, before any point, since v2 lists it before L and H;
 *  - splices the full key as it goes, hashing it (core/delta/streamed-splice.ts);
 *  - sums L and H for the link check under the circuit's secret key, checking every point
 *    (core/link-check/streamed-candidate-sums.ts).
 * When the last byte arrives only the last chunk is left; the finished delta is checked against the
 * head as a whole-delta splice checks it, and the key renamed over the upload.
 *
 * The upload's file is the truth: the intake reads only bytes tus has written (it is told each time a
 * write ends, and tus only ever appends at its offset), so a dropped request and its resumption,
 * or a restart of the coordinator mid-upload (a new intake reads from byte 0), change nothing.
 * A layout that breaks a delta's rules, or a refused record, is the delta's refusal before any
 * point is summed (`refusal`): the intake stops, and the upload is handed in with it (a verdict)
 * at its next PATCH. A point off the curve or points at infinity elsewhere than the head's are its
 * verdict too: the intake stops, and the upload is handed in with the verifier's refusal already
 * found, at its next PATCH or, when none came, by finish (`pointsRefusal`), so the verifier never
 * reads L and H a second time to find the same point. Anything else that goes wrong (a history
 * whose size the head does not imply, a read error, the kernel unable to run) only turns the
 * intake off: the upload is then checked and spliced whole when it ends, and verified in full;
 * refusals come from the same checks either way.
 * An intake has one owner at a time (server/files/upload-ledger.ts), who ends it: finish or abort.
 */
import { open, stat, type FileHandle } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { FileStore } from '@tus/file-store';
import { commitFile, tempPathFor } from '../../core/fs/atomic-write.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { boundedText } from '../../core/bounded-text.ts';
import { checkDeltaRecord } from '../../core/delta/check-delta-record.ts';
import { DELTA_FORMAT } from '../../core/delta/delta-format.ts';
import { checkSkeletonAgainstHead } from '../../core/delta/skeleton-zkey.ts';
import { NotStreamable, StreamedSplice } from '../../core/delta/streamed-splice.ts';
import { StreamedCandidateSums } from '../../core/link-check/streamed-candidate-sums.ts';
import type { CandidateSums } from '../../core/link-check/link-combination-cache.ts';
import type { SectionHashes } from '../../core/zkey/zkey-hashes.ts';
import { largestUploadBytes, type InFlightWrite } from './upload-creation-rules.ts';

/** Bytes read back from the upload at a time. */
const READ_BYTES = 4 << 20;

/** What a FollowedFileStore asks and tells about each write and removal, under the upload's tus lock. */
export interface WriteFollower {
  /** Throws (a tus error) to refuse a write before a byte is stored; `size` is the upload's declared length. */
  beforeWrite(id: string, size: number | undefined): Promise<void>;
  /**
   * The upload's file now holds `size` bytes, after a write that ended or broke off (`cutShort`);
   * `complete` when a write that ended reached the upload's declared length.
   */
  written(id: string, size: number, outcome: { cutShort: boolean; complete: boolean }): void;
  /** Throws (a tus error) to refuse the removal of an upload (a tus DELETE). */
  beforeRemove(id: string): Promise<void>;
}

/**
 * A tus FileStore whose uploads decide, under each upload's lock, whether a write or a removal
 * may happen, and are told after each write (whole or cut short) how long the file is.
 */
export class FollowedFileStore extends FileStore {
  constructor(
    options: ConstructorParameters<typeof FileStore>[0],
    private readonly follower: WriteFollower,
  ) {
    super(options);
  }

  override async write(readable: IncomingMessage | Readable, id: string, offset: number): Promise<number> {
    const { size } = await this.getUpload(id);
    await this.follower.beforeWrite(id, size);
    let end: number;
    try {
      end = await super.write(readable, id, offset);
    } catch (error) {
      // Cut short: what reached the file stays (tus resumes from the file's length).
      const written = await stat(path.join(this.directory, id)).then(
        (s) => s.size,
        () => undefined,
      );
      if (written !== undefined) this.follower.written(id, written, { cutShort: true, complete: false });
      throw error;
    }
    this.follower.written(id, end, { cutShort: false, complete: end === size });
    return end;
  }

  override async remove(id: string): Promise<void> {
    await this.follower.beforeRemove(id);
    await super.remove(id);
  }
}

/** The intake's result: the spliced key's hash, and the link check's sums when they ran to the end. */
export interface TakenDelta {
  fileHash: string;
  /** Its sections' hashes, taken in the same pass (the transcript records them). */
  sectionHashes?: SectionHashes;
  sums?: CandidateSums;
  /** Why there are no sums (for the log): the kernel could not run, no key… */
  whySumsStopped?: string;
}

/** The intake stopped on a point the verifier would refuse: that refusal is the delta's verdict (no key spliced). */
export interface RefusedPoints {
  pointsRefusal: CoordinatorError;
}

export interface DeltaIntakeOptions {
  uploadPath: string;
  /** The head the delta is declared on: its index (the caller checks it is still the head at the end) and file. */
  headIndex: number;
  headPath: string;
  /** The circuit's link-challenge key; without it, no sums. */
  circuitKey?: Uint8Array;
  /** The upload's declared length: a delta whose sections do not add up to it is refused before its points. */
  uploadLength?: number;
  /** Told once why the intake turned itself off, for the coordinator's log. */
  onTurnedOff?: (reason: string) => void;
  /** Told of `refusal` each time one is found: the coordinator keeps it with the upload, past a restart. */
  onRefusal?: (refusal: CoordinatorError) => void;
}

export class DeltaIntake {
  private available = 0;
  private taken = 0;
  private pumping: Promise<void> | undefined;
  /** Why the intake stopped taking bytes in (turned off, refused, aborted). */
  private off: string | undefined;
  /** The delta's own refusal (its layout, its record), once found: before any point is summed. */
  private ownRefusal: CoordinatorError | undefined;
  private upload: FileHandle | undefined;

  private constructor(
    private readonly options: DeltaIntakeOptions,
    private readonly splice: StreamedSplice,
    private readonly sums: StreamedCandidateSums | undefined,
  ) {}

  get headIndex(): number {
    return this.options.headIndex;
  }

  /**
   * The delta's refusal, once found as it arrived: its layout or its record (its history, its proof
   * of knowledge), or a point of L or H (off the curve, at infinity out of place). Its upload is
   * handed in with it at the next PATCH, rather than received to its end for nothing.
   */
  get refusal(): CoordinatorError | undefined {
    return this.ownRefusal ?? this.sums?.refusal;
  }

  static async start(options: DeltaIntakeOptions): Promise<DeltaIntake> {
    const sums = options.circuitKey
      ? await StreamedCandidateSums.start(options.circuitKey, options.headPath).catch(() => undefined)
      : undefined;
    const splice = await StreamedSplice.open(
      options.headPath,
      tempPathFor(options.uploadPath),
      (section, first, points) => sums?.add(section, first, points),
      (header, history) => checkDeltaRecord(options.headPath, header, history),
      options.uploadLength,
    );
    const intake = new DeltaIntake(options, splice, sums);
    if (sums) sums.onRefusal = () => intake.refusalFound();
    return intake;
  }

  /** The whole key its temporary file grows to, and what it holds on disk now (sparse until H). */
  async inFlightWrite(): Promise<InFlightWrite> {
    const finalBytes = largestUploadBytes((await stat(this.options.headPath)).size);
    const writtenBytes = await stat(this.splice.outPath).then(
      (s) => Math.min(s.size, s.blocks * 512),
      () => finalBytes,
    );
    return { finalBytes, writtenBytes };
  }

  /** The upload's file now holds `size` bytes. */
  written(size: number): void {
    if (size <= this.available || this.off !== undefined) return;
    this.available = size;
    this.pumping ??= this.pump().finally(() => (this.pumping = undefined));
  }

  /**
   * The upload is complete at `size` bytes: the key, checked against the head and renamed over the
   * upload, with its hash; or the refusal its points earned (RefusedPoints: nothing spliced). Throws
   * the delta's own refusal (its record's, delta.malformed, delta.stale_head); resolves undefined
   * when the intake had turned itself off (the caller checks and splices the upload whole).
   */
  async finish(size: number): Promise<TakenDelta | RefusedPoints | undefined> {
    this.written(size);
    while (this.pumping) await this.pumping;
    if (this.off === undefined && !this.splice.complete) this.turnOff('the upload ended before the delta did');
    if (this.off !== undefined) {
      await this.abort();
      if (this.ownRefusal) throw this.ownRefusal;
      if (this.sums?.refusal) return { pointsRefusal: this.sums.refusal };
      return undefined;
    }
    try {
      const [checked, spliced, summed] = await Promise.allSettled([
        checkSkeletonAgainstHead(this.options.headPath, this.options.uploadPath, DELTA_FORMAT),
        this.splice.finish(),
        this.sums?.result(),
      ]);
      if (checked.status === 'rejected') throw checked.reason;
      // The last chunk's points are checked with its sums, which end only now.
      if (this.sums?.refusal) {
        await this.abort();
        return { pointsRefusal: this.sums.refusal };
      }
      if (spliced.status === 'rejected') throw spliced.reason;
      const sums = summed.status === 'fulfilled' ? summed.value : undefined;
      await commitFile(this.splice.outPath, this.options.uploadPath);
      const hashes = { fileHash: spliced.value, sectionHashes: this.splice.sectionHashes };
      if (sums) return { ...hashes, sums };
      return { ...hashes, whySumsStopped: this.sums ? (this.sums.stopped ?? 'stopped') : 'not started' };
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
    this.sums?.cancel();
    while (this.pumping) await this.pumping.catch(() => undefined);
    await this.splice.abort();
    await this.upload?.close().catch(() => undefined);
    this.upload = undefined;
  }

  /** The refusal the intake answers now (its own before its points'), to whoever keeps it. */
  private refusalFound(): void {
    if (this.refusal) this.options.onRefusal?.(this.refusal);
  }

  private turnOff(reason: string): void {
    if (this.off !== undefined) return;
    this.off = reason;
    this.options.onTurnedOff?.(reason);
  }

  private async pump(): Promise<void> {
    try {
      this.upload ??= await open(this.options.uploadPath, 'r');
      const buffer = Buffer.alloc(READ_BYTES);
      while (this.off === undefined && this.taken < this.available) {
        await this.sums?.room();
        // Refused on a point: nothing more of it is worth reading.
        if (this.sums?.refusal) {
          this.off ??= 'refused';
          return;
        }
        const length = Math.min(buffer.length, this.available - this.taken);
        const { bytesRead } = await this.upload.read(buffer, 0, length, this.taken);
        if (bytesRead === 0) throw new Error('the upload file is shorter than tus said');
        // The splice keeps no reference to the bytes past this call (chunks for the sums are copies).
        await this.splice.push(buffer.subarray(0, bytesRead));
        this.taken += bytesRead;
      }
    } catch (error) {
      if (error instanceof CoordinatorError) {
        this.ownRefusal = error;
        this.off ??= 'refused';
        this.refusalFound();
        return;
      }
      this.turnOff(error instanceof NotStreamable ? error.message : boundedText(`read error (${String(error)})`));
    }
  }
}
