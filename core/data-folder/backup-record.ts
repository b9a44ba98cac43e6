/**
 * `backup.json`, the record a backup (backup-ceremony.ts) writes at its root: which ceremony, when,
 * the transcript it holds (entries, last hash), the database copy, the files that are secret, and
 * every other file with its size and BLAKE2b-512 and the size and modification time its source had.
 * A later backup with `--link-dest` reads it to hard-link what did not change instead of copying it
 * (a chain's keys never change under their index; an input whose size and time are the same is
 * taken as the same). Read strictly: a record of another shape is not trusted for anything.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CoordinatorError } from '../errors.ts';

export const BACKUP_RECORD_FILE = 'backup.json';
const FORMAT = 'ceremony-backup';
const VERSION = 1;

export interface BackedUpFile {
  /** Inside the backup (and the data folder), with `/`. */
  path: string;
  bytes: number;
  blake2b512: string;
  /** The data folder's file when it was copied: what --link-dest compares. */
  source: { size: number; mtimeMs: number };
}

export interface BackupRecord {
  format: typeof FORMAT;
  version: typeof VERSION;
  ceremony: string;
  madeAt: string;
  transcript: { entries: number; lastHash: string };
  /** The coordinator's database, copied by SQLite's online backup; absent when no coordinator had served. */
  database?: { path: string; bytes: number };
  /** Files that must stay private (mode 0600): whoever holds them can sign receipts, or foresee link checks. */
  secret: string[];
  files: BackedUpFile[];
}

export function newBackupRecord(fields: Omit<BackupRecord, 'format' | 'version'>): BackupRecord {
  return { format: FORMAT, version: VERSION, ...fields };
}

const isHash = (value: unknown): value is string => typeof value === 'string' && /^[0-9a-f]{128}$/.test(value);
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function isBackedUpFile(value: unknown): value is BackedUpFile {
  const file = value as Partial<BackedUpFile> | null;
  return (
    typeof file === 'object' &&
    file !== null &&
    typeof file.path === 'string' &&
    isCount(file.bytes) &&
    isHash(file.blake2b512) &&
    isCount(file.source?.size) &&
    typeof file.source?.mtimeMs === 'number'
  );
}

/**
 * The record of the backup in `dir`, refused (`backup.not_a_backup`) unless it is one of this
 * ceremony in this format: `--link-dest` must not take files from anything else.
 */
export async function readBackupRecord(dir: string, ceremonyId: string): Promise<BackupRecord> {
  const file = path.join(dir, BACKUP_RECORD_FILE);
  const notOne = (why: string) =>
    new CoordinatorError('backup.not_a_backup', `${dir} is not a backup of this ceremony to link from: ${why}`);
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw notOne(
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? `it has no ${BACKUP_RECORD_FILE}` : 'its record is not JSON',
    );
  }
  const record = raw as Partial<BackupRecord>;
  if (record.format !== FORMAT || record.version !== VERSION)
    throw notOne(`its ${BACKUP_RECORD_FILE} is not a version ${VERSION} backup record`);
  if (record.ceremony !== ceremonyId) throw notOne(`it is of the ceremony "${String(record.ceremony)}"`);
  if (!Array.isArray(record.files) || !record.files.every(isBackedUpFile))
    throw notOne(`its ${BACKUP_RECORD_FILE} lists files of no valid shape`);
  return record as BackupRecord;
}
