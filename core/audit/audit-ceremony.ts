/**
 * `ceremony audit DIR`: re-verifies a published ceremony from its files alone: the configuration,
 * r1cs and ptau (inputs), every zkey of every chain, the transcript, the final keys and the
 * manifest. Nothing is taken on the coordinator's word (docs/audit.md is the trust model):
 *   - the ptau must be pinned by the auditor (pin-ptau.ts): a known public file or --ptau-hash;
 *     the sections of it that contribution 0 relies on are checked against its powers of τ
 *     (check-ptau-sections.ts);
 *   - each r1cs must have the hash ceremony.json pins, if it pins one, and the one the auditor pins
 *     with --r1cs-hash; every r1cs's hash is reported, so an auditor can compare it with a circuit
 *     they compiled themselves;
 *   - contribution 0 is checked against r1cs + ptau, every link against the one before it, every
 *     file against the transcript's hash, the final key as the announced beacon applied to the
 *     last head, and the manifest is recomputed;
 *   - a finalised chain needs at least ceremony.json's minContributions contributions (≥ 1: with
 *     none, δ comes from the public beacon alone), and a final key whose δ equals γ is refused;
 *   - every key's sections against the section hashes its (format-2) transcript entry records,
 *     in the same read as its file hash;
 *   - the ceremony must be finished: every chain sealed by its beacon and the transcript's
 *     `finalised` entry there (`audit.not_finalised`, naming what is missing), unless the auditor
 *     asks for an audit of a running ceremony (`inProgress`), which then says it is not finished.
 * The report names the ceremony by the hash of the transcript's last entry (`identifier`): one
 * value that commits to every entry, so to every key, section by section, and the manifest.
 * The report lists every chain's contributions (position, name, contribution hash), so each
 * contributor can find theirs; `ceremony audit DIR --json` prints it as JSON (AuditReport, whose
 * shape docs/audit.md documents and keeps stable).
 *
 * Links are verified incrementally, in one pass per chain (verify-link-from-head.ts): 0→1→…→K→final under
 * one random challenge key drawn for this audit alone (crypto.randomBytes, 32 bytes, held in
 * memory and never written, logged or returned). The combination R_k = Σ r_i·P_i of zkey k's L‖H
 * computed when k was checked as NEXT is carried forward as the `head` of link k→k+1, so a chain
 * of K links (the beacon link included) costs K+1 MSMs instead of 2K. Each zkey's L and H are read
 * once, from the file whose hash was just checked against the transcript; its fixed sections are
 * compared with its head's by the section hashes this audit just computed from both files' bytes.
 *
 * Contribution 0 is not rebuilt (as long as `zkey new`): checkInitialKey (check-initial-key.ts)
 * compares its header, coefficients, H and circuit hash byte for byte with what r1cs + ptau fix, and
 * its IC, A, B1, L and B2 by random linear combination against the ptau points, with 128-bit
 * scalars of its own fresh randomness, and every B2 point's membership of G2.
 *
 * Soundness. Contribution 0 is the key r1cs + ptau produce, except with probability ≤ 2^-126
 * (check-initial-key.ts), given a ptau whose relied-on sections passed their check (≤ 2^-128,
 * check-ptau-sections.ts), so it is honest. Induction along the chain: if zkey k is
 * honest (its L‖H are δ_k-scaled from contribution 0), link k→k+1 is accepted only if
 * e(R_{k+1}, δ2_{k+1}) = e(R_k, δ2_k); with
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
import { ceremonyPaths, type CeremonyPaths } from '../data-folder/ceremony-paths.ts';
import { Transcript } from '../transcript/transcript.ts';
import { chainsFromTranscript, type BeaconAnnouncementEntry, type CircuitChain } from '../ceremony/open-ceremony.ts';
import { beaconFinding } from './check-beacon-announcement.ts';
import { checkCeremonyInputs } from '../ceremony/init-ceremony.ts';
import { hashFile, hashFileOnThread } from '../crypto/file-hash.ts';
import { entryVersion } from '../transcript/transcript-format.ts';
import type { TranscriptEntry } from '../transcript/transcript.ts';
import { verifyLinkFromHead } from '../link-check/verify-link-from-head.ts';
import type { LinkCombination } from '../link-check/link-combination-cache.ts';
import { CoordinatorError, isCoordinatorError, type ErrorCode } from '../errors.ts';
import {
  deltaEntryFromVerificationKey,
  type DeltaEntry,
  type VerificationKeyDelta,
} from '../manifest/delta-manifest.ts';
import { silentProgress, type Progress } from '../ceremony/progress.ts';
import { readPtauSummary } from '../ptau/ptau-header.ts';
import { requiredPtauPower } from '../setup/r1cs-header.ts';
import { resolveAuditPtau } from '../publish/published-ptau.ts';
import { checkInitialKey } from './check-initial-key.ts';
import { hashKeyOnTwoThreads } from './audit-key-hashes.ts';
import type { SectionHashes } from '../zkey/zkey-hashes.ts';
import { checkPtauSections } from './check-ptau-sections.ts';
import { checkPtauPin } from './pin-ptau.ts';
import { refuseDeltaEqualsGamma } from '../manifest/delta-equals-gamma.ts';
import { queueLogFinding } from './check-queue-fairness.ts';
import { StageTimer } from '../runtime/stage-timings.ts';

export interface AuditFinding {
  /** A circuit name, or `ptau`, `inputs`, `ptau sections`, `transcript`, `manifest`. */
  subject: string;
  ok: boolean;
  summary: string;
  /** The error code of a failed finding. */
  code?: ErrorCode;
}

/** One contribution of a chain, as the transcript records it and the audit verified it. */
export interface AuditedContribution {
  /** Position in the chain: 1 for the first contribution after contribution 0. */
  index: number;
  /** Who contributed, as the transcript names them. */
  contributor: string;
  /** The name written in the contribution's record in the key (`--name`), when it has one and was read. */
  name?: string;
  /** The contribution hash snarkjs prints to the contributor (BLAKE2b-512, hex). */
  contributionHash: string;
  /** True once the link to it verified. */
  verified: boolean;
}

export interface AuditedCircuit {
  name: string;
  verifier: string;
  r1cs: {
    /** As written in ceremony.json. */
    path: string;
    /** BLAKE2b-512 of the file (undefined when it could not be read). */
    blake2b512?: string;
    /** Who pinned this hash: `ceremony.json` (its r1csHash) and/or `auditor` (--r1cs-hash). */
    pinnedBy: Array<'ceremony.json' | 'auditor'>;
  };
  minContributions: number;
  /** Every contribution the transcript records for this chain, in order. */
  contributions: AuditedContribution[];
  /** The final beacon link, once the chain is finalised. */
  final?: { contributionHash: string; beacon: string; iterationsExp: number; verified: boolean };
}

export interface AuditedPtau {
  /** As written in ceremony.json (or the file given with --ptau). */
  path: string;
  blake2b512: string;
  /** True when the ptau is pinned (a known public file, or --ptau-hash); an audit of an unpinned one fails. */
  pinned: boolean;
  /** The known public file it is (core/ptau/known-ptau-files.json), if it is one. */
  known?: { file: string; power: number; url: string };
  /** True when the auditor pinned it with --ptau-hash. */
  pinnedByAuditor: boolean;
  /** True for the development ptau (its secret is public: test networks only). */
  insecure: boolean;
  /** The sections checked against the powers of τ (check-ptau-sections.ts), once they passed. */
  sectionsChecked?: string[];
}

/** The ceremony's one identifier: the hash of the transcript's last entry. */
export interface CeremonyIdentifier {
  hash: string;
  /** The entry's sequence number and type (`finalised` once the ceremony is finished). */
  seq: number;
  type: TranscriptEntry['type'];
}

export interface AuditReport {
  ok: boolean;
  finalised: boolean;
  /** Set when the auditor asked for an audit of a running ceremony and it is not finished. */
  inProgress?: { missing: string[] };
  /** The hash of the transcript's last entry, once the transcript was read. */
  identifier?: CeremonyIdentifier;
  findings: AuditFinding[];
  /** Set once the ptau is pinned. */
  ptau?: AuditedPtau;
  /** Every circuit of ceremony.json, in its order (empty when the configuration could not be read). */
  circuits: AuditedCircuit[];
}

export interface AuditOptions {
  /** The ptau to use instead of the folder's (a publication made without it): checked against its record. */
  ptauPath?: string;
  /** The auditor's pin on the ptau: its BLAKE2b-512, lower-case hex (pin-ptau.ts parsePtauHash). */
  ptauHash?: string;
  /** The auditor's pins on the r1cs files: circuit name → BLAKE2b-512, lower-case hex. */
  r1csHashes?: Record<string, string>;
  /**
   * The auditor's own minimum of contributions per finalised chain. ceremony.json's is the
   * coordinator's word; an auditor who expects more says so, and the higher of the two holds.
   */
  minContributions?: number;
  /**
   * Audit a running ceremony: an unfinished one passes if everything it has so far does, and the
   * report says it is not finished. Without it an unfinished ceremony fails (`audit.not_finalised`).
   */
  inProgress?: boolean;
  /**
   * The largest beacon exponent N the audit derives (2^N SHA-256 hashes, one after the other; the
   * default, DEFAULT_MAX_BEACON_ITERATIONS_EXP, is a few hours at most). The transcript names N, so
   * without a bound a coordinator could keep the audit from ever reaching a verdict.
   */
  maxBeaconIterationsExp?: number;
  /**
   * A JSON-RPC endpoint of the chain the beacon announcement names: each final key's beacon is
   * compared with the announced block's hash (check-beacon-announcement.ts). Without it the
   * `beacon` finding says the comparison was not made.
   */
  beaconRpcUrl?: string;
}

/** 2^32 SHA-256 hashes, one after the other: a few hours on one core (2^26: a few minutes). */
export const DEFAULT_MAX_BEACON_ITERATIONS_EXP = 32;

/**
 * Who pinned the r1cs files, kept apart: a pin in ceremony.json is the coordinator's word, and only
 * the auditor's own (--r1cs-hash) ties a chain to the circuit the auditor compiled.
 */
function describeR1csPins(circuits: readonly AuditedCircuit[]): string {
  const byAuditor = circuits.filter((c) => c.r1cs.pinnedBy.includes('auditor')).length;
  const byConfigOnly = circuits.filter(
    (c) => c.r1cs.pinnedBy.includes('ceremony.json') && !c.r1cs.pinnedBy.includes('auditor'),
  ).length;
  const yours = `${byAuditor === 0 ? 'none' : byAuditor} pinned by you (--r1cs-hash)`;
  return byConfigOnly === 0 ? yours : `${yours}, ${byConfigOnly} only by ceremony.json, the coordinator's word`;
}

function describe(error: unknown): string {
  return isCoordinatorError(error) ? `[${error.code}] ${error.message}` : (error as Error).message;
}

function codeOf(error: unknown): ErrorCode | undefined {
  return isCoordinatorError(error) ? error.code : undefined;
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

/**
 * The key file against its transcript entry: the whole file's hash and, for a format-2 entry, each
 * section's, on two threads (audit-key-hashes.ts).
 */
async function expectKeyHashes(
  filePath: string,
  entry: { fileHash: string; sectionHashes?: Record<string, string> },
  what: string,
): Promise<SectionHashes | undefined> {
  const named = `${what} (${path.basename(filePath)})`;
  let actual;
  try {
    actual = await hashKeyOnTwoThreads(filePath);
  } catch (error) {
    throw readFailure(error, named);
  }
  if (actual.fileHash !== entry.fileHash) {
    throw new CoordinatorError('chain.file_hash_mismatch', `${named} is not the file the transcript records`);
  }
  if (!entry.sectionHashes) return actual.sectionHashes;
  for (const [id, hash] of Object.entries(entry.sectionHashes)) {
    if (actual.sectionHashes?.[id] !== hash) {
      throw new CoordinatorError(
        'transcript.section_hash_mismatch',
        `${named}: the transcript's hash of its section ${id} is not the hash of that section of the file ` +
          'the transcript names (its whole-file hash matches): the entry commits to other bytes than the key has',
      );
    }
  }
  return actual.sectionHashes;
}

/**
 * The section hashes of both keys of a link as this audit computed them from their bytes (never
 * the transcript's): the link's structure check then compares the fixed sections by them instead
 * of reading over a gigabyte of each key again at 2^22 (check-link-structure.ts).
 */
function knownHashes(head: SectionHashes | undefined, candidate: SectionHashes | undefined) {
  return head && candidate ? { sectionHashes: { head, candidate } } : {};
}

/** The list the report carries for a chain: every contribution the transcript records, none verified yet. */
function listChain(chain: CircuitChain, audited: AuditedCircuit): void {
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

/** What the parts of one chain's audit share. */
interface ChainAudit {
  name: string;
  chain: CircuitChain;
  audited: AuditedCircuit;
  paths: CeremonyPaths;
  progress: Progress;
  timer: StageTimer;
  /** The auditor's own randomness for this chain's link checks (see the header). */
  challengeKey: Buffer;
  /** Links to verify: every contribution, and the beacon if any (for the progress count). */
  links: number;
}

/** The last key a chain's links reached: its path, its section hashes and its link combination. */
interface VerifiedHead {
  path: string;
  hashes: SectionHashes | undefined;
  combination: LinkCombination | undefined;
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
      audited.minContributions > config.minContributions ? 'the auditor (--min-contributions)' : 'ceremony.json';
    throw new CoordinatorError(
      'audit.too_few_contributions',
      `circuit ${name} was finalised with ${count} contribution${count === 1 ? '' : 's'}; ` +
        `${whose} requires at least ${audited.minContributions} ` +
        '(with none, its δ comes from the public beacon alone and anyone can forge proofs)',
    );
  }
}

/** Contribution 0: its hashes against its entry, then its every point against the r1cs and the ptau. */
async function auditContributionZero(config: CeremonyConfig, audit: ChainAudit): Promise<VerifiedHead> {
  const { name, chain, progress, timer } = audit;
  const init = chain.init!;
  const initPath = audit.paths.zkeyPath(name, 0);
  progress({ type: 'step', circuit: name, step: 'checking contribution 0 against the r1cs and the ptau' });
  const hashes = await timer.time('key hashes (file and sections)', () =>
    expectKeyHashes(initPath, init, 'contribution 0'),
  );
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
  // The receipt check holds every key to the init entry's circuit hash: it must be the one the
  // r1cs gives, or every honest receipt of this chain would fail as "a key of another circuit".
  if (csHash.toString('hex') !== init.circuitHash)
    throw new CoordinatorError(
      'transcript.corrupt',
      "the transcript's circuit hash for contribution 0 is not the circuit hash of the r1cs and the key",
    );
  for (const [phase, ms] of Object.entries(timings)) timer.add(`  contribution 0: ${phase}`, ms);
  return { path: initPath, hashes, combination: undefined };
}

/** Every contribution's link, in order, from contribution 0; returns the last key reached. */
async function auditContributionLinks(audit: ChainAudit, from: VerifiedHead): Promise<VerifiedHead> {
  const { name, chain, audited, progress, timer } = audit;
  progress({
    type: 'step',
    circuit: name,
    step: `verifying ${audit.links} link${audit.links === 1 ? '' : 's'} in one pass`,
  });
  progress({ type: 'count', circuit: name, part: 'links', done: 0, total: Math.max(audit.links, 1) });
  let previous = from;
  for (const [position, entry] of chain.contributions.entries()) {
    const current = audit.paths.zkeyPath(name, entry.index);
    const hashes = await timer.time('key hashes (file and sections)', () =>
      expectKeyHashes(current, entry, `contribution ${entry.index}`),
    );
    const link = await timer.time('links (structure, L and H sums, pairings)', () =>
      verifyLinkFromHead(previous.path, current, {
        ...knownHashes(previous.hashes, hashes),
        challenge: { key: audit.challengeKey, head: previous.combination },
        labels: { prev: `contribution ${entry.index - 1}`, next: `contribution ${entry.index}` },
      }),
    );
    if (link.contributionHash !== entry.contributionHash) {
      throw new CoordinatorError(
        'transcript.corrupt',
        `contribution ${entry.index}: the transcript records a different contribution hash`,
      );
    }
    const listed = audited.contributions[position]!;
    listed.verified = true;
    if (link.recordedName !== undefined) listed.name = link.recordedName;
    previous = { path: current, hashes, combination: link.combination };
    progress({ type: 'count', circuit: name, part: 'links', done: entry.index, total: Math.max(audit.links, 1) });
  }
  return previous;
}

/**
 * The beacon's link from the last contribution to the final key, and the published verification
 * key against the final key; returns the final contribution hash and the verification key.
 */
async function auditFinalKey(
  audit: ChainAudit,
  from: VerifiedHead,
): Promise<{ contributionHash: string; vkey: VerificationKeyDelta }> {
  const { name, chain, paths, timer } = audit;
  const beacon = chain.beacon!;
  const finalPath = paths.finalZkeyPath(name);
  const finalHashes = await timer.time('key hashes (file and sections)', () =>
    expectKeyHashes(finalPath, beacon, 'the final key'),
  );
  const link = await timer.time('links (structure, L and H sums, pairings)', () =>
    verifyLinkFromHead(from.path, finalPath, {
      ...knownHashes(from.hashes, finalHashes),
      challenge: { key: audit.challengeKey, head: from.combination },
      expect: { kind: 'beacon', beaconHex: beacon.beacon, iterationsExp: beacon.iterationsExp },
      labels: { prev: `contribution ${chain.contributions.length}`, next: 'the final key' },
    }),
  );
  if (link.contributionHash !== beacon.contributionHash) {
    throw new CoordinatorError(
      'transcript.corrupt',
      'the final key: the transcript records a different beacon contribution hash',
    );
  }
  audit.audited.final!.verified = true;
  audit.progress({ type: 'count', circuit: name, part: 'links', done: audit.links, total: audit.links });
  const vkey: VerificationKeyDelta = await timer.time('verification key of the final key', () =>
    snarkjs.zKey.exportVerificationKey(finalPath),
  );
  refuseDeltaEqualsGamma(vkey, name, chain.circuit.verifier);
  const published = await readFile(paths.verificationKeyPath(name), 'utf8').then(JSON.parse, () => undefined);
  if (published === undefined || JSON.stringify(published) !== JSON.stringify(vkey)) {
    throw new CoordinatorError(
      'chain.file_hash_mismatch',
      `${name}.vkey.json is missing or is not the verification key of the final key`,
    );
  }
  return { contributionHash: link.contributionHash, vkey };
}

/** One chain: contribution 0 against the r1cs and the ptau, every link after it, the final key. */
async function auditChain(
  config: CeremonyConfig,
  paths: CeremonyPaths,
  chain: CircuitChain,
  audited: AuditedCircuit,
  progress: Progress,
  timer: StageTimer,
  maxBeaconIterationsExp: number,
): Promise<{ summary: string; manifestEntry?: DeltaEntry }> {
  refuseUnauditableChain(config, chain, audited, maxBeaconIterationsExp);
  const audit: ChainAudit = {
    name: chain.circuit.name,
    chain,
    audited,
    paths,
    progress,
    timer,
    // Never stored, so no one can have chosen the published files knowing it (see the header).
    challengeKey: randomBytes(32),
    links: chain.contributions.length + (chain.beacon ? 1 : 0),
  };
  const zero = await auditContributionZero(config, audit);
  const head = await auditContributionLinks(audit, zero);
  const count = chain.contributions.length;
  const contributions = `${count} contribution${count === 1 ? '' : 's'}`;
  if (!chain.beacon) return { summary: `${contributions} verified; not finalised` };
  const final = await auditFinalKey(audit, head);
  return {
    summary: `${contributions} + beacon verified, final contribution hash ${final.contributionHash.slice(0, 16)}…`,
    manifestEntry: deltaEntryFromVerificationKey(final.vkey),
  };
}

async function auditManifest(
  paths: CeremonyPaths,
  expected: Map<string, DeltaEntry>,
  manifestHash: string,
): Promise<string> {
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
    throw new CoordinatorError(
      'input.invalid',
      `manifest.json lists ${names.join(', ')}; expected ${wanted.join(', ')}`,
    );
  }
  for (const [verifier, entry] of expected) {
    const found = manifest[verifier];
    if (found?.deltax1 !== entry.deltax1 || found?.deltax2 !== entry.deltax2) {
      throw new CoordinatorError(
        'input.invalid',
        `manifest entry ${verifier} does not match the delta of the final key`,
      );
    }
  }
  return `${names.length} verifiers match the final keys`;
}

/** Each r1cs's hash and who pins it, into the report's entries (an unreadable file has none). */
async function hashR1csFiles(
  config: CeremonyConfig,
  circuits: AuditedCircuit[],
  auditorPins: Record<string, string>,
): Promise<void> {
  for (const circuit of config.circuits) {
    const audited = circuits.find((c) => c.name === circuit.name)!;
    const blake2b512 = await hashFile(circuit.r1csPath).catch(() => undefined);
    if (blake2b512 !== undefined) audited.r1cs.blake2b512 = blake2b512;
    if (circuit.r1csHash !== undefined) audited.r1cs.pinnedBy.push('ceremony.json');
    if (auditorPins[circuit.name] !== undefined) audited.r1cs.pinnedBy.push('auditor');
  }
}

/** Each r1cs against the auditor's pins (ceremony.json's are checkCeremonyInputs's); throws on the first mismatch. */
function refuseUnpinnedR1cs(
  config: CeremonyConfig,
  circuits: AuditedCircuit[],
  auditorPins: Record<string, string>,
): void {
  for (const circuit of config.circuits) {
    const pin = auditorPins[circuit.name];
    const actual = circuits.find((c) => c.name === circuit.name)!.r1cs.blake2b512;
    if (pin === undefined || actual === pin) continue;
    throw new CoordinatorError(
      'r1cs.hash_mismatch',
      `circuit ${circuit.name}: ${circuit.r1cs} has BLAKE2b-512 ${actual ?? '(unreadable)'}, ` +
        `not the ${pin} pinned with --r1cs-hash`,
    );
  }
}

function describePin(ptau: AuditedPtau): string {
  const by = [
    ...(ptau.known ? [`the known public ${ptau.known.file}`] : []),
    ...(ptau.pinnedByAuditor ? ['the auditor (--ptau-hash)'] : []),
  ].join(' and ');
  const warning = ptau.insecure ? '; INSECURE: the development ptau, whose secret is public (test networks only)' : '';
  return `${ptau.path}, BLAKE2b-512 ${ptau.blake2b512}, pinned by ${by}${warning}`;
}

export async function auditCeremony(
  dir: string,
  progress: Progress = silentProgress,
  options: AuditOptions = {},
): Promise<AuditReport> {
  // Stage times on stderr with CEREMONY_STAGE_TIMES=1 (core/runtime/stage-timings.ts), written
  // however the audit ends; stages of one circuit's chain are named after it.
  const timer = new StageTimer('audit');
  try {
    return await auditTimed(dir, progress, options, timer);
  } finally {
    timer.report();
  }
}

async function auditTimed(
  dir: string,
  progress: Progress,
  options: AuditOptions,
  timer: StageTimer,
): Promise<AuditReport> {
  const findings: AuditFinding[] = [];
  const record = (subject: string, ok: boolean, summary: string): void => void findings.push({ subject, ok, summary });
  const fail = (subject: string, error: unknown): void => void findings.push(failedFinding(subject, error));
  let config = await loadCeremonyConfig(dir);
  const paths = ceremonyPaths(config.dataDir);
  const auditorPins = options.r1csHashes ?? {};
  refuseUnknownR1csPins(config, auditorPins);
  const maxBeaconIterationsExp = options.maxBeaconIterationsExp ?? DEFAULT_MAX_BEACON_ITERATIONS_EXP;
  const circuits: AuditedCircuit[] = config.circuits.map((circuit) => ({
    name: circuit.name,
    verifier: circuit.verifier,
    r1cs: { path: circuit.r1cs, pinnedBy: [] },
    minContributions: Math.max(config.minContributions, options.minContributions ?? 0),
    contributions: [],
  }));
  let identifier: CeremonyIdentifier | undefined;
  const report = (finalised: boolean, ptau?: AuditedPtau): AuditReport => ({
    ok: findings.every((f) => f.ok),
    finalised,
    findings,
    ...(identifier ? { identifier } : {}),
    ...(ptau ? { ptau } : {}),
    circuits,
  });

  // Every r1cs's hash before any finding, so the report carries them all whatever fails: on this
  // thread, while the ptau's is taken on another.
  const r1csHashed = timer.time('r1cs hashes', () => hashR1csFiles(config, circuits, auditorPins));
  r1csHashed.catch(() => {}); // awaited below, on either path: not an unhandled rejection meanwhile

  // The ptau first: nothing about contribution 0 means anything until it is pinned.
  let ptau: AuditedPtau | undefined;
  try {
    config = { ...config, ptauPath: await resolveAuditPtau(config, options.ptauPath) };
    const resolved = config;
    ptau = await timer.time('ptau hash (its pin)', () => hashAuditPtau(resolved, options.ptauPath, progress));
    await r1csHashed;
    pinAuditPtau(ptau, options.ptauHash);
    record('ptau', true, describePin(ptau));
  } catch (error) {
    await r1csHashed;
    fail('ptau', error);
    return report(false, ptau);
  }

  let circuitPowers: number[];
  try {
    circuitPowers = await timer.time('inputs (r1cs headers, pins)', () =>
      checkAuditInputs(config, circuits, auditorPins),
    );
    record(
      'inputs',
      true,
      `${config.circuits.length} r1cs files match the configuration (${describeR1csPins(circuits)}); ` +
        'the ptau covers them',
    );
  } catch (error) {
    fail('inputs', error);
    return report(false, ptau);
  }

  try {
    ptau.sectionsChecked = await checkAuditPtauSections(config.ptauPath, circuitPowers, progress, timer);
    record(
      'ptau sections',
      true,
      `${ptau.sectionsChecked.length} checks: the Lagrange basis (section 12) at the circuits' domains and H's, ` +
        'and the powers of τ it is derived from (section 2), are consistent; ' +
        "sections 14 and 15 (α·λ, β·λ) are no verdict's premise (contribution 0's IC and L are checked " +
        'against α1 and β2) and are checked only to name the culprit if contribution 0 fails; ' +
        'the phase-1 contribution chain is not replayed (the pin stands for it)',
    );
  } catch (error) {
    fail('ptau sections', error);
    return report(false, ptau);
  }

  let chains: Map<string, CircuitChain>;
  let finalisedEntry: TranscriptEntry | undefined;
  let announcement: BeaconAnnouncementEntry | undefined;
  try {
    const transcript = await Transcript.load(paths.transcriptPath, config.id);
    chains = chainsFromTranscript(config, transcript.entries);
    finalisedEntry = transcript.entries.find((e) => e.type === 'finalised');
    announcement = transcript.entries.find((e): e is BeaconAnnouncementEntry => e.type === 'beaconAnnouncement');
    const last = transcript.entries.at(-1);
    if (last) identifier = { hash: last.hash, seq: last.seq, type: last.type };
    record('transcript', true, describeTranscript(transcript.entries));
  } catch (error) {
    fail('transcript', error);
    return report(false, ptau);
  }
  findings.push(await queueLogFinding(config));

  const manifest = new Map<string, DeltaEntry>();
  for (const chain of chains.values()) {
    const audited = circuits.find((c) => c.name === chain.circuit.name)!;
    listChain(chain, audited);
    try {
      const chainTimer = new StageTimer(`audit ${chain.circuit.name}`);
      const result = await timer.time(`chain of ${chain.circuit.name}`, () =>
        auditChain(config, paths, chain, audited, progress, chainTimer, maxBeaconIterationsExp).finally(() =>
          chainTimer.report(),
        ),
      );
      if (result.manifestEntry) manifest.set(chain.circuit.verifier, result.manifestEntry);
      record(chain.circuit.name, true, result.summary);
    } catch (error) {
      fail(chain.circuit.name, error);
    }
    progress({ type: 'finished', circuit: chain.circuit.name });
  }

  findings.push(await timer.time('beacon', () => beaconFinding(announcement, chains, options.beaconRpcUrl)));
  const missing = unfinished(chains, finalisedEntry !== undefined);
  findings.push(
    ...(await timer.time('manifest', () =>
      finalisationFindings(config, paths, manifest, finalisedEntry, missing, options),
    )),
  );
  return {
    ...report(Boolean(finalisedEntry), ptau),
    ...(missing.length > 0 && options.inProgress ? { inProgress: { missing } } : {}),
  };
}

/** Refuses `--r1cs-hash` pins naming a circuit the ceremony does not have (a usage error, before any work). */
function refuseUnknownR1csPins(config: CeremonyConfig, auditorPins: Record<string, string>): void {
  const unknown = Object.keys(auditorPins).filter((name) => !config.circuits.some((c) => c.name === name));
  if (unknown.length > 0) {
    throw new CoordinatorError(
      'usage.invalid_arguments',
      `--r1cs-hash names ${unknown.join(', ')}, ` +
        `not a circuit of this ceremony (${config.circuits.map((c) => c.name).join(', ')})`,
    );
  }
}

/** The ptau's report entry: its hash and whether it is the development one, not pinned yet. */
async function hashAuditPtau(
  config: CeremonyConfig,
  ptauOption: string | undefined,
  progress: Progress,
): Promise<AuditedPtau> {
  progress({ type: 'step', circuit: 'ptau', step: 'hashing the powers of tau' });
  const ptauName = ptauOption ?? config.ptau;
  const blake2b512 = await hashFileOnThread(config.ptauPath);
  const insecure = (await readPtauSummary(config.ptauPath)).insecure;
  return { path: ptauName, blake2b512, pinned: false, pinnedByAuditor: false, insecure };
}

/** Marks `ptau` pinned (a known public file or the auditor's `--ptau-hash`); throws when nothing pins it. */
function pinAuditPtau(ptau: AuditedPtau, ptauHash: string | undefined): void {
  const pin = checkPtauPin(ptau.blake2b512, ptau.path, ptauHash);
  ptau.pinned = true;
  ptau.pinnedByAuditor = pin.byAuditor;
  if (pin.known) ptau.known = { file: pin.known.file, power: pin.known.power, url: pin.known.url };
}

/** The r1cs files against the configuration's and the auditor's pins; returns each circuit's ptau power. */
async function checkAuditInputs(
  config: CeremonyConfig,
  circuits: AuditedCircuit[],
  auditorPins: Record<string, string>,
): Promise<number[]> {
  const summaries = await checkCeremonyInputs(config);
  refuseUnpinnedR1cs(config, circuits, auditorPins);
  return [...summaries.values()].map(requiredPtauPower);
}

/** The ptau's sections contribution 0 relies on, against its powers of τ (in 1000 progress steps); what was checked. */
async function checkAuditPtauSections(
  ptauPath: string,
  circuitPowers: number[],
  progress: Progress,
  timer: StageTimer,
): Promise<string[]> {
  progress({
    type: 'step',
    circuit: 'ptau',
    step: 'checking the sections contribution 0 relies on against the powers of tau',
  });
  const steps = 1000;
  let reported = -1;
  const timings: Record<string, number> = {};
  const start = timer.now();
  const checked = await checkPtauSections(ptauPath, circuitPowers, {
    timings,
    onProgress: (fraction) => {
      const done = Math.floor(fraction * steps);
      if (done === reported) return;
      reported = done;
      progress({ type: 'count', circuit: 'ptau', part: 'sections', done, total: steps });
    },
  });
  timer.add('ptau sections', timer.now() - start);
  for (const [phase, ms] of Object.entries(timings)) timer.add(`  ptau sections: ${phase}`, ms);
  progress({ type: 'finished', circuit: 'ptau' });
  return checked.checked;
}

/**
 * The manifest recomputed when the transcript is finalised (every final key verified), and the
 * ceremony's unfinished parts (`missing`) as a failed finding unless the audit is of a running one.
 */
async function finalisationFindings(
  config: CeremonyConfig,
  paths: CeremonyPaths,
  manifest: Map<string, DeltaEntry>,
  finalisedEntry: TranscriptEntry | undefined,
  missing: string[],
  options: AuditOptions,
): Promise<AuditFinding[]> {
  const findings: AuditFinding[] = [];
  if (finalisedEntry?.type === 'finalised') {
    try {
      if (manifest.size !== config.circuits.length)
        throw new CoordinatorError(
          'input.invalid',
          'not every final key verified, so the manifest cannot be recomputed',
        );
      findings.push({
        subject: 'manifest',
        ok: true,
        summary: await auditManifest(paths, manifest, finalisedEntry.manifestHash),
      });
    } catch (error) {
      findings.push(failedFinding('manifest', error));
    }
  } else if (options.inProgress) {
    findings.push({
      subject: 'manifest',
      ok: true,
      summary: 'the ceremony is not finalised yet: no manifest to check',
    });
  }
  if (missing.length > 0 && !options.inProgress) {
    findings.push({
      subject: 'finalisation',
      ok: false,
      summary:
        `[audit.not_finalised] the ceremony is not finished: ${missing.join('; ')}; so the final keys, the ` +
        'verification keys and the manifest a deployment is checked against are not all there to audit ' +
        '(audit a running ceremony with --in-progress)',
      code: 'audit.not_finalised',
    });
  }
  return findings;
}

/** A failed finding: the error's message and, when it has one, its code. */
function failedFinding(subject: string, error: unknown): AuditFinding {
  const code = codeOf(error);
  return { subject, ok: false, summary: describe(error), ...(code ? { code } : {}) };
}

/** What an unfinished ceremony lacks, or nothing: chains not sealed by a beacon, the `finalised` entry. */
function unfinished(chains: Map<string, CircuitChain>, finalised: boolean): string[] {
  const open = [...chains.values()].filter((chain) => !chain.beacon).map((chain) => chain.circuit.name);
  return [
    ...(open.length > 0 ? [`no final key (beacon) for ${open.join(', ')}`] : []),
    ...(finalised ? [] : ['the transcript has no `finalised` entry (no manifest is committed)']),
  ];
}

/** The transcript finding: its length, its chain, and what its format commits to. */
function describeTranscript(entries: readonly TranscriptEntry[]): string {
  const older = entries.filter((entry) => entryVersion(entry) < 2 && entry.type !== 'finalised').length;
  const sections =
    older === 0
      ? 'every key committed section by section (format 2)'
      : `${older} key${older === 1 ? '' : 's'} committed by whole-file hash only (format 1, from before section ` +
        'hashes: a receipt check cannot bind the bytes it reads of those keys to the transcript)';
  return `${entries.length} entries, hash chain intact; ${sections}`;
}
