/**
 * One chain's audit, once the inputs, the ptau and the transcript passed (audit-ceremony.ts):
 *   - a chain the audit must not pass whatever its keys hold is refused first: no contribution 0,
 *     a beacon costlier than the auditor allows, a finalised chain below the minimum of
 *     contributions (refuseUnauditableChain);
 *   - contribution 0 against the r1cs and the ptau, not rebuilt (check-initial-key.ts): its header,
 *     coefficients, H and circuit hash byte for byte, its IC, A, B1, L and B2 by random linear
 *     combination with 128-bit scalars of its own fresh randomness, every B2 point in G2; the init
 *     entry's circuit hash the one the r1cs gives; or, when this machine checked the same
 *     contribution 0, r1cs and ptau (by the hashes this audit computed) with this version of the
 *     check, remembered (verified-initial-key-memo.ts), the key still hashed against its entry;
 *   - then by default the chain's last key against contribution 0 and its own records, and every
 *     key between as a committed file whose history is the last key's (audit-from-initial.ts); or,
 *     with `everyLink` (`ceremony audit --every-link`), every link against the key before it
 *     (audit-every-link.ts);
 *   - either way every key file against its transcript entry, whole and section by section, the
 *     final key as the transcript's beacon applied, and the published verification key the final
 *     key's, its δ not its γ.
 * Contribution 0 is the key r1cs + ptau produce except with probability ≤ 2^-126, given a ptau
 * whose relied-on sections passed their check (≤ 2^-128): what each mode then proves, and its
 * bound, is in its module and in docs/audit.md.
 */
import { readFile } from 'node:fs/promises';
import * as snarkjs from 'snarkjs';
import type { CeremonyConfig } from '../config/ceremony-config.ts';
import type { CeremonyPaths } from '../data-folder/ceremony-paths.ts';
import type { CircuitChain } from '../ceremony/open-ceremony.ts';
import type { Progress } from '../ceremony/progress.ts';
import type { StageTimer } from '../runtime/stage-timings.ts';
import { CoordinatorError } from '../errors.ts';
import {
  deltaEntryFromVerificationKey,
  type DeltaEntry,
  type VerificationKeyDelta,
} from '../manifest/delta-manifest.ts';
import { refuseDeltaEqualsGamma } from '../manifest/delta-equals-gamma.ts';
import { checkInitialKey } from './check-initial-key.ts';
import { readInitialKeyMemo, rememberVerifiedInitialKey } from './verified-initial-key-memo.ts';
import { auditEveryLink } from './audit-every-link.ts';
import { auditFromInitial } from './audit-from-initial.ts';
import { expectKeyHashes, type ChainAudit, type CheckedKey } from './chain-audit-context.ts';
import type { AuditedCircuit } from './audit-report-parts.ts';

/** The list the report carries for a chain: every contribution the transcript records, none verified yet. */
export function listChain(chain: CircuitChain, audited: AuditedCircuit): void {
  audited.contributions = chain.contributions.map((entry) => ({
    index: entry.index,
    contributor: entry.contributor,
    contributionHash: entry.contributionHash,
    verified: false,
  }));
  if (chain.beacon) {
    const { contributionHash, beacon, iterationsExp } = chain.beacon;
    audited.final = { contributionHash, beacon, iterationsExp, verified: false };
  }
}

/** Refuses, before any key is read, a chain this audit must not pass whatever its keys hold. */
function refuseUnauditableChain(
  config: CeremonyConfig,
  chain: CircuitChain,
  audited: AuditedCircuit,
  maxBeaconIterationsExp: number,
): void {
  const name = chain.circuit.name;
  if (!chain.init)
    throw new CoordinatorError('transcript.corrupt', 'the transcript has no contribution 0 for this circuit');
  if (chain.beacon && chain.beacon.iterationsExp > maxBeaconIterationsExp)
    throw new CoordinatorError(
      'audit.beacon_too_costly',
      `the final beacon of ${name} is hashed 2^${chain.beacon.iterationsExp} times, more than the ` +
        `2^${maxBeaconIterationsExp} this audit derives; if that is the beacon the coordinator announced, ` +
        `audit again with --max-beacon-iterations ${chain.beacon.iterationsExp} (2^${chain.beacon.iterationsExp} ` +
        'SHA-256 hashes, one after the other)',
    );
  const count = chain.contributions.length;
  if (chain.beacon && count < audited.minContributions) {
    const whose =
      audited.minContributions > config.minContributions ? 'the auditor (--min-contributions)' : 'your ceremony.json';
    throw new CoordinatorError(
      'audit.too_few_contributions',
      `circuit ${name} was finalised with ${count} contribution${count === 1 ? '' : 's'}; ` +
        `${whose} requires at least ${audited.minContributions} ` +
        '(with none, its δ comes from the public beacon alone and anyone can forge proofs)',
    );
  }
}

/** Where checked contributions 0 are remembered, and whether to ignore what is. */
export interface InitialKeyMemoOptions {
  /** Undefined: nothing is remembered. */
  dir?: string;
  recheck: boolean;
  /** The ptau's BLAKE2b-512 as this audit computed it from its bytes (and held to the auditor's pin). */
  ptauHash: string;
}

/**
 * Contribution 0: its hashes against its entry, then its every point against the r1cs and the ptau,
 * unless this machine remembers the same three files checked by this version of the check
 * (verified-initial-key-memo.ts). Returns the key and the finding's words for the check.
 */
async function auditContributionZero(
  config: CeremonyConfig,
  audit: ChainAudit,
  memo: InitialKeyMemoOptions,
): Promise<{ zero: CheckedKey; words: string }> {
  const { name, chain, audited, progress, timer } = audit;
  const init = chain.init!;
  const initPath = audit.paths.zkeyPath(name, 0);
  progress({ type: 'step', circuit: name, step: 'checking contribution 0 against the r1cs and the ptau' });
  // Hashed on every audit, remembered or not: the memo is looked up by what the bytes give.
  const hashes = await timer.time('key hashes (file and sections)', () =>
    expectKeyHashes(initPath, init, 'contribution 0'),
  );
  // expectKeyHashes passed, so the entry's fileHash is the hash of the file's bytes; the r1cs's
  // hash is the one this audit computed and held to the auditor's pins.
  const r1csHash = audited.r1cs.blake2b512;
  const files = r1csHash === undefined ? undefined : { r1csHash, ptauHash: memo.ptauHash, keyHash: init.fileHash };
  const earlier =
    files && memo.dir !== undefined && !memo.recheck ? await readInitialKeyMemo(memo.dir, files) : undefined;
  if (earlier) {
    progress({ type: 'step', circuit: name, step: `contribution 0 was checked on ${earlier.checkedAt}: remembered` });
    refuseOtherCircuitHash(earlier.circuitHash, init.circuitHash);
    audited.initialKeyRemembered = { checkedAt: earlier.checkedAt, checkVersion: earlier.checkVersion };
    return {
      zero: { path: initPath, hashes },
      words:
        `contribution 0: remembered, checked on ${earlier.checkedAt} (check version ${earlier.checkVersion}) ` +
        'against the same r1cs and ptau by this machine, not checked again (--recheck checks it again)',
    };
  }
  const csHash = await checkContributionZero(config, audit, initPath);
  refuseOtherCircuitHash(csHash, init.circuitHash);
  let remembered = '';
  if (files && memo.dir !== undefined)
    remembered = await rememberVerifiedInitialKey(memo.dir, files, csHash)
      .then(() => ', remembered on this machine')
      .catch((error: NodeJS.ErrnoException) => `, not remembered (${error.code ?? 'error'})`);
  return {
    zero: { path: initPath, hashes },
    words: `contribution 0: checked against the r1cs and the ptau${remembered}`,
  };
}

/**
 * The receipt check holds every key to the init entry's circuit hash: it must be the one the r1cs
 * gives, or every honest receipt of this chain would fail as "a key of another circuit".
 */
function refuseOtherCircuitHash(csHash: string, recorded: string): void {
  if (csHash !== recorded)
    throw new CoordinatorError(
      'transcript.corrupt',
      "the transcript's circuit hash for contribution 0 is not the circuit hash of the r1cs and the key",
    );
}

/** checkInitialKey with the audit's progress and stage times; returns the circuit hash (hex). */
async function checkContributionZero(config: CeremonyConfig, audit: ChainAudit, initPath: string): Promise<string> {
  const { name, chain, progress, timer } = audit;
  const steps = 1000;
  let reported = -1;
  let part = 'contribution 0';
  const timings: Record<string, number> = {};
  const checkStart = timer.now();
  const { csHash } = await checkInitialKey(initPath, chain.circuit.r1csPath, config.ptauPath, {
    timings,
    onProgress: (fraction) => {
      const done = Math.floor(fraction * steps);
      if (done === reported) return;
      reported = done;
      progress({ type: 'count', circuit: name, part, done, total: steps });
    },
    onCulpritSearch: () => {
      progress({
        type: 'step',
        circuit: name,
        step: 'contribution 0 failed its check: checking its parts one by one to name the one at fault',
      });
      part = 'contribution 0, part by part';
      reported = -1;
    },
  });
  timer.add('contribution 0 against the r1cs and the ptau', timer.now() - checkStart);
  for (const [phase, ms] of Object.entries(timings)) timer.add(`  contribution 0: ${phase}`, ms);
  return csHash.toString('hex');
}

/** The published verification key against the final key's, and its δ against its γ. */
async function checkPublishedVerificationKey(audit: ChainAudit): Promise<VerificationKeyDelta> {
  const { name, chain, paths, timer } = audit;
  const vkey: VerificationKeyDelta = await timer.time('verification key of the final key', () =>
    snarkjs.zKey.exportVerificationKey(paths.finalZkeyPath(name)),
  );
  refuseDeltaEqualsGamma(vkey, name, chain.circuit.verifier);
  const published = await readFile(paths.verificationKeyPath(name), 'utf8').then(JSON.parse, () => undefined);
  if (published === undefined || JSON.stringify(published) !== JSON.stringify(vkey)) {
    throw new CoordinatorError(
      'chain.file_hash_mismatch',
      `${name}.vkey.json is missing or is not the verification key of the final key`,
    );
  }
  return vkey;
}

/** How one chain is audited, besides its keys. */
export interface ChainAuditLimits {
  /** The largest beacon exponent the audit derives (audit-ceremony.ts's maxBeaconIterationsExp). */
  maxBeaconIterationsExp: number;
  /** Verify every link against the key before it (--every-link), not the last key against contribution 0. */
  everyLink: boolean;
  /** Where a passed contribution-0 check is remembered (verified-initial-key-memo.ts). */
  initialKeyMemo: InitialKeyMemoOptions;
}

/** What one chain's audit established: its finding's words and, once finalised, its final key. */
export interface ChainVerdict {
  summary: string;
  manifestEntry?: DeltaEntry;
  finalKey?: VerificationKeyDelta;
}

/**
 * One chain (see the module comment); throws a CoordinatorError naming the first fault. The report's
 * list of its contributions (`audited`, from listChain) is marked verified as the checks reach them.
 */
export async function auditChain(
  config: CeremonyConfig,
  paths: CeremonyPaths,
  chain: CircuitChain,
  audited: AuditedCircuit,
  progress: Progress,
  timer: StageTimer,
  limits: ChainAuditLimits,
): Promise<ChainVerdict> {
  refuseUnauditableChain(config, chain, audited, limits.maxBeaconIterationsExp);
  const audit: ChainAudit = { name: chain.circuit.name, chain, audited, paths, progress, timer };
  const { zero, words } = await auditContributionZero(config, audit, limits.initialKeyMemo);
  const links = limits.everyLink ? await auditEveryLink(audit, zero) : await auditFromInitial(audit, zero);
  const summary = `${links}; ${words}`;
  if (!chain.beacon) return { summary };
  const vkey = await checkPublishedVerificationKey(audit);
  return { summary, manifestEntry: deltaEntryFromVerificationKey(vkey), finalKey: vkey };
}
