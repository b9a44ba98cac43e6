/**
 * A dishonest coordinator's forgeries of the last link, from the final keys to the deployed
 * contract, on a real anvil: each must be refused by `verify-deployment --ceremony` and by
 * `verify-receipt --deployment` (one shared check), each with its own code, and the honest
 * deployment must still match.
 *  - A contract that returns true for every call and carries every constant of the final key as
 *    unreachable PUSH32s: `deployment.bytecode_mismatch`; with the compiler record deleted, listing
 *    no verifiers, uncommitted, or holding a setting outside the documented set:
 *    `deployment.not_recompiled` (it used to be `match` then).
 *  - A verifier rendered with IC[1] and IC[2] swapped (the same set of constants, other positions):
 *    `deployment.bytecode_mismatch`.
 *  - A split view: a second ceremony with the same id in which alice never contributed, whose
 *    verifier is deployed (alone, or carrying the first view's δ too): alice's receipt, checked
 *    against the view that includes her, fails against that contract.
 *  - A publication whose ceremony.json swaps two verifier names (same public inputs) or drops a
 *    circuit, the manifest and contracts arranged to match: `deployment.verifier_name_mismatch`; a
 *    verifiers-file entry nothing names is a MISMATCH rather than unchecked.
 *  - `--constants-only` still exists, says `constants-present` (never `match`) and what it did not prove.
 *  - `--compiler-settings` (the auditor's own) matches the honest code with the record gone.
 */
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Address, Hex } from 'viem';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { hashBytes } from '../../core/crypto/file-hash.ts';
import { verifyDeploymentAgainstCeremony } from '../../core/deployment/verify-deployment-against-ceremony.ts';
import { parseVerificationKeyJson, type VerificationKeyJson } from '../../core/deployment/verification-key-json.ts';
import { verificationKeyConstants } from '../../core/deployment/verification-key-json.ts';
import { finaliseCeremony } from '../../core/finalise/finalise-ceremony.ts';
import { renderSolidityVerifier } from '../../core/finalise/solidity-verifier.ts';
import type { DeltaManifest } from '../../core/manifest/delta-manifest.ts';
import { publishCeremony } from '../../core/publish/publish-ceremony.ts';
import { newCeremonyDir, TEST_BEACON, TEST_BEACON_ITERATIONS } from '../fixtures/ceremony-fixture.ts';
import { auditorConfigOf } from '../fixtures/ceremony-fixture.ts';
import { startAnvil, type AnvilNode } from '../helpers/anvil.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { rewriteTranscript } from '../helpers/forge-transcript.ts';
import { receiptsCeremony, type ReceiptsCeremony } from '../helpers/receipts-ceremony.ts';
import { lines, runCli } from '../helpers/run-cli.ts';
import { compileRuntimeCodes, creationCodeFor, deployContracts } from '../helpers/solidity.ts';

let anvil: AnvilNode;
let work: string;
let ceremony: ReceiptsCeremony;
/** View A: the published ceremony (alice and bob contributed to every circuit). */
let published: string;
let manifest: DeltaManifest;
let settings: Record<string, unknown>;
let vkeys: Record<string, VerificationKeyJson>;
/** Honest verifiers of view A, by name. */
let honest: Record<string, Address>;
/** VerifierRegister forgeries. */
let alwaysTrue: Address;
let icSwapped: Address;
/** View B's register verifier (a ceremony of the same id where only bob contributed), and it with A's δ pushed too. */
let otherView: Address;
let otherViewWithOurDelta: Address;
let aliceRegister: string;

const hex32 = (value: bigint) => value.toString(16).padStart(64, '0');

/** Runtime code that returns true (32 bytes of 1) for any call, then pushes `constants` where nothing reaches. */
function alwaysTrueCarrying(constants: bigint[]): Hex {
  const returnsTrue = '600160005260206000f3';
  return `0x${returnsTrue}${constants.map((value) => `7f${hex32(value)}`).join('')}`;
}

/** `code` with `constants` pushed just before its metadata trailer, where the code never jumps. */
function withPushesBeforeTrailer(code: Hex, constants: bigint[]): Hex {
  const bytes = Buffer.from(code.slice(2), 'hex');
  const trailer = bytes.readUInt16BE(bytes.length - 2) + 2;
  const pushes = Buffer.from(constants.map((value) => `7f${hex32(value)}`).join(''), 'hex');
  const cut = bytes.length - trailer;
  return `0x${Buffer.concat([bytes.subarray(0, cut), pushes, bytes.subarray(cut)]).toString('hex')}`;
}

async function writeJson(name: string, value: unknown): Promise<string> {
  const file = join(work, name);
  await writeFile(file, `${JSON.stringify(value, null, 2)}\n`);
  return file;
}

/** View B: a ceremony of the same id (the project's ceremony.json), register only, where alice never contributed. */
async function otherViewVerificationKey(): Promise<VerificationKeyJson> {
  const dir = await newCeremonyDir({ circuits: ['register'], parentDir: work });
  await initCeremony(dir);
  await contributeLocally(dir, 'register', 'bob');
  await finaliseCeremony(dir, { beaconHex: TEST_BEACON, iterationsExp: TEST_BEACON_ITERATIONS });
  const text = await readFile(join(dir, 'final', 'register.vkey.json'), 'utf8');
  return parseVerificationKeyJson(JSON.parse(text), 'view B');
}

before(
  async () => {
    ceremony = await receiptsCeremony();
    anvil = await startAnvil();
    work = await mkdtemp(join(tmpdir(), 'deployment-forgeries-'));
    published = join(work, 'published');
    await publishCeremony(ceremony.dataDir, published);
    manifest = JSON.parse(await readFile(join(published, 'final', 'manifest.json'), 'utf8')) as DeltaManifest;
    settings = (JSON.parse(await readFile(join(published, 'final', 'compiler.json'), 'utf8')) as { settings: object })
      .settings as Record<string, unknown>;
    vkeys = {};
    const sources: Record<string, string> = {};
    for (const verifier of Object.keys(manifest)) {
      const circuit = verifier.charAt(8).toLowerCase() + verifier.slice(9);
      const text = await readFile(join(published, 'final', `${circuit}.vkey.json`), 'utf8');
      vkeys[verifier] = parseVerificationKeyJson(JSON.parse(text), circuit);
      sources[`honest/${verifier}.sol`] = await readFile(join(published, 'final', `${verifier}.sol`), 'utf8');
    }
    const register = vkeys.VerifierRegister!;
    const swapped = [register.IC[0]!, register.IC[2]!, register.IC[1]!, ...register.IC.slice(3)];
    sources['swapped/VerifierRegister.sol'] = await renderSolidityVerifier(
      { ...register, IC: swapped },
      'VerifierRegister',
    );
    const viewB = await otherViewVerificationKey();
    sources['viewB/VerifierRegister.sol'] = await renderSolidityVerifier(viewB, 'VerifierRegister');
    const codes = compileRuntimeCodes(sources, settings);
    const ourDelta = verificationKeyConstants(register)
      .filter((c) => c.label.startsWith('delta2'))
      .map((c) => c.value);
    const runtimes: Hex[] = [
      ...Object.keys(manifest).map((v) => codes.get(`honest/${v}.sol:${v}`)!),
      alwaysTrueCarrying(verificationKeyConstants(register).map((c) => c.value)),
      codes.get('swapped/VerifierRegister.sol:VerifierRegister')!,
      codes.get('viewB/VerifierRegister.sol:VerifierRegister')!,
      withPushesBeforeTrailer(codes.get('viewB/VerifierRegister.sol:VerifierRegister')!, ourDelta),
    ];
    const addresses = await deployContracts(anvil.rpcUrl, runtimes.map(creationCodeFor));
    const names = Object.keys(manifest);
    honest = Object.fromEntries(names.map((v, i) => [v, addresses[i]!]));
    const forged = addresses.slice(names.length);
    assert.equal(forged.length, 4);
    [alwaysTrue, icSwapped, otherView, otherViewWithOurDelta] = forged as [Address, Address, Address, Address];
    const alice = ceremony.receiptsOf('alice');
    const register0 = alice.find((r) => (JSON.parse(r.body) as { circuit: string }).circuit === 'register')!;
    aliceRegister = await writeJson('alice-register.json', [register0]);
  },
  { timeout: 600_000 },
);

after(async () => {
  await anvil?.stop();
  await cleanUp(work);
  if (ceremony) await rm(ceremony.dataDir, { recursive: true, force: true });
});

/** verify-deployment --ceremony DIR on VerifierRegister at `address` (the other verifiers honest). */
async function checkRegister(address: Address, dir = published, more: object = {}) {
  const report = await verifyDeploymentAgainstCeremony({
    rpcUrl: anvil.rpcUrl,
    manifest,
    verifiers: { ...honest, VerifierRegister: address },
    ceremonyDir: dir,
    auditorConfig: auditorConfigOf(dir),
    ...more,
  });
  return { report, register: report.verifiers.find((v) => v.verifier === 'VerifierRegister')! };
}

/** A copy of the publication with its compiler record replaced by `record` (or removed), committed or not. */
async function withRecord(name: string, record: string | undefined, commit: boolean): Promise<string> {
  const dir = join(work, name);
  await cp(published, dir, { recursive: true, verbatimSymlinks: true });
  const file = join(dir, 'final', 'compiler.json');
  if (record === undefined) await rm(file);
  else await writeFile(file, record);
  if (commit && record !== undefined) {
    await rewriteTranscript(dir, (entries) =>
      entries.map((e) => (e.type === 'finalised' ? { ...e, compilerRecordHash: hashBytes(record) } : e)),
    );
  }
  return dir;
}

const recordText = async () => readFile(join(published, 'final', 'compiler.json'), 'utf8');

describe('verify-deployment --ceremony: nothing fails open', { timeout: 300_000 }, () => {
  test('the honest deployment matches, byte for byte', async () => {
    const { report } = await checkRegister(honest.VerifierRegister!);
    assert.ok(
      report.verifiers.every((v) => v.match && v.weaker === undefined),
      JSON.stringify(report.verifiers),
    );
  });

  test('an always-true contract carrying every constant: bytecode_mismatch (CLI: MISMATCH, exit 1)', async () => {
    const { register } = await checkRegister(alwaysTrue);
    assert.equal(register.match, false);
    assert.match(
      register.reasons[0]!,
      /^\[deployment\.bytecode_mismatch\] the runtime code at 0x[0-9a-fA-F]{40} is not/,
    );
    const verifiers = await writeJson('always-true.json', { ...honest, VerifierRegister: alwaysTrue });
    const manifestPath = join(published, 'final', 'manifest.json');
    const run = await runCli(['verify-deployment', anvil.rpcUrl, manifestPath, verifiers, '--ceremony', published], {
      timeoutMs: 300_000,
    });
    assert.equal(run.code, 1, run.stderr);
    assert.ok(lines(run.stdout).includes('VerifierRegister MISMATCH'), run.stdout);
  });

  const failClosed: Array<[string, () => Promise<string | undefined>, boolean, RegExp]> = [
    ['the record deleted', async () => undefined, false, /final\/compiler\.json is missing/],
    [
      'a record listing no verifiers (committed)',
      async () => JSON.stringify({ ...JSON.parse(await recordText()), verifiers: {} }),
      true,
      /final\/compiler\.json does not list VerifierRegister/,
    ],
    [
      'a record of settings solc would refuse or the check cannot reason about (committed)',
      async () => {
        const record = JSON.parse(await recordText()) as { settings: object };
        return JSON.stringify({ ...record, settings: { ...record.settings, viaIR: true } });
      },
      true,
      /settings has a field outside the documented set/,
    ],
    [
      'a record with another EVM version than the fixed list (committed)',
      async () => {
        const record = JSON.parse(await recordText()) as { settings: object };
        return JSON.stringify({ ...record, settings: { ...record.settings, evmVersion: 'frontier' } });
      },
      true,
      /settings\.evmVersion Invalid enum value/,
    ],
    [
      'a valid record the transcript does not commit',
      async () =>
        JSON.stringify({
          ...JSON.parse(await recordText()),
          settings: { ...JSON.parse(await recordText()).settings, optimizer: { enabled: true, runs: 201 } },
        }),
      false,
      /final\/compiler\.json is not the record the transcript commits/,
    ],
  ];
  for (const [what, record, commit, why] of failClosed) {
    test(`${what}: the always-true contract is MISMATCH, deployment.not_recompiled`, async () => {
      const dir = await withRecord(what.replace(/\W+/g, '-'), await record(), commit);
      const { register, report } = await checkRegister(alwaysTrue, dir);
      assert.equal(register.match, false);
      assert.match(register.reasons[0]!, /^\[deployment\.not_recompiled\] /);
      assert.match(register.reasons[0]!, why);
      // The honest ones are not compared either: none matches.
      assert.ok(
        report.verifiers.every((v) => !v.match),
        JSON.stringify(report.verifiers),
      );
    });
  }

  test("the uncommitted record's ceremony: the auditor's own --compiler-settings match the honest code", async () => {
    const dir = await withRecord('no-record', undefined, false);
    const given = { version: JSON.parse(await recordText()).compiler.version as string, settings: settings as never };
    const { report } = await checkRegister(honest.VerifierRegister!, dir, { compilerSettings: given });
    assert.ok(
      report.verifiers.every((v) => v.match),
      JSON.stringify(report.verifiers),
    );
    assert.match(report.verifiers[0]!.checked![0]!, /\(your --compiler-settings\), byte for byte/);
    const unoptimised = { ...(settings as object), optimizer: { enabled: false, runs: 200 } };
    const other = { ...given, settings: unoptimised as never };
    const { register } = await checkRegister(honest.VerifierRegister!, dir, { compilerSettings: other });
    assert.match(register.reasons[0]!, /^\[deployment\.bytecode_mismatch\] /);
  });

  test('a verifier with IC[1] and IC[2] swapped: every constant there, deployment.bytecode_mismatch', async () => {
    const { register } = await checkRegister(icSwapped);
    assert.equal(register.match, false);
    assert.match(register.reasons[0]!, /^\[deployment\.bytecode_mismatch\] /);
  });

  test('--constants-only: both forgeries are constants-present, never match, and say what is not proven', async () => {
    const verifiers = await writeJson('constants-only.json', { ...honest, VerifierRegister: icSwapped });
    const manifestPath = join(published, 'final', 'manifest.json');
    const args = ['verify-deployment', anvil.rpcUrl, manifestPath, verifiers, '--ceremony', published];
    const run = await runCli([...args, '--constants-only'], { timeoutMs: 300_000 });
    assert.equal(run.code, 0, run.stderr);
    assert.ok(lines(run.stdout).includes('VerifierRegister constants-present'), run.stdout);
    assert.ok(!lines(run.stdout).some((line) => line.endsWith(' match')), run.stdout);
    assert.match(run.stderr, /^VerifierRegister: NOT proven: that the code is the verifier/m);
    const { register } = await checkRegister(alwaysTrue, published, { constantsOnly: true });
    assert.equal(register.weaker, 'constants-present');
    const both = await runCli([...args, '--constants-only', '--compiler-settings', '{}']);
    assert.equal(both.code, 2, both.stderr);
  });
});

describe("the publication's ceremony.json cannot pair names and keys otherwise", { timeout: 300_000 }, () => {
  /** A copy of the publication whose ceremony.json is `change`d (the transcript and keys untouched). */
  async function withConfig(name: string, change: (config: { circuits: Array<Record<string, unknown>> }) => void) {
    const dir = join(work, name);
    await cp(published, dir, { recursive: true, verbatimSymlinks: true });
    const file = join(dir, 'ceremony.json');
    const config = JSON.parse(await readFile(file, 'utf8')) as { circuits: Array<Record<string, unknown>> };
    change(config);
    await writeFile(file, JSON.stringify(config));
    return dir;
  }

  test('two verifier names swapped (same inputs): both MISMATCH, deployment.verifier_name_mismatch', async () => {
    const dir = await withConfig('names-swapped', (config) => {
      const [a, b] = ['transact21', 'transact22'].map((name) => config.circuits.find((c) => c.name === name)!);
      [a!.verifier, b!.verifier] = [b!.verifier, a!.verifier];
    });
    // The manifest and the contracts swapped to match, as the forger would.
    const swappedManifest = {
      ...manifest,
      VerifierTransact21: manifest.VerifierTransact22!,
      VerifierTransact22: manifest.VerifierTransact21!,
    };
    // The auditor's own ceremony.json refuses the folder outright…
    await assert.rejects(
      verifyDeploymentAgainstCeremony({
        rpcUrl: anvil.rpcUrl,
        manifest: swappedManifest,
        verifiers: honest,
        ceremonyDir: dir,
        auditorConfig: auditorConfigOf(published),
      }),
      (error: { code?: string }) => error.code === 'config.publication_mismatch',
    );
    // …and even an auditor who took the folder's word for it gets no match: the transcript binds names to keys.
    const report = await verifyDeploymentAgainstCeremony({
      rpcUrl: anvil.rpcUrl,
      manifest: swappedManifest,
      verifiers: {
        ...honest,
        VerifierTransact21: honest.VerifierTransact22!,
        VerifierTransact22: honest.VerifierTransact21!,
      },
      ceremonyDir: dir,
      auditorConfig: auditorConfigOf(dir),
    });
    for (const name of ['VerifierTransact21', 'VerifierTransact22']) {
      const check = report.verifiers.find((v) => v.verifier === name)!;
      assert.equal(check.match, false, name);
      assert.ok(
        check.reasons.some((r) => r.startsWith('[deployment.verifier_name_mismatch] ')),
        check.reasons.join('\n'),
      );
    }
  });

  test('a circuit dropped from ceremony.json: the whole check refused, deployment.verifier_name_mismatch', async () => {
    const dir = await withConfig('circuit-dropped', (config) => {
      config.circuits = config.circuits.filter((c) => c.name !== 'register');
    });
    const { register: _dropped, ...rest } = manifest as Record<string, unknown>;
    await assert.rejects(
      verifyDeploymentAgainstCeremony({
        rpcUrl: anvil.rpcUrl,
        manifest: rest,
        verifiers: { ...honest, VerifierRegister: alwaysTrue },
        ceremonyDir: dir,
        auditorConfig: auditorConfigOf(dir),
      }),
      (error: { code?: string; message: string }) =>
        error.code === 'deployment.verifier_name_mismatch' &&
        /the transcript has the chains register, /.test(error.message),
    );
  });

  test('a test network passed off as none, its ptau left out: the auditor’s ceremony.json refuses it', async () => {
    const dir = await withConfig('not-a-test-network', (config) => {
      (config as unknown as { testNetwork: boolean }).testNetwork = false;
    });
    await rm(join(dir, 'ptau'), { recursive: true, force: true });
    await assert.rejects(
      verifyDeploymentAgainstCeremony({
        rpcUrl: anvil.rpcUrl,
        manifest,
        verifiers: honest,
        ceremonyDir: dir,
        auditorConfig: auditorConfigOf(published),
      }),
      (error: { code?: string; message: string }) =>
        error.code === 'config.publication_mismatch' && /testNetwork is false/.test(error.message),
    );
    // A contributor's receipt check of that publication's deployment: the same refusal, not an
    // `included` without the test network's warning.
    const verifiers = await writeJson('receipt-not-a-test-network.json', honest);
    const receipt = await runCli(
      [
        'verify-receipt',
        aliceRegister,
        dir,
        '--deployment',
        anvil.rpcUrl,
        verifiers,
        '--config',
        auditorConfigOf(published),
      ],
      { timeoutMs: 300_000 },
    );
    assert.equal(receipt.code, 1, receipt.stdout + receipt.stderr);
    assert.match(receipt.stderr, /error \[config\.publication_mismatch\]: .*testNetwork is false/);
  });

  test('a verifiers-file entry that nothing names is a MISMATCH, not left unchecked', async () => {
    const report = await verifyDeploymentAgainstCeremony({
      rpcUrl: anvil.rpcUrl,
      manifest,
      verifiers: { ...honest, VerifierExtra: alwaysTrue },
      ceremonyDir: published,
      auditorConfig: auditorConfigOf(published),
    });
    const extra = report.verifiers.find((v) => v.verifier === 'VerifierExtra')!;
    assert.equal(extra.match, false);
    assert.match(extra.reasons[0]!, /^\[deployment\.manifest_mismatch\] the verifiers file names VerifierExtra/);
  });
});

describe('verify-receipt --deployment: the same check', { timeout: 300_000 }, () => {
  const receiptCheck = async (address: Address, ...more: string[]) => {
    const verifiers = await writeJson(`receipt-${address}.json`, { VerifierRegister: address });
    return runCli(['verify-receipt', aliceRegister, published, '--deployment', anvil.rpcUrl, verifiers, ...more], {
      timeoutMs: 300_000,
    });
  };

  test('the honest verifier: included, and it is the verifier of the final key', async () => {
    const run = await receiptCheck(honest.VerifierRegister!);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stderr, /VerifierRegister at 0x[0-9a-fA-F]{40} is the verifier of the final key/);
  });

  test('the always-true contract and the IC swap: FAIL deployment.bytecode_mismatch', async () => {
    for (const address of [alwaysTrue, icSwapped]) {
      const run = await receiptCheck(address);
      assert.equal(run.code, 1, run.stdout + run.stderr);
      assert.match(run.stdout, /^register #\d+ \(alice\) FAIL \[deployment\.bytecode_mismatch\]: VerifierRegister: /m);
    }
  });

  test('a split view: the verifier of a view without alice fails her receipt, carrying her δ or not', async () => {
    for (const address of [otherView, otherViewWithOurDelta]) {
      const run = await receiptCheck(address);
      assert.equal(run.code, 1, run.stdout + run.stderr);
      assert.match(run.stdout, /^register #\d+ \(alice\) FAIL \[deployment\.(bytecode_mismatch|constant_mismatch)\]/m);
    }
    // Constants only cannot see it once the other view's contract carries her δ: hence the byte comparison.
    const weak = await receiptCheck(otherViewWithOurDelta, '--constants-only');
    assert.equal(weak.code, 0, weak.stdout + weak.stderr);
    assert.match(weak.stdout, /NOT proven: that the code is that verifier/);
  });

  test('a record the transcript does not commit: FAIL deployment.not_recompiled', async () => {
    const dir = await withRecord(
      'receipt-uncommitted',
      JSON.stringify({ ...JSON.parse(await recordText()), verifiers: {} }),
      false,
    );
    const verifiers = await writeJson('receipt-uncommitted.json', { VerifierRegister: honest.VerifierRegister });
    const run = await runCli(['verify-receipt', aliceRegister, dir, '--deployment', anvil.rpcUrl, verifiers], {
      timeoutMs: 300_000,
    });
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /FAIL \[deployment\.not_recompiled\]: .*is not the record the transcript commits/);
  });
});
