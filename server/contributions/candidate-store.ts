/**
 * One candidate's facts, from its upload's creation to its verdict (table `candidates`, migrations 2
 * and 3 of the contributions module). The row is made in the transaction that checks the turn, with
 * the head it extends pinned; the intake writes its hashes, identity and link sums onto it; the
 * verification request and the commit read them back. Being stored, they survive a restart: a
 * contribution re-verified at start-up is sent the request normal running would have sent. A refusal
 * found while the upload arrives is kept here too, so that a restart cannot forget it before whatever
 * meets the upload next hands it in. The rest of what the intake hands in (SubmittedUpload) is the
 * submission's own: who, and that refusal.
 */
import type { SectionHashes } from '../../core/zkey/zkey-hashes.ts';
import {
  fileIdentity,
  parseFileIdentity,
  sameFileIdentity,
  serialiseFileIdentity,
  type FileIdentity,
} from '../../core/fs/file-identity.ts';
import { hashZkeyFile } from '../../core/zkey/zkey-hashes.ts';
import type { Db } from '../store/database.ts';
import { CoordinatorError, type ErrorCode } from '../../core/errors.ts';
import type { Principal } from '../auth/principal.ts';

export interface CandidateRow {
  /** The upload's file, inside the data folder: the contribution row's candidatePath. */
  uploadPath: string;
  circuit: string;
  contributorId: string;
  /** The head the upload was created on, the one it must extend. */
  headIndex: number;
  createdAt: number;
  /** Its BLAKE2b-512, once taken (as a delta arrived, or at submission). */
  fileHash: string | null;
  sectionHashes: SectionHashes | null;
  /** The file's identity when it was hashed: equal later, the hashes still name its bytes. */
  identity: FileIdentity | null;
  /**
   * The link check's sums the intake made as a delta arrived, sealed (sealCandidateSums: bound to
   * the file hash and circuit key), for the verifier; null when none were made.
   */
  sums: Uint8Array | null;
}

export const CANDIDATES_MIGRATION = `CREATE TABLE candidates (
     upload_path TEXT PRIMARY KEY,
     circuit TEXT NOT NULL,
     contributor_id TEXT NOT NULL,
     head_index INTEGER NOT NULL,
     created_at INTEGER NOT NULL,
     file_hash TEXT,
     section_hashes TEXT,
     identity TEXT
   );`;

/** The sums the intake made, sealed; a row written before this column has none (the verifier sums itself). */
export const CANDIDATE_SUMS_MIGRATION = 'ALTER TABLE candidates ADD COLUMN sums BLOB;';

/** The refusal found as the upload arrived, as JSON `{code, message}`; null while none is. */
export const CANDIDATE_REFUSAL_MIGRATION = 'ALTER TABLE candidates ADD COLUMN refusal TEXT;';

interface RawCandidate {
  upload_path: string;
  circuit: string;
  contributor_id: string;
  head_index: number;
  created_at: number;
  file_hash: string | null;
  section_hashes: string | null;
  identity: string | null;
  sums: Buffer | null;
}

function fromRaw(raw: RawCandidate): CandidateRow {
  return {
    uploadPath: raw.upload_path,
    circuit: raw.circuit,
    contributorId: raw.contributor_id,
    headIndex: raw.head_index,
    createdAt: raw.created_at,
    fileHash: raw.file_hash,
    sectionHashes: raw.section_hashes === null ? null : (JSON.parse(raw.section_hashes) as SectionHashes),
    identity: raw.identity === null ? null : parseFileIdentity(JSON.parse(raw.identity)),
    sums: raw.sums === null ? null : new Uint8Array(raw.sums),
  };
}

/**
 * A candidate's hashes, the whole file's and its sections', in one read, with the file's identity
 * when unchanged across the hashing (then the verifier and the commit need not read it again).
 */
export async function hashCandidate(
  file: string,
): Promise<{ fileHash: string; sectionHashes?: SectionHashes; identity?: FileIdentity }> {
  const before = await fileIdentity(file);
  const { fileHash, sectionHashes } = await hashZkeyFile(file);
  const after = await fileIdentity(file);
  return { fileHash, sectionHashes, ...(sameFileIdentity(before, after) ? { identity: after } : {}) };
}

/** What the commit may take as given about a candidate of `fileHash` (commitPreverifiedContribution). */
export function committedAs(
  candidate: CandidateRow | undefined,
  fileHash: string,
): { hashedAs?: FileIdentity; sectionHashes?: SectionHashes } {
  if (!candidate?.identity || candidate.fileHash !== fileHash) return {};
  return {
    hashedAs: candidate.identity,
    ...(candidate.sectionHashes ? { sectionHashes: candidate.sectionHashes } : {}),
  };
}

export interface SubmittedUpload {
  principal: Principal;
  circuit: string;
  /** The finished upload, inside the data folder (it is renamed into the chain on acceptance). */
  path: string;
  size: number;
  /**
   * The verdict already found by the coordinator (an upload that is not laid out as a contribution
   * on the head, a bad record, a streamed delta's point off the curve or point at infinity out of
   * place: the verifier's own checks, with its codes): recorded as the verifier's refusal would be,
   * without a verifier or a pass over the file.
   */
  refusal?: { code: ErrorCode; message: string };
}

/** The candidates table; its migration is the contribution store's (it must exist first). */
export class CandidateStore {
  private readonly statements: ReturnType<typeof prepareStatements>;

  constructor(db: Db) {
    this.statements = prepareStatements(db);
  }

  /** A new upload's row; one made earlier for the same file (never, tus ids are random) is replaced. */
  create(input: Pick<CandidateRow, 'uploadPath' | 'circuit' | 'contributorId' | 'headIndex' | 'createdAt'>): void {
    this.statements.insert.run(input.uploadPath, input.circuit, input.contributorId, input.headIndex, input.createdAt);
  }

  get(uploadPath: string): CandidateRow | undefined {
    const raw = this.statements.get.get(uploadPath);
    return raw && fromRaw(raw);
  }

  /**
   * The candidate's hashes, its identity when they were taken (null: it changed meanwhile), and the
   * sums sealed for its file hash when the intake made them (any earlier ones go: another file's).
   */
  recordHashes(
    uploadPath: string,
    hashes: { fileHash: string; sectionHashes?: SectionHashes; identity?: FileIdentity; sums?: Uint8Array },
  ): void {
    this.statements.hashes.run(
      hashes.fileHash,
      hashes.sectionHashes ? JSON.stringify(hashes.sectionHashes) : null,
      hashes.identity ? JSON.stringify(serialiseFileIdentity(hashes.identity)) : null,
      hashes.sums ? Buffer.from(hashes.sums.buffer, hashes.sums.byteOffset, hashes.sums.byteLength) : null,
      uploadPath,
    );
  }

  /**
   * The refusal found while the upload arrived, kept until the upload goes: the last one found is
   * the one its intake answers, so it replaces any earlier.
   */
  recordRefusal(uploadPath: string, refusal: { code: ErrorCode; message: string }): void {
    this.statements.refusal.run(JSON.stringify({ code: refusal.code, message: refusal.message }), uploadPath);
  }

  /**
   * The refusal kept for the upload (recordRefusal), as the intake that found it gave it; undefined:
   * none. Asked before every write to an upload, so it reads that column alone, not the row's sums.
   */
  refusalOf(uploadPath: string): CoordinatorError | undefined {
    const kept = this.statements.refusalOf.get(uploadPath)?.refusal;
    if (!kept) return undefined;
    const refusal = JSON.parse(kept) as { code: ErrorCode; message: string };
    return new CoordinatorError(refusal.code, refusal.message);
  }

  /** The upload is gone (removed, or its verdict is in): nothing reads its facts any more. */
  remove(uploadPath: string): void {
    this.statements.remove.run(uploadPath);
  }
}

function prepareStatements(db: Db) {
  return {
    insert: db.prepare<[string, string, string, number, number]>(
      `INSERT OR REPLACE INTO candidates (upload_path, circuit, contributor_id, head_index, created_at)
       VALUES (?, ?, ?, ?, ?)`,
    ),
    get: db.prepare<[string], RawCandidate>('SELECT * FROM candidates WHERE upload_path = ?'),
    hashes: db.prepare<[string, string | null, string | null, Buffer | null, string]>(
      'UPDATE candidates SET file_hash = ?, section_hashes = ?, identity = ?, sums = ? WHERE upload_path = ?',
    ),
    refusal: db.prepare<[string, string]>('UPDATE candidates SET refusal = ? WHERE upload_path = ?'),
    refusalOf: db.prepare<[string], { refusal: string | null }>('SELECT refusal FROM candidates WHERE upload_path = ?'),
    remove: db.prepare<[string]>('DELETE FROM candidates WHERE upload_path = ?'),
  };
}
