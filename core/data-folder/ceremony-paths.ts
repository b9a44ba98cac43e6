/**
 * Where a ceremony keeps its files inside the data folder. The configuration and the circuits are
 * inputs (committed); everything below is runtime output (git-ignored), laid out so that the whole
 * folder can be published as it is and audited with `ceremony audit`.
 */
import path from 'node:path';
import { zkeyFileName } from '../coordinator-api/file-urls.ts';

export { zkeyFileName };

export interface CeremonyPaths {
  dataDir: string;
  chainsDir: string;
  transcriptPath: string;
  finalDir: string;
  manifestPath: string;
  lockPath: string;
  /** Held by the coordinator serving the folder (serving-lock.ts). */
  servingLockPath: string;
  chainDir(circuit: string): string;
  zkeyPath(circuit: string, index: number): string;
  finalZkeyPath(circuit: string): string;
  verificationKeyPath(circuit: string): string;
  solidityVerifierPath(verifier: string): string;
}

export function ceremonyPaths(dataDir: string): CeremonyPaths {
  const root = path.resolve(dataDir);
  const chainsDir = path.join(root, 'chains');
  const finalDir = path.join(root, 'final');
  return {
    dataDir: root,
    chainsDir,
    transcriptPath: path.join(root, 'transcript', 'transcript.jsonl'),
    finalDir,
    manifestPath: path.join(finalDir, 'manifest.json'),
    // Not `.ceremony.lock`: that name held a pid file, which the kernel's lock cannot open as its own.
    lockPath: path.join(root, '.ceremony-writer.lock'),
    servingLockPath: path.join(root, '.ceremony-serving.lock'),
    chainDir: (circuit) => path.join(chainsDir, circuit),
    zkeyPath: (circuit, index) => path.join(chainsDir, circuit, zkeyFileName(circuit, index)),
    finalZkeyPath: (circuit) => path.join(finalDir, `${circuit}.zkey`),
    verificationKeyPath: (circuit) => path.join(finalDir, `${circuit}.vkey.json`),
    solidityVerifierPath: (verifier) => path.join(finalDir, `${verifier}.sol`),
  };
}
