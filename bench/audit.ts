/**
 * The audit bench, printed as three tables:
 *  (a) checking contribution 0 (checkInitialKey) against `snarkjs zkey new` of the same circuit,
 *      same run, for each real shape (rs18, rs17p64), with the check's phases;
 *  (b) the audit's check of the ptau (checkPtauSections) on the shapes' ptau (power 18) for the
 *      shapes' domains, with its phases; with --ptau-verify also `snarkjs powersoftau verify` of the
 *      same file, same run, for scale (it replays far more: every power, every Lagrange level in
 *      G1 and G2, the contribution chain); and the check's largest inverse FFT on the kernel
 *      against ffjavascript's, which it used before (--fft-power P: at 2^P instead, alone);
 *  (c) `ceremony audit --every-link` (auditCeremony, link by link: what this bench's tables are per
 *      link) over a published-ceremony-shaped folder of the service's nine circuits, each a chain of
 *      LINKS contributions plus a beacon final key, measured, and extrapolated to 370 links; the
 *      ptau's pin and sections check are reported on their own line. The default audit (each final
 *      key against contribution 0) by the chain's length: bench/audit-chain-length.ts.
 *
 * Nine distinct 2^18 chains would cost about an hour to build here, so (b) builds one chain per
 * shape (snarkjs's z1, z2 from bench-chain.ts, then contributeFast, then beaconFast; cached in the
 * fixture cache) and lays the nine circuits out as hard links of those files under nine names:
 * seven of the rs18 shape (transact*), treeUpdate and register of the rs17p64 shape. The audit
 * cannot tell: it does the full work for each circuit (every file hashed, every check run).
 *
 * With --one-chain, (c) audits one rs18 circuit's chain instead (the 2^22 ceremony's shape: one
 * circuit); run with CEREMONY_STAGE_TIMES=1, the audit's stage times follow on stderr.
 *
 * The audit remembers the ptau and each contribution 0 it verified in memo folders of its own, made
 * empty for the run (so a memo left by an earlier run, or the auditor's own cache, never makes the
 * first audit shorter). With --second-audit, (c) audits the same folder again on those memos (every
 * file hashed, the ptau's sections check and contribution 0's remembered), then with --recheck and
 * on the memos once more:
 * the remembered audits' time against the checked ones' (goal ≤ 0.5×).
 *
 * Usage: tsx bench/audit.ts [--shapes rs18,rs17p64] [--links 5] [--no-baseline] [--no-ceremony]
 *                           [--one-chain] [--second-audit]
 *                           [--no-ptau] [--ptau-verify] [--fft-power P]
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as snarkjs from 'snarkjs';
import { auditCeremony } from '../core/audit/audit-ceremony.ts';
import type { ChainCheck } from '../core/audit/audit-report-parts.ts';
import { checkInitialKey } from '../core/audit/check-initial-key.ts';
import { checkPtauSections } from '../core/audit/check-ptau-sections.ts';
import { readR1csSummary, requiredPtauPower } from '../core/setup/r1cs-header.ts';
import { ceremonyPaths } from '../core/data-folder/ceremony-paths.ts';
import { getBn128, releaseBn128 } from '../core/crypto/bn128.ts';
import { hashBytes, hashFile } from '../core/crypto/file-hash.ts';
import { renderSolidityVerifier } from '../core/finalise/solidity-verifier.ts';
import { writeVerifierCompilerRecord } from '../core/finalise/verifier-compiler-record.ts';
import { beaconFast, contributeFast } from '../core/kernel/contribute-fast.ts';
import { FR_FFT_MAX_LOG, frInverseFft } from '../core/kernel/fr-fft.ts';
import {
  deltaEntryFromVerificationKey,
  serialiseManifest,
  type DeltaManifest,
  type VerificationKeyDelta,
} from '../core/manifest/delta-manifest.ts';
import { Transcript, type NewTranscriptEntry } from '../core/transcript/transcript.ts';
import { contributionHash } from '../core/zkey/contribution-hash.ts';
import { readZkeyInfo, SECTION } from '../core/zkey/zkey-file.ts';
import { hashKeyFile, type KeyHashes } from '../core/zkey/zkey-hashes.ts';
import { FINAL_BEACON_NAME } from '../core/finalise/finalise-ceremony.ts';
import { LINK_SCALAR_BYTES } from '../core/link-check/verify-link-from-head.ts';
import { FIXTURE_CACHE, TEST_BEACON, TEST_BEACON_ITERATIONS } from '../tests/fixtures/ceremony-fixture.ts';
import { benchLog, realShapedChain, writeAtomically, type RealShapedChain } from './bench-chain.ts';
import { parseBenchArgs } from './bench-args.ts';

const silent: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };
const exists = (p: string): Promise<boolean> =>
  stat(p).then(
    () => true,
    () => false,
  );
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const REAL_CEREMONY_LINKS = 370;

/** The service's nine circuits and the real shape each is laid out with. */
export interface BenchCircuit {
  name: string;
  verifier: string;
  shape: 'rs18' | 'rs17p64';
}
const SERVICE_CIRCUITS: BenchCircuit[] = [
  { name: 'register', verifier: 'VerifierRegister', shape: 'rs17p64' },
  { name: 'treeUpdate', verifier: 'VerifierTreeUpdate', shape: 'rs17p64' },
  ...['21', '22', '23', '42', '44', '82', '84'].map((n) => ({
    name: `transact${n}`,
    verifier: `VerifierTransact${n}`,
    shape: 'rs18' as const,
  })),
];

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const result = await run();
  return [result, performance.now() - start];
}

/** (a): the check against the rebuild it replaces, same run. */
async function compareWithZkeyNew(chain: RealShapedChain, baseline: boolean): Promise<void> {
  const timings: Record<string, number> = {};
  let zkeyNew: number | undefined;
  if (baseline) {
    const scratch = path.join(FIXTURE_CACHE, `bench-audit-zkey-new-${process.pid}.zkey`);
    try {
      benchLog(`snarkjs zkey new (${chain.name}), the baseline`);
      [, zkeyNew] = await timed(() => snarkjs.zKey.newZKey(chain.r1cs, chain.ptau, scratch, silent));
      if ((await hashFile(scratch)) !== (await hashFile(chain.z0)))
        throw new Error('zkey new made another key than the cached contribution 0');
    } finally {
      await rm(scratch, { force: true });
    }
  }
  benchLog(`checkInitialKey (${chain.name})`);
  const [, check] = await timed(() => checkInitialKey(chain.z0, chain.r1cs, chain.ptau, { timings }));
  process.stdout.write(
    `\ncontribution 0 of ${chain.name} (${chain.constraints} constraints, ${chain.publicInputs} public inputs)\n`,
  );
  if (zkeyNew !== undefined)
    process.stdout.write(`  snarkjs zkey new (the rebuild)     ${seconds(zkeyNew).padStart(9)}\n`);
  process.stdout.write(
    `  checkInitialKey                    ${seconds(check).padStart(9)}` +
      (zkeyNew !== undefined ? `   = ${(check / zkeyNew).toFixed(3)} × zkey new (goal ≤ 0.25)` : '') +
      '\n',
  );
  for (const [phase, ms] of Object.entries(timings))
    process.stdout.write(`    ${phase.padEnd(40)} ${seconds(ms).padStart(8)}\n`);
}

/** (b): the ptau check for the shapes' domains, and (optionally) snarkjs's own verification of the same ptau. */
async function ptauCheck(shapes: Map<string, RealShapedChain>, snarkjsVerify: boolean): Promise<void> {
  const ptau = shapes.values().next().value!.ptau;
  if ([...shapes.values()].some((shape) => shape.ptau !== ptau)) throw new Error('the shapes do not share one ptau');
  const powerOf = async (shape: RealShapedChain): Promise<number> =>
    requiredPtauPower(await readR1csSummary(shape.r1cs));
  const powers = await Promise.all([...shapes.values()].map(powerOf));
  const timings: Record<string, number> = {};
  benchLog(`checkPtauSections (${path.basename(ptau)}, domains 2^${powers.join(', 2^')})`);
  const [report, check] = await timed(() => checkPtauSections(ptau, powers, { timings }));
  const pinning = (await timed(() => hashFile(ptau)))[1];
  let verify: number | undefined;
  if (snarkjsVerify) {
    benchLog('snarkjs powersoftau verify (same ptau)');
    const [ok, ms] = await timed(() => snarkjs.powersOfTau.verify(ptau, silent));
    if (!ok) throw new Error('snarkjs powersoftau verify refused the bench ptau');
    verify = ms;
  }
  const domains = `domains 2^${powers.join(', 2^')}`;
  process.stdout.write(
    `\nthe ptau check (${path.basename(ptau)}, power ${report.power}; ${domains}; ${report.points} points)\n`,
  );
  process.stdout.write(`  pinning (BLAKE2b-512 of the file)    ${seconds(pinning).padStart(9)}\n`);
  const ratio = verify !== undefined ? `   = ${(check / verify).toFixed(3)} × snarkjs powersoftau verify` : '';
  process.stdout.write(`  checkPtauSections                    ${seconds(check).padStart(9)}${ratio}\n`);
  for (const [phase, ms] of Object.entries(timings)) {
    process.stdout.write(`    ${phase.padEnd(42)} ${seconds(ms).padStart(8)}\n`);
  }
  if (verify !== undefined) {
    process.stdout.write(`  snarkjs powersoftau verify           ${seconds(verify).padStart(9)}\n`);
  }
  for (const item of report.checked) process.stdout.write(`    checked: ${item}\n`);
  await inverseFftAgainstFfjavascript(Math.max(...powers) + 1);
}

/**
 * One inverse FFT of 2^power random 128-bit scalars (the ptau check's r) on the kernel and with
 * ffjavascript's Fr.ifft and its conversions (what the check did before), same input, same run, the
 * results compared; the best of two rounds each. Its floor is the k·2^(k−1) products of the butterflies.
 */
async function inverseFftAgainstFfjavascript(power: number): Promise<void> {
  const Fr = (await getBn128()).Fr;
  const n = 2 ** power;
  const values = new Uint8Array(n * 32);
  const random = randomBytes(n * 16);
  for (let i = 0; i < n; i++) values.set(random.subarray(i * 16, (i + 1) * 16), i * 32);
  benchLog(`inverse FFT of 2^${power} scalars: the kernel and ffjavascript`);
  let [kernel, ffjavascript] = [Infinity, Infinity];
  for (let round = 0; round < 2; round++) {
    const [ours, oursMs] = await timed(() => frInverseFft(values, Fr.toObject(Fr.w[power]!)));
    const [theirs, theirsMs] = await timed(async () =>
      Fr.batchFromMontgomery(await Fr.ifft(await Fr.batchToMontgomery(values))),
    );
    if (!Buffer.from(ours).equals(Buffer.from(theirs))) throw new Error('the two inverse FFTs differ');
    [kernel, ffjavascript] = [Math.min(kernel, oursMs), Math.min(ffjavascript, theirsMs)];
  }
  process.stdout.write(
    `\ninverse FFT over F_r of 2^${power} scalars (best of 2, equal results)\n` +
      `  kernel (fr-fft.c, one thread)        ${seconds(kernel).padStart(9)}   = ` +
      `${(kernel / ffjavascript).toFixed(2)} × ffjavascript\n` +
      `  ffjavascript Fr.ifft, with conversions ${seconds(ffjavascript).padStart(7)}\n`,
  );
}

/** One MSM over L‖H with verify-link's scalar width: the floor a link is compared with. */
async function oneMsm(zkey: string): Promise<number> {
  const info = await readZkeyInfo(zkey);
  const l = info.sections.get(SECTION.l)!;
  const h = info.sections.get(SECTION.h)!;
  const handle = await open(zkey, 'r');
  try {
    const bases = new Uint8Array(l.size + h.size);
    await handle.read(bases, 0, l.size, l.offset);
    await handle.read(bases, l.size, h.size, h.offset);
    const scalars = new Uint8Array(randomBytes((bases.length / 64) * LINK_SCALAR_BYTES));
    const curve = await getBn128();
    const [, ms] = await timed(() => curve.G1.multiExpAffine(bases, scalars));
    return ms;
  } finally {
    await handle.close();
  }
}

export interface TemplateChain {
  shape: RealShapedChain;
  /** Contributions 1..links, then the final key. */
  keys: string[];
  final: string;
}

/** One chain of `links` contributions + beacon on the shape's contribution 0, cached. */
export async function templateChain(shape: RealShapedChain, links: number): Promise<TemplateChain> {
  const dir = path.join(FIXTURE_CACHE, `bench-audit-chain-${shape.name}`);
  await mkdir(dir, { recursive: true });
  const keys: string[] = [];
  let previous = shape.z0;
  for (let i = 1; i <= links; i++) {
    const target = i === 1 ? shape.z1 : i === 2 ? shape.z2 : path.join(dir, `c${i}.zkey`);
    if (!(await exists(target))) {
      benchLog(`contributeFast (${shape.name}, ${i} of ${links})`);
      const from = previous;
      await writeAtomically(target, (tmp) => contributeFast(from, tmp, `bench ${i}`, randomBytes(32).toString('hex')));
    }
    keys.push(target);
    previous = target;
  }
  const final = path.join(dir, `final-after-${links}.zkey`);
  if (!(await exists(final))) {
    benchLog(`beaconFast (${shape.name})`);
    const from = previous;
    await writeAtomically(final, (tmp) =>
      beaconFast(from, tmp, FINAL_BEACON_NAME, TEST_BEACON, TEST_BEACON_ITERATIONS),
    );
  }
  return { shape, keys, final };
}

async function lastContributionHash(file: string): Promise<string> {
  const info = await readZkeyInfo(file);
  return contributionHash(await getBn128(), info.mpc.contributions.at(-1)!);
}

/** A published ceremony folder of the given service circuits, every file a hard link of a template's. */
export async function layOutCeremony(
  dir: string,
  templates: Map<string, TemplateChain>,
  circuits: readonly BenchCircuit[],
): Promise<void> {
  const paths = ceremonyPaths(dir);
  const anyTemplate = templates.values().next().value!;
  await mkdir(path.join(dir, 'circuits'), { recursive: true });
  await mkdir(path.join(dir, 'ptau'), { recursive: true });
  await mkdir(paths.finalDir, { recursive: true });
  await mkdir(path.dirname(paths.transcriptPath), { recursive: true });
  await link(anyTemplate.shape.ptau, path.join(dir, 'ptau', path.basename(anyTemplate.shape.ptau)));
  const config = {
    id: 'bench-audit',
    title: 'Audit bench: nine real-shaped circuits',
    testNetwork: true,
    ptau: `ptau/${path.basename(anyTemplate.shape.ptau)}`,
    circuits: circuits.map((c) => ({
      name: c.name,
      verifier: c.verifier,
      publicInputs: templates.get(c.shape)!.shape.publicInputs,
      r1cs: `circuits/${c.name}.r1cs`,
    })),
  };
  await writeFile(path.join(dir, 'ceremony.json'), `${JSON.stringify(config, null, 2)}\n`);

  // What every circuit of a shape shares: hashes and the verification key, computed once.
  const shared = new Map<
    string,
    { keyHashes: KeyHashes[]; contributionHashes: string[]; circuitHash: string; vkey: VerificationKeyDelta }
  >();
  for (const [shape, template] of templates) {
    const files = [template.shape.z0, ...template.keys, template.final];
    shared.set(shape, {
      keyHashes: await Promise.all(files.map((f) => hashKeyFile(f, f))),
      contributionHashes: await Promise.all(files.slice(1).map(lastContributionHash)),
      circuitHash: (await readZkeyInfo(template.shape.z0)).mpc.csHash.toString('hex'),
      vkey: await snarkjs.zKey.exportVerificationKey(template.final),
    });
  }

  const entries: NewTranscriptEntry[] = [];
  const manifest: DeltaManifest = {};
  const verifierSourceHashes: Record<string, string> = {};
  for (const circuit of circuits) {
    const template = templates.get(circuit.shape)!;
    const facts = shared.get(circuit.shape)!;
    const links = template.keys.length;
    await link(template.shape.r1cs, path.join(dir, 'circuits', `${circuit.name}.r1cs`));
    await mkdir(paths.chainDir(circuit.name), { recursive: true });
    await link(template.shape.z0, paths.zkeyPath(circuit.name, 0));
    entries.push({
      type: 'init',
      circuit: circuit.name,
      index: 0,
      circuitHash: facts.circuitHash,
      ...facts.keyHashes[0]!,
    });
    for (let i = 1; i <= links; i++) {
      await link(template.keys[i - 1]!, paths.zkeyPath(circuit.name, i));
      entries.push({
        type: 'contribution',
        circuit: circuit.name,
        index: i,
        contributor: `bench-${i}`,
        contributionHash: facts.contributionHashes[i - 1]!,
        ...facts.keyHashes[i]!,
      });
    }
    await link(template.final, paths.finalZkeyPath(circuit.name));
    entries.push({
      type: 'beacon',
      circuit: circuit.name,
      index: links + 1,
      contributionHash: facts.contributionHashes[links]!,
      ...facts.keyHashes[links + 1]!,
      beacon: TEST_BEACON,
      iterationsExp: TEST_BEACON_ITERATIONS,
    });
    await writeFile(paths.verificationKeyPath(circuit.name), `${JSON.stringify(facts.vkey, null, 1)}\n`);
    manifest[circuit.verifier] = deltaEntryFromVerificationKey(facts.vkey);
    // As finalise writes them: the verifier sources and the compiler record, committed below.
    const source = await renderSolidityVerifier(facts.vkey, circuit.verifier);
    await writeFile(paths.solidityVerifierPath(circuit.verifier), source);
    verifierSourceHashes[circuit.verifier] = hashBytes(source);
  }
  const compilerRecord = await writeVerifierCompilerRecord(paths.finalDir, Object.keys(manifest));
  await writeFile(paths.manifestPath, serialiseManifest(manifest));
  const manifestHash = hashBytes(await readFile(paths.manifestPath));
  entries.push({
    type: 'finalised',
    manifestHash,
    compilerRecordHash: hashBytes(compilerRecord),
    verifierSourceHashes,
  });
  const transcript = await Transcript.load(paths.transcriptPath, config.id);
  await transcript.append(entries);
}

/**
 * (c): the whole audit of the nine-circuit folder (or, with `circuits` one circuit, the shape of
 * the 2^22 ceremony's one chain), per circuit, and the extrapolation.
 */
async function auditCircuits(
  shapes: Map<string, RealShapedChain>,
  links: number,
  circuits: readonly BenchCircuit[],
  secondAudit: boolean,
): Promise<void> {
  const templates = new Map<string, TemplateChain>();
  for (const [name, shape] of shapes) templates.set(name, await templateChain(shape, links));
  const msm = new Map<string, number>();
  for (const [name, template] of templates) msm.set(name, await oneMsm(template.final));

  const dir = path.join(FIXTURE_CACHE, `bench-audit-ceremony-${process.pid}`);
  const memoDir = path.join(FIXTURE_CACHE, `bench-audit-ptau-memo-${process.pid}`);
  const initialKeyMemoDir = path.join(FIXTURE_CACHE, `bench-audit-initial-key-memo-${process.pid}`);
  await rm(dir, { recursive: true, force: true });
  await rm(memoDir, { recursive: true, force: true });
  await rm(initialKeyMemoDir, { recursive: true, force: true });
  try {
    await layOutCeremony(dir, templates, circuits);
    benchLog(`ceremony audit over ${circuits.length} circuit${circuits.length === 1 ? '' : 's'}`);
    // The audit trusts no ptau it is not told to: the bench pins its development ptau by hash.
    const ptauHash = await hashFile(templates.values().next().value!.shape.ptau);
    // And it is the auditor of its own layout: its ceremony.json, each r1cs pinned by the hash of the
    // file it linked in (hashed here, outside the audit timed, which hashes them again as every audit does).
    const r1csHashes: Record<string, string> = {};
    for (const circuit of circuits)
      r1csHashes[circuit.name] = await hashFile(path.join(dir, 'circuits', `${circuit.name}.r1cs`));
    const pins: AuditPins = { ptauHash, r1csHashes, ptauMemoDir: memoDir, initialKeyMemoDir, chainCheck: 'every-link' };
    const { marks, total } = await auditOnce(dir, pins);

    const linksPerChain = links + 1;
    const chains = circuits.length;
    process.stdout.write(
      `\nceremony audit: ${chains} circuit${chains === 1 ? '' : 's'} × (contribution 0 + ${links} ` +
        `contributions + beacon) = ${chains * linksPerChain} links\n`,
    );
    if (chains > 1)
      process.stdout.write(
        '  (one chain per shape, laid out under each name as hard links: the audit does the full work for each)\n',
      );
    process.stdout.write(
      `  ${'circuit'.padEnd(12)} ${'shape'.padEnd(8)} ` +
        `${'contribution 0'.padStart(14)} ${'links'.padStart(9)} ` +
        `${'per link'.padStart(9)} ${'÷ one MSM'.padStart(10)}\n`,
    );
    let checkTotal = 0;
    let linksTotal = 0;
    for (const circuit of circuits) {
      const mark = marks.get(circuit.name)!;
      const check = mark.links! - mark.check!;
      const linkTime = mark.finished! - mark.links!;
      checkTotal += check;
      linksTotal += linkTime;
      const perLink = linkTime / linksPerChain;
      process.stdout.write(
        `  ${circuit.name.padEnd(12)} ${circuit.shape.padEnd(8)} ` +
          `${seconds(check).padStart(14)} ${seconds(linkTime).padStart(9)} ` +
          `${seconds(perLink).padStart(9)} ` +
          `${(perLink / msm.get(circuit.shape)!).toFixed(2).padStart(10)}\n`,
      );
    }
    for (const [name, ms] of msm)
      process.stdout.write(
        `  one MSM over L‖H of ${name} (${LINK_SCALAR_BYTES}-byte scalars, ffjavascript): ${seconds(ms)}\n`,
      );
    const ptauMark = marks.get('ptau');
    const ptauTime =
      ptauMark?.start !== undefined && ptauMark.finished !== undefined ? ptauMark.finished - ptauMark.start : 0;
    process.stdout.write(
      `  the ptau: pinned by hash and its sections checked, once     ${seconds(ptauTime)} ` +
        `(pin ${seconds(ptauSpan(ptauMark, 'pin'))}, sections ${seconds(ptauSpan(ptauMark, 'sections'))})\n`,
    );
    process.stdout.write(
      `  total (measured)                 ${seconds(total)}  (contribution 0 ` +
        `checks ${seconds(checkTotal)}, links ${seconds(linksTotal)}, rest ` +
        `${seconds(total - checkTotal - linksTotal)})\n`,
    );
    const perLink = linksTotal / (chains * linksPerChain);
    const extrapolated = total + perLink * (REAL_CEREMONY_LINKS - chains * linksPerChain);
    process.stdout.write(
      `  extrapolated to ${REAL_CEREMONY_LINKS} links       ` +
        `${seconds(extrapolated)} = ${(extrapolated / 60000).toFixed(1)} min ` +
        `(goal ≤ 15 min; mean link ${seconds(perLink)})\n`,
    );
    if (secondAudit) await auditAgain(dir, pins, { total, marks });
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(memoDir, { recursive: true, force: true });
    await rm(initialKeyMemoDir, { recursive: true, force: true });
  }
}

/** When each circuit's (and the ptau's) audit reached its steps, from the audit's progress events. */
interface AuditMark {
  start?: number;
  sections?: number;
  check?: number;
  links?: number;
  finished?: number;
}
export type AuditMarks = Map<string, AuditMark>;

/** The ptau's pin (hashing it, with the inputs' checks it waits for) or its sections (checked or remembered). */
function ptauSpan(mark: AuditMark | undefined, part: 'pin' | 'sections'): number {
  if (mark?.start === undefined || mark.sections === undefined || mark.finished === undefined) return 0;
  return part === 'pin' ? mark.sections - mark.start : mark.finished - mark.sections;
}

/** One timed `auditCeremony` of the bench's folder, which must pass. */
export async function auditOnce(dir: string, pins: AuditPins): Promise<{ marks: AuditMarks; total: number }> {
  const marks: AuditMarks = new Map();
  const [report, total] = await timed(() =>
    auditCeremony(
      dir,
      (event) => {
        const mark = marks.get(event.circuit) ?? {};
        marks.set(event.circuit, mark);
        const now = performance.now();
        mark.start ??= now;
        if (event.type === 'step' && /^(checking the sections|its sections were checked)/.test(event.step))
          mark.sections = now;
        if (event.type === 'step' && event.step.startsWith('checking contribution 0')) mark.check = now;
        // After contribution 0: the links (every-link), or the final key against contribution 0 (final-key).
        if (
          event.type === 'step' &&
          /^(verifying|checking (the final key|contribution [1-9]\d*) against)/.test(event.step)
        )
          mark.links = now;
        if (event.type === 'finished') {
          mark.finished = now;
          benchLog(`audited ${event.circuit}`);
        }
      },
      // Laid out from benchmark chains, not run by the coordinator's lobby: no queue log to check.
      { auditorConfig: path.join(dir, 'ceremony.json'), ...pins, noQueueLog: true },
    ),
  );
  if (!report.ok) throw new Error(`the audit failed: ${JSON.stringify(report.findings.filter((f) => !f.ok))}`);
  return { marks, total };
}

/** What the bench's audit is given: its pins and its own memo folders (with recheck, the memos ignored). */
export interface AuditPins {
  ptauHash: string;
  r1csHashes: Record<string, string>;
  ptauMemoDir: string;
  /** Undefined: contribution 0 is checked on every audit, never remembered. */
  initialKeyMemoDir?: string;
  recheck?: boolean;
  /** This bench measures links, so its own audits name every-link; the chain-length bench names either. */
  chainCheck: ChainCheck;
}

/**
 * The same audit again, the ptau and contribution 0 remembered by the first; then checked again (--recheck) and
 * remembered once more, so that each kind is measured twice, alternately, in the same process: the
 * mean of the remembered against the mean of the checked. Each line splits the audit into the ptau's
 * pin, its sections and the rest (the hashes, contribution 0, the links): the rest's spread is the
 * machine's noise, not the memo's.
 */
async function auditAgain(dir: string, pins: AuditPins, first: { total: number; marks: AuditMarks }) {
  const rounds = [{ kind: 'checked', ...first }];
  for (const kind of ['remembered', 'checked', 'remembered'] as const) {
    benchLog(`the same audit again, the ptau's sections and contribution 0 ${kind}`);
    const { marks, total } = await auditOnce(dir, { ...pins, recheck: kind === 'checked' });
    rounds.push({ kind, total, marks });
  }
  const lines = [
    '',
    "the same audit, the ptau's sections and contribution 0 checked and remembered alternately " +
      '(files hashed every time)',
  ];
  for (const [i, { kind, total, marks }] of rounds.entries()) {
    const ptau = marks.get('ptau');
    const [pin, sections] = [ptauSpan(ptau, 'pin'), ptauSpan(ptau, 'sections')];
    // Contribution 0's span includes hashing it, which a remembered check does too.
    let zero = 0;
    for (const [circuit, mark] of marks)
      if (circuit !== 'ptau' && mark.check !== undefined && mark.links !== undefined) zero += mark.links - mark.check;
    lines.push(
      `  ${i + 1}. ${kind.padEnd(10)} ${seconds(total).padStart(9)}  (pin ${seconds(pin)}, ` +
        `sections ${seconds(sections)}, contribution 0 ${seconds(zero)}, ` +
        `the rest ${seconds(total - pin - sections - zero)})`,
    );
  }
  const mean = (kind: string): number => {
    const of = rounds.filter((round) => round.kind === kind);
    return of.reduce((sum, round) => sum + round.total, 0) / of.length;
  };
  lines.push(
    `  remembered ÷ checked (means of two)  ${(mean('remembered') / mean('checked')).toFixed(2)}  (goal ≤ 0.5)`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: {
      shapes: { type: 'string', default: 'rs18,rs17p64' },
      links: { type: 'string', default: '5' },
      'no-baseline': { type: 'boolean', default: false },
      'no-ceremony': { type: 'boolean', default: false },
      'one-chain': { type: 'boolean', default: false },
      'second-audit': { type: 'boolean', default: false },
      'no-ptau': { type: 'boolean', default: false },
      'ptau-verify': { type: 'boolean', default: false },
      'fft-power': { type: 'string' },
    },
  });
  if (values['fft-power'] !== undefined) {
    const power = Number(values['fft-power']);
    if (!Number.isInteger(power) || power < 1 || power > FR_FFT_MAX_LOG)
      throw new Error(`--fft-power takes a power from 1 to ${FR_FFT_MAX_LOG} (the kernel's largest transform)`);
    await inverseFftAgainstFfjavascript(power);
    await releaseBn128();
    process.exit(0);
  }
  const shapes = new Map<string, RealShapedChain>();
  for (const name of values.shapes
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean))
    shapes.set(name, await realShapedChain(name));
  for (const chain of shapes.values()) await compareWithZkeyNew(chain, !values['no-baseline']);
  if (!values['no-ptau']) await ptauCheck(shapes, values['ptau-verify']);
  if (values['one-chain']) {
    if (!shapes.has('rs18')) throw new Error('the one-chain audit needs the rs18 shape (--shapes rs18)');
    await auditCircuits(shapes, Number(values.links), SERVICE_CIRCUITS.slice(2, 3), values['second-audit']);
  } else if (!values['no-ceremony']) {
    if (!shapes.has('rs18') || !shapes.has('rs17p64'))
      throw new Error('the nine-circuit audit needs both shapes (--shapes rs18,rs17p64)');
    await auditCircuits(shapes, Number(values.links), SERVICE_CIRCUITS, values['second-audit']);
  }
  await releaseBn128();
}
