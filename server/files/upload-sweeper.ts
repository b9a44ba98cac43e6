/**
 * The sweeping of old files in the uploads folders (one folder per circuit), so nothing stays
 * behind and nothing accepted is lost:
 *  - an upload that cannot finish any more (its turn ended, or older than the longest turn plus a
 *    sweep period by the coordinator's clock) is deleted, but never one whose last byte arrived:
 *    one being finished, or handed in and waiting for its verdict, however long the verifiers are
 *    away;
 *  - a temporary key whose owner is gone (an intake or a splice cut off by a crash, or one whose
 *    upload went away) is deleted, at start (before any intake starts) and at every sweep while
 *    running; an intake whose upload is gone is aborted.
 * It runs every `periodMs`; its timer never keeps a stopped coordinator (or a test) alive.
 */
import path from 'node:path';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { boundedText } from '../../core/bounded-text.ts';
import { isTempPath } from '../../core/fs/atomic-write.ts';
import type { Clock } from '../clock.ts';
import type { ServiceLog } from '../ceremony-service.ts';
import type { UploadLedger } from './upload-ledger.ts';

/** What tus keeps next to each upload (`<id>.json`). */
export interface StoredUpload {
  size?: number;
  offset?: number;
  creation_date?: string;
  metadata?: Record<string, string | null>;
}

export interface UploadSweeperDeps {
  /** Each circuit's uploads folder. */
  folders: ReadonlyMap<string, string>;
  ledger: UploadLedger;
  clock: Clock;
  log: ServiceLog;
  /** Age (coordinator clock) after which an unfinished upload is deleted. */
  expiryMs: number;
  /** Files of the candidates handed in and waiting for a verdict (never swept). */
  awaitingVerdict(): Set<string>;
  /** Whether the contributor holds the circuit's turn (an unfinished upload of theirs may still finish). */
  turnHeld(contributorId: string, circuit: string): boolean;
  /**
   * Deletes an upload under its tus lock; false if it is being finished meanwhile, or awaits its
   * verdict (asked again there: `awaitingVerdict` read before may predate its hand-in).
   */
  removeUpload(circuit: string, id: string): Promise<boolean>;
}

/** The upload file a temporary key was made for (tempPathFor's `.NAME.RANDOM.tmp`), in the same folder. */
function ownerOfTemporaryKey(directory: string, tempName: string): string {
  return path.join(directory, tempName.replace(/^\./, '').replace(/\.[0-9a-f]+\.tmp$/, ''));
}

export class UploadSweeper {
  private sweeping: Promise<number> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: UploadSweeperDeps) {}

  /** Sweeps every `periodMs` from now on. */
  start(periodMs: number): void {
    this.timer = setInterval(() => {
      this.sweep().catch((error: unknown) =>
        this.deps.log.warn('upload sweep failed', { error: boundedText(String(error)) }),
      );
    }, periodMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a sweep under way. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping?.catch(() => undefined);
  }

  /**
   * One sweep: uploads of ended turns and expired ones, then temporary keys and intakes whose owner
   * is gone. Returns the uploads deleted.
   */
  sweep(): Promise<number> {
    this.sweeping ??= (async () => {
      const removed = await this.removeUnfinishable();
      await this.removeOrphans();
      return removed;
    })().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /**
   * Deletes the unfinished upload(s) of `contributorId` in the circuit's `directory` (a PATCH still
   * writing is stopped first); finished ones waiting for their verdict, or being handed in, are kept.
   */
  async discardUnfinished(circuit: string, directory: string, contributorId: string): Promise<number> {
    let removed = 0;
    for (const id of await this.uploadIds(directory)) {
      const stored = await this.storedUpload(circuit, directory, id);
      if (stored?.metadata?.contributor !== contributorId) continue;
      if (!this.deps.ledger.isFinishing(path.join(directory, id)) && (await this.deps.removeUpload(circuit, id)))
        removed++;
    }
    return removed;
  }

  /**
   * Removes every temporary key in the uploads folders: at start, before any intake starts, none
   * has an owner (no intake survives a restart, and each would hold up to a key's size).
   */
  async removeLeftoverTemporaryKeys(): Promise<void> {
    for (const directory of this.deps.folders.values()) {
      const names = await readdir(directory).catch(() => []);
      await Promise.all(names.filter(isTempPath).map((name) => rm(path.join(directory, name), { force: true })));
    }
  }

  /** Every upload in a folder, including halves of one a crash left (data or metadata only). */
  async uploadIds(directory: string): Promise<string[]> {
    const entries = await readdir(directory).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    // A temporary key (an intake's, a splice's) is not an upload: removeOrphans judges those.
    return [...new Set(entries.filter((name) => !isTempPath(name)).map((name) => name.replace(/\.json$/, '')))];
  }

  /** What tus stored next to an upload, or undefined when it is gone or unreadable (logged). */
  async storedUpload(circuit: string, directory: string, id: string): Promise<StoredUpload | undefined> {
    return readFile(path.join(directory, `${id}.json`), 'utf8').then(
      (text) => JSON.parse(text) as StoredUpload,
      (error: unknown) => this.unlessMissing(error, 'upload metadata unreadable', circuit),
    );
  }

  /**
   * For a catch whose caller carries on without the file: a file that is gone is expected (a crash
   * left half an upload, a sweep removed it); any other error is logged with its code, for the
   * operator only, so a failing disk does not pass as missing uploads.
   */
  unlessMissing(error: unknown, what: string, circuit: string): undefined {
    const code = (error as NodeJS.ErrnoException).code;
    const tusStatus = (error as { status_code?: number }).status_code;
    if (code !== 'ENOENT' && tusStatus !== 404 && tusStatus !== 410)
      this.deps.log.warn(what, {
        circuit,
        code: code ?? (tusStatus !== undefined ? `tus ${tusStatus}` : boundedText(String(error))),
      });
    return undefined;
  }

  private async removeUnfinishable(): Promise<number> {
    let removed = 0;
    const awaiting = this.deps.awaitingVerdict();
    const now = this.deps.clock.now();
    for (const [circuit, directory] of this.deps.folders) {
      for (const id of await this.uploadIds(directory)) {
        const file = path.join(directory, id);
        if (awaiting.has(file) || this.deps.ledger.isFinishing(file)) continue;
        const stored = await this.storedUpload(circuit, directory, id);
        const createdAt = await this.createdAt(circuit, directory, id, stored);
        const contributor = stored?.metadata?.contributor;
        const turnHeld = typeof contributor === 'string' && this.deps.turnHeld(contributor, circuit);
        if (turnHeld && createdAt !== undefined && now - createdAt <= this.deps.expiryMs) continue;
        if (await this.deps.removeUpload(circuit, id)) removed++;
      }
    }
    return removed;
  }

  /** Temporary keys and intakes whose upload is neither taking bytes in nor being finished. */
  private async removeOrphans(): Promise<void> {
    const { ledger } = this.deps;
    for (const file of ledger.intakeFiles()) {
      const present = await stat(file).then(
        () => true,
        () => false,
      );
      if (!present && !ledger.isFinishing(file)) {
        this.deps.log.info('delta intake aborted: its upload is gone', { upload: path.basename(file) });
        await ledger.dropIntake(file);
      }
    }
    for (const [circuit, directory] of this.deps.folders) {
      const names = (await readdir(directory).catch(() => [])).filter(isTempPath);
      for (const name of names) {
        if (ledger.ownsTemporaryKeyOf(ownerOfTemporaryKey(directory, name))) continue;
        this.deps.log.info('temporary key without an owner removed', { circuit });
        await rm(path.join(directory, name), { force: true });
      }
    }
  }

  /** When an upload was created by the coordinator's clock (undefined: not known, treat as expired). */
  private async createdAt(
    circuit: string,
    directory: string,
    id: string,
    stored: StoredUpload | undefined,
  ): Promise<number | undefined> {
    const recorded = Number(stored?.metadata?.createdAt ?? Number.NaN);
    if (Number.isFinite(recorded)) return recorded;
    const created = Date.parse(stored?.creation_date ?? '');
    if (Number.isFinite(created)) return created;
    // Half an upload (a crash between writing its two files): by the data file's age.
    return stat(path.join(directory, id)).then(
      (s) => s.mtimeMs,
      (error: unknown) => this.unlessMissing(error, 'upload file unreadable', circuit),
    );
  }
}
