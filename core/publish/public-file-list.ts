/**
 * The allow-list of a ceremony's public files, derived from ceremony.json and the transcript:
 * the configuration, each circuit's r1cs and its circom sources (the main file beside the r1cs and
 * every file it includes), the ptau, every link the transcript records, the transcript, the
 * final files once finalised (with the verifiers' compiler record, final/compiler.json, when
 * finalise wrote one), and the coordinator's receipt public key when a coordinator wrote one
 * (checked to be a public key: a private key put there by mistake stops the publication). Nothing
 * else in the data folder is ever listed: not `state/`, not `uploads/`, not an orphan zkey beyond a
 * head, not a note someone left in a chain folder.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CeremonyConfig } from '../config/ceremony-config.ts';
import { CONFIG_FILE_NAME } from '../config/ceremony-config.ts';
import { ceremonyPaths, zkeyFileName } from '../data-folder/ceremony-paths.ts';
import type { TranscriptEntry } from '../transcript/transcript.ts';
import { CoordinatorError } from '../errors.ts';
import { readReceiptPublicKey, RECEIPT_PUBLIC_KEY_FILE } from '../receipts/receipt-public-key-file.ts';
import {
  readVerifierCompilerRecordBytes,
  VERIFIER_COMPILER_RECORD_FILE,
} from '../finalise/verifier-compiler-record.ts';
import { QUEUE_LOG_FILE } from '../queue-log/queue-log-entry.ts';

const TRANSCRIPT_FILE = 'transcript/transcript.jsonl';

export interface PublicFile {
  /** Path inside the data folder and inside the publication (always with `/`). */
  relative: string;
  /** BLAKE2b-512 the transcript records for this file (zkeys), checked while copying. */
  fileHash?: string;
  kind: 'config' | 'r1cs' | 'circom' | 'ptau' | 'zkey' | 'transcript' | 'queue-log' | 'final' | 'receipt-key';
}

/** `relative` as written in ceremony.json, refused if it leaves the data folder. */
function insideDataDir(config: CeremonyConfig, written: string, what: string): string {
  const relative = path.relative(config.dataDir, path.resolve(config.dataDir, written));
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) {
    throw new CoordinatorError(
      'config.invalid',
      `${what} (${written}) is outside the data folder; a publication keeps the folder's layout, so it must be inside`,
    );
  }
  return relative.split(path.sep).join('/');
}

const INCLUDE = /^\s*include\s+"([^"]+)"\s*;/gm;

/** The circom source beside an r1cs and every file it includes that lies in the data folder. */
async function circomSources(config: CeremonyConfig, r1cs: string): Promise<string[]> {
  const found = new Set<string>();
  const visit = async (relative: string): Promise<void> => {
    if (found.has(relative)) return;
    let text: string;
    try {
      text = await readFile(path.join(config.dataDir, relative), 'utf8');
    } catch {
      return; // no source beside the r1cs (or a library include resolved elsewhere by circom)
    }
    found.add(relative);
    for (const match of text.matchAll(INCLUDE)) {
      const target = path.relative(config.dataDir, path.resolve(config.dataDir, path.dirname(relative), match[1]!));
      if (!target.startsWith('..') && !path.isAbsolute(target)) await visit(target.split(path.sep).join('/'));
    }
  };
  await visit(r1cs.replace(/\.r1cs$/, '.circom'));
  return [...found];
}

export async function publicFileList(
  config: CeremonyConfig,
  entries: readonly TranscriptEntry[],
  options: { withPtau: boolean; queueLog?: boolean },
): Promise<PublicFile[]> {
  const files: PublicFile[] = [{ relative: CONFIG_FILE_NAME, kind: 'config' }];
  if ((await readReceiptPublicKey(config.dataDir)) !== undefined) {
    files.push({ relative: RECEIPT_PUBLIC_KEY_FILE, kind: 'receipt-key' });
  }
  for (const circuit of config.circuits) {
    const r1cs = insideDataDir(config, circuit.r1cs, `the r1cs of ${circuit.name}`);
    files.push({ relative: r1cs, kind: 'r1cs' });
    for (const source of await circomSources(config, r1cs)) files.push({ relative: source, kind: 'circom' });
  }
  if (options.withPtau) files.push({ relative: insideDataDir(config, config.ptau, 'the ptau'), kind: 'ptau' });
  const finalised = entries.some((e) => e.type === 'finalised');
  for (const entry of entries) {
    if (entry.type === 'init' || entry.type === 'contribution') {
      files.push({
        relative: `chains/${entry.circuit}/${zkeyFileName(entry.circuit, entry.index)}`,
        fileHash: entry.fileHash,
        kind: 'zkey',
      });
    } else if (entry.type === 'beacon') {
      files.push({ relative: `final/${entry.circuit}.zkey`, fileHash: entry.fileHash, kind: 'final' });
    }
  }
  files.push({ relative: TRANSCRIPT_FILE, kind: 'transcript' });
  // The coordinator's public queue log, when the ceremony ran with its lobby (publish snapshots it).
  if (options.queueLog) files.push({ relative: QUEUE_LOG_FILE, kind: 'queue-log' });
  if (finalised) {
    for (const circuit of config.circuits) {
      files.push(
        { relative: `final/${circuit.name}.vkey.json`, kind: 'final' },
        { relative: `final/${circuit.verifier}.sol`, kind: 'final' },
      );
    }
    // How the verifiers are compiled, whatever it holds (the checks that read it judge it); a ceremony
    // finalised before finalise wrote it has none.
    if ((await readVerifierCompilerRecordBytes(ceremonyPaths(config.dataDir).finalDir)) !== undefined) {
      files.push({ relative: `final/${VERIFIER_COMPILER_RECORD_FILE}`, kind: 'final' });
    }
    files.push({ relative: 'final/manifest.json', kind: 'final' });
  }
  // One entry per path (two circuits may share a source file).
  return [...new Map(files.map((f) => [f.relative, f])).values()];
}
