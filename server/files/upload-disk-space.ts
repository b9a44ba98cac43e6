/**
 * The disk space the uploads need: a creation passes only if the data folder's disk can take the
 * largest upload, the margin, and whatever the uploads, intakes and creations under way will still
 * write. Creations' checks run one at a time in the process, and the bytes of one that passed stay
 * reserved until its upload is on disk (there it counts itself), so creations on different circuits
 * see each other's bytes rather than the same free space.
 */
import path from 'node:path';
import { stat } from 'node:fs/promises';
import type { Upload } from '@tus/utils';
import type { Clock } from '../clock.ts';
import { checkDiskSpace, type DiskSpace } from './check-disk-space.ts';
import { deltaFormatOf, largestUploadBytes, requiredFreeBytes, type InFlightWrite } from './upload-creation-rules.ts';
import type { UploadLedger } from './upload-ledger.ts';
import type { UploadSweeper } from './upload-sweeper.ts';

/** A creation's reservation outlives a creation that neither made its file nor failed by no more than this. */
const RESERVATION_MS = 60_000;

export interface UploadDiskSpaceDeps {
  dataDir: string;
  /** Each circuit's uploads folder. */
  folders: ReadonlyMap<string, string>;
  ledger: UploadLedger;
  sweeper: UploadSweeper;
  clock: Clock;
  /** Free space to keep beyond the largest possible upload (UPLOAD_DISK_MARGIN_BYTES). */
  diskMarginBytes: number;
  freeDiskBytes?: (directory: string) => Promise<number>;
  /** The size of the circuit's current head. */
  headSize: (circuit: string) => Promise<number>;
  /** Finished uploads waiting for their verdict: they write no more. */
  awaitingVerdict: () => Set<string>;
  turnHeld: (contributorId: string, circuit: string) => boolean;
}

export class UploadDiskSpace {
  /** Bytes promised to creations that passed the disk check and whose upload is not on disk yet, by upload file. */
  private readonly reserved = new Map<string, { bytes: number; at: number }>();
  private checks: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: UploadDiskSpaceDeps) {}

  /**
   * Free space on the data folder's disk against what a new upload needs: the largest possible
   * upload, the margin, and what the uploads and intakes under way will still write.
   */
  async diskSpace(ownBytes?: number): Promise<DiskSpace> {
    let largest = 0;
    for (const circuit of this.deps.folders.keys())
      largest = Math.max(largest, largestUploadBytes(await this.deps.headSize(circuit)));
    const required = requiredFreeBytes(ownBytes ?? largest, this.deps.diskMarginBytes, await this.inFlightWrites());
    return checkDiskSpace(this.deps.dataDir, required, this.deps.freeDiskBytes);
  }

  /**
   * The disk check of a creation of `upload` on `circuit`, one at a time in the process; when it passes, the bytes
   * stay reserved for `file` until the upload is on disk (or removed), so the next check counts them.
   */
  reserve(circuit: string, upload: Upload, file: string): Promise<DiskSpace> {
    const check = this.checks.then(async () => {
      const bytes = await this.creationNeed(circuit, upload);
      const disk = await this.diskSpace(bytes);
      if (disk.accepting) this.reserved.set(file, { bytes, at: this.deps.clock.now() });
      return disk;
    });
    this.checks = check.catch(() => undefined);
    return check;
  }

  /** The upload at `file` is gone: its reservation with it. */
  release(file: string): void {
    this.reserved.delete(file);
  }

  /**
   * What a creation will write: the largest upload the circuit takes; for a delta, its declared length and the
   * whole key its intake writes beside it.
   */
  private async creationNeed(circuit: string, upload: Upload): Promise<number> {
    const largest = largestUploadBytes(await this.deps.headSize(circuit));
    return deltaFormatOf(upload.metadata?.format) ? (upload.size ?? largest) + largest : largest;
  }

  /**
   * What the uploads still arriving, the intakes under way (and those of deltas not started yet) and the creations
   * reserved but not on disk yet will still write, on every circuit.
   */
  private async inFlightWrites(): Promise<InFlightWrite[]> {
    const { ledger, sweeper } = this.deps;
    const writes: InFlightWrite[] = [];
    const awaiting = this.deps.awaitingVerdict();
    for (const [circuit, directory] of this.deps.folders) {
      for (const id of await sweeper.uploadIds(directory)) {
        const file = path.join(directory, id);
        if (awaiting.has(file) || ledger.isFinishing(file)) continue;
        const stored = await sweeper.storedUpload(circuit, directory, id);
        const onDisk = await stat(file).catch(() => undefined);
        if (stored?.size === undefined || !onDisk) continue;
        // Its turn ended: it never writes again, and goes at the next sweep if the lobby's word has not removed it.
        if (!this.deps.turnHeld(String(stored.metadata?.contributor), circuit)) continue;
        this.reserved.delete(file); // on disk: counted here from now on
        writes.push({ finalBytes: stored.size, writtenBytes: onDisk.size });
        // A delta's intake writes a whole key beside it; a running one counts itself below.
        if (deltaFormatOf(stored.metadata?.format) && !ledger.intakeOf(file))
          writes.push({ finalBytes: largestUploadBytes(await this.deps.headSize(circuit)), writtenBytes: 0 });
      }
    }
    for (const intake of ledger.runningIntakes()) writes.push(await intake.inFlightWrite());
    const now = this.deps.clock.now();
    for (const [file, reservation] of this.reserved) {
      if (now - reservation.at > RESERVATION_MS) this.reserved.delete(file);
      else writes.push({ finalBytes: reservation.bytes, writtenBytes: 0 });
    }
    return writes;
  }
}
