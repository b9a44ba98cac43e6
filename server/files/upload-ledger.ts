/**
 * What this process knows of each upload beyond its files: the delta intake taking it in, and
 * whether its last byte arrived and it is being finished. Keyed by the upload's file path.
 *
 * Invariants:
 *  - An upload is marked finishing by the write that stores its last byte, under the upload's tus
 *    lock, before tus releases it; from then on every write and removal is refused
 *    (upload.complete), so exactly one request finishes an upload: the one that completed it.
 *  - An intake has one owner at a time, and only its owner ends it (finish or abort): the upload
 *    while bytes arrive (registered here), then the finishing request, which takes it out of here
 *    (takeIntake). An intake that loses its upload (replaced, swept, given up, the coordinator
 *    closing) is aborted with it.
 *  - A temporary key in an uploads folder belongs to an upload with an intake registered here or
 *    being finished (the splice of its finish); any other is an orphan, and the sweep removes it.
 */
import type { CoordinatorError } from '../../core/errors.ts';
import type { DeltaIntake } from './delta-intake.ts';
import type { UploadTableCheck } from './upload-table-check.ts';

/** An intake being started or running; undefined once it is known the upload has none (a whole key). */
interface IntakeSlot {
  pending: Promise<DeltaIntake | undefined>;
  started?: DeltaIntake;
}

export class UploadLedger {
  private readonly intakes = new Map<string, IntakeSlot>();
  private readonly finishing = new Set<string>();
  /** The table checks of uploads no intake takes in (whole keys, v1 deltas), which end with their intake's slot. */
  private readonly tableChecks = new Map<string, UploadTableCheck>();

  /** Marks the upload at `file` as finishing; false when it already was (its finish is another request's). */
  claimFinish(file: string): boolean {
    if (this.finishing.has(file)) return false;
    this.finishing.add(file);
    return true;
  }

  isFinishing(file: string): boolean {
    return this.finishing.has(file);
  }

  /** The finish of the upload at `file` ended (handed in, or refused and its files removed). */
  endFinish(file: string): void {
    this.finishing.delete(file);
  }

  hasIntake(file: string): boolean {
    return this.intakes.has(file);
  }

  /** Registers the intake `start` makes for the upload at `file` (the upload owns it until its finish). */
  startIntake(file: string, start: () => Promise<DeltaIntake | undefined>): Promise<DeltaIntake | undefined> {
    const slot: IntakeSlot = { pending: start() };
    slot.pending.then(
      (intake) => (slot.started = intake),
      () => undefined,
    );
    this.intakes.set(file, slot);
    return slot.pending;
  }

  /** The intake of the upload at `file`, if one is registered (to feed it bytes). */
  intakeOf(file: string): Promise<DeltaIntake | undefined> | undefined {
    return this.intakes.get(file)?.pending;
  }

  /**
   * Registers the table check of the upload at `file`, which no intake takes in (its slot's start
   * resolved to none); it ends when the slot is taken or dropped.
   */
  startTableCheck(file: string, check: UploadTableCheck): void {
    this.tableChecks.set(file, check);
  }

  tableCheckOf(file: string): UploadTableCheck | undefined {
    return this.tableChecks.get(file);
  }

  /**
   * Takes the table check of the upload at `file`, a whole key being finished, out of the ledger
   * once its start settled (the write of its last byte may have begun it): the caller finishes it.
   */
  async takeTableCheck(file: string): Promise<UploadTableCheck | undefined> {
    await this.intakes.get(file)?.pending.catch(() => undefined);
    const check = this.tableChecks.get(file);
    this.tableChecks.delete(file);
    await this.dropIntake(file);
    return check;
  }

  /** The upload's refusal, once its intake (its layout, its record, a point) or its table check found one. */
  refusalOf(file: string): CoordinatorError | undefined {
    return this.intakes.get(file)?.started?.refusal ?? this.tableChecks.get(file)?.refusal;
  }

  /**
   * Takes the upload's intake out of the ledger: the caller (its finish) now owns it and must end
   * it. A table check ends here: the finish checks the whole upload.
   */
  async takeIntake(file: string): Promise<DeltaIntake | undefined> {
    const slot = this.intakes.get(file);
    this.intakes.delete(file);
    const check = this.tableChecks.get(file);
    this.tableChecks.delete(file);
    await check?.close();
    return slot?.pending.catch(() => undefined);
  }

  /** Aborts the upload's intake, if it has one (its upload is going away). */
  async dropIntake(file: string): Promise<void> {
    await (await this.takeIntake(file))?.abort();
  }

  /** Whether a temporary key made for the upload at `file` still has an owner. */
  ownsTemporaryKeyOf(file: string): boolean {
    return this.intakes.has(file) || this.finishing.has(file);
  }

  /** Uploads with an intake registered (the sweep aborts those whose upload is gone). */
  intakeFiles(): string[] {
    return [...this.intakes.keys()];
  }

  /** Running intakes, with their uploads (for the free-space check). */
  runningIntakes(): DeltaIntake[] {
    return [...this.intakes.values()].flatMap((slot) => (slot.started ? [slot.started] : []));
  }

  /** Aborts every intake (the coordinator closes; an upload resumed after a restart is taken in again). */
  async abortAll(): Promise<void> {
    await Promise.all(this.intakeFiles().map((file) => this.dropIntake(file)));
  }
}
