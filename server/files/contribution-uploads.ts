/**
 * Contribution uploads over the resumable tus protocol (@tus/server, FileStore), one endpoint per
 * circuit at /api/circuits/:name/contributions: the tus wiring. Only the signed-in holder of the
 * turn on that circuit may create an upload, and only its owner may resume it (PATCH/HEAD) while
 * the turn lasts. The upload streams to a file in the data folder; nothing is held in memory. When
 * the last byte arrives the file is handed to the ceremony service, which verifies it.
 *
 * An upload is the whole next key (metadata `format` absent or `zkey`), or its skeleton (a
 * contribution delta, `format: zkey-delta-v2` or `-v1`, docs/contribution-delta.md): only the
 * sections a contribution changes. A delta is checked against the head (its record's proof of
 * knowledge included) and filled back into the full key (core/delta) before it is handed in; from
 * there both are the same file, verified alike. A v2 delta is checked, filled, hashed and summed
 * while it arrives (delta-intake.ts), so little is left once its last byte is in.
 *
 * The rules a creation must meet are upload-creation-rules.ts's (each refused before a byte is
 * stored); what this process knows of each upload (its intake, whether it is being finished) is
 * upload-ledger.ts's; old files are upload-sweeper.ts's. Beyond those rules:
 *  - one upload in progress per circuit: a new creation by the turn holder replaces the earlier
 *    one (its writer is stopped, its file deleted). Replacing rather than refusing lets a
 *    contributor whose browser lost the upload's URL start over within the same turn, where a
 *    refusal would strand them until the old upload expired, i.e. past their turn. Creations on a
 *    circuit run one at a time, so two racing creations cannot both stay. An upload being handed
 *    in (its last byte arrived) is never replaced: the creation is refused (upload.submitting);
 *  - only the request that stored an upload's last byte finishes it: any later PATCH or DELETE is
 *    refused (upload.complete), decided under the upload's tus lock (FollowedFileStore), since tus
 *    releases that lock before it calls onUploadFinish;
 *  - an upload that is not a contribution on the head is a refusal of the contribution, a verdict
 *    (upload-hand-in.ts);
 *  - an unfinished upload whose turn ended (lapsed, passed on, removed) can never be used: it is
 *    deleted when the lobby says so, or at the next sweep, and no longer counts against free space.
 * A finished upload the service does not take is deleted at once, and so is an upload whose
 * creation failed (e.g. a creation-with-upload body larger than declared).
 */
import path from 'node:path';
import { rm, stat } from 'node:fs/promises';
import type { Request, RequestHandler, Response } from 'express';
import { Server as TusServer } from '@tus/server';
import type { Upload } from '@tus/utils';
import { CoordinatorError, isCoordinatorError } from '../../core/errors.ts';
import { boundedText } from '../../core/bounded-text.ts';
import { UploadLocker } from './upload-locker.ts';
import { OneAtATime } from './one-at-a-time.ts';
import type { CeremonyConfig } from '../../core/config/ceremony-config.ts';
import { FollowedFileStore } from './delta-intake.ts';
import type { Principal } from '../auth/principal.ts';
import type { Lobby } from '../lobby/lobby.ts';
import type { LobbyEvent } from '../lobby/lobby-types.ts';
import type { CeremonyService, ServiceLog } from '../ceremony-service.ts';
import { CircuitHeads } from './circuit-heads.ts';
import { removeRetiredSumsFiles } from '../../core/link-check/link-combination-cache.ts';
import type { CandidateStore } from '../contributions/candidate-store.ts';
import type { Db } from '../store/database.ts';
import type { Clock } from '../clock.ts';
import type { DiskSpace } from './check-disk-space.ts';
import {
  checkCreation,
  completeRefusal,
  submittingRefusal,
  declaredUpload,
  diskFullRefusal,
  largestUploadBytes,
} from './upload-creation-rules.ts';
import { UploadDiskSpace } from './upload-disk-space.ts';
import { UploadHandIn } from './upload-hand-in.ts';
import { UploadLedger } from './upload-ledger.ts';
import { ownerMetadata, ownerOf } from './upload-owner.ts';
import { UploadSweeper } from './upload-sweeper.ts';
import { asTusError, principalOf, tusAnswerTo, tusError, type TusRequest } from './tus-protocol-errors.ts';

/** How often old uploads and orphaned temporary keys are looked for. */
const SWEEP_PERIOD_MS = 60_000;

export interface ContributionUploadsDeps {
  config: CeremonyConfig;
  db: Db;
  lobby: Lobby;
  service: CeremonyService;
  /** Each upload's candidate row, made at its creation (the contribution store's). */
  candidates: CandidateStore;
  clock: Clock;
  log: ServiceLog;
  /** Free space to keep beyond the largest possible upload (UPLOAD_DISK_MARGIN_BYTES). */
  diskMarginBytes: number;
  /**
   * The one origin tus answers CORS for (PUBLIC_URL's): uploads carry the session cookie and CSRF
   * token, so no other origin may read the answers. Absent: none (the app is same-origin).
   */
  publicOrigin?: string;
  /** The free space of the data folder's disk; statfs by default (tests: a disk nearly full). */
  freeDiskBytes?: (directory: string) => Promise<number>;
  /** Told when an upload received its last byte, `durationMs` after it was created (metrics). */
  onUploadFinished?: (circuit: string, durationMs: number) => void;
}

interface CircuitUploads {
  circuit: string;
  directory: string;
  datastore: FollowedFileStore;
  locker: UploadLocker;
  server: TusServer;
  /** This circuit's creations, which run one at a time. */
  creations: OneAtATime;
}

export class ContributionUploads {
  /** Age (coordinator clock) after which an unfinished upload is deleted: the longest turn plus a sweep period. */
  readonly expiryMs: number;
  /** Express handler for every upload route; the session middleware must run before it. */
  readonly handler: RequestHandler;
  /** Done once the temporary keys a stopped coordinator left and old sums files are gone (started at construction). */
  readonly leftoversRemoved: Promise<void>;
  private readonly circuits = new Map<string, CircuitUploads>();
  private readonly ledger = new UploadLedger();
  private readonly sweeper: UploadSweeper;
  private readonly disk: UploadDiskSpace;
  private readonly handIns: UploadHandIn;
  private readonly heads: CircuitHeads;
  /** The upload each creation request made, so a creation that fails afterwards is removed. */
  private readonly created = new WeakMap<object, { circuit: CircuitUploads; id: string }>();
  private closed = false;

  constructor(private readonly deps: ContributionUploadsDeps) {
    // Margin over the longest turn, so an upload is never removed under a turn that is still running.
    this.expiryMs = deps.lobby.longestTurnMs + SWEEP_PERIOD_MS;
    for (const { name } of deps.config.circuits) this.circuits.set(name, this.circuitUploads(name));
    this.sweeper = new UploadSweeper({
      folders: new Map([...this.circuits.values()].map((uploads) => [uploads.circuit, uploads.directory])),
      ledger: this.ledger,
      clock: deps.clock,
      log: deps.log,
      expiryMs: this.expiryMs,
      awaitingVerdict: () => deps.service.candidatesAwaitingVerdict(),
      turnHeld: (contributorId, circuit) => this.turnHeld(contributorId, circuit),
      removeUpload: (circuit, id) => this.removeUpload(this.circuits.get(circuit)!, id),
    });
    this.heads = new CircuitHeads(deps.config.dataDir, deps.candidates);
    this.leftoversRemoved = Promise.all([
      this.sweeper
        .removeLeftoverTemporaryKeys()
        .catch((error: unknown) =>
          deps.log.warn('could not remove temporary keys left by a stop', { error: String(error) }),
        ),
      // A candidate's sums are on its row now; an earlier version kept them in files.
      removeRetiredSumsFiles(this.heads.stateDir).catch((error: unknown) =>
        deps.log.warn('could not remove the sums files of an earlier version', { error: String(error) }),
      ),
    ]).then(() => undefined);
    this.disk = new UploadDiskSpace({
      ...deps,
      dataDir: deps.config.dataDir,
      folders: new Map([...this.circuits.values()].map((uploads) => [uploads.circuit, uploads.directory])),
      ledger: this.ledger,
      sweeper: this.sweeper,
      headSize: (circuit) => this.heads.size(circuit),
      awaitingVerdict: () => deps.service.candidatesAwaitingVerdict(),
      turnHeld: (contributorId, circuit) => this.turnHeld(contributorId, circuit),
    });
    this.handIns = new UploadHandIn({
      ...deps,
      ledger: this.ledger,
      heads: this.heads,
      removeFiles: (circuit, id) => this.removeFiles(this.circuits.get(circuit)!, id),
    });
    this.sweeper.start(SWEEP_PERIOD_MS); // once what its removals use is there
    this.handler = async (req: Request, res: Response) => {
      const uploads = this.circuits.get(String(req.params.name));
      if (!uploads) throw new CoordinatorError('circuit.unknown', `unknown circuit "${req.params.name}"`);
      // Only the turn's holder waits in the circuit's creation line: anyone else is refused at once
      // (onIncomingRequest), never queued in front of the holder. The turn itself is checked where
      // the creation's candidate row is made (onUploadCreate).
      const principal = (req as Request & { principal?: Principal }).principal;
      if (req.method === 'POST' && principal && this.turnHeld(principal.id, uploads.circuit)) {
        await uploads.creations.run(() => uploads.server.handle(req, res));
      } else {
        await uploads.server.handle(req, res);
      }
    };
  }

  /** Stops the periodic sweep (waiting for a running one) and the intakes of deltas still uploading. */
  async close(): Promise<void> {
    this.closed = true;
    await this.sweeper.stop();
    await this.leftoversRemoved;
    await this.ledger.abortAll();
  }

  /** One sweep now (UploadSweeper): uploads older than `expiryMs`, and leftovers; returns how many uploads went. */
  sweepExpired(): Promise<number> {
    return this.sweeper.sweep();
  }

  /**
   * Deletes the unfinished upload(s) of `contributorId` on `circuit`, as when they give up their
   * turn (POST /api/me/leave): a PATCH still writing is stopped first. Finished uploads waiting for
   * their verdict, or being handed in, are kept. Returns how many it deleted.
   */
  discardUnfinished(circuit: string, contributorId: string): Promise<number> {
    const uploads = this.circuits.get(circuit);
    return uploads ? this.sweeper.discardUnfinished(circuit, uploads.directory, contributorId) : Promise.resolve(0);
  }

  /**
   * The lobby ended a turn without an upload finishing it (it lapsed, passed on, or its entry was
   * removed): that turn's unfinished upload can never be used, and goes now rather than at its expiry.
   */
  onLobbyEvent(event: LobbyEvent): void {
    // A waiting entry that let a standby turn pass had no turn, so no upload of it.
    if (event.type === 'turn_granted' || event.type === 'standby_let_pass') return;
    if (this.turnHeld(event.contributorId, event.circuit)) return;
    this.discardUnfinished(event.circuit, event.contributorId).then(
      (removed) => {
        if (removed > 0) this.deps.log.info('unfinished upload of an ended turn removed', { circuit: event.circuit });
      },
      (error: unknown) =>
        this.deps.log.warn('could not remove the upload of an ended turn', {
          circuit: event.circuit,
          error: boundedText(String(error)),
        }),
    );
  }

  /** Free space on the data folder's disk against what a new upload needs (UploadDiskSpace). */
  diskSpace(): Promise<DiskSpace> {
    return this.disk.diskSpace();
  }

  private circuitUploads(circuit: string): CircuitUploads {
    const directory = path.join(this.deps.config.dataDir, 'uploads', circuit);
    const of = (): CircuitUploads => this.circuits.get(circuit)!;
    // tus's own expiry (Upload-Expires headers, refusing a PATCH to an expired upload) agrees with
    // the sweep's; tus's own sweep is not used: it would delete finished uploads awaiting a verdict.
    const datastore = new FollowedFileStore(
      { directory, expirationPeriodInMilliseconds: this.expiryMs },
      {
        beforeWrite: (id, size) => this.beforeWrite(of(), id, size),
        written: (id, size, outcome) => this.written(of(), id, size, outcome),
        beforeRemove: (id) => this.beforeRemove(of(), id),
      },
    );
    const locker = new UploadLocker();
    const server = new TusServer({
      path: `/api/circuits/${circuit}/contributions`,
      datastore,
      locker,
      relativeLocation: true,
      // tus answers `Access-Control-Allow-Origin: *` by default.
      allowedOrigins: (origin) => origin === this.deps.publicOrigin,
      maxSize: async () => largestUploadBytes(await this.heads.size(circuit)),
      onIncomingRequest: (request, uploadId) => this.onIncomingRequest(of(), request, uploadId),
      onUploadCreate: (request, upload) => this.onUploadCreate(of(), request, upload),
      onUploadFinish: (request, upload) => this.finishUpload(of(), request, upload),
      onResponseError: (request, error) => this.onResponseError(circuit, request, error),
    });
    // Bytes arriving in a PATCH, every postReceiveInterval (1 s): the turn's upload progress (the lobby's stall rule).
    server.on('POST_RECEIVE', (_request, upload) => this.uploadProgress(circuit, upload));
    return { circuit, directory, datastore, locker, server, creations: new OneAtATime() };
  }

  /** Every request: signed in, the turn's holder, creations within the rules, the upload its own and not complete. */
  private async onIncomingRequest(uploads: CircuitUploads, request: TusRequest, uploadId: string): Promise<void> {
    const { circuit } = uploads;
    const principal = principalOf(request as never);
    if (!principal) throw tusError(new CoordinatorError('auth.required', 'sign in before uploading a contribution'));
    await asTusError(() => this.deps.lobby.requireTurn(principal.id, circuit));
    const { method, headers } = request;
    if (method === 'POST') {
      await asTusError(async () =>
        checkCreation(declaredUpload(headers.get('upload-metadata'), headers.get('upload-length')), {
          circuit,
          ...(await this.heads.sizes(circuit)),
        }),
      );
      return;
    }
    if (!uploadId) return;
    // An upload that does not exist is tus's own 404 below; anything else is a disk problem to log.
    const upload = await uploads.datastore
      .getUpload(uploadId)
      .catch((error: unknown) => this.sweeper.unlessMissing(error, 'upload metadata unreadable', circuit));
    if (upload && upload.metadata?.contributor !== principal.id) {
      throw tusError(new CoordinatorError('lobby.not_your_turn', 'this upload belongs to another contributor'));
    }
    // What earlier PATCHes stored (one shorter than POST_RECEIVE's interval reports nothing itself).
    if (upload) this.uploadProgress(circuit, upload);
    // Refused early here, and for good under the upload's lock (beforeWrite, beforeRemove).
    if ((method === 'PATCH' || method === 'DELETE') && this.isComplete(uploads, uploadId))
      throw tusError(completeRefusal());
  }

  /** Tells the lobby how far the turn holder's upload got: progress holds a turn, heartbeats alone do not. */
  private uploadProgress(circuit: string, upload: Upload): void {
    const contributor = upload.metadata?.contributor;
    try {
      if (contributor) this.deps.lobby.uploadProgress(contributor, circuit, upload);
    } catch (error) {
      // Called from the stream's progress events too: a failure here must not break the upload.
      this.deps.log.warn('upload progress not recorded', { circuit, error: String(error).slice(0, 200) });
    }
  }

  private async onUploadCreate(uploads: CircuitUploads, request: unknown, upload: Upload) {
    const principal = principalOf(request as never)!;
    const { circuit } = uploads;
    await this.replaceEarlierUploads(uploads, upload.id);
    const file = path.join(uploads.directory, upload.id);
    const headIndex = await this.heads.current(circuit);
    const createdAt = this.deps.clock.now();
    // The upload replaced may have been handed in with the refusal found in it: that verdict ended the turn.
    // Checked in the transaction that makes the candidate row: a row exists only for the turn's holder.
    await asTusError(() =>
      this.deps.db.transaction(() => {
        this.deps.lobby.requireTurn(principal.id, circuit);
        this.deps.candidates.create({ uploadPath: file, circuit, contributorId: principal.id, headIndex, createdAt });
      })(),
    );
    const disk = await this.disk.reserve(circuit, upload, file);
    if (!disk.accepting) {
      this.deps.candidates.remove(file);
      this.deps.log.warn('upload refused: disk short of space', { ...disk });
      throw tusError(diskFullRefusal());
    }
    this.created.set(request as object, { circuit: uploads, id: upload.id });
    // The creation time by the coordinator's clock, which the sweep judges by.
    return {
      metadata: {
        ...upload.metadata,
        ...ownerMetadata(principal),
        circuit: uploads.circuit,
        createdAt: String(createdAt),
      },
    };
  }

  private onResponseError(circuit: string, request: { method: string }, error: Error | { status_code: number }) {
    // A creation that failed after its file was made (a body larger than declared, a write
    // error): the client never got its URL, so the file could only wait for the sweep.
    const created = request.method === 'POST' ? this.created.get(request) : undefined;
    const removing = created ? this.removeFiles(created.circuit, created.id) : Promise.resolve();
    return removing.then(() =>
      tusAnswerTo(error, (text) => this.deps.log.warn('upload failed', { circuit, error: text })),
    );
  }

  /** An upload whose last byte arrived: being finished here, or handed in and awaiting its verdict. */
  private isComplete(uploads: CircuitUploads, id: string): boolean {
    const file = path.join(uploads.directory, id);
    return this.ledger.isFinishing(file) || this.deps.service.candidatesAwaitingVerdict().has(file);
  }

  /**
   * Under the upload's lock, before a write: refuses one to a complete upload, or to a delta whose
   * intake found its refusal (its layout, its record, a point), which is handed in with it: the verdict.
   */
  private async beforeWrite(uploads: CircuitUploads, id: string, _size: number | undefined): Promise<void> {
    if (this.isComplete(uploads, id)) throw tusError(completeRefusal());
    // The bytes of the writes before this one checked first (a few reads each): a fault in them refuses this one.
    await this.ledger.tableCheckOf(path.join(uploads.directory, id))?.caughtUp();
    const refusal = await this.handInFoundRefusal(uploads, id);
    if (refusal) throw tusError(refusal);
  }

  /**
   * Under the upload's lock (no finish can hand it in beside this): when its intake or its table
   * check found its refusal, hands it in with it, the verdict, and deletes it; returns the refusal.
   * Whatever comes next (a PATCH, a DELETE, a new creation replacing it, the sweep), before or after a
   * restart, a refusal found is the turn's: it is handed in under the owner stored with the upload,
   * after a restart as its candidate row kept it (the intake that found it went with the process).
   */
  private async handInFoundRefusal(uploads: CircuitUploads, id: string): Promise<CoordinatorError | undefined> {
    const file = path.join(uploads.directory, id);
    const refusal = this.ledger.refusalOf(file) ?? this.deps.candidates.refusalOf(file);
    if (!refusal) return undefined;
    this.deps.log.info('upload refused while it arrived', { circuit: uploads.circuit, code: refusal.code });
    const owner = ownerOf((await this.sweeper.storedUpload(uploads.circuit, uploads.directory, id))?.metadata);
    const size = await stat(file).then(
      (s) => s.size,
      () => 0,
    );
    // An owner who no longer holds the turn is refused by submit (logged), and the upload is only deleted.
    if (owner)
      await this.handIns.handInRefused(uploads.circuit, owner, file, size, refusal).catch((error: unknown) =>
        this.deps.log.info('a refused upload could not be handed in', {
          circuit: uploads.circuit,
          code: isCoordinatorError(error) ? error.code : boundedText(String(error)),
        }),
      );
    await this.removeFiles(uploads, id);
    return refusal;
  }

  /** Under the upload's lock, before tus deletes it (DELETE): never one whose last byte arrived. */
  private async beforeRemove(uploads: CircuitUploads, id: string): Promise<void> {
    if (this.isComplete(uploads, id)) throw tusError(completeRefusal());
    const refusal = await this.handInFoundRefusal(uploads, id);
    if (refusal) throw tusError(refusal);
    await this.ledger.dropIntake(path.join(uploads.directory, id));
    this.deps.candidates.remove(path.join(uploads.directory, id));
  }

  /**
   * tus wrote to an upload (under its lock): the write that stored the last byte marks it
   * finishing; a delta's intake (started on the first write that ended, even after a restart)
   * reads on.
   */
  private written(
    uploads: CircuitUploads,
    id: string,
    size: number,
    outcome: { cutShort: boolean; complete: boolean },
  ): void {
    // A write that broke off starts nothing: only one that ended is the upload's own progress.
    const mayStart = !outcome.cutShort && !this.closed;
    this.handIns.written(
      uploads.circuit,
      path.join(uploads.directory, id),
      size,
      outcome.complete,
      mayStart,
      async () => {
        await this.leftoversRemoved; // its temporary key must not be taken for a stopped one's
        return uploads.datastore.getUpload(id);
      },
    );
  }

  /**
   * onUploadFinish: the request that stored the last byte hands the upload in (a delta filled
   * back into the key first); a refusal deletes the upload and answers that request.
   */
  private async finishUpload(uploads: CircuitUploads, request: unknown, upload: Upload) {
    const file = path.join(uploads.directory, upload.id);
    // Marked by the write of its last byte (written): no other request gets here for this upload.
    if (!this.ledger.isFinishing(file)) throw tusError(completeRefusal());
    try {
      return await this.handIns.handIn(uploads.circuit, principalOf(request as never)!, upload, file);
    } finally {
      this.ledger.endFinish(file);
    }
  }

  /** Whether the contributor holds the circuit's turn now (not handed in yet); not counted as a sign of life. */
  private turnHeld(contributorId: string, circuit: string): boolean {
    return this.deps.lobby
      .activeTurns()
      .some((turn) => turn.circuit === circuit && turn.contributorId === contributorId && turn.state === 'turn');
  }

  /** Deletes every other upload of the circuit, except finished ones awaiting a verdict. */
  private async replaceEarlierUploads(uploads: CircuitUploads, newId: string): Promise<void> {
    const awaiting = this.deps.service.candidatesAwaitingVerdict();
    const earlier = (await this.sweeper.uploadIds(uploads.directory)).filter(
      (id) => id !== newId && !awaiting.has(path.join(uploads.directory, id)),
    );
    const refuseSubmitting = (): never => {
      throw tusError(submittingRefusal());
    };
    if (earlier.some((id) => this.ledger.isFinishing(path.join(uploads.directory, id)))) refuseSubmitting();
    for (const id of earlier) {
      if (!(await this.removeUpload(uploads, id))) refuseSubmitting();
      this.deps.log.info('upload replaced by a new one', { circuit: uploads.circuit, upload: id });
    }
  }

  /**
   * Deletes an upload under its tus lock: a PATCH still writing to it is asked to stop (tus lets
   * it drain briefly) before the file goes. Returns false, deleting nothing, if its last byte
   * arrived meanwhile and it is being handed in, or was handed in and awaits its verdict.
   */
  private async removeUpload(uploads: CircuitUploads, id: string): Promise<boolean> {
    const lock = uploads.locker.newLock(id);
    await lock.lock(new AbortController().signal, async () => {});
    try {
      const file = path.join(uploads.directory, id);
      if (this.ledger.isFinishing(file)) return false;
      // Asked here, under the lock, not taken from the caller: a list read before it (a sweep's, read
      // once before its walk) may date from before this upload was handed in, when it was only finishing.
      if (this.deps.service.candidatesAwaitingVerdict().has(file)) return false;
      await this.handInFoundRefusal(uploads, id);
      await this.removeFiles(uploads, id);
      return true;
    } finally {
      await lock.unlock();
    }
  }

  /** Removes an upload's files, its intake aborted first (its temporary key goes with it). */
  private async removeFiles(uploads: CircuitUploads, id: string): Promise<void> {
    const file = path.join(uploads.directory, id);
    this.disk.release(file);
    this.deps.candidates.remove(file);
    await this.ledger.dropIntake(file);
    await rm(file, { force: true });
    await rm(`${file}.json`, { force: true });
  }
}
