/**
 * The section table of an upload that no delta intake takes in (a whole key, a `zkey-delta-v1`),
 * checked while the upload arrives: after each write tus reports, the entries now in the file are
 * read (12 bytes each, where the sizes already read put them) and held to what the format expects
 * on the head (core/binfile/section-table-cursor.ts). A table that cannot be one is the upload's
 * refusal as soon as the entry that breaks it is in: the owner hands the upload in with it at its
 * next PATCH, rather than receiving and storing the rest for nothing. The check at the end of the
 * upload stays the authority (checkWholeKeyUpload, checkDeltaUpload); this one only refuses sooner,
 * by the same rules, and only what those would refuse.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../../core/errors.ts';
import { SectionTableCursor, type TableExpectation } from '../../core/binfile/section-table-cursor.ts';

export class UploadTableCheck {
  private available = 0;
  private running: Promise<void> | undefined;
  private handle: FileHandle | undefined;
  private stopped = false;
  private readonly cursor: SectionTableCursor;
  /** The upload's refusal, once an entry broke the expectation. */
  refusal: CoordinatorError | undefined;

  /** `declaredLength`: the upload's length once complete (tus's Upload-Length). */
  constructor(
    private readonly uploadPath: string,
    expectation: TableExpectation,
    declaredLength: number,
  ) {
    this.cursor = new SectionTableCursor(expectation, declaredLength);
  }

  /** The upload's file now holds `size` bytes. */
  written(size: number): void {
    if (size <= this.available || this.stopped || this.refusal || this.cursor.done) return;
    this.available = size;
    this.running ??= this.follow().finally(() => (this.running = undefined));
  }

  /** Stops following (the upload is finished, replaced or gone). */
  async close(): Promise<void> {
    this.stopped = true;
    while (this.running) await this.running;
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
  }

  private async follow(): Promise<void> {
    try {
      this.handle ??= await open(this.uploadPath, 'r');
      let checkedTo = -1;
      while (!this.stopped && !this.cursor.done && checkedTo < this.available) {
        checkedTo = this.available;
        await this.cursor.advance(this.handle, checkedTo);
      }
    } catch (error) {
      if (error instanceof CoordinatorError) this.refusal = error;
      // Anything else (the file gone, a read error) leaves the check to the end of the upload.
      else this.stopped = true;
    }
  }
}
