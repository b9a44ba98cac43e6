/**
 * Contribution uploads over the resumable tus protocol (@tus/server, FileStore), one endpoint per
 * circuit at /api/circuits/:name/contributions. Only the signed-in holder of the turn on that
 * circuit may create an upload, and only its owner may resume it (PATCH/HEAD) while the turn
 * lasts. The upload streams to a file in the data folder; nothing is held in memory. When the
 * last byte arrives the file is handed to the ceremony service, which hashes and verifies it.
 *
 * An upload is the whole next key (metadata `format` absent or `zkey`), or its skeleton
 * (`format: zkey-delta-v1`, docs/contribution-delta.md): only the sections a contribution changes.
 * A skeleton is checked against the head and filled back into the full key (core/delta) when its
 * last byte arrives, before it is handed in; from there both are the same file, verified alike.
 * The filling, the key's hash and the link check's sums are made while the skeleton arrives
 * (delta-intake.ts), so little of that is left once its last byte is in.
 *
 * Limits, each refused at creation before a byte is stored:
 *  - size: a valid next link is the head plus exactly one MPC record, so an upload must be at
 *    least head + an empty record (upload.too_small: an empty upload would spend the turn on a
 *    certain refusal) and at most head + 64 KiB (upload.too_large); for a skeleton, the head's
 *    skeleton in place of the head; its length must be declared at creation
 *    (upload.length_required), else these could not be checked; an unknown format is refused
 *    (request.invalid), and so is a skeleton that does not say which head it was made on
 *    (metadata `head`); one made on an older head than the chain's is delta.stale_head;
 *  - one upload in progress per circuit: a new creation by the turn holder replaces the earlier
 *    one (its writer is stopped, its file deleted). Replacing rather than refusing lets a
 *    contributor whose browser lost the upload's URL start over within the same turn, where a
 *    refusal would strand them until the old upload expired, i.e. past their turn. Creations on a
 *    circuit run one at a time, so two racing creations cannot both stay. An upload being handed
 *    in (its last byte arrived) is never replaced: the creation is refused (upload.submitting);
 *  - free space: the data folder's disk must keep room for the largest possible upload plus a
 *    margin (upload.disk_full, 507; the state is shown in /healthz).
 *
 * Nothing stays behind, and nothing accepted is lost: an upload that cannot finish any more
 * (older than the longest turn plus a sweep period, by the coordinator's clock) is deleted by a
 * periodic sweep, but a finished upload waiting for its verdict is never swept, however long the
 * verifier is away; a finished upload the service does not take is deleted at once, and so is an
 * upload whose creation failed (e.g. a creation-with-upload body larger than declared).
 */
import path from 'node:path';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { MemoryLocker, Server as TusServer } from '@tus/server';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { isTempPath } from '../../core/fs/atomic-write.ts';
import { CoordinatorError } from '../../core/errors.ts';
import type { CeremonyConfig } from '../../core/config/ceremony-config.ts';
import { MIN_CONTRIBUTION_RECORD_BYTES } from '../../core/zkey/zkey-file.ts';
import { DELTA_FORMAT } from '../../core/delta/delta-format.ts';
import { skeletonSize, spliceSkeleton } from '../../core/delta/skeleton-zkey.ts';
import { circuitChallengeKey, linkChallengeSeed, stateDirFor } from '../../core/link-check/link-challenge.ts';
import { removeCandidateSums, writeCandidateSums } from '../../core/link-check/link-combination-cache.ts';
import { DeltaIntake, FollowedFileStore, type TakenDelta } from './delta-intake.ts';
import type { Principal } from '../auth/principal.ts';
import type { Lobby } from '../lobby/lobby.ts';
import type { CeremonyService, ServiceLog } from '../ceremony-service.ts';
import type { Clock } from '../clock.ts';
import { checkDiskSpace, type DiskSpace } from './check-disk-space.ts';
import { errorStatus } from '../http/error-status.ts';
import type { SectionHashes } from '../../core/zkey/zkey-hashes.ts';

/** Room for the one new MPC record (≈ 450 bytes plus a name of up to 64) over the head's size. */
const NEXT_LINK_SLACK_BYTES = 64 * 1024;
/** How often unfinished uploads past their expiry are looked for. */
const EXPIRY_SWEEP_MS = 60_000;

function uploadsDir(config: CeremonyConfig): string {
  return path.join(config.dataDir, 'uploads');
}

export interface ContributionUploadsDeps {
  config: CeremonyConfig;
  lobby: Lobby;
  service: CeremonyService;
  clock: Clock;
  log: ServiceLog;
  /** Free space to keep beyond the largest possible upload (UPLOAD_DISK_MARGIN_BYTES). */
  diskMarginBytes: number;
  /**
   * The one origin tus answers CORS for (PUBLIC_URL's): uploads carry the session cookie and CSRF
   * token, so no other origin may read the answers. Absent: none (the app is same-origin).
   */
  publicOrigin?: string;
  /** Told when an upload received its last byte, `durationMs` after it was created (metrics). */
  onUploadFinished?: (circuit: string, durationMs: number) => void;
}

interface CircuitUploads {
  circuit: string;
  directory: string;
  datastore: FollowedFileStore;
  locker: MemoryLocker;
  server: TusServer;
  /** The tail of this circuit's creations, which run one at a time. */
  creations: Promise<void>;
}

/** The upload formats taken (tus metadata `format`); absent means the whole key. */
const UPLOAD_FORMATS = ['zkey', DELTA_FORMAT] as const;
type UploadFormat = (typeof UPLOAD_FORMATS)[number];

/** A creation's Upload-Metadata (`key base64,key base64`), decoded. */
function declaredMetadata(headers: Headers): Map<string, string> {
  const metadata = new Map<string, string>();
  for (const pair of (headers.get('upload-metadata') ?? '').split(',')) {
    const [key, value] = pair.trim().split(' ');
    if (key) metadata.set(key, Buffer.from(value ?? '', 'base64').toString('utf8'));
  }
  return metadata;
}

/** The declared `format` ('zkey' when absent); a delta also declares the head it was made on (`head`). */
function declaredFormat(metadata: Map<string, string>): { format: UploadFormat; head?: number } {
  const format = metadata.get('format') ?? 'zkey';
  if (!(UPLOAD_FORMATS as readonly string[]).includes(format)) {
    throw new CoordinatorError(
      'request.invalid',
      `unknown upload format "${format.slice(0, 40)}"; this coordinator takes ${UPLOAD_FORMATS.join(' or ')}`,
    );
  }
  if (format !== DELTA_FORMAT) return { format: 'zkey' };
  const head = metadata.get('head') ?? '';
  if (!/^\d{1,6}$/.test(head)) {
    throw new CoordinatorError(
      'request.invalid',
      `a ${DELTA_FORMAT} upload declares the index of the head it was made on (metadata "head", X-Chain-Head ` +
        'of the inputs downloaded)',
    );
  }
  return { format: DELTA_FORMAT, head: Number(head) };
}

/** What tus keeps next to each upload (`<id>.json`). */
interface StoredUpload {
  size?: number;
  creation_date?: string;
  metadata?: Record<string, string | null>;
}

function tusError(error: CoordinatorError): { status_code: number; body: string } {
  return { status_code: errorStatus(error.code), body: JSON.stringify(error.toJSON()) };
}

/** Runs `check`, turning a CoordinatorError into the error shape tus answers with. */
function asTusError<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof CoordinatorError) throw tusError(error);
    throw error;
  }
}

/** The Express request behind a tus request (srvx wraps the Node request; Express decorated it). */
function principalOf(request: { runtime?: { node?: { req?: IncomingMessage } } }): Principal | undefined {
  return (request.runtime?.node?.req as (IncomingMessage & { principal?: Principal }) | undefined)?.principal;
}

export class ContributionUploads {
  /** Age (coordinator clock) after which an unfinished upload is deleted: the longest turn plus a sweep period. */
  readonly expiryMs: number;
  /** Express handler for every upload route; the session middleware must run before it. */
  readonly handler: RequestHandler;
  private readonly circuits = new Map<string, CircuitUploads>();
  /** Uploads whose last byte arrived and that are being handed to the service (file paths). */
  private readonly finishing = new Set<string>();
  /** Deltas being taken in as they upload (delta-intake.ts), by upload file; undefined: not a delta. */
  private readonly intakes = new Map<string, Promise<DeltaIntake | undefined>>();
  private closed = false;
  /** The upload each creation request made, so a creation that fails afterwards is removed. */
  private readonly created = new WeakMap<object, { circuit: CircuitUploads; id: string }>();
  private readonly timer: NodeJS.Timeout;
  private sweeping: Promise<number> | undefined;
  /** Done once the temporary keys a stopped coordinator left are gone (started at construction). */
  readonly leftoversRemoved: Promise<void>;

  constructor(private readonly deps: ContributionUploadsDeps) {
    // Margin over the longest turn, so an upload is never removed under a turn that is still running.
    this.expiryMs = deps.lobby.longestTurnMs + EXPIRY_SWEEP_MS;
    for (const { name } of deps.config.circuits) this.circuits.set(name, this.createCircuitUploads(name));
    this.leftoversRemoved = this.removeLeftoverTemps().catch((error: unknown) =>
      deps.log.warn('could not remove temporary keys left by a stop', { error: String(error) }),
    );
    // Unreferenced: the sweep must never keep a stopped coordinator (or a test) alive.
    this.timer = setInterval(() => {
      this.sweepExpired().catch((error: unknown) => deps.log.warn('upload sweep failed', { error: String(error) }));
    }, EXPIRY_SWEEP_MS);
    this.timer.unref();
    this.handler = async (req: Request, res: Response) => {
      const uploads = this.circuits.get(String(req.params.name));
      if (!uploads) throw new CoordinatorError('circuit.unknown', `unknown circuit "${req.params.name}"`);
      if (req.method === 'POST' && this.holdsTurn(req, uploads.circuit)) {
        await this.oneAtATime(uploads, () => uploads.server.handle(req, res));
      } else {
        await uploads.server.handle(req, res);
      }
    };
  }

  /** Stops the periodic sweep (waiting for a running one) and the intakes of deltas still uploading. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.closed = true;
    await this.leftoversRemoved;
    await this.sweeping?.catch(() => {});
    const intakes = [...this.intakes.values()];
    this.intakes.clear();
    // An upload resumed after a restart is taken in again from its first byte.
    await Promise.all(intakes.map(async (intake) => (await intake.catch(() => undefined))?.abort()));
  }

  /**
   * Deletes every upload older than `expiryMs` by the coordinator's clock, except finished ones
   * waiting for their verdict (or being handed in). Returns how many it deleted.
   */
  sweepExpired(): Promise<number> {
    this.sweeping ??= (async () => {
      let removed = 0;
      const awaiting = this.deps.service.candidatesAwaitingVerdict();
      const now = this.deps.clock.now();
      for (const uploads of this.circuits.values()) {
        for (const id of await this.uploadIds(uploads)) {
          const file = path.join(uploads.directory, id);
          if (awaiting.has(file) || this.finishing.has(file)) continue;
          const createdAt = await this.createdAt(uploads, id);
          if (createdAt !== undefined && now - createdAt <= this.expiryMs) continue;
          if (await this.removeUpload(uploads, id, awaiting)) removed++;
        }
      }
      return removed;
    })().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /**
   * Deletes the unfinished upload(s) of `contributorId` on `circuit`, as when they give up their
   * turn (POST /api/me/leave): a PATCH still writing is stopped first. Finished uploads waiting for
   * their verdict, or being handed in, are kept. Returns how many it deleted.
   */
  async discardUnfinished(circuit: string, contributorId: string): Promise<number> {
    const uploads = this.circuits.get(circuit);
    if (!uploads) return 0;
    const awaiting = this.deps.service.candidatesAwaitingVerdict();
    let removed = 0;
    for (const id of await this.uploadIds(uploads)) {
      const owner = await readFile(path.join(uploads.directory, `${id}.json`), 'utf8').then(
        (text) => (JSON.parse(text) as StoredUpload).metadata?.contributor,
        (error: unknown) => this.unlessMissing(error, 'upload metadata unreadable', circuit),
      );
      if (owner !== contributorId) continue;
      if (!this.finishing.has(path.join(uploads.directory, id)) && (await this.removeUpload(uploads, id, awaiting)))
        removed++;
    }
    return removed;
  }

  /** Free space on the data folder's disk against the largest possible upload plus the margin. */
  async diskSpace(): Promise<DiskSpace> {
    let largest = 0;
    for (const circuit of this.circuits.keys())
      largest = Math.max(largest, (await this.headSize(circuit)) + NEXT_LINK_SLACK_BYTES);
    return checkDiskSpace(this.deps.config.dataDir, largest + this.deps.diskMarginBytes);
  }

  private createCircuitUploads(circuit: string): CircuitUploads {
    const directory = path.join(uploadsDir(this.deps.config), circuit);
    // tus's own expiry (Upload-Expires headers, refusing a PATCH to an expired upload) agrees with
    // the sweep's; tus's own sweep is not used: it would delete finished uploads awaiting a verdict.
    const datastore = new FollowedFileStore({ directory, expirationPeriodInMilliseconds: this.expiryMs }, (id, size) =>
      this.uploadWritten(uploads, id, size),
    );
    const locker = new MemoryLocker();
    const uploads: CircuitUploads = {
      circuit,
      directory,
      datastore,
      locker,
      server: undefined as never,
      creations: Promise.resolve(),
    };
    uploads.server = new TusServer({
      path: `/api/circuits/${circuit}/contributions`,
      datastore,
      locker,
      relativeLocation: true,
      // tus answers `Access-Control-Allow-Origin: *` by default.
      allowedOrigins: (origin) => origin === this.deps.publicOrigin,
      maxSize: async () => (await this.headSize(circuit)) + NEXT_LINK_SLACK_BYTES,
      onIncomingRequest: async (request, uploadId) => {
        const principal = principalOf(request as never);
        if (!principal)
          throw tusError(new CoordinatorError('auth.required', 'sign in before uploading a contribution'));
        asTusError(() => this.deps.lobby.requireTurn(principal.id, circuit));
        if (request.method === 'POST') {
          await this.checkCreation(circuit, request.headers);
        } else if (uploadId) {
          // An upload that does not exist is tus's own 404 below; anything else is a disk problem to log.
          const upload = await datastore
            .getUpload(uploadId)
            .catch((error: unknown) => this.unlessMissing(error, 'upload metadata unreadable', circuit));
          if (upload && upload.metadata?.contributor !== principal.id) {
            throw tusError(new CoordinatorError('lobby.not_your_turn', 'this upload belongs to another contributor'));
          }
        }
      },
      onUploadCreate: async (request, upload) => {
        const principal = principalOf(request as never)!;
        await this.replaceEarlierUploads(uploads, upload.id);
        const disk = await this.diskSpace();
        if (!disk.accepting) {
          this.deps.log.warn('upload refused: disk short of space', { ...disk });
          throw tusError(
            new CoordinatorError(
              'upload.disk_full',
              'the coordinator is short of disk space and takes no uploads for now; please try again later',
            ),
          );
        }
        this.created.set(request, { circuit: uploads, id: upload.id });
        // The creation time by the coordinator's clock, which the sweep judges by.
        return {
          metadata: {
            ...upload.metadata,
            contributor: principal.id,
            circuit,
            createdAt: String(this.deps.clock.now()),
          },
        };
      },
      onUploadFinish: async (request, upload) => {
        const principal = principalOf(request as never)!;
        const file = path.join(directory, upload.id);
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
        this.finishing.add(file);
        let fileHash: string | undefined;
        let sectionHashes: SectionHashes | undefined;
        try {
          let size = upload.size ?? upload.offset;
          if (upload.metadata?.format === DELTA_FORMAT) {
            // Filled back in place (a temporary file renamed over the upload): from here the
            // upload is the full next key, handed in and verified as a full upload is.
            const started = Date.now();
            const taken = await this.takeDelta(circuit, file, size);
            fileHash = taken?.fileHash;
            sectionHashes = taken?.sectionHashes;
            size = (await stat(file)).size;
            this.deps.log.info('contribution delta spliced onto the head', {
              circuit,
              ms: Date.now() - started,
              asItArrived: taken !== undefined,
              sums: taken?.sums !== undefined,
              ...(taken?.sumsOff ? { sumsOff: taken.sumsOff } : {}),
            });
          }
          const row = await this.deps.service.submit({ principal, circuit, path: file, size, fileHash, sectionHashes });
          return { status_code: 204, headers: { 'X-Contribution-Id': row.id } };
        } catch (error) {
          await this.removeFiles(uploads, upload.id);
          // Kept for the verifier of a key that was not handed in: no verifier will remove them.
          if (fileHash) await removeCandidateSums(this.stateDir, fileHash).catch(() => {});
          if (error instanceof CoordinatorError) throw tusError(error);
          throw error;
        } finally {
          this.finishing.delete(file);
          // A whole-key upload's entry (no intake: undefined) would otherwise stay for the server's life.
          this.intakes.delete(file);
        }
      },
      onResponseError: async (request, error) => {
        // A creation that failed after its file was made (a body larger than declared, a write
        // error): the client never got its URL, so the file could only wait for the sweep.
        const created = request.method === 'POST' ? this.created.get(request) : undefined;
        if (created) await this.removeFiles(created.circuit, created.id);
        if ('status_code' in error) {
          if (error.status_code === 413) {
            return tusError(
              new CoordinatorError(
                'upload.too_large',
                'the file is larger than a valid contribution to this circuit can be',
              ),
            );
          }
          return undefined;
        }
        // Never the error's text: it may name server paths.
        this.deps.log.warn('upload failed', { circuit, error: String(error) });
        return tusError(new CoordinatorError('upload.failed', 'the coordinator could not store the upload'));
      },
    });
    return uploads;
  }

  private holdsTurn(req: Request, circuit: string): boolean {
    const principal = (req as Request & { principal?: Principal }).principal;
    if (!principal) return false;
    try {
      this.deps.lobby.requireTurn(principal.id, circuit);
      return true;
    } catch {
      return false;
    }
  }

  private oneAtATime<T>(uploads: CircuitUploads, work: () => Promise<T>): Promise<T> {
    const run = uploads.creations.then(work, work);
    uploads.creations = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** tus wrote to an upload: a delta's intake (started on its first write, even after a restart) reads on. */
  private uploadWritten(uploads: CircuitUploads, id: string, size: number): void {
    const file = path.join(uploads.directory, id);
    let intake = this.intakes.get(file);
    if (!intake && this.closed) return;
    if (!intake) {
      intake = this.startIntake(uploads, id, file).catch((error: unknown) => {
        this.deps.log.warn('delta intake could not start', { circuit: uploads.circuit, error: String(error) });
        return undefined;
      });
      this.intakes.set(file, intake);
    }
    void intake.then((started) => started?.written(size));
  }

  private async startIntake(uploads: CircuitUploads, id: string, file: string): Promise<DeltaIntake | undefined> {
    const { circuit } = uploads;
    await this.leftoversRemoved; // its temporary key must not be taken for a stopped one's
    const upload = await uploads.datastore.getUpload(id);
    if (upload.metadata?.format !== DELTA_FORMAT) return undefined;
    const headIndex = await this.deps.service.headIndex(circuit);
    if (upload.metadata.head !== String(headIndex)) return undefined;
    return DeltaIntake.start({
      uploadPath: file,
      headIndex,
      headPath: this.headPath(circuit, headIndex),
      circuitKey: await this.challengeKey(circuit),
      onOff: (why) => this.deps.log.info('delta intake off; the upload is spliced when it ends', { circuit, why }),
    });
  }

  /**
   * Makes the full key of a finished delta upload, in place: from its intake when that ran to the
   * end (the hash known, and the link check's sums kept for the verifier), else spliced whole now.
   * Throws the delta's refusal either way.
   */
  private async takeDelta(circuit: string, file: string, size: number): Promise<TakenDelta | undefined> {
    const pending = this.intakes.get(file);
    this.intakes.delete(file);
    const headIndex = await this.deps.service.headIndex(circuit);
    const intake = await pending?.catch(() => undefined);
    // Made on a head that is no longer the head: spliced whole below, whose check refuses it.
    if (intake && intake.headIndex !== headIndex) await intake.abort();
    const taken = intake?.headIndex === headIndex ? await intake.finish(size) : undefined;
    if (!taken) {
      await spliceSkeleton(this.headPath(circuit, headIndex), file, file);
      return undefined;
    }
    if (taken.sums) {
      // Without them the verifier sums L and H itself: slower, same verdict.
      const key = await this.challengeKey(circuit);
      await writeCandidateSums(this.stateDir, key, taken.fileHash, taken.sums).catch((error: unknown) =>
        this.deps.log.warn('could not keep a candidate’s sums', { circuit, error: String(error) }),
      );
    }
    return taken;
  }

  private get stateDir(): string {
    return stateDirFor(this.deps.config.dataDir);
  }

  /** The circuit's secret link-challenge key, under which the intake sums and the verifier checks. */
  private async challengeKey(circuit: string): Promise<Uint8Array> {
    return circuitChallengeKey(await linkChallengeSeed(this.stateDir), circuit);
  }

  private headPath(circuit: string, headIndex: number): string {
    return ceremonyPaths(this.deps.config.dataDir).zkeyPath(circuit, headIndex);
  }

  private async headSize(circuit: string): Promise<number> {
    return (await stat(this.headPath(circuit, await this.deps.service.headIndex(circuit)))).size;
  }

  /**
   * A creation must name a known format (a delta, the current head), declare its length, and fit
   * a next link in its format (tus checks the maximum of a whole key; a skeleton's, smaller, here).
   */
  private async checkCreation(circuit: string, headers: Headers): Promise<void> {
    const { format, head } = asTusError(() => declaredFormat(declaredMetadata(headers)));
    const headIndex = await this.deps.service.headIndex(circuit);
    if (head !== undefined && head !== headIndex) {
      throw tusError(
        new CoordinatorError(
          'delta.stale_head',
          `this delta was made on contribution ${head}, but the head of ${circuit} is now contribution ` +
            `${headIndex}; download the head's inputs again and contribute on them`,
        ),
      );
    }
    const declared = headers.get('upload-length');
    if (declared === null) {
      throw tusError(
        new CoordinatorError(
          'upload.length_required',
          'declare the size of the contribution when creating the upload (Upload-Length)',
        ),
      );
    }
    const delta = format === DELTA_FORMAT;
    const base = delta ? await skeletonSize(this.headPath(circuit, headIndex)) : await this.headSize(circuit);
    const what = delta ? "the head's skeleton" : 'the head';
    const minimum = base + MIN_CONTRIBUTION_RECORD_BYTES;
    if (Number(declared) < minimum) {
      throw tusError(
        new CoordinatorError(
          'upload.too_small',
          `a contribution to ${circuit} is at least ${minimum} bytes (${what} ` +
            `plus one contribution record); this upload declares ${declared}`,
        ),
      );
    }
    if (delta && Number(declared) > base + NEXT_LINK_SLACK_BYTES) {
      throw tusError(
        new CoordinatorError(
          'upload.too_large',
          `a contribution delta to ${circuit} is at most ${base + NEXT_LINK_SLACK_BYTES} bytes ` +
            `(${what} plus one contribution record); this upload declares ${declared}`,
        ),
      );
    }
  }

  /** Deletes every other upload of the circuit, except finished ones awaiting a verdict. */
  private async replaceEarlierUploads(uploads: CircuitUploads, newId: string): Promise<void> {
    const awaiting = this.deps.service.candidatesAwaitingVerdict();
    const earlier = (await this.uploadIds(uploads)).filter(
      (id) => id !== newId && !awaiting.has(path.join(uploads.directory, id)),
    );
    const refuseSubmitting = (): never => {
      throw tusError(
        new CoordinatorError(
          'upload.submitting',
          'your previous upload for this circuit is being handed in; wait for its verdict',
        ),
      );
    };
    if (earlier.some((id) => this.finishing.has(path.join(uploads.directory, id)))) refuseSubmitting();
    for (const id of earlier) {
      if (!(await this.removeUpload(uploads, id, awaiting))) refuseSubmitting();
      this.deps.log.info('upload replaced by a new one', { circuit: uploads.circuit, upload: id });
    }
  }

  /**
   * Deletes an upload under its tus lock: a PATCH still writing to it is asked to stop (tus lets
   * it drain briefly) before the file goes. Returns false, deleting nothing, if its last byte
   * arrived meanwhile and it is being handed in.
   */
  private async removeUpload(uploads: CircuitUploads, id: string, awaiting: Set<string>): Promise<boolean> {
    const lock = uploads.locker.newLock(id);
    await lock.lock(new AbortController().signal, async () => {});
    try {
      const file = path.join(uploads.directory, id);
      if (this.finishing.has(file)) return false;
      if (awaiting.has(file)) return true;
      await this.removeFiles(uploads, id);
      return true;
    } finally {
      await lock.unlock();
    }
  }

  private async removeFiles(uploads: CircuitUploads, id: string): Promise<void> {
    const file = path.join(uploads.directory, id);
    const intake = this.intakes.get(file);
    this.intakes.delete(file);
    await (await intake?.catch(() => undefined))?.abort();
    await rm(file, { force: true });
    await rm(`${file}.json`, { force: true });
  }

  /** Every upload in the circuit's folder, including halves of one a crash left (data or metadata only). */
  private async uploadIds(uploads: CircuitUploads): Promise<string[]> {
    const entries = await readdir(uploads.directory).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    // A temporary key (an intake's, a splice's) is not an upload: its owner removes it, or a restart does.
    return [...new Set(entries.filter((name) => !isTempPath(name)).map((name) => name.replace(/\.json$/, '')))];
  }

  /**
   * Removes the temporary keys a stopped coordinator left in the uploads folders (an intake or a
   * splice cut off by a crash): no intake survives a restart, and each would hold up to a key's size.
   */
  private async removeLeftoverTemps(): Promise<void> {
    for (const { directory } of this.circuits.values()) {
      const names = await readdir(directory).catch(() => []);
      await Promise.all(names.filter(isTempPath).map((name) => rm(path.join(directory, name), { force: true })));
    }
  }

  /** When an upload was created by the coordinator's clock (undefined: not known, treat as expired). */
  private async createdAt(uploads: CircuitUploads, id: string): Promise<number | undefined> {
    const stored = await readFile(path.join(uploads.directory, `${id}.json`), 'utf8').then(
      (text) => JSON.parse(text) as StoredUpload,
      (error: unknown) => this.unlessMissing(error, 'upload metadata unreadable', uploads.circuit),
    );
    const recorded = Number(stored?.metadata?.createdAt ?? Number.NaN);
    if (Number.isFinite(recorded)) return recorded;
    const created = Date.parse(stored?.creation_date ?? '');
    if (Number.isFinite(created)) return created;
    // Half an upload (a crash between writing its two files): by the data file's age.
    return stat(path.join(uploads.directory, id)).then(
      (s) => s.mtimeMs,
      (error: unknown) => this.unlessMissing(error, 'upload file unreadable', uploads.circuit),
    );
  }

  /**
   * For a catch whose caller carries on without the file: a file that is gone is expected (a crash
   * left half an upload, a sweep removed it); any other error is logged with its code, for the
   * operator only, so a failing disk does not pass as missing uploads.
   */
  private unlessMissing(error: unknown, what: string, circuit: string): undefined {
    const code = (error as NodeJS.ErrnoException).code;
    const tusStatus = (error as { status_code?: number }).status_code;
    if (code !== 'ENOENT' && tusStatus !== 404 && tusStatus !== 410)
      this.deps.log.warn(what, {
        circuit,
        code: code ?? (tusStatus !== undefined ? `tus ${tusStatus}` : String(error)),
      });
    return undefined;
  }
}
