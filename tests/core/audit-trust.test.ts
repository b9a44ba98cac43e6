/**
 * The audit takes nothing on the coordinator's word: an unpinned ptau fails it, showing
 * the ptau's hash and how to pin it; a ptau whose Lagrange section was forged (and the ceremony
 * built on it, so every key agrees with it) fails its sections check even when pinned, and one
 * whose β·λ section was forged fails contribution 0, naming that section of the ptau; a chain
 * finalised with no contribution, or fewer than ceremony.json's minContributions, fails naming the
 * circuit; an r1cs pinned by ceremony.json or by the auditor must have that hash; a final key with
 * δ = γ is refused. `--json` prints the findings, the hashes and every chain's contributions.
 * Each refusal has its own code, and each of these folders passed the audit before it. The
 * finalised ceremony is the two-circuit one (TWO_CIRCUITS): what is checked is the same per circuit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { auditCeremony, type AuditOptions, type AuditReport } from '../../core/audit/audit-ceremony.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { getBn128 } from '../../core/crypto/bn128.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import { loadCeremonyConfig } from '../../core/config/ceremony-config.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { finaliseCeremony } from '../../core/finalise/finalise-ceremony.ts';
import { refuseDeltaEqualsGamma } from '../../core/manifest/delta-equals-gamma.ts';
import { readR1csSummary, requiredPtauPower } from '../../core/setup/r1cs-header.ts';
import { readSectionTable } from '../../core/binfile/section-table.ts';
import { contributionHash } from '../../core/zkey/contribution-hash.ts';
import { readZkeyInfo } from '../../core/zkey/zkey-file.ts';
import { hashKeyFile } from '../../core/zkey/zkey-hashes.ts';
import type { ProgressEvent } from '../../core/ceremony/progress.ts';
import {
  auditorConfigOf,
  devPtauHash,
  newCeremonyDir,
  TEST_BEACON,
  TEST_BEACON_ITERATIONS,
} from '../fixtures/ceremony-fixture.ts';
import { runCli, type CliResult } from '../helpers/run-cli.ts';
import { rewriteTranscript } from '../helpers/forge-transcript.ts';
import type { TranscriptEntry } from '../../core/transcript/transcript.ts';
import { twoCircuitCeremony } from '../helpers/two-circuit-ceremony.ts';
import { processAuditMemos } from '../helpers/audit-memos.ts';

/**
 * `ceremony audit DIR --quiet --ptau-hash <the dev ptau's hash>`, with `options`, the auditor's
 * ceremony.json the untouched ceremony's.
 */
async function auditPinned(dir: string, ...options: string[]): Promise<CliResult> {
  const config = fixture.auditorConfig();
  return runCli([
    'audit',
    dir,
    '--no-queue-log',
    '--config',
    config,
    '--quiet',
    '--ptau-hash',
    await devPtauHash(),
    ...options,
  ]);
}

/**
 * The audit of `dir` whose auditor's ceremony.json is the untouched ceremony's, with the file's memos
 * (shared with its commands): the untouched ptau and contributions 0 are checked once a file.
 */
async function audit(dir: string, options: Omit<AuditOptions, 'auditorConfig'>): Promise<AuditReport> {
  return auditCeremony(dir, undefined, {
    auditorConfig: fixture.auditorConfig(),
    noQueueLog: true,
    ...processAuditMemos(),
    ...options,
  });
}

const fixture = twoCircuitCeremony();
const { copy } = fixture;
const scratch = fixture.copies;

function finding(report: AuditReport, subject: string) {
  const found = report.findings.find((f) => f.subject === subject);
  assert.ok(found, `no finding for ${subject}: ${JSON.stringify(report.findings)}`);
  return found;
}

async function editConfig(dir: string, edit: (config: Record<string, any>) => void): Promise<void> {
  const file = path.join(dir, 'ceremony.json');
  const config = JSON.parse(await readFile(file, 'utf8'));
  edit(config);
  await writeFile(file, JSON.stringify(config, null, 2));
}

test('an unpinned ptau fails the audit at once (exit 1), showing its BLAKE2b-512 and how to pin it', async () => {
  const hash = await devPtauHash();
  const result = await runCli(['audit', fixture.published.dataDir, '--config', fixture.auditorConfig(), '--quiet']);
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.match(
    result.stdout,
    new RegExp(
      '^ptau FAIL: \\[audit\\.ptau_unpinned\\] the powers of tau ptau/dev-pot10-insecure\\.ptau ' +
        `\\(BLAKE2b-512 ${hash}\\) is not a known public ptau`,
      'm',
    ),
  );
  assert.match(result.stdout, new RegExp(`ceremony audit DIR --ptau-hash ${hash}$`, 'm'));
  assert.doesNotMatch(result.stdout, /^(inputs|transcript|register) /m, 'nothing is checked against an unpinned ptau');
  assert.match(result.stdout, /^audit FAILED: 1 problem$/m);
  // The report still carries the ptau's hash, marked unpinned, and every r1cs's hash.
  const report = await audit(fixture.published.dataDir, {});
  assert.deepEqual(report.ptau, {
    path: 'ptau/dev-pot10-insecure.ptau',
    blake2b512: hash,
    pinned: false,
    pinnedByAuditor: false,
    pinnedByConfig: false,
    insecure: true,
  });
  assert.ok(
    report.circuits.every((c) => /^[0-9a-f]{128}$/.test(c.r1cs.blake2b512 ?? '') && c.contributions.length === 0),
  );
});

test(
  'a ptau other than the pinned one fails (audit.ptau_hash_mismatch); a ' + 'malformed pin is a usage error',
  async () => {
    const other = 'ab'.repeat(64);
    const report = await audit(fixture.published.dataDir, { ptauHash: other });
    assert.equal(report.ok, false);
    assert.equal(finding(report, 'ptau').code, 'audit.ptau_hash_mismatch');
    assert.match(
      finding(report, 'ptau').summary,
      new RegExp(`its BLAKE2b-512 is ${await devPtauHash()}, the pin ${other}`),
    );
    const usage = await runCli(['audit', fixture.published.dataDir, '--quiet', '--ptau-hash', 'abc']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /^error \[usage\.invalid_arguments\]: --ptau-hash must be a BLAKE2b-512/m);
  },
);

test("a pinned development ptau passes, marked INSECURE; b2sum's whole line is accepted as the pin", async () => {
  const line = `${(await devPtauHash()).toUpperCase()}  ptau/dev-pot10-insecure.ptau`;
  const result = await runCli([
    ...['audit', fixture.published.dataDir, '--no-queue-log', '--config', fixture.auditorConfig(), '--quiet'],
    ...['--ptau-hash', line],
  ]);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /^ptau ok: .* pinned by the auditor \(--ptau-hash\); INSECURE: the development ptau/m);
  assert.match(result.stdout, /^ptau sections ok: /m);
});

test(
  'a chain finalised with no contribution fails the audit, naming the ' + 'circuit (audit.too_few_contributions)',
  async () => {
    const dir = await copy();
    const paths = ceremonyPaths(dir);
    // register: contribution 0 straight to the beacon, the transcript rewritten to match.
    const finalPath = paths.finalZkeyPath('register');
    await unlink(finalPath);
    assert.ok(
      await snarkjs.zKey.beacon(
        paths.zkeyPath('register', 0),
        finalPath,
        'Final beacon',
        TEST_BEACON,
        TEST_BEACON_ITERATIONS,
      ),
    );
    const info = await readZkeyInfo(finalPath);
    const beaconHash = contributionHash(await getBn128(), info.mpc.contributions.at(-1)!);
    const hashes = await hashKeyFile(finalPath, 'the forged final key');
    await rewriteTranscript(dir, (entries) =>
      entries
        .filter((e) => !(e.type === 'contribution' && e.circuit === 'register'))
        .map((e) =>
          e.type === 'beacon' && e.circuit === 'register'
            ? { ...e, index: 1, contributionHash: beaconHash, ...hashes }
            : e,
        ),
    );
    const report = await audit(dir, { ptauHash: await devPtauHash() });
    assert.equal(report.ok, false);
    const register = finding(report, 'register');
    assert.equal(register.code, 'audit.too_few_contributions');
    assert.match(
      register.summary,
      /circuit register was finalised with 0 contributions; your ceremony\.json requires at least 1/,
    );
    assert.deepEqual(
      report.findings.filter((f) => !f.ok).map((f) => f.subject),
      ['register', 'manifest'],
    );
  },
);

test('minContributions in the auditor’s ceremony.json: chains finalised with fewer fail, each named', async () => {
  const dir = await copy();
  await editConfig(dir, (config) => {
    config.minContributions = 3;
  });
  // The auditor's own asks for 3 (and the publication's says so too: it may not say otherwise).
  const report = await auditCeremony(dir, undefined, {
    noQueueLog: true,
    auditorConfig: auditorConfigOf(dir),
    ptauHash: await devPtauHash(),
    ...processAuditMemos(),
  });
  for (const { name } of fixture.published.circuits) {
    assert.equal(finding(report, name).code, 'audit.too_few_contributions', name);
    assert.match(
      finding(report, name).summary,
      new RegExp(`circuit ${name} was finalised with 2 contributions; your ceremony\\.json requires at least 3`),
    );
  }
  assert.ok(report.circuits.every((c) => c.minContributions === 3));
});

test('--min-contributions: the auditor’s own minimum holds when it is higher than ceremony.json’s', async () => {
  // The published chains have 2 contributions each and ceremony.json asks for 1.
  const lenient = await auditPinned(fixture.published.dataDir, '--min-contributions', '2');
  assert.equal(lenient.code, 0, lenient.stdout + lenient.stderr);
  const strict = await auditPinned(fixture.published.dataDir, '--min-contributions', '3');
  assert.equal(strict.code, 1, strict.stdout + strict.stderr);
  assert.match(
    strict.stdout,
    /finalised with 2 contributions; the auditor \(--min-contributions\) requires at least 3/,
  );
  const usage = await auditPinned(fixture.published.dataDir, '--min-contributions', '0');
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--min-contributions takes a whole number from 1, not "0"/);
});

test('an r1cs pinned in ceremony.json or by the auditor must have that hash (r1cs.hash_mismatch)', async () => {
  const dir = await copy();
  const config = await loadCeremonyConfig(dir);
  const registerHash = await hashFile(config.circuits[0]!.r1csPath);
  await editConfig(dir, (raw) => {
    raw.circuits[0].r1csHash = 'cd'.repeat(64);
  });
  // The auditor's own ceremony.json pins another register (the publication's says the same).
  const wrongInConfig = await auditCeremony(dir, undefined, {
    noQueueLog: true,
    auditorConfig: auditorConfigOf(dir),
    ptauHash: await devPtauHash(),
  });
  assert.equal(finding(wrongInConfig, 'inputs').code, 'r1cs.hash_mismatch');
  assert.match(
    finding(wrongInConfig, 'inputs').summary,
    new RegExp(`circuit register: circuits/register\\.r1cs has BLAKE2b-512 ${registerHash}; ceremony\\.json pins c`),
  );

  await editConfig(dir, (raw) => {
    raw.circuits[0].r1csHash = registerHash;
  });
  const wrongByAuditor = await audit(dir, {
    ptauHash: await devPtauHash(),
    r1csHashes: { transact21: 'ef'.repeat(64) },
  });
  assert.equal(finding(wrongByAuditor, 'inputs').code, 'r1cs.hash_mismatch');
  assert.match(
    finding(wrongByAuditor, 'inputs').summary,
    /circuit transact21: .* not the efef.* pinned with --r1cs-hash/,
  );

  const unknown = await auditPinned(dir, '--r1cs-hash', `nosuch=${registerHash}`);
  assert.equal(unknown.code, 2);
  assert.match(
    unknown.stderr,
    /^error \[usage\.invalid_arguments\]: --r1cs-hash names nosuch, not a circuit of this ceremony/m,
  );
});

test("--json: findings, ptau and r1cs hashes with their pins, each chain's contributions as recorded", async () => {
  const dir = await copy();
  const config = await loadCeremonyConfig(dir);
  const registerHash = await hashFile(config.circuits[0]!.r1csPath);
  const transact21Hash = await hashFile(config.circuits[1]!.r1csPath);
  // --recheck-ptau: an earlier run of this file remembered the ptau; this one lists what it checks.
  const result = await auditPinned(dir, '--json', '--recheck-ptau', '--r1cs-hash', `transact21=${transact21Hash}`);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  const json = JSON.parse(result.stdout);
  assert.equal(json.format, 'ceremony-audit');
  assert.equal(json.version, 3);
  assert.equal(json.auditorConfig, fixture.auditorConfig());
  assert.equal(json.ok, true);
  assert.equal(json.finalised, true);
  assert.equal(json.inProgress, undefined);
  assert.match(json.identifier.hash, /^[0-9a-f]{128}$/);
  assert.equal(json.identifier.type, 'finalised');
  assert.deepEqual(
    json.findings.map((f: { subject: string }) => f.subject),
    [
      'config',
      'ptau',
      'inputs',
      'ptau sections',
      'transcript',
      'queue log',
      ...fixture.published.circuits.map((c) => c.name),
      'beacon',
      'manifest',
    ],
  );
  assert.deepEqual(
    { ...json.ptau, sectionsChecked: undefined },
    {
      path: 'ptau/dev-pot10-insecure.ptau',
      blake2b512: await devPtauHash(),
      pinned: true,
      pinnedByAuditor: true,
      pinnedByConfig: false,
      insecure: true,
      sectionsChecked: undefined,
    },
  );
  assert.ok(
    json.ptau.sectionsChecked.some((s: string) => /^section 12 \(λ\) at 2\^10, odd points \(H\)/.test(s)),
    json.ptau.sectionsChecked.join('\n'),
  );
  // Who pinned what: the auditor's ceremony.json (which the publication's equals) and --r1cs-hash.
  assert.match(
    json.findings.find((f: { subject: string }) => f.subject === 'inputs').summary,
    /\(every one pinned: 2 by your ceremony\.json, 1 by --r1cs-hash\)/,
  );
  assert.deepEqual(
    json.circuits.map((c: { check: string }) => c.check),
    ['final-key', 'final-key'],
  );
  assert.deepEqual(json.circuits[0].r1cs, {
    path: 'circuits/register.r1cs',
    blake2b512: registerHash,
    pinnedBy: ['ceremony.json'],
  });
  assert.deepEqual(json.circuits[1].r1cs, {
    path: 'circuits/transact21.r1cs',
    blake2b512: transact21Hash,
    pinnedBy: ['ceremony.json', 'auditor'],
  });
  const transcript = (await readFile(ceremonyPaths(dir).transcriptPath, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TranscriptEntry);
  for (const circuit of json.circuits) {
    const recorded = transcript.filter(
      (e): e is Extract<TranscriptEntry, { type: 'contribution' }> =>
        e.type === 'contribution' && e.circuit === circuit.name,
    );
    assert.deepEqual(
      circuit.contributions,
      recorded.map((e) => ({
        index: e.index,
        contributor: e.contributor,
        name: e.contributor,
        contributionHash: e.contributionHash,
        verified: true,
      })),
      circuit.name,
    );
    const beacon = transcript.find((e) => e.type === 'beacon' && e.circuit === circuit.name) as Extract<
      TranscriptEntry,
      { type: 'beacon' }
    >;
    assert.deepEqual(circuit.final, {
      contributionHash: beacon.contributionHash,
      beacon: beacon.beacon,
      iterationsExp: beacon.iterationsExp,
      verified: true,
    });
    assert.equal(circuit.minContributions, 1);
  }
});

test('the text output lists every contribution with its full hash, so a contributor can find theirs', async () => {
  const result = await auditPinned(fixture.published.dataDir);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  const transcript = (await readFile(ceremonyPaths(fixture.published.dataDir).transcriptPath, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TranscriptEntry);
  for (const entry of transcript) {
    if (entry.type !== 'contribution') continue;
    assert.match(
      result.stdout,
      new RegExp(`^    #${entry.index} ${entry.contributor} "${entry.contributor}" ${entry.contributionHash}$`, 'm'),
    );
  }
  assert.match(result.stdout, /^r1cs \(BLAKE2b-512\):$/m);
  assert.match(result.stdout, /^ {2}register circuits\/register\.r1cs [0-9a-f]{128} {2}pinned by ceremony\.json$/m);
});

/**
 * A one-circuit ceremony (register) built on a ptau whose point `index` of `section`'s level 2^k
 * (k the circuit's domain power, given the circuit's constraint count) was replaced by its double:
 * init on it, one contribution, finalise; then audited with the forged ptau pinned.
 */
async function auditCeremonyOnForgedPtau(
  section: number,
  index: (nConstraints: number) => number,
): Promise<{ report: AuditReport; level: number; events: ProgressEvent[] }> {
  const dir = await newCeremonyDir({
    configOverrides: {
      circuits: [{ name: 'register', verifier: 'VerifierRegister', publicInputs: 6, r1cs: 'circuits/register.r1cs' }],
    },
  });
  scratch.push(dir);
  const config = await loadCeremonyConfig(dir);
  const forged = path.join(dir, 'forged.ptau');
  await copyFile(config.ptauPath, forged);
  await unlink(config.ptauPath);
  await copyFile(forged, config.ptauPath);
  await rm(forged);
  const summary = await readR1csSummary(config.circuits[0]!.r1csPath);
  const level = requiredPtauPower(summary);
  const bytes = await readFile(config.ptauPath);
  const handle = await import('node:fs/promises').then((fs) => fs.open(config.ptauPath, 'r'));
  const location = (await readSectionTable(handle, bytes.length, 'ptau')).sections.get(section)!;
  await handle.close();
  const curve = await getBn128();
  const at = location.offset + (2 ** level - 1 + index(summary.nConstraints)) * 64;
  const point = curve.G1.fromRprLEM(bytes, at);
  const doubled = new Uint8Array(64);
  curve.G1.toRprLEM(doubled, 0, curve.G1.toAffine(curve.G1.add(point, point)));
  bytes.set(doubled, at);
  await writeFile(config.ptauPath, bytes);

  await initCeremony(dir);
  await contributeLocally(dir, 'register', 'alice');
  await finaliseCeremony(dir, { beaconHex: TEST_BEACON, iterationsExp: TEST_BEACON_ITERATIONS });
  const events: ProgressEvent[] = [];
  // The test is the auditor of the ceremony it built: its own ceremony.json, the register it compiled.
  const report = await auditCeremony(dir, (event) => events.push(event), {
    noQueueLog: true,
    auditorConfig: auditorConfigOf(dir),
    ptauHash: await hashFile(config.ptauPath),
    r1csHashes: { register: await hashFile(config.circuits[0]!.r1csPath) },
  });
  return { report, level, events };
}

test(
  'a ceremony built on a ptau with a forged Lagrange point passes every ' +
    'key check, and fails the ptau sections check',
  async () => {
    // λ_0 at the circuit's level: zkey new then builds A, B, C on it.
    const { report, level } = await auditCeremonyOnForgedPtau(12, () => 0);
    assert.equal(report.ok, false);
    const sections = finding(report, 'ptau sections');
    assert.equal(sections.code, 'audit.ptau_inconsistent');
    assert.match(
      sections.summary,
      new RegExp(`section 12 \\(λ\\) at 2\\^${level} against section 2: not its Lagrange basis`),
    );
    // Nothing after it is checked: contribution 0 means nothing on such a ptau.
    assert.deepEqual(
      report.findings.map((f) => f.subject),
      ['config', 'ptau', 'inputs', 'ptau sections'],
    );
  },
);

test(
  'a ceremony built on a ptau with a forged β·λ point passes the ptau sections check (no verdict ' +
    'rests on section 15) and fails contribution 0, naming the ptau as the culprit',
  async () => {
    // β·λ at row n (the constant signal's public row), which zkey new adds into IC_0.
    const { report, level, events } = await auditCeremonyOnForgedPtau(15, (nConstraints) => nConstraints);
    assert.equal(report.ok, false);
    // The search for the culprit (the ptau's α·λ, β·λ among its parts) shows as a step with its own count.
    const search = events.findIndex((e) => e.type === 'step' && /failed its check: checking its parts/.test(e.step));
    assert.ok(search > 0, 'the search is announced');
    assert.ok(
      events.slice(search).some((e) => e.type === 'count' && e.part === 'contribution 0, part by part'),
      'and counted',
    );
    const sections = finding(report, 'ptau sections');
    assert.equal(sections.ok, true, sections.summary);
    assert.match(sections.summary, /sections 14 and 15 \(α·λ, β·λ\) are no verdict's premise/);
    const circuit = finding(report, 'register');
    assert.equal(circuit.code, 'audit.ptau_inconsistent', circuit.summary);
    assert.match(
      circuit.summary,
      new RegExp(`section 15 \\(β·λ\\) at 2\\^${level} against section 5: not its Lagrange basis`),
    );
  },
);

test(
  'a final key whose δ equals its γ is refused, naming the circuit and ' + 'the verifier (vkey.delta_equals_gamma)',
  async () => {
    const vkey = JSON.parse(await readFile(path.join(fixture.published.finalDir, 'register.vkey.json'), 'utf8'));
    assert.doesNotThrow(() => refuseDeltaEqualsGamma(vkey, 'register', 'VerifierRegister'));
    assert.throws(
      () => refuseDeltaEqualsGamma({ ...vkey, vk_delta_2: vkey.vk_gamma_2 }, 'register', 'VerifierRegister'),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'vkey.delta_equals_gamma');
        assert.match(error.message, /^circuit register \(VerifierRegister\): δ equals γ in its verification key/);
        return true;
      },
    );
  },
);
