/**
 * `ceremony backup --data DIR OUT`: a consistent copy of a ceremony, taken while its coordinator
 * runs, that is itself a data folder: copied back into place (`cp -a OUT DATA`), a coordinator
 * starts on it with every contribution accepted before it and every receipt of them valid.
 *
 * Consistency. The transcript commits a link, then the coordinator records its verdict and its queue
 * log's acceptance in SQLite; both are written while it holds the writers' lock for the transcript.
 * So the transcript is read and the database copied (SQLite's online backup: one snapshot) while
 * this holds that lock: no link is committed meanwhile, every acceptance the copied database holds
 * names a link the copied transcript holds, and a link committed whose verdict the database had not
 * recorded yet is a contribution still `verifying` there, which the restored coordinator settles
 * from the transcript at its start (accepted). The lock is held for that moment only (a coordinator's
 * commit that meets it tries again a second later); the keys are copied after, and are exactly the
 * ones the transcript read records (a key never changes under its index; an orphan beyond a head is
 * not one), each checked against the BLAKE2b-512 the transcript records as it is copied.
 *
 * Left out, on purpose: the public queue log's file (the restored coordinator writes it again from
 * its database, which is the log's source of truth; a copy taken apart from the database could hold
 * entries the database lacks, which stops a coordinator), uploads in progress (their contributors
 * upload again), `state/skeletons/` (the heads' skeletons, made again on demand), lock files,
 * temporary files. The private state is copied with mode 0600 (folders 0700); the receipt signing
 * key and the link check's seed are named secret in backup.json and in the result.
 *
 * Crash safe: written under a temporary name beside OUT (its owner's lock beside it, so the next
 * backup to OUT removes what a killed one left), flushed, then renamed; an existing OUT is refused.
 * With `linkDest`, the files of an earlier backup that did not change are hard-linked, not copied.
 */
import { createHash } from 'node:crypto';
import { chmod, link, readdir, readFile, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { loadCeremonyConfig, type CeremonyConfig } from '../config/ceremony-config.ts';
import { parseTranscript } from '../transcript/transcript.ts';
import { FILE_HASH_ALGORITHM } from '../crypto/file-hash.ts';
import { fsyncDirectory, isTempPath, makeDirectory } from '../fs/atomic-write.ts';
import { copyNewFlushed, writeNewFlushed } from '../fs/flushed-copy.ts';
import { makeOwnedWorkFolder, removeDeadOwnersFolders } from '../fs/owned-work-folders.ts';
import { CoordinatorError, isCoordinatorError } from '../errors.ts';
import { silentProgress, type Progress } from '../ceremony/progress.ts';
import { publicFileList, type PublicFile } from '../publish/public-file-list.ts';
import { CHALLENGE_SEED_FILE, stateDirFor } from '../link-check/link-challenge.ts';
import { ceremonyPaths } from './ceremony-paths.ts';
import { withCeremonyLock } from './ceremony-lock.ts';
import { copySqliteOnline, settleDatabaseCopy } from './sqlite-online-backup.ts';
import {
  BACKUP_RECORD_FILE,
  newBackupRecord,
  readBackupRecord,
  type BackedUpFile,
  type BackupRecord,
} from './backup-record.ts';

const SUBJECT = 'backup';
const DATABASE_COPY = 'state/coordinator.sqlite';
const RECEIPT_KEY_COPY = 'state/receipt-key.pem';
/** state/ entries never copied: made again by the coordinator (the heads' skeletons). */
const REGENERATED_STATE = new Set(['skeletons']);
const DEFAULT_LOCK_WAIT_MS = 2 * 60_000;
const LOCK_RETRY_MS = 200;

export interface BackupOptions {
  /** The coordinator's database (DATABASE_FILE); default DATA/state/coordinator.sqlite. */
  databaseFile?: string;
  /** The receipt signing key (RECEIPT_KEY_FILE); default DATA/state/receipt-key.pem. */
  receiptKeyFile?: string;
  /** An earlier backup of this ceremony: files that did not change are hard-linked from it (none there: all copied). */
  linkDest?: string;
  /** How long to wait for the writers' lock held by another command (default 2 min). */
  lockWaitMs?: number;
  progress?: Progress;
}

export interface BackupResult {
  out: string;
  record: BackupRecord;
  /** Bytes of every file of the backup, and of those copied rather than linked. */
  bytes: number;
  copiedBytes: number;
  /** Files hard-linked from `linkDest`. */
  linked: number;
}

/** What was read under the writers' lock: the transcript, and where the database's copy is. */
interface Snapshot {
  transcriptText: string;
  database?: string;
}

const exists = (file: string): Promise<boolean> =>
  stat(file).then(
    () => true,
    () => false,
  );

export async function backupCeremony(dataDir: string, out: string, options: BackupOptions = {}): Promise<BackupResult> {
  const progress = options.progress ?? silentProgress;
  const config = await loadCeremonyConfig(dataDir);
  const target = path.resolve(out);
  if (await exists(target))
    throw new CoordinatorError('backup.out_exists', `${out} already exists; a backup is written to a new folder`);
  // No earlier backup there yet (the first of a schedule): everything is copied, as rsync does.
  const previous =
    options.linkDest && (await exists(options.linkDest))
      ? await readBackupRecord(path.resolve(options.linkDest), config.id)
      : undefined;
  if (options.linkDest && !previous)
    progress({ type: 'step', circuit: SUBJECT, step: `no earlier backup at ${options.linkDest}: copying everything` });

  await makeDirectory(path.dirname(target));
  const prefix = `.${path.basename(target)}.backup-`;
  if ((await removeDeadOwnersFolders(path.dirname(target), prefix)) > 0)
    progress({ type: 'step', circuit: SUBJECT, step: 'removed what an interrupted backup to the same place left' });
  const staging = await makeOwnedWorkFolder(path.dirname(target), prefix);
  try {
    await makeDirectory(path.join(staging.path, 'state'), 0o700);
    const snapshot = await snapshotUnderLock(config, staging.path, options, progress);
    const database = snapshot.database ? await settleDatabase(path.join(staging.path, snapshot.database)) : undefined;
    const entries = parseTranscript(snapshot.transcriptText, config.id);
    if (entries.length === 0)
      throw new CoordinatorError(
        'ceremony.not_initialised',
        `${dataDir} has no transcript entries; nothing to back up`,
      );
    const copier = new FileCopier(config.dataDir, staging.path, previous, options.linkDest, progress);
    const files = (await publicFileList(config, entries, { withPtau: true })).filter((f) => f.kind !== 'transcript');
    await copier.expect([...files.map((f) => f.relative)]);
    for (const file of files) await copier.copy(file);
    const transcriptPath = path.relative(config.dataDir, ceremonyPaths(config.dataDir).transcriptPath);
    await copier.write(transcriptPath.split(path.sep).join('/'), snapshot.transcriptText);
    const secret = await copyPrivateState(config, staging.path, copier, options);
    const last = entries.at(-1)!;
    const record = newBackupRecord({
      ceremony: config.id,
      madeAt: new Date().toISOString(),
      transcript: { entries: entries.length, lastHash: last.hash },
      ...(database ? { database } : {}),
      secret,
      files: copier.files,
    });
    await writeNewFlushed(path.join(staging.path, BACKUP_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
    await fsyncDirectory(staging.path);
    if (await exists(target))
      throw new CoordinatorError('backup.out_exists', `${out} appeared while backing up; it was left as it is`);
    await rename(staging.path, target);
    await fsyncDirectory(path.dirname(target));
    progress({ type: 'finished', circuit: SUBJECT });
    return { out: target, record, bytes: copier.bytes, copiedBytes: copier.copiedBytes, linked: copier.linked };
  } finally {
    await staging.done();
  }
}

/**
 * The transcript read and the database copied while this process holds the writers' lock (see the
 * module header), waiting for it while another command holds it, up to `lockWaitMs`.
 */
async function snapshotUnderLock(
  config: CeremonyConfig,
  staging: string,
  options: BackupOptions,
  progress: Progress,
): Promise<Snapshot> {
  const paths = ceremonyPaths(config.dataDir);
  const databaseFile = path.resolve(
    options.databaseFile ?? path.join(stateDirFor(config.dataDir), 'coordinator.sqlite'),
  );
  const deadline = Date.now() + (options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS);
  progress({ type: 'step', circuit: SUBJECT, step: 'reading the transcript and copying the database' });
  for (let told = false; ;) {
    try {
      return await withCeremonyLock(paths.lockPath, async () => {
        const transcriptText = await readFile(paths.transcriptPath, 'utf8').catch(() => '');
        if (!(await exists(databaseFile))) return { transcriptText };
        await copySqliteOnline(databaseFile, path.join(staging, DATABASE_COPY));
        return { transcriptText, database: DATABASE_COPY };
      });
    } catch (error) {
      if (!isCoordinatorError(error) || error.code !== 'ceremony.locked' || Date.now() >= deadline) throw error;
      if (!told) progress({ type: 'step', circuit: SUBJECT, step: `waiting: ${error.message}` });
      told = true;
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
  }
}

/** The database's copy checked and flushed (after the lock), private as the rest of state/. */
async function settleDatabase(file: string): Promise<{ path: string; bytes: number }> {
  const { bytes } = await settleDatabaseCopy(file);
  // Sessions and the queue's identities (SQLite made it 0644).
  await chmod(file, 0o600);
  return { path: DATABASE_COPY, bytes };
}

/**
 * The private state: the receipt signing key (from RECEIPT_KEY_FILE when it is elsewhere) and every
 * other file of state/ but the database (copied online), the heads' skeletons and temporary files,
 * each with mode 0600. Returns the secret ones' paths.
 */
async function copyPrivateState(
  config: CeremonyConfig,
  staging: string,
  copier: FileCopier,
  options: BackupOptions,
): Promise<string[]> {
  const stateDir = stateDirFor(config.dataDir);
  const databaseFile = path.resolve(options.databaseFile ?? path.join(stateDir, 'coordinator.sqlite'));
  const keyFile = path.resolve(options.receiptKeyFile ?? path.join(stateDir, 'receipt-key.pem'));
  const skip = new Set([databaseFile, ...['-wal', '-shm', '-journal'].map((end) => databaseFile + end), keyFile]);
  const secret: string[] = [];
  if (await exists(keyFile)) {
    await copier.copyPrivate(keyFile, RECEIPT_KEY_COPY);
    secret.push(RECEIPT_KEY_COPY);
  }
  const visit = async (dir: string): Promise<void> => {
    const names = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of names) {
      const full = path.join(dir, entry.name);
      if (skip.has(full) || isTempPath(entry.name)) continue;
      if (dir === stateDir && REGENERATED_STATE.has(entry.name)) continue;
      const relative = path.relative(config.dataDir, full).split(path.sep).join('/');
      if (entry.isDirectory()) {
        await makeDirectory(path.join(staging, relative), 0o700);
        await visit(full);
      } else if (entry.isFile()) {
        await copier.copyPrivate(full, relative);
        if (dir === stateDir && entry.name === CHALLENGE_SEED_FILE) secret.push(relative);
      }
    }
  };
  await visit(stateDir);
  return secret;
}

/** Copies (or links from an earlier backup) files into the staging folder, counting and recording them. */
class FileCopier {
  readonly files: BackedUpFile[] = [];
  bytes = 0;
  copiedBytes = 0;
  linked = 0;
  private total = 0;
  private done = 0;
  private readonly earlier: Map<string, BackedUpFile>;

  constructor(
    private readonly dataDir: string,
    private readonly staging: string,
    previous: BackupRecord | undefined,
    private readonly linkDest: string | undefined,
    private readonly progress: Progress,
  ) {
    this.earlier = new Map((previous?.files ?? []).map((file) => [file.path, file]));
  }

  /** The bytes the files to come hold, for the progress line's total; a missing one is named. */
  async expect(relatives: string[]): Promise<void> {
    for (const relative of relatives) {
      const info = await stat(path.join(this.dataDir, relative)).catch(() => undefined);
      if (!info?.isFile())
        throw new CoordinatorError(
          'chain.file_missing',
          `${relative} is missing from the data folder; nothing was backed up`,
        );
      this.total += info.size;
    }
    this.progress({ type: 'step', circuit: SUBJECT, step: `copying ${relatives.length} files` });
  }

  /** A public file, checked against the hash the transcript records (keys), linked when unchanged. */
  async copy(file: PublicFile): Promise<void> {
    const source = path.join(this.dataDir, file.relative);
    const info = await stat(source);
    const before = this.earlier.get(file.relative);
    const unchanged =
      before !== undefined &&
      before.bytes === info.size &&
      (file.fileHash !== undefined
        ? before.blake2b512 === file.fileHash
        : before.source.size === info.size && before.source.mtimeMs === info.mtimeMs);
    const destination = path.join(this.staging, file.relative);
    await makeDirectory(path.dirname(destination));
    let hash: string;
    if (unchanged && (await this.tryLink(file.relative, destination))) {
      hash = before.blake2b512;
      this.linked++;
      this.count(info.size);
    } else {
      hash = await copyHashed(source, destination, (n) => this.count(n));
      this.copiedBytes += info.size;
    }
    if (file.fileHash !== undefined && hash !== file.fileHash)
      throw new CoordinatorError(
        'chain.file_hash_mismatch',
        `${file.relative} is not the file the transcript records; nothing was backed up`,
      );
    this.record(file.relative, info.size, hash, info);
  }

  /** A file of the private state, mode 0600. */
  async copyPrivate(source: string, relative: string): Promise<void> {
    const info = await stat(source);
    const destination = path.join(this.staging, relative);
    await makeDirectory(path.dirname(destination), 0o700);
    const hash = await copyHashed(source, destination, () => {}, 0o600);
    await chmod(destination, 0o600);
    this.copiedBytes += info.size;
    this.record(relative, info.size, hash, info);
  }

  /** A file made here (the transcript read under the lock). */
  async write(relative: string, text: string): Promise<void> {
    const destination = path.join(this.staging, relative);
    await makeDirectory(path.dirname(destination));
    await writeNewFlushed(destination, text);
    const bytes = Buffer.byteLength(text);
    this.copiedBytes += bytes;
    const hash = createHash(FILE_HASH_ALGORITHM).update(text).digest('hex');
    this.record(relative, bytes, hash, { size: bytes, mtimeMs: 0 });
  }

  private async tryLink(relative: string, destination: string): Promise<boolean> {
    return link(path.join(path.resolve(this.linkDest!), relative), destination).then(
      () => true,
      () => false, // gone, or on another filesystem: copied instead
    );
  }

  private count(bytes: number): void {
    this.done += bytes;
    this.progress({ type: 'count', circuit: SUBJECT, part: 'bytes', done: this.done, total: this.total });
  }

  private record(relative: string, bytes: number, hash: string, source: { size: number; mtimeMs: number }): void {
    this.bytes += bytes;
    this.files.push({
      path: relative,
      bytes,
      blake2b512: hash,
      source: { size: source.size, mtimeMs: source.mtimeMs },
    });
  }
}

/** Copies `source` to `target` (created exclusively, flushed), returning its BLAKE2b-512. */
async function copyHashed(source: string, target: string, onBytes: (n: number) => void, mode = 0o644): Promise<string> {
  const hash = createHash(FILE_HASH_ALGORITHM);
  await copyNewFlushed(
    source,
    target,
    (chunk) => {
      hash.update(chunk);
      onBytes(chunk.byteLength);
    },
    mode,
  );
  return hash.digest('hex');
}
