/**
 * A published ceremony folder (`ceremony publish` output, or the public page's fetch script's) as
 * evidence for the receipt check, offline: `ceremony.json` (the ceremony id),
 * `receipt-public-key.pem`, `transcript/transcript.jsonl`, and byte ranges of `final/CIRCUIT.zkey`
 * and `chains/CIRCUIT/CIRCUIT_NNNN.zkey` read through a file handle, so the check reads the same
 * few kilobytes of each key as over HTTP. Node only; the checks themselves are the page's.
 */
import { open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { findCircuit, loadCeremonyConfig, type CeremonyConfig } from '../config/ceremony-config.ts';
import { ceremonyPaths } from '../data-folder/ceremony-paths.ts';
import { CoordinatorError, isCoordinatorError } from '../errors.ts';
import type { ReceiptEvidence } from './receipt-checker.ts';
import type { RangeSource } from './range-source.ts';
import { readReceiptPublicKey, RECEIPT_PUBLIC_KEY_FILE } from './receipt-public-key-file.ts';
import { testNetworkReason } from '../deployment/ceremony-final-keys.ts';
import { readVerifierCompilerRecordBytes } from '../finalise/verifier-compiler-record.ts';

function fileRangeSource(file: () => Promise<string>, label: string): RangeSource {
  const source = {
    label,
    fileSize: undefined as number | undefined,
    bytesRead: 0,
    requests: 0,
    async read(offset: number, length: number): Promise<Uint8Array> {
      const filePath = await file();
      let handle;
      try {
        handle = await open(filePath, 'r');
      } catch (error) {
        throw new CoordinatorError(
          'receipt.source_unavailable',
          `cannot read ${label} (${path.basename(filePath)}): ` +
            ((error as NodeJS.ErrnoException).code ?? (error as Error).message),
        );
      }
      try {
        source.requests++;
        source.fileSize = (await handle.stat()).size;
        const buffer = new Uint8Array(Math.max(0, Math.min(length, source.fileSize - offset)));
        let done = 0;
        while (done < buffer.length) {
          const { bytesRead } = await handle.read(buffer, done, buffer.length - done, offset + done);
          if (bytesRead === 0) break;
          done += bytesRead;
        }
        source.bytesRead += done;
        return buffer.subarray(0, done);
      } finally {
        await handle.close();
      }
    },
  };
  return source;
}

export async function folderEvidence(dir: string): Promise<ReceiptEvidence> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory())
    throw new CoordinatorError(
      'input.file_not_found',
      `${dir} is not a folder (give the folder \`ceremony publish\` wrote, or --coordinator URL)`,
    );
  let config: CeremonyConfig;
  try {
    config = await loadCeremonyConfig(dir);
  } catch (error) {
    if (isCoordinatorError(error, 'config.not_found'))
      throw new CoordinatorError('input.invalid', `${dir} is not a published ceremony folder: it has no ceremony.json`);
    throw error;
  }
  const paths = ceremonyPaths(dir);
  const label = `the publication ${dir}`;
  const circuitName = async (circuit: string): Promise<string> => {
    try {
      return findCircuit(config, circuit).name;
    } catch {
      throw new CoordinatorError('receipt.source_unavailable', `${label} has no circuit ${circuit}`);
    }
  };
  return {
    label,
    ceremonyId: async () => config.id,
    testNetwork: () => testNetworkReason(config),
    compilerRecord: () => readVerifierCompilerRecordBytes(paths.finalDir),
    async receiptPublicKeyPem() {
      const pem = await readReceiptPublicKey(dir);
      if (pem === undefined) {
        throw new CoordinatorError(
          'receipt.key_unavailable',
          `${label} has no ${RECEIPT_PUBLIC_KEY_FILE} (the coordinator's receipt key): publish it with a ` +
            'current `ceremony publish`, or check against the coordinator with --coordinator URL',
        );
      }
      return pem;
    },
    async transcriptEntries() {
      let text: string;
      try {
        text = await readFile(paths.transcriptPath, 'utf8');
      } catch {
        throw new CoordinatorError('receipt.source_unavailable', `${label} has no transcript/transcript.jsonl`);
      }
      return text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line, i) => {
          try {
            return JSON.parse(line) as unknown;
          } catch {
            throw new CoordinatorError(
              'transcript.corrupt',
              `the transcript ${label} serves has a line ${i + 1} that is not JSON`,
            );
          }
        });
    },
    keySource(circuit, key) {
      return 'final' in key
        ? fileRangeSource(async () => paths.finalZkeyPath(await circuitName(circuit)), `the final key of ${circuit}`)
        : fileRangeSource(
            async () => paths.zkeyPath(await circuitName(circuit), key.index),
            `contribution ${key.index} of ${circuit}`,
          );
    },
  };
}
