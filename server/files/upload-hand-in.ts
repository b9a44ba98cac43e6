/**
 * The finish of a contribution upload, once its last byte is in: a delta made into the key (from
 * its intake, or checked and spliced whole now), a whole key checked (its table and record), its
 * hashes written onto its candidate row, then handed to the ceremony service; or handed in with
 * its refusal (a verdict, like the verifier's) when it is no contribution on the head. And the
 * start of its intake, at the first write that ended.
 *
 * An upload that is not a contribution on the head is a refusal of the contribution, a verdict
 * like the verifier's (the turn ends, the contributor sees why), never an error that gives the
 * turn back: a whole key is checked as it arrives (its section table the head's, and the bytes
 * no contribution may change the head's: upload-table-check.ts) and, before a byte of it is
 * hashed, once complete (its record too: core/delta/check-delta-record.ts); a delta as it
 * arrives (its layout, its record, its points) or once complete; an upload whose intake or
 * table check found its refusal is handed in with it at its next PATCH, which answers the
 * refusal, rather than taken in to its end. That refusal is kept on the upload's candidate row as
 * soon as it is found: the intake is this process's, and a restart must not let the upload go
 * (deleted, replaced or swept) without its verdict.
 */
import { stat } from 'node:fs/promises';
import type { Upload } from '@tus/utils';
import { CoordinatorError, isCoordinatorError, refusesContribution } from '../../core/errors.ts';
import { boundedText } from '../../core/bounded-text.ts';
import { DELTA_FORMAT, type DeltaFormat } from '../../core/delta/delta-format.ts';
import { deltaExpectation, spliceSkeleton } from '../../core/delta/skeleton-zkey.ts';
import { headTable, wholeKeyExpectation } from '../../core/zkey/key-table-check.ts';
import { checkDeltaUpload, checkWholeKeyUpload } from '../../core/delta/check-delta-record.ts';
import { fileIdentity } from '../../core/fs/file-identity.ts';
import { sealCandidateSums } from '../../core/link-check/link-combination-cache.ts';
import { UnchangedSectionsCheck } from '../../core/link-check/unchanged-sections-check.ts';
import { DeltaIntake, type RefusedPoints, type TakenDelta } from './delta-intake.ts';
import type { CircuitHeads } from './circuit-heads.ts';
import type { Principal } from '../auth/principal.ts';
import type { CeremonyService, ServiceLog } from '../ceremony-service.ts';
import type { CandidateStore } from '../contributions/candidate-store.ts';
import type { Clock } from '../clock.ts';
import { deltaFormatOf } from './upload-creation-rules.ts';
import type { UploadLedger } from './upload-ledger.ts';
import { UploadTableCheck } from './upload-table-check.ts';
import { tusError } from './tus-protocol-errors.ts';

const KEY_LABEL = 'the uploaded key';

/**
 * The check that follows an upload of `size` bytes on the head at `headPath`: its table (a whole
 * key's, or a v1 delta's when `format` says so), and a whole key's bytes that must be the head's.
 */
async function tableCheck(
  file: string,
  size: number,
  format: DeltaFormat | undefined,
  headPath: string,
): Promise<UploadTableCheck> {
  const head = await headTable(headPath);
  if (format) return new UploadTableCheck(file, deltaExpectation(head, format), size);
  const unchanged = new UnchangedSectionsCheck(headPath, head, KEY_LABEL);
  return new UploadTableCheck(file, wholeKeyExpectation(head, KEY_LABEL), size, unchanged);
}

export interface UploadHandInDeps {
  service: CeremonyService;
  candidates: CandidateStore;
  ledger: UploadLedger;
  clock: Clock;
  log: ServiceLog;
  /** The heads, the one an upload extends its candidate row's; the state folder and challenge key. */
  heads: CircuitHeads;
  /** Deletes an upload's files (and its candidate row). */
  removeFiles: (circuit: string, id: string) => Promise<void>;
  onUploadFinished?: (circuit: string, durationMs: number) => void;
}

export class UploadHandIn {
  constructor(private readonly deps: UploadHandInDeps) {}

  /**
   * tus wrote `size` bytes to the upload at `file` (under its lock): the write that stored the last
   * byte marks it finishing; the intake (started on the first write that ended, `mayStart`, even
   * after a restart) and the table check read on.
   */
  written(
    circuit: string,
    file: string,
    size: number,
    complete: boolean,
    mayStart: boolean,
    upload: () => Promise<Upload>,
  ): void {
    const { ledger } = this.deps;
    if (complete) ledger.claimFinish(file);
    let intake = ledger.intakeOf(file);
    if (!intake) {
      if (!mayStart) return;
      intake = ledger.startIntake(file, async () => {
        try {
          return await this.startIntake(circuit, file, await upload());
        } catch (error) {
          this.deps.log.warn('delta intake could not start', { circuit, error: String(error) });
          return undefined;
        }
      });
    }
    void intake.then((started) => {
      started?.written(size);
      ledger.tableCheckOf(file)?.written(size);
    });
  }

  /**
   * The start of an upload's intake, at its first write that ended: a v2 delta on its candidate's head
   * is checked, filled, hashed and summed as it arrives (delta-intake.ts); only it lists its record
   * before its points, so any other upload's table is followed, and the upload checked once complete.
   */
  private async startIntake(circuit: string, file: string, upload: Upload): Promise<DeltaIntake | undefined> {
    const headIndex = await this.deps.heads.of(file, circuit);
    const headPath = this.headPath(circuit, headIndex);
    const onRefusal = (refusal: CoordinatorError): void => this.keepRefusal(circuit, file, refusal);
    if (upload.metadata?.format !== DELTA_FORMAT || upload.metadata.head !== String(headIndex)) {
      // Follows the table of a whole key or a v1 delta as it arrives (upload-table-check.ts).
      if (upload.size !== undefined) {
        const check = await tableCheck(file, upload.size, deltaFormatOf(upload.metadata?.format), headPath);
        check.onRefusal = onRefusal;
        this.deps.ledger.startTableCheck(file, check);
      }
      return undefined;
    }
    return DeltaIntake.start({
      uploadPath: file,
      headIndex,
      headPath,
      circuitKey: await this.deps.heads.challengeKey(circuit),
      ...(upload.size === undefined ? {} : { uploadLength: upload.size }),
      onTurnedOff: (reason) =>
        this.deps.log.info('delta intake off; the upload is checked and spliced when it ends', { circuit, reason }),
      onRefusal,
    });
  }

  /**
   * Keeps a refusal found while the upload arrives on its candidate row, where whatever meets the
   * upload after a restart finds it (ContributionUploads handInFoundRefusal). Called from the
   * intake's reads: a failure is logged, never thrown into them (the refusal stays in memory).
   */
  private keepRefusal(circuit: string, file: string, refusal: CoordinatorError): void {
    try {
      this.deps.candidates.recordRefusal(file, { code: refusal.code, message: boundedText(refusal.message) });
    } catch (error) {
      this.deps.log.warn('a refusal found could not be kept', { circuit, error: boundedText(String(error)) });
    }
  }

  /** Hands in the finished upload at `file`; a refusal that is no verdict deletes it and answers the request. */
  async handIn(circuit: string, principal: Principal, upload: Upload, file: string) {
    // Timed on the coordinator's clock, as the sweep judges uploads (createdAt, set at creation).
    const createdAt = Number(upload.metadata?.createdAt);
    if (Number.isFinite(createdAt)) this.deps.onUploadFinished?.(circuit, this.deps.clock.now() - createdAt);
    // The moment the last byte arrived: what the coordinator does from here (hash, verify,
    // commit) is its own share of a turn, timed from this line to the verdict's.
    this.deps.log.info('contribution upload complete', {
      circuit,
      contributor: principal.id,
      bytes: upload.size ?? upload.offset,
    });
    let taken: { size: number; delta?: TakenDelta } | CoordinatorError;
    try {
      taken = await this.takeUpload(circuit, upload, file);
    } catch (error) {
      // Not a contribution on the head: a verdict, handed in below. Anything else says nothing about it.
      if (!(isCoordinatorError(error) && refusesContribution(error.code))) {
        await this.deps.removeFiles(circuit, upload.id);
        if (error instanceof CoordinatorError) throw tusError(error);
        throw error;
      }
      taken = error;
    }
    try {
      const row =
        taken instanceof CoordinatorError
          ? await this.handInRefused(circuit, principal, file, upload.size ?? upload.offset, taken)
          : await this.deps.service.submit({ principal, circuit, path: file, size: taken.size });
      return { status_code: 204, headers: { 'X-Contribution-Id': row.id } };
    } catch (error) {
      await this.deps.removeFiles(circuit, upload.id);
      if (error instanceof CoordinatorError) throw tusError(error);
      throw error;
    }
  }

  /**
   * Hands in an upload refused before any verifier saw it, as the verifier's refusal would be (the
   * service records the verdict and deletes the file); its message bounded, whatever it quotes.
   */
  handInRefused(
    circuit: string,
    principal: Principal,
    file: string,
    size: number,
    refusal: CoordinatorError,
  ): ReturnType<CeremonyService['submit']> {
    return this.deps.service.submit({
      principal,
      circuit,
      path: file,
      size,
      refusal: { code: refusal.code, message: boundedText(refusal.message) },
    });
  }

  /**
   * A finished upload made ready to hand in: a delta spliced into the full key (in place: from here
   * it is verified as a whole key is), a whole key's table and record checked against the head.
   * Resolves with the key's size (and the delta's hashes); resolves with the refusal a delta's
   * points earned as they arrived; throws the upload's own refusal otherwise.
   */
  private async takeUpload(
    circuit: string,
    upload: Upload,
    file: string,
  ): Promise<{ size: number; delta?: TakenDelta } | CoordinatorError> {
    const size = upload.size ?? upload.offset;
    const format = deltaFormatOf(upload.metadata?.format);
    const headPath = this.headPath(circuit, await this.deps.heads.of(file, circuit));
    if (!format) {
      // Before a byte is hashed: what must be the head's, compared as it arrived (what the last write
      // brought, now; all of it if nothing followed it), then its table and record again, at the cost
      // of a few reads and pairings.
      const followed =
        (await this.deps.ledger.takeTableCheck(file)) ?? (await tableCheck(file, size, undefined, headPath));
      const refusal = await followed.finish(size);
      if (refusal) throw refusal;
      await checkWholeKeyUpload(headPath, file);
      return { size };
    }
    const started = Date.now();
    const taken = await this.takeDelta(circuit, file, size, format, headPath);
    if (taken && 'pointsRefusal' in taken) {
      // Its verdict is found: handed in as it is, refused without the verifier's second pass.
      this.deps.log.info('contribution delta refused as it arrived', {
        circuit,
        format,
        code: taken.pointsRefusal.code,
      });
      return taken.pointsRefusal;
    }
    this.deps.log.info('contribution delta spliced onto the head', {
      circuit,
      format,
      ms: Date.now() - started,
      asItArrived: taken !== undefined,
      sums: taken?.sums !== undefined,
      ...(taken?.whySumsStopped ? { whySumsStopped: boundedText(taken.whySumsStopped) } : {}),
    });
    if (taken) {
      // Hashed as it was written: its identity now says the bytes hashed are still the file's.
      this.deps.candidates.recordHashes(file, {
        fileHash: taken.fileHash,
        sectionHashes: taken.sectionHashes,
        identity: await fileIdentity(file),
        ...(await this.sealedSums(circuit, taken)),
      });
    }
    return { size: (await stat(file)).size, ...(taken ? { delta: taken } : {}) };
  }

  /**
   * Makes the full key of a finished delta upload, in place: from its intake when that ran to the
   * end (the hash known, and the link check's sums kept for the verifier), else checked (its
   * record included) and spliced whole now. Throws the delta's refusal either way, but for one its
   * points earned as they arrived, which is returned (RefusedPoints) and the delta left as it is.
   */
  private async takeDelta(
    circuit: string,
    file: string,
    size: number,
    format: DeltaFormat,
    headPath: string,
  ): Promise<TakenDelta | RefusedPoints | undefined> {
    // This request owns the intake from here, and ends it whatever happens.
    const intake = await this.deps.ledger.takeIntake(file);
    let taken: TakenDelta | RefusedPoints | undefined;
    try {
      // Made on a head other than the candidate's: checked whole below, which refuses it.
      if (intake?.headIndex === (await this.deps.heads.of(file, circuit))) taken = await intake.finish(size);
    } finally {
      if (!taken) await intake?.abort();
    }
    if (!taken) {
      await checkDeltaUpload(headPath, file, format);
      await spliceSkeleton(headPath, file, file, format);
      return undefined;
    }
    return taken;
  }

  /**
   * The intake's sums, sealed for the candidate's row and so for its verification request, which
   * carries them to the verifier wherever it runs. Without them the verifier sums L and H itself:
   * slower, same verdict.
   */
  private async sealedSums(circuit: string, taken: TakenDelta): Promise<{ sums?: Uint8Array }> {
    if (!taken.sums) return {};
    try {
      return { sums: sealCandidateSums(await this.deps.heads.challengeKey(circuit), taken.fileHash, taken.sums) };
    } catch (error) {
      this.deps.log.warn('could not keep a candidate’s sums', { circuit, error: String(error) });
      return {};
    }
  }

  private headPath(circuit: string, headIndex: number): string {
    return this.deps.heads.path(circuit, headIndex);
  }
}
