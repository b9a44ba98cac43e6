/**
 * The section table of an upload that no delta intake takes in (a whole key, a `zkey-delta-v1`),
 * checked while the upload arrives: after each write tus reports, the entries now in the file are
 * read (12 bytes each, where the sizes already read put them) and held to what the format expects
 * on the head (core/binfile/section-table-cursor.ts). A table that cannot be one is the upload's
 * refusal as soon as the entry that breaks it is in: the owner hands the upload in with it at its
 * next PATCH, rather than receiving and storing the rest for nothing. The check at the end of the
 * upload stays the authority (checkWholeKeyUpload, checkDeltaUpload); this one only refuses sooner,
 * by the same rules, and only what those would refuse.
 *
 * A whole key's bytes that no contribution may change (UnchangedSectionsCheck: its sections 1 to 7
 * but δ) are compared with the head's in the same pass, each once the entries before it are
 * accepted; its finish checks what the last write brought, before any byte is hashed.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../../core/errors.ts';
import { SectionTableCursor, type TableExpectation } from '../../core/binfile/section-table-cursor.ts';
import type { UnchangedSectionsCheck } from '../../core/link-check/unchanged-sections-check.ts';

export class UploadTableCheck {
  private available = 0;
  private running: Promise<void> | undefined;
  private handle: FileHandle | undefined;
  private stopped = false;
  private readonly cursor: SectionTableCursor;
  /** The upload's refusal, once an entry broke the expectation. */
  refusal: CoordinatorError | undefined;
  /** Told of `refusal` once found: the coordinator keeps it with the upload, past a restart. */
  onRefusal: ((refusal: CoordinatorError) => void) | undefined;

  /**
   * `declaredLength`: the upload's length once complete (tus's Upload-Length); `unchanged`: for a
   * whole key, its bytes that must be the head's (never for a delta, which does not carry them).
   */
  constructor(
    private readonly uploadPath: string,
    expectation: TableExpectation,
    declaredLength: number,
    private readonly unchanged?: UnchangedSectionsCheck,
  ) {
    this.cursor = new SectionTableCursor(expectation, declaredLength);
  }

  /** The upload's file now holds `size` bytes. */
  written(size: number): void {
    if (size <= this.available || this.stopped || this.refusal || this.checkedAll) return;
    this.available = size;
    this.running ??= this.follow().finally(() => (this.running = undefined));
  }

  /** Resolves once the bytes reported so far are checked: a next write is decided on all of them. */
  async caughtUp(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * The upload is complete at `size` bytes: checks what is left of it, stops, and returns its
   * refusal. None also when a read failed: the checks at the end of the upload decide alone then.
   */
  async finish(size: number): Promise<CoordinatorError | undefined> {
    this.written(size);
    await this.caughtUp();
    await this.close();
    return this.refusal;
  }

  /** Stops following (the upload is finished, replaced or gone). */
  async close(): Promise<void> {
    this.stopped = true;
    await this.caughtUp();
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
    await this.unchanged?.close();
  }

  private get checkedAll(): boolean {
    return this.cursor.done && (this.unchanged?.done ?? true);
  }

  private async follow(): Promise<void> {
    try {
      this.handle ??= await open(this.uploadPath, 'r');
      let checkedTo = -1;
      while (!this.stopped && !this.checkedAll && checkedTo < this.available) {
        checkedTo = this.available;
        await this.cursor.advance(this.handle, checkedTo);
        // A section is compared once its entry (and every one before it) is held to the head's.
        await this.unchanged?.advance(this.handle, checkedTo, this.cursor.sections);
      }
    } catch (error) {
      if (error instanceof CoordinatorError) {
        this.refusal = error;
        this.onRefusal?.(error);
      }
      // Anything else (the file gone, a read error) leaves the check to the end of the upload.
      else this.stopped = true;
    }
  }
}
