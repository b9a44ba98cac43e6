/**
 * `ceremony audit DIR`: re-verifies a published ceremony from its files alone: the configuration,
 * r1cs and ptau (inputs), every zkey of every chain, the transcript, the final keys and the
 * manifest. Nothing is taken on trust: contribution 0 is checked against r1cs + ptau, every link is
 * verified against the one before it, every file is hashed against the transcript, the final key
 * is checked as the announced beacon applied to the last head, and the manifest is recomputed.
 *
 * Links are verified incrementally, in one pass per chain (verify-link-from-head.ts): 0→1→…→K→final under
 * one random challenge key drawn for this audit alone (crypto.randomBytes, 32 bytes, held in
 * memory and never written, logged or returned). The combination R_k = Σ r_i·P_i of zkey k's L‖H
 * computed when k was checked as NEXT is carried forward as the `head` of link k→k+1, so a chain
 * of K links (the beacon link included) costs K+1 MSMs instead of 2K. Each zkey's L and H are read
 * once, from the file whose hash was just checked against the transcript.
 *
 * Contribution 0 is not rebuilt (as long as `zkey new`): checkInitialKey (check-initial-key.ts)
 * compares its header, coefficients, H and circuit hash byte for byte with what r1cs + ptau fix, and
 * its IC, A, B1, L and B2 by random linear combination against the ptau points, with 128-bit
 * scalars of its own fresh randomness.
 *
 * Soundness. Contribution 0 is the key r1cs + ptau produce, except with probability ≤ 2^-128 for
 * its G1 sections (check-initial-key.ts, which also bounds B2's G2 cofactor case and says why that
 * case cannot make a false proof verify), so it is honest. Induction along the chain: if zkey k is
 * honest (its L‖H are δ_k-scaled from contribution 0), link k→k+1 is accepted only if e(R_{k+1}, δ2_{k+1}) = e(R_k, δ2_k); with
 * d_i = dlog(s·N_i − P_i) as in verify-link-from-head.ts this says Σ r_i·d_i = 0 mod p. The files are all
 * fixed (published) before the key is drawn, and the key is fresh for every audit, so unlike the
 * coordinator's fixed key no adaptive argument is needed: for each link whose L‖H cheat (some
 * d_i ≠ 0), the check passes for at most one value of one uniform 64-bit r_i, probability
 * ≤ 2^-64 (Schwartz–Zippel, ChaCha20 keystream taken as random). A union bound over the K links of
 * a chain gives ≤ K/2^64 that any cheating link of it passes; over a whole ceremony of n links,
 * ≤ n/2^64 (370 links: < 2^-55). Reusing the scalars across the links of one chain costs nothing:
 * the bound for each link only needs its r_i uniform and independent of the (fixed) files. The
 * scalars are 64-bit (verify-link-from-head's LINK_SCALAR_BYTES, not an option of its API), not 128-bit.
 * Everything else a link needs (structure, proofs of knowledge, δ in G1 and G2, points on the
 * curve, the beacon's parameters and key) is checked deterministically by verifyLinkFromHead.
 */
import { readFile } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { loadCeremonyConfig, type CeremonyConfig } from '../config/ceremony-config.ts';
import { ceremonyPaths, type CeremonyPaths } from '../chain/ceremony-paths.ts';
import { Transcript } from '../transcript/transcript.ts';
import { chainsFromTranscript, type CircuitChain } from '../ceremony/open-ceremony.ts';
import { checkCeremonyInputs } from '../ceremony/init-ceremony.ts';
import { hashFile } from '../crypto/file-hash.ts';
import { verifyLinkFromHead } from '../verify/verify-link-from-head.ts';
import type { LinkCombination } from '../verify/link-combination-cache.ts';
import { CoordinatorError, isCoordinatorError } from '../errors.ts';
import { deltaEntryFromVerificationKey, type DeltaEntry, type VerificationKeyDelta } from '../manifest/delta-manifest.ts';
import { silentProgress, type Progress } from '../ceremony/progress.ts';
import { checkInitialKey } from './check-initial-key.ts';
import { resolveAuditPtau } from '../publish/published-ptau.ts';

export interface AuditFinding {
  /** A circuit name, or `inputs`, `transcript`, `manifest`. */
  subject: string;
  ok: boolean;
  summary: string;
}

export interface AuditReport {
  ok: boolean;
  finalised: boolean;
  findings: AuditFinding[];
}

function describe(error: unknown): string {
  return isCoordinatorError(error) ? `[${error.code}] ${error.message}` : (error as Error).message;
}

/**
 * "Missing" sends the auditor looking for a lost file; a file that is there but cannot be read (a
 * directory in its place, permissions, an I/O error) needs another fix, so the code says which.
 */
function readFailure(error: unknown, what: string): CoordinatorError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new CoordinatorError('chain.file_missing', `${what} is missing`);
  return new CoordinatorError('chain.file_unreadable', `${what} cannot be read (${code ?? (error as Error).message})`);
}

async function expectFileHash(filePath: string, expected: string, what: string): Promise<void> {
  let actual: string;
  try {
    actual = await hashFile(filePath);
  } catch (error) {
    throw readFailure(error, `${what} (${path.basename(filePath)})`);
  }
  if (actual !== expected) throw new CoordinatorError('chain.file_hash_mismatch', `${what} (${path.basename(filePath)}) is not the file the transcript records`);
}

async function auditChain(
  config: CeremonyConfig,
  paths: CeremonyPaths,
  chain: CircuitChain,
  progress: Progress,
): Promise<{ summary: string; manifestEntry?: DeltaEntry }> {
  const name = chain.circuit.name;
  if (!chain.init) throw new CoordinatorError('transcript.corrupt', 'the transcript has no contribution 0 for this circuit');
  const initPath = paths.zkeyPath(name, 0);

  progress({ type: 'step', circuit: name, step: 'checking contribution 0 against the r1cs and the ptau' });
  await expectFileHash(initPath, chain.init.fileHash, 'contribution 0');
  const steps = 1000;
  let reported = -1;
  await checkInitialKey(initPath, chain.circuit.r1csPath, config.ptauPath, {
    onProgress: (fraction) => {
      const done = Math.floor(fraction * steps);
      if (done === reported) return;
      reported = done;
      progress({ type: 'count', circuit: name, part: 'contribution 0', done, total: steps });
    },
  });

  // The auditor's own randomness for this chain: never stored, so no one can have chosen the
  // published files knowing it (see the header).
  const key = randomBytes(32);
  const links = chain.contributions.length + (chain.beacon ? 1 : 0);
  progress({ type: 'step', circuit: name, step: `verifying ${links} link${links === 1 ? '' : 's'} in one pass` });
  progress({ type: 'count', circuit: name, part: 'links', done: 0, total: Math.max(links, 1) });
  let previous = initPath;
  let head: LinkCombination | undefined;
  for (const entry of chain.contributions) {
    const current = paths.zkeyPath(name, entry.index);
    await expectFileHash(current, entry.fileHash, `contribution ${entry.index}`);
    const link = await verifyLinkFromHead(previous, current, { challenge: { key, head }, labels: { prev: `contribution ${entry.index - 1}`, next: `contribution ${entry.index}` } });
    if (link.contributionHash !== entry.contributionHash) {
      throw new CoordinatorError('transcript.corrupt', `contribution ${entry.index}: the transcript records a different contribution hash`);
    }
    head = link.combination;
    previous = current;
    progress({ type: 'count', circuit: name, part: 'links', done: entry.index, total: Math.max(links, 1) });
  }

  if (!chain.beacon) return { summary: `${chain.contributions.length} contributions verified; not finalised` };

  const finalPath = paths.finalZkeyPath(name);
  await expectFileHash(finalPath, chain.beacon.fileHash, 'the final key');
  const link = await verifyLinkFromHead(previous, finalPath, {
    challenge: { key, head },
    expect: { kind: 'beacon', beaconHex: chain.beacon.beacon, iterationsExp: chain.beacon.iterationsExp },
    labels: { prev: `contribution ${chain.contributions.length}`, next: 'the final key' },
  });
  if (link.contributionHash !== chain.beacon.contributionHash) {
    throw new CoordinatorError('transcript.corrupt', 'the final key: the transcript records a different beacon contribution hash');
  }
  progress({ type: 'count', circuit: name, part: 'links', done: links, total: links });
  const vkey = (await snarkjs.zKey.exportVerificationKey(finalPath)) as unknown as VerificationKeyDelta;
  const published = await readFile(paths.verificationKeyPath(name), 'utf8').then(JSON.parse, () => undefined);
  if (published === undefined || JSON.stringify(published) !== JSON.stringify(vkey)) {
    throw new CoordinatorError('chain.file_hash_mismatch', `${name}.vkey.json is missing or is not the verification key of the final key`);
  }
  return {
    summary: `${chain.contributions.length} contributions + beacon verified, final contribution hash ${link.contributionHash.slice(0, 16)}…`,
    manifestEntry: deltaEntryFromVerificationKey(vkey),
  };
}

async function auditManifest(paths: CeremonyPaths, expected: Map<string, DeltaEntry>, manifestHash: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(paths.manifestPath, 'utf8');
  } catch (error) {
    throw readFailure(error, 'final/manifest.json');
  }
  if (createHash('blake2b512').update(text).digest('hex') !== manifestHash) {
    throw new CoordinatorError('chain.file_hash_mismatch', 'manifest.json is not the manifest the transcript records');
  }
  let manifest: Record<string, DeltaEntry>;
  try {
    manifest = JSON.parse(text);
  } catch {
    throw new CoordinatorError('input.not_json', 'manifest.json is not valid JSON');
  }
  const names = Object.keys(manifest);
  const wanted = [...expected.keys()];
  if (names.length !== wanted.length || names.some((n, i) => n !== wanted[i])) {
    throw new CoordinatorError('input.invalid', `manifest.json lists ${names.join(', ')}; expected ${wanted.join(', ')}`);
  }
  for (const [verifier, entry] of expected) {
    const found = manifest[verifier];
    if (found?.deltax1 !== entry.deltax1 || found?.deltax2 !== entry.deltax2) {
      throw new CoordinatorError('input.invalid', `manifest entry ${verifier} does not match the delta of the final key`);
    }
  }
  return `${names.length} verifiers match the final keys`;
}

export interface AuditOptions {
  /** The ptau to use instead of the folder's (a publication made without it): checked against its record. */
  ptauPath?: string;
}

export async function auditCeremony(dir: string, progress: Progress = silentProgress, options: AuditOptions = {}): Promise<AuditReport> {
  const findings: AuditFinding[] = [];
  const record = (subject: string, ok: boolean, summary: string): void => {
    findings.push({ subject, ok, summary });
  };
  let config = await loadCeremonyConfig(dir);
  const paths = ceremonyPaths(config.dataDir);

  try {
    config = { ...config, ptauPath: await resolveAuditPtau(config, options.ptauPath) };
    await checkCeremonyInputs(config);
    record('inputs', true, `${config.circuits.length} r1cs files match the configuration; the ptau covers them`);
  } catch (error) {
    record('inputs', false, describe(error));
    return { ok: false, finalised: false, findings };
  }

  let chains: Map<string, CircuitChain>;
  let finalisedEntry;
  try {
    const transcript = await Transcript.load(paths.transcriptPath, config.id);
    chains = chainsFromTranscript(config, transcript.entries);
    finalisedEntry = transcript.entries.find((e) => e.type === 'finalised');
    record('transcript', true, `${transcript.entries.length} entries, hash chain intact`);
  } catch (error) {
    record('transcript', false, describe(error));
    return { ok: false, finalised: false, findings };
  }

  const manifest = new Map<string, DeltaEntry>();
  for (const chain of chains.values()) {
    try {
      const result = await auditChain(config, paths, chain, progress);
      if (result.manifestEntry) manifest.set(chain.circuit.verifier, result.manifestEntry);
      record(chain.circuit.name, true, result.summary);
    } catch (error) {
      record(chain.circuit.name, false, describe(error));
    }
    progress({ type: 'finished', circuit: chain.circuit.name });
  }

  if (finalisedEntry?.type === 'finalised') {
    try {
      if (manifest.size !== config.circuits.length) throw new CoordinatorError('input.invalid', 'not every final key verified, so the manifest cannot be recomputed');
      record('manifest', true, await auditManifest(paths, manifest, finalisedEntry.manifestHash));
    } catch (error) {
      record('manifest', false, describe(error));
    }
  } else {
    record('manifest', true, 'the ceremony is not finalised yet: no manifest to check');
  }
  return { ok: findings.every((f) => f.ok), finalised: Boolean(finalisedEntry), findings };
}
