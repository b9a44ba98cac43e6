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
 *   - contribution 0 is checked against r1cs + ptau, each chain's last key against contribution 0
 *     and its records (or, with `chainCheck: 'every-link'`, every link against the one before it),
 *     every file against the transcript's hash, the final key as the announced beacon applied, and
 *     the manifest is recomputed;
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
 * Each chain (audit-chain.ts): contribution 0 against the r1cs and the ptau, then by default the
 * chain's last key against contribution 0 and the records of its own history, and every key between
 * as the file the transcript commits to, its history the last key's (audit-from-initial.ts: two MSMs
 * a chain, whatever its length). That proves the last key descends from every recorded
 * contribution, whatever the keys between hold, but not that the keys between are valid: their L
 * and H are no premise of it and are not read. With `chainCheck: 'every-link'`, every link against
 * the one before it (audit-every-link.ts: one MSM a key), which proves every published key valid
 * (docs/audit.md). Each circuit's finding says which was done and what it proves and does not. The
 * ptau's sections check is remembered on the auditor's machine, keyed by the ptau's hash (computed
 * in this audit) and the check's version (verified-ptau-memo.ts), and so is each contribution 0's
 * check, keyed by the hashes of its r1cs, ptau and key (verified-initial-key-memo.ts), unless
 * `recheck`; the findings say what was remembered, and when it was checked.
 *
 * Soundness: contribution 0 is the key r1cs + ptau produce except with probability ≤ 2^-126
 * (check-initial-key.ts), given a ptau whose relied-on sections passed their check (≤ 2^-128,
 * check-ptau-sections.ts); each mode's argument and bound from there: docs/audit.md.
 */
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { loadCeremonyConfig, type CeremonyConfig } from '../config/ceremony-config.ts';
import { ceremonyPaths, type CeremonyPaths } from '../data-folder/ceremony-paths.ts';
import { Transcript } from '../transcript/transcript.ts';
import { chainsFromTranscript, type BeaconAnnouncementEntry, type CircuitChain } from '../ceremony/open-ceremony.ts';
import { beaconFinding } from './check-beacon-announcement.ts';
import { checkCeremonyInputs } from '../ceremony/init-ceremony.ts';
import { hashFileOnThread } from '../crypto/file-hash.ts';
import { checkCeremonyIdentifier } from '../transcript/ceremony-identifier.ts';
import { describeLegacyKeys, refuseLegacyTranscript, type TranscriptFormats } from '../transcript/legacy-transcript.ts';
import type { TranscriptEntry } from '../transcript/transcript.ts';
import { CoordinatorError, isCoordinatorError, type ErrorCode } from '../errors.ts';
import type { DeltaEntry, VerificationKeyDelta } from '../manifest/delta-manifest.ts';
import { silentProgress, type Progress } from '../ceremony/progress.ts';
import { readPtauSummary } from '../ptau/ptau-header.ts';
import { requiredPtauPower } from '../setup/r1cs-header.ts';
import { resolveAuditPtau } from '../publish/published-ptau.ts';
import { auditChain, listChain } from './audit-chain.ts';
import { readFailure } from './chain-audit-context.ts';
import { ptauSectionsFinding } from './audit-ptau-sections.ts';
import {
  checkR1csPins,
  describePtauPin,
  describeR1csPins,
  hashR1csFiles,
  pinAuditPtau,
  refuseUnknownR1csPins,
} from './audit-pins.ts';
import { readAuditorConfig, refuseOtherConfig } from './auditor-config.ts';
import { checkVerifierFiles } from './check-verifier-files.ts';
import { queueLogFinding } from './check-queue-fairness.ts';
import { reportWorkTally } from '../runtime/work-tally.ts';
import { StageTimer } from '../runtime/stage-timings.ts';
import type { AuditedCircuit, AuditedPtau, AuditFinding, ChainCheck } from './audit-report-parts.ts';

/** The ceremony's one identifier: the hash of the transcript's last entry. */
export interface CeremonyIdentifier {
  hash: string;
  /** The entry's sequence number and type (`finalised` once the ceremony is finished). */
  seq: number;
  type: TranscriptEntry['type'];
  /** True when the auditor gave it (--identifier) and it matched: the audit refuses any other. */
  given?: boolean;
}

/** A transcript with format-1 entries, read because the auditor allowed it, and what that left unproven. */
export interface LegacyTranscriptNote {
  /** `legacy`: format 1 throughout; `mixed`: format-1 entries, then format-2 ones. */
  format: 'legacy' | 'mixed';
  /** Keys committed by whole-file hash only. */
  keys: number;
  unproven: string;
}

export interface AuditReport {
  ok: boolean;
  finalised: boolean;
  /** Set when the auditor asked for an audit of a running ceremony and it is not finished. */
  inProgress?: { missing: string[] };
  /** The hash of the transcript's last entry, once the transcript was read. */
  identifier?: CeremonyIdentifier;
  findings: AuditFinding[];
  /** The auditor's own ceremony.json, as given (the configuration the audit takes as the ceremony's). */
  auditorConfig: string;
  /** Set when the transcript has format-1 entries and --allow-legacy-transcript read it. */
  legacyTranscript?: LegacyTranscriptNote;
  /** Set once the ptau is pinned. */
  ptau?: AuditedPtau;
  /** Every circuit of ceremony.json, in its order (empty when the configuration could not be read). */
  circuits: AuditedCircuit[];
}

export interface AuditOptions {
  /**
   * The auditor's own ceremony.json (their checkout's `ceremony-data/ceremony.json`, or --config):
   * the publication's must agree with it on every field the audit relies on
   * (`config.publication_mismatch`, auditor-config.ts), and its r1csHash and ptauHash are the
   * auditor's pins. Required: the publication's own is the coordinator's word.
   */
  auditorConfig: string;
  /** The ceremony identifier the auditor compared out of band: any other transcript fails (ceremony-identifier.ts). */
  identifier?: string;
  /** Read a transcript with format-1 entries rather than fail it; the report says what stayed unproven. */
  allowLegacyTranscript?: boolean;
  /** The ptau to use instead of the folder's (a publication made without it): checked against its record. */
  ptauPath?: string;
  /** The auditor's pin on the ptau: its BLAKE2b-512, lower-case hex (pin-ptau.ts parsePtauHash). */
  ptauHash?: string;
  /** The auditor's pins on the r1cs files: circuit name → BLAKE2b-512, lower-case hex. */
  r1csHashes?: Record<string, string>;
  /**
   * The auditor's own minimum of contributions per finalised chain, beyond their ceremony.json's
   * (which the publication's must equal): the higher of the two holds.
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
  /**
   * How each chain is checked after contribution 0 (AuditedCircuit.check): `final-key`, the default
   * (the chain's last key against contribution 0 and its records, two MSMs a chain, whatever its
   * length: it proves the last key descends from every recorded contribution, but not that the keys
   * between are valid keys of their δ, whose L and H it does not read), or `every-link` (every key
   * against the one before it, one MSM over L‖H a key: every published key valid; docs/audit.md).
   */
  chainCheck?: ChainCheck;
  /**
   * Where verified ptau files are remembered (verified-ptau-memo.ts; the CLI's default is
   * defaultPtauMemoDir()). Without it nothing is remembered, and the ptau's sections are checked.
   */
  ptauMemoDir?: string;
  /**
   * Where passed contribution-0 checks are remembered (verified-initial-key-memo.ts; the CLI's
   * default is defaultInitialKeyMemoDir()). Without it nothing is remembered, and each is checked.
   */
  initialKeyMemoDir?: string;
  /** Check again what this machine remembers as verified (the ptau's sections, contribution 0); remember it anew. */
  recheck?: boolean;
  /** The same as `recheck` (its earlier name, from when only the ptau was remembered). */
  recheckPtau?: boolean;
  /**
   * The auditor says the ceremony had no queue log (made without the coordinator's lobby): a
   * missing transcript/queue-log.jsonl then passes, its finding saying the order of turns is NOT
   * checked. Without it a missing log fails (`audit.queue_log_missing`).
   */
  noQueueLog?: boolean;
}

/** Whether the auditor asked to check again what this machine remembers as verified. */
const rechecks = (options: AuditOptions): boolean => options.recheck === true || options.recheckPtau === true;

/**
 * The final key against contribution 0: the argument that a final key which passes descends from
 * every recorded contribution needs no premise about the keys between (docs/audit.md), and its cost
 * does not grow with the chain's length.
 */
const DEFAULT_CHAIN_CHECK: ChainCheck = 'final-key';

/** 2^32 SHA-256 hashes, one after the other: a few hours on one core (2^26: a few minutes). */
export const DEFAULT_MAX_BEACON_ITERATIONS_EXP = 32;

function describe(error: unknown): string {
  return isCoordinatorError(error) ? `[${error.code}] ${error.message}` : (error as Error).message;
}

function codeOf(error: unknown): ErrorCode | undefined {
  return isCoordinatorError(error) ? error.code : undefined;
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

export async function auditCeremony(
  dir: string,
  progress: Progress = silentProgress,
  options: AuditOptions,
): Promise<AuditReport> {
  // Stage times and the work tally on stderr with CEREMONY_STAGE_TIMES=1 (core/runtime/), written
  // however the audit ends; stages of one circuit's chain are named after it.
  const timer = new StageTimer('audit');
  try {
    return await auditTimed(dir, progress, options, timer);
  } finally {
    timer.report();
    reportWorkTally('audit');
  }
}

/** What the stages of one audit share: the findings so far and what the report carries besides. */
class AuditRun {
  readonly findings: AuditFinding[] = [];
  circuits: AuditedCircuit[] = [];
  identifier?: CeremonyIdentifier;
  ptau?: AuditedPtau;
  legacyTranscript?: LegacyTranscriptNote;

  constructor(readonly auditorConfig: string) {}

  record(subject: string, ok: boolean, summary: string): void {
    this.findings.push({ subject, ok, summary });
  }

  fail(subject: string, error: unknown): void {
    this.findings.push(failedFinding(subject, error));
  }

  report(finalised: boolean): AuditReport {
    return {
      ok: this.findings.every((f) => f.ok),
      finalised,
      findings: this.findings,
      auditorConfig: this.auditorConfig,
      ...(this.identifier ? { identifier: this.identifier } : {}),
      ...(this.legacyTranscript ? { legacyTranscript: this.legacyTranscript } : {}),
      ...(this.ptau ? { ptau: this.ptau } : {}),
      circuits: this.circuits,
    };
  }
}

/** What the audit read of the transcript, once it held to its rules. */
interface AuditedTranscript {
  chains: Map<string, CircuitChain>;
  finalisedEntry?: TranscriptEntry;
  announcement?: BeaconAnnouncementEntry;
}

async function auditTimed(
  dir: string,
  progress: Progress,
  options: AuditOptions,
  timer: StageTimer,
): Promise<AuditReport> {
  const run = new AuditRun(options.auditorConfig);
  const config = await auditInputs(dir, run, progress, options, timer);
  if (!config) return run.report(false);
  const paths = ceremonyPaths(config.dataDir);
  const transcript = await auditTranscript(config, paths, run, options);
  if (!transcript) return run.report(false);
  const { chains, finalisedEntry, announcement } = transcript;
  run.findings.push(await queueLogFinding(config, { noQueueLog: options.noQueueLog }));

  const maxBeaconIterationsExp = options.maxBeaconIterationsExp ?? DEFAULT_MAX_BEACON_ITERATIONS_EXP;
  const manifest = new Map<string, DeltaEntry>();
  const finalKeys = new Map<string, VerificationKeyDelta>();
  for (const chain of chains.values()) {
    const audited = run.circuits.find((c) => c.name === chain.circuit.name)!;
    listChain(chain, audited);
    try {
      const chainTimer = new StageTimer(`audit ${chain.circuit.name}`);
      const result = await timer.time(`chain of ${chain.circuit.name}`, () =>
        auditChain(config, paths, chain, audited, progress, chainTimer, {
          maxBeaconIterationsExp,
          everyLink: (options.chainCheck ?? DEFAULT_CHAIN_CHECK) === 'every-link',
          initialKeyMemo: {
            dir: options.initialKeyMemoDir,
            recheck: rechecks(options),
            ptauHash: run.ptau!.blake2b512,
          },
        }).finally(() => chainTimer.report()),
      );
      if (result.manifestEntry) manifest.set(chain.circuit.verifier, result.manifestEntry);
      if (result.finalKey) finalKeys.set(chain.circuit.verifier, result.finalKey);
      run.record(chain.circuit.name, true, result.summary);
    } catch (error) {
      run.fail(chain.circuit.name, error);
    }
    progress({ type: 'finished', circuit: chain.circuit.name });
  }

  run.findings.push(await timer.time('beacon', () => beaconFinding(announcement, chains, options.beaconRpcUrl)));
  const missing = unfinished(chains, finalisedEntry !== undefined);
  run.findings.push(
    ...(await timer.time('manifest', () =>
      finalisationFindings(config, paths, { manifest, finalKeys }, finalisedEntry, missing, options),
    )),
  );
  return {
    ...run.report(Boolean(finalisedEntry)),
    ...(missing.length > 0 && options.inProgress ? { inProgress: { missing } } : {}),
  };
}

/**
 * The first findings, each of which stops the audit when it fails (nothing after it would mean
 * anything): the publication's ceremony.json against the auditor's (`config`), the ptau's pin,
 * the r1cs files against the configuration and their pins (`inputs`), the ptau's sections. Returns
 * the configuration the rest of the audit reads (the publication's, which then agrees with the
 * auditor's on every field compared; its paths locate the files), or undefined once one failed.
 */
async function auditInputs(
  dir: string,
  run: AuditRun,
  progress: Progress,
  options: AuditOptions,
  timer: StageTimer,
): Promise<CeremonyConfig | undefined> {
  const publication = await loadCeremonyConfig(dir);
  const auditor = (await readAuditorConfig(options.auditorConfig, dir)).config;
  const optionPins = options.r1csHashes ?? {};
  refuseUnknownR1csPins(auditor, optionPins);
  run.circuits = auditor.circuits.map((circuit) => ({
    name: circuit.name,
    verifier: circuit.verifier,
    r1cs: { path: circuit.r1cs, pinnedBy: [] },
    minContributions: Math.max(auditor.minContributions, options.minContributions ?? 0),
    check: options.chainCheck ?? DEFAULT_CHAIN_CHECK,
    contributions: [],
  }));
  try {
    refuseOtherConfig(auditor, publication, "the publication's ceremony.json", options.auditorConfig);
    run.record('config', true, describeAgreement(auditor, options.auditorConfig));
  } catch (error) {
    run.fail('config', error);
    return undefined;
  }
  let config = publication;
  // Every r1cs's hash before any other finding, so the report carries them all whatever fails: on
  // this thread, while the ptau's is taken on another.
  const r1csHashed = timer.time('r1cs hashes', () => hashR1csFiles(publication, run.circuits, optionPins));
  r1csHashed.catch(() => {}); // awaited below, on either path: not an unhandled rejection meanwhile

  // The ptau first: nothing about contribution 0 means anything until it is pinned.
  try {
    config = { ...config, ptauPath: await resolveAuditPtau(config, options.ptauPath) };
    const resolved = config;
    run.ptau = await timer.time('ptau hash (its pin)', () => hashAuditPtau(resolved, options.ptauPath, progress));
    await r1csHashed;
    pinAuditPtau(run.ptau, options.ptauHash, auditor.ptauHash);
    run.record('ptau', true, describePtauPin(run.ptau));
  } catch (error) {
    await r1csHashed;
    run.fail('ptau', error);
    return undefined;
  }
  const ptau = run.ptau;

  let circuitPowers: number[];
  try {
    circuitPowers = await timer.time('inputs (r1cs headers, pins)', () =>
      checkAuditInputs(config, run.circuits, optionPins, ptau.blake2b512),
    );
    run.record(
      'inputs',
      true,
      `${config.circuits.length} r1cs files match the configuration (${describeR1csPins(run.circuits)}); ` +
        'the ptau covers them',
    );
  } catch (error) {
    run.fail('inputs', error);
    return undefined;
  }

  try {
    const memo = { dir: options.ptauMemoDir, recheck: rechecks(options) };
    run.record(
      'ptau sections',
      true,
      await ptauSectionsFinding(ptau, config.ptauPath, circuitPowers, progress, timer, memo),
    );
  } catch (error) {
    run.fail('ptau sections', error);
    return undefined;
  }
  return config;
}

/** The config finding's words: what the publication's ceremony.json agrees with the auditor's on. */
function describeAgreement(config: CeremonyConfig, file: string): string {
  const count = config.circuits.length;
  return (
    `the publication's ceremony.json agrees with yours (${file}): the id, testNetwork (${config.testNetwork}), ` +
    `the ${count} circuit${count === 1 ? '' : 's'} in order with their verifiers, public inputs and r1cs hashes, ` +
    `minContributions (${config.minContributions}) and the ptau hash ` +
    `(${config.ptauHash === undefined ? 'none' : 'pinned'})`
  );
}

/** What to do with a transcript of format 1: the audit's words (legacy-transcript.ts). */
const LEGACY_REMEDY =
  'Audit it with --allow-legacy-transcript to check it with what format 1 proves ' +
  '(the verdict says what stays unproven).';

/**
 * The transcript: its hash chain and order rules, the identifier the auditor gave (if any), its
 * format (format 1 refused unless allowed); the chains it records. Undefined once its finding failed.
 */
async function auditTranscript(
  config: CeremonyConfig,
  paths: CeremonyPaths,
  run: AuditRun,
  options: AuditOptions,
): Promise<AuditedTranscript | undefined> {
  const source = 'the published transcript';
  try {
    const transcript = await Transcript.load(paths.transcriptPath, config.id);
    const last = transcript.entries.at(-1);
    if (last) run.identifier = { hash: last.hash, seq: last.seq, type: last.type };
    if (options.identifier !== undefined) {
      checkCeremonyIdentifier(transcript.entries, options.identifier, source);
      run.identifier = { ...run.identifier!, given: true };
    }
    const formats = refuseLegacyTranscript(
      transcript.entries,
      options.allowLegacyTranscript === true,
      source,
      LEGACY_REMEDY,
    );
    if (formats.kind !== 'current') run.legacyTranscript = legacyNote(formats);
    const chains = chainsFromTranscript(config, transcript.entries);
    run.record('transcript', true, describeTranscript(transcript.entries, run.legacyTranscript, run.identifier));
    const finalisedEntry = transcript.entries.find((e) => e.type === 'finalised');
    const announcement = transcript.entries.find((e): e is BeaconAnnouncementEntry => e.type === 'beaconAnnouncement');
    return {
      chains,
      ...(finalisedEntry ? { finalisedEntry } : {}),
      ...(announcement ? { announcement } : {}),
    };
  } catch (error) {
    run.fail('transcript', error);
    return undefined;
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
  return { path: ptauName, blake2b512, pinned: false, pinnedByAuditor: false, pinnedByConfig: false, insecure };
}

/**
 * The r1cs files and the ptau against the configuration and the auditor's pins (every r1cs must be
 * pinned); returns each circuit's ptau power. `ptauHash` is the ptau's, already taken.
 */
async function checkAuditInputs(
  config: CeremonyConfig,
  circuits: AuditedCircuit[],
  optionPins: Record<string, string>,
  ptauHash: string,
): Promise<number[]> {
  const summaries = await checkCeremonyInputs(config, { ptauHash });
  checkR1csPins(config, circuits, optionPins);
  return [...summaries.values()].map(requiredPtauPower);
}

/**
 * The manifest recomputed when the transcript is finalised (every final key verified), and the
 * ceremony's unfinished parts (`missing`) as a failed finding unless the audit is of a running one.
 */
async function finalisationFindings(
  config: CeremonyConfig,
  paths: CeremonyPaths,
  { manifest, finalKeys }: { manifest: Map<string, DeltaEntry>; finalKeys: Map<string, VerificationKeyDelta> },
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
      const manifestChecked = await auditManifest(paths, manifest, finalisedEntry.manifestHash);
      // What a deployment is checked against besides the manifest: the compiler record and the sources.
      const inOrder = new Map(config.circuits.map(({ verifier }) => [verifier, finalKeys.get(verifier)!]));
      const verifiersChecked = await checkVerifierFiles(paths.finalDir, finalisedEntry, inOrder);
      findings.push({ subject: 'manifest', ok: true, summary: `${manifestChecked}; ${verifiersChecked}` });
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

/** What a legacy transcript, allowed, left unproven (the report's `legacyTranscript`). */
function legacyNote(formats: TranscriptFormats): LegacyTranscriptNote {
  return {
    format: formats.kind === 'legacy' ? 'legacy' : 'mixed',
    keys: formats.legacyKeys,
    unproven:
      `${describeLegacyKeys(formats)} committed by whole-file hash only (format 1): this audit checked those ` +
      'files whole, but the ceremony identifier commits to them file by file, not section by section, so a ' +
      'receipt check of them can NOT hold the bytes it reads to the transcript, nor compare their fixed sections ' +
      "with contribution 0's",
  };
}

/** The transcript finding: its length, its chain, what its format commits to, the identifier given. */
function describeTranscript(
  entries: readonly TranscriptEntry[],
  legacy: LegacyTranscriptNote | undefined,
  identifier: CeremonyIdentifier | undefined,
): string {
  const sections =
    legacy === undefined
      ? 'every key committed section by section (format 2)'
      : `LEGACY (${legacy.format === 'legacy' ? 'format 1' : 'format 1, then format 2'}), read because of ` +
        `--allow-legacy-transcript: ${legacy.unproven}`;
  const given = identifier?.given ? '; its identifier is the one given with --identifier' : '';
  return `${entries.length} entries, hash chain intact; ${sections}${given}`;
}
