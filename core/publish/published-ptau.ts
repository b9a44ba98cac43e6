/**
 * A publication made without its (large) powers of tau records which ptau it was instead
 * (`ptau-source.json`: path, size, hashes, where to get it). An auditor then supplies the file
 * (`ceremony audit DIR --ptau FILE`), which must match the record; without it, the audit says
 * exactly what is missing and where to get it, rather than failing on a file not found. The
 * record is the coordinator's word, a convenience, never a pin: whichever file is used, the audit
 * then requires it to be a known public ptau or the one the auditor pins (core/audit/pin-ptau.ts).
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { CeremonyConfig } from '../config/ceremony-config.ts';
import { CoordinatorError } from '../errors.ts';
import { hashFile } from '../crypto/file-hash.ts';

export const PTAU_RECORD_FILE = 'ptau-source.json';

const recordSchema = z.object({
  /** The ptau's path in ceremony.json. */
  file: z.string(),
  size: z.number().int().nonnegative(),
  blake2b512: z.string().regex(/^[0-9a-f]{128}$/),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Where the ceremony's ptau can be downloaded, as the coordinator gave it (`--ptau-source`). */
  source: z.string().optional(),
  note: z.string(),
});

export type PtauRecord = z.infer<typeof recordSchema>;

async function readPtauRecord(dir: string): Promise<PtauRecord | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(dir, PTAU_RECORD_FILE), 'utf8');
  } catch {
    return undefined;
  }
  const parsed = recordSchema.safeParse(
    (() => {
      try {
        return JSON.parse(text);
      } catch {
        return undefined;
      }
    })(),
  );
  if (!parsed.success) throw new CoordinatorError('input.invalid', `${PTAU_RECORD_FILE} is not a valid ptau record`);
  return parsed.data;
}

const exists = (file: string): Promise<boolean> =>
  stat(file).then(
    () => true,
    () => false,
  );

/**
 * The ptau an audit of `config` should use: `supplied` (checked against the publication's record
 * when there is one), else the one in the folder; refuses with what is missing when neither is there.
 */
export async function resolveAuditPtau(config: CeremonyConfig, supplied?: string): Promise<string> {
  const record = await readPtauRecord(config.dataDir);
  if (supplied !== undefined) {
    if (!(await exists(supplied)))
      throw new CoordinatorError('input.file_not_found', `the ptau given with --ptau (${supplied}) does not exist`);
    if (record && (await hashFile(supplied)) !== record.blake2b512) {
      throw new CoordinatorError(
        'chain.file_hash_mismatch',
        `${supplied} is not the powers of tau this publication records in ` +
          `${PTAU_RECORD_FILE} (BLAKE2b-512 ${record.blake2b512.slice(0, 16)}…)`,
      );
    }
    return path.resolve(supplied);
  }
  if (record && !(await exists(config.ptauPath))) {
    throw new CoordinatorError(
      'chain.file_missing',
      `the powers of tau (${record.file}, ${record.size} bytes) was left out of this publication; ` +
        `download it${record.source ? ` from ${record.source}` : ''} ` +
        `(BLAKE2b-512 ${record.blake2b512.slice(0, 16)}…, SHA-256 ` +
        `${record.sha256.slice(0, 16)}…) ` +
        `and run the audit again with --ptau FILE (and --ptau-hash HASH unless it is a known public ptau: ` +
        `the audit trusts the hash you pin, not this record)`,
    );
  }
  if (!(await exists(config.ptauPath))) {
    // Named as ceremony.json names it: a full path would tell the auditor nothing and could leak a machine's layout.
    throw new CoordinatorError(
      'chain.file_missing',
      `the powers of tau (${config.ptau}) is missing from this folder and the publication records none; ` +
        `get it from a source you trust and run the audit again with --ptau FILE ` +
        `(and --ptau-hash HASH unless it is a known public ptau)`,
    );
  }
  return config.ptauPath;
}
