/**
 * The audit takes the ceremony's configuration from the auditor, never from the coordinator:
 *  - forgery 4: keys for an under-constrained circuit (the coordinator's own r1cs, same public
 *    inputs, pinned by nothing) audited `passed` in the documented flow; from the checkout, whose
 *    ceremony.json pins every r1cs, the publication's ceremony.json now differs from the auditor's
 *    (config.publication_mismatch, naming r1csHash); a publication that copies the auditor's pins but
 *    ships the forged r1cs fails its inputs (r1cs.hash_mismatch); an auditor who pins nothing gets
 *    audit.r1cs_unpinned, with the hash to compare and the option that pins it;
 *  - a publication whose ceremony.json names another verifier, other public inputs, a lower
 *    minContributions, another order of circuits or another ptau hash is refused at once, naming the
 *    first difference;
 *  - the auditor's own ceremony.json may pin the ptau (ptauHash): it then pins the audit's ptau.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { auditCeremony, type AuditReport } from '../../core/audit/audit-ceremony.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { finaliseCeremony } from '../../core/finalise/finalise-ceremony.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import { closeMultiExp } from '../../core/kernel/multi-exp.ts';
import {
  auditorConfigOf,
  copyCeremony,
  devPtauHash,
  finalisedCeremony,
  newCeremonyDir,
  projectCircuit,
  TEST_BEACON,
  TEST_BEACON_ITERATIONS,
  TWO_CIRCUITS,
  type FinalisedCeremony,
} from '../fixtures/ceremony-fixture.ts';
import { runCli } from '../helpers/run-cli.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { writeR1cs } from '../helpers/write-r1cs.ts';
import { joined } from '../helpers/joined-regex.ts';

let published: FinalisedCeremony;
/** A register ceremony whose coordinator swapped the circuit for an under-constrained one. */
let forged: string;
let forgedR1csHash: string;
/** Where the auditor keeps their own ceremony.json files. */
let work: string;
const scratch: string[] = [];

/**
 * Register's six public inputs, constrained by nothing: one private signal squared into itself.
 * Its keys verify a proof for any public inputs, and every key check passes on them.
 */
async function underConstrainedRegister(file: string): Promise<void> {
  const privateSignal = 7;
  await writeR1cs(file, {
    nWires: 8,
    publicInputs: 6,
    constraints: [{ a: [[privateSignal, 1n]], b: [[privateSignal, 1n]], c: [[privateSignal, 1n]] }],
  });
}

async function editConfig(dir: string, edit: (config: Record<string, any>) => void): Promise<void> {
  const file = path.join(dir, 'ceremony.json');
  const config = JSON.parse(await readFile(file, 'utf8'));
  edit(config);
  await writeFile(file, JSON.stringify(config, null, 2));
}

/** A ceremony.json of the auditor's, in the scratch folder: the project's configuration of `circuits`. */
async function auditorConfig(name: string, circuits: Array<Record<string, unknown>>): Promise<string> {
  const project = JSON.parse(await readFile(auditorConfigOf(published.dataDir), 'utf8'));
  const file = path.join(work, `${name}.json`);
  await writeFile(file, JSON.stringify({ ...project, circuits }, null, 2));
  return file;
}

function finding(report: AuditReport, subject: string) {
  const found = report.findings.find((f) => f.subject === subject);
  assert.ok(found, `no finding for ${subject}: ${JSON.stringify(report.findings)}`);
  return found;
}

before(async () => {
  published = await finalisedCeremony(TWO_CIRCUITS);
  work = await mkdtemp(path.join(tmpdir(), 'auditor-config-'));
  scratch.push(work);
  // The coordinator's folder: register, its config pinning nothing, its r1cs swapped before init.
  const { r1csHash: _pinned, ...unpinned } = projectCircuit('register');
  forged = await newCeremonyDir({ configOverrides: { circuits: [unpinned] } });
  scratch.push(forged);
  await underConstrainedRegister(path.join(forged, 'circuits', 'register.r1cs'));
  forgedR1csHash = await hashFile(path.join(forged, 'circuits', 'register.r1cs'));
  await initCeremony(forged);
  await contributeLocally(forged, 'register', 'alice');
  await finaliseCeremony(forged, { beaconHex: TEST_BEACON, iterationsExp: TEST_BEACON_ITERATIONS });
});

after(async () => {
  await closeMultiExp();
  await cleanUp(...scratch);
});

test('forgery 4: keys for an under-constrained r1cs fail the documented audit from the checkout', async () => {
  // The keys themselves are sound for the r1cs they were made from: with it pinned, nothing else fails.
  const vouched = await auditCeremony(forged, undefined, {
    noQueueLog: true,
    auditorConfig: auditorConfigOf(forged),
    ptauHash: await devPtauHash(),
    r1csHashes: { register: forgedR1csHash },
  });
  assert.equal(vouched.ok, true, JSON.stringify(vouched.findings.filter((f) => !f.ok)));

  // From the checkout, as the public page says: its ceremony.json pins register's real r1cs.
  const documented = await runCli(['audit', forged, '--no-queue-log', '--quiet', '--ptau-hash', await devPtauHash()]);
  assert.equal(documented.code, 1, documented.stdout + documented.stderr);
  assert.match(
    documented.stdout,
    new RegExp(
      '^config FAIL: \\[config\\.publication_mismatch\\] ' +
        "the publication's ceremony\\.json is not your ceremony\\.json " +
        '\\(ceremony-data/ceremony\\.json\\): circuit 1 \\("register" in yours\\): its r1csHash is \\(none\\) in the ' +
        `publication's ceremony\\.json, "${projectCircuit('register').r1csHash as string}" in yours`,
      'm',
    ),
  );
  assert.doesNotMatch(documented.stdout, /^(ptau|inputs|transcript|register) /m, 'nothing else is checked');
  assert.match(documented.stdout, /^audit FAILED: 1 problem$/m);
});

test('forgery 4: a publication that copies the auditor’s pins but ships the forged r1cs fails its inputs', async () => {
  const dir = await copyCeremony(forged);
  scratch.push(dir);
  await editConfig(dir, (config) => {
    config.circuits[0].r1csHash = projectCircuit('register').r1csHash;
  });
  const yours = await auditorConfig('register-pinned', [projectCircuit('register')]);
  const result = await runCli([
    'audit',
    dir,
    '--no-queue-log',
    '--config',
    yours,
    '--quiet',
    '--ptau-hash',
    await devPtauHash(),
  ]);
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.match(result.stdout, /^config ok: the publication's ceremony\.json agrees with yours/m);
  assert.match(
    result.stdout,
    new RegExp(
      `^inputs FAIL: \\[r1cs\\.hash_mismatch\\] circuit register: circuits/register\\.r1cs has BLAKE2b-512 ` +
        `${forgedR1csHash}; ceremony\\.json pins ${projectCircuit('register').r1csHash as string}`,
      'm',
    ),
  );
  assert.doesNotMatch(result.stdout, /^(transcript|register) /m);
});

test('an r1cs pinned neither by the auditor’s ceremony.json nor --r1cs-hash fails: r1cs_unpinned', async () => {
  // The auditor took the coordinator's word for the circuits: nothing pins the r1cs.
  const report = await auditCeremony(forged, undefined, {
    noQueueLog: true,
    auditorConfig: auditorConfigOf(forged),
    ptauHash: await devPtauHash(),
  });
  assert.equal(report.ok, false);
  const inputs = finding(report, 'inputs');
  assert.equal(inputs.code, 'audit.r1cs_unpinned');
  assert.match(inputs.summary, /the r1cs of register is pinned neither by your ceremony\.json \(r1csHash\) nor by/);
  assert.match(inputs.summary, new RegExp(`ceremony audit DIR --r1cs-hash register=${forgedR1csHash}$`));
  assert.deepEqual(
    report.findings.map((f) => f.subject),
    ['config', 'ptau', 'inputs'],
    'nothing is checked against a circuit nobody vouched for',
  );
  assert.deepEqual(report.circuits[0]!.r1cs, {
    path: 'circuits/register.r1cs',
    blake2b512: forgedR1csHash,
    pinnedBy: [],
  });
  // Pinned by the auditor, by the hash of the real circuit they compiled: the forged file is refused.
  const pinned = await auditCeremony(forged, undefined, {
    noQueueLog: true,
    auditorConfig: auditorConfigOf(forged),
    ptauHash: await devPtauHash(),
    r1csHashes: { register: projectCircuit('register').r1csHash as string },
  });
  assert.equal(finding(pinned, 'inputs').code, 'r1cs.hash_mismatch');
});

test('a publication’s ceremony.json other than the auditor’s is refused, naming the first difference', async () => {
  const cases: Array<[string, (config: Record<string, any>) => void, RegExp]> = [
    [
      'verifier',
      (config) => (config.circuits[1].verifier = 'VerifierOther'),
      joined(
        '',
        /circuit 2 \("transact21" in yours\): its verifier is "VerifierOther" in the publication's ceremony\.json, /,
        /"VerifierTransact21" in yours/,
      ),
    ],
    [
      'minimum',
      (config) => (config.minContributions = 1),
      /minContributions is 1 in the publication's ceremony\.json, 3 in yours/,
    ],
    [
      'order',
      (config) => config.circuits.reverse(),
      /circuit 1 \("register" in yours\): its name is "transact21" in the publication's ceremony\.json/,
    ],
    [
      'ptau',
      (config) => (config.ptauHash = 'ab'.repeat(64)),
      /ptauHash is "(ab){64}" in the publication's ceremony\.json, \(none\) in yours/,
    ],
    [
      'circuits',
      (config) => config.circuits.pop(),
      /yours lists a circuit 2, "transact21", which the publication's ceremony\.json does not/,
    ],
  ];
  // The auditor expects 3 contributions per chain; each publication below differs in one more way.
  const yours = path.join(work, 'expects-three.json');
  const raw = JSON.parse(await readFile(auditorConfigOf(published.dataDir), 'utf8'));
  await writeFile(yours, JSON.stringify({ ...raw, minContributions: 3 }));
  for (const [name, change, message] of cases) {
    const dir = await copyCeremony(published.dataDir);
    scratch.push(dir);
    await editConfig(dir, (config) => {
      config.minContributions = 3;
      change(config);
    });
    const report = await auditCeremony(dir, undefined, {
      noQueueLog: true,
      auditorConfig: yours,
      ptauHash: await devPtauHash(),
    });
    assert.deepEqual(
      report.findings.map((f) => [f.subject, f.code]),
      [['config', 'config.publication_mismatch']],
      name,
    );
    assert.match(finding(report, 'config').summary, message, name);
    assert.equal(report.ptau, undefined, `${name}: not even the ptau is read`);
  }
});

test('the auditor’s ceremony.json may pin the ptau: it then pins the audit’s ptau, and refuses another', async () => {
  const dir = await copyCeremony(published.dataDir);
  scratch.push(dir);
  await editConfig(dir, (config) => (config.ptauHash = 'cd'.repeat(64)));
  // Its init would have refused that ptau (ptau.hash_mismatch); the audit refuses it by the auditor's pin.
  const wrong = await auditCeremony(dir, undefined, { noQueueLog: true, auditorConfig: auditorConfigOf(dir) });
  assert.equal(finding(wrong, 'ptau').code, 'audit.ptau_hash_mismatch');
  assert.match(finding(wrong, 'ptau').summary, /not the one your ceremony\.json pins \(ptauHash\)/);

  const hash = await devPtauHash();
  await editConfig(dir, (config) => (config.ptauHash = hash.toUpperCase()));
  const pinned = await auditCeremony(dir, undefined, { noQueueLog: true, auditorConfig: auditorConfigOf(dir) });
  assert.equal(pinned.ok, true, JSON.stringify(pinned.findings.filter((f) => !f.ok)));
  assert.match(finding(pinned, 'ptau').summary, /pinned by your ceremony\.json \(ptauHash\); INSECURE/);
  assert.equal(pinned.ptau?.pinnedByConfig, true);
  assert.equal(pinned.ptau?.pinnedByAuditor, false);
});

test('the auditor’s ceremony.json must exist: a usage error saying where it comes from', async () => {
  const result = await runCli([
    'audit',
    published.dataDir,
    '--no-queue-log',
    '--quiet',
    '--config',
    path.join(work, 'none.json'),
  ]);
  assert.equal(result.code, 2, result.stdout + result.stderr);
  assert.match(
    result.stderr,
    /^error \[input\.file_not_found\]: no ceremony\.json of your own at .*none\.json: run this/m,
  );
});
