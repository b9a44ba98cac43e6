/**
 * `ceremony verify-deployment … --ceremony DIR` and `--compare` on two real anvil nodes (two
 * "networks"), against the published test ceremony: the nine verifiers compiled as its
 * final/compiler.json says and deployed on both pass, with the ceremony's identifier and what
 * each match proved. Each way a deployment can carry another key than the final one is refused
 * with its own code, naming the verifier: an IC point changed, γ set to δ, a verifier of another
 * key that shares δ, the right source compiled otherwise, the second network's code differing,
 * a manifest that is not the final keys'. The δ-only check (no --ceremony) passes the first, third
 * and fourth: that is what it cannot see, and it says so on stderr. The nodes report their own
 * chain ids (A 31337, B 31338, a third 1, as mainnet): the output names each chain and block read,
 * a test-network ceremony is warned about on every chain and refused on mainnet unless allowed,
 * and two endpoints of one chain are said to be one network.
 */
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Address } from 'viem';
import { checkDeployedVerifiers } from '../../core/deployment/check-deployed-verifiers.ts';
import { ENDPOINT_TRUSTED_NOTE } from '../../core/deployment/render-check-report.ts';
import { verifyDeploymentAgainstCeremony } from '../../core/deployment/verify-deployment-against-ceremony.ts';
import { parseVerificationKeyJson, type VerificationKeyJson } from '../../core/deployment/verification-key-json.ts';
import { renderSolidityVerifier } from '../../core/finalise/solidity-verifier.ts';
import { committedCompiler } from '../../core/deployment/recompile-verifiers.ts';
import { hashBytes } from '../../core/crypto/file-hash.ts';
import { rewriteTranscript } from '../helpers/forge-transcript.ts';
import type { DeltaManifest } from '../../core/manifest/delta-manifest.ts';
import { publishCeremony } from '../../core/publish/publish-ceremony.ts';
import { finalisedCeremony } from '../fixtures/ceremony-fixture.ts';
import { auditorConfigOf } from '../fixtures/ceremony-fixture.ts';
import { freePort, startAnvil, type AnvilNode } from '../helpers/anvil.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { lines, runCli, type CliResult } from '../helpers/run-cli.ts';
import { compileContracts, deployContracts } from '../helpers/solidity.ts';
import { verifierWithGamma } from './verifier-sources.ts';

const Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
const ADDRESS = '0x[0-9a-fA-F]{40}';

let networkA: AnvilNode;
let networkB: AnvilNode;
/** An anvil that reports chain id 1, Ethereum mainnet's, with the honest verifiers. */
let mainnet: AnvilNode;
let honestOnMainnet: Record<string, Address>;
let work: string;
let published: string;
let identifier: string;
let manifest: DeltaManifest;
let manifestPath: string;
let vkeys: Record<string, VerificationKeyJson>;
/** The nine verifiers compiled as final/compiler.json says, on each network. */
let honestA: Record<string, Address>;
let honestB: Record<string, Address>;
/**
 * The verifiers files of A and B with tampered contracts in place of honest ones: register with
 * IC[3] changed, transact21 with γ = δ, transact22 made of transact23's key with transact22's δ,
 * transact23 compiled without the optimizer; and on B alone, transact42 compiled without it.
 */
let tamperedA: Record<string, Address>;
let tamperedB: Record<string, Address>;

async function writeJson(name: string, value: unknown): Promise<string> {
  const path = join(work, name);
  await writeFile(path, `${JSON.stringify(value, null, 2)}\n`);
  return path;
}

before(
  async () => {
    const fixture = await finalisedCeremony();
    [networkA, networkB, mainnet] = await Promise.all([
      startAnvil(),
      startAnvil(['--chain-id', '31338']),
      startAnvil(['--chain-id', '1']),
    ]);
    work = await mkdtemp(join(tmpdir(), 'verify-deployment-ceremony-'));
    published = join(work, 'published');
    await publishCeremony(fixture.dataDir, published);
    const transcript = (await readFile(join(published, 'transcript', 'transcript.jsonl'), 'utf8')).trim().split('\n');
    identifier = (JSON.parse(transcript.at(-1)!) as { type: string; hash: string }).hash;
    assert.equal((JSON.parse(transcript.at(-1)!) as { type: string }).type, 'finalised');
    manifestPath = join(published, 'final', 'manifest.json');
    manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as DeltaManifest;
    const record = JSON.parse(await readFile(join(published, 'final', 'compiler.json'), 'utf8')) as {
      settings: Record<string, unknown>;
    };
    vkeys = {};
    const sources: Record<string, string> = {};
    for (const { name, verifier } of fixture.circuits) {
      const text = await readFile(join(published, 'final', `${name}.vkey.json`), 'utf8');
      vkeys[verifier] = parseVerificationKeyJson(JSON.parse(text), `${name}.vkey.json`);
      sources[`contracts/${verifier}.sol`] = await readFile(join(published, 'final', `${verifier}.sol`), 'utf8');
    }
    const register = vkeys.VerifierRegister!;
    const ic = register.IC.map((p, i) => (i === 3 ? [((BigInt(p[0]) + 1n) % Q).toString(), p[1], '1'] : p));
    sources['ic/VerifierRegister.sol'] = await renderSolidityVerifier({ ...register, IC: ic }, 'VerifierRegister');
    const transact21 = vkeys.VerifierTransact21!;
    sources['gamma/VerifierTransact21.sol'] = await verifierWithGamma(
      transact21,
      'VerifierTransact21',
      transact21.vk_delta_2,
    );
    sources['other/VerifierTransact22.sol'] = await renderSolidityVerifier(
      { ...vkeys.VerifierTransact23!, vk_delta_2: vkeys.VerifierTransact22!.vk_delta_2 },
      'VerifierTransact22',
    );
    // One solc call per settings: solc-js pays its start-up once each.
    const compiled = compileContracts(sources, record.settings);
    const unoptimised = compileContracts(
      {
        'contracts/VerifierTransact23.sol': sources['contracts/VerifierTransact23.sol']!,
        'contracts/VerifierTransact42.sol': sources['contracts/VerifierTransact42.sol']!,
      },
      { ...record.settings, optimizer: { enabled: false } },
    );
    const verifiers = fixture.circuits.map((c) => c.verifier);
    const honest = verifiers.map((v) => compiled.get(`contracts/${v}.sol:${v}`)!);
    const deployed = [
      ...honest,
      compiled.get('ic/VerifierRegister.sol:VerifierRegister')!,
      compiled.get('gamma/VerifierTransact21.sol:VerifierTransact21')!,
      compiled.get('other/VerifierTransact22.sol:VerifierTransact22')!,
      unoptimised.get('contracts/VerifierTransact23.sol:VerifierTransact23')!,
    ];
    // B gets the same contracts (so only what is meant to differ between the networks does) and one more.
    const onA = await deployContracts(networkA.rpcUrl, deployed);
    const onB = await deployContracts(networkB.rpcUrl, [
      ...deployed,
      unoptimised.get('contracts/VerifierTransact42.sol:VerifierTransact42')!,
    ]);
    const onMainnet = await deployContracts(mainnet.rpcUrl, honest);
    honestOnMainnet = Object.fromEntries(verifiers.map((v, i) => [v, onMainnet[i]!]));
    honestA = Object.fromEntries(verifiers.map((v, i) => [v, onA[i]!]));
    honestB = Object.fromEntries(verifiers.map((v, i) => [v, onB[i]!]));
    const tamperedOn = (addresses: Address[]) => {
      const [icChanged, gammaIsDelta, otherKey, otherSettings] = addresses.slice(verifiers.length);
      return {
        VerifierRegister: icChanged!,
        VerifierTransact21: gammaIsDelta!,
        VerifierTransact22: otherKey!,
        VerifierTransact23: otherSettings!,
      };
    };
    tamperedA = { ...honestA, ...tamperedOn(onA) };
    tamperedB = { ...honestB, ...tamperedOn(onB), VerifierTransact42: onB.at(-1)! };
  },
  { timeout: 600_000 },
);

after(async () => {
  await networkA?.stop();
  await networkB?.stop();
  await mainnet?.stop();
  await cleanUp(work);
});

/** The first stderr line of a check against this test-network ceremony (its ptau is the development one too). */
const TEST_CEREMONY_WARNING =
  'warning: TEST-NETWORK CEREMONY (ceremony.json says "testNetwork": true and its ptau ' +
  "(ptau/dev-pot10-insecure.ptau) is the development one): its ptau's secret is public, so anyone can forge " +
  'proofs for these keys; a match says the verifiers carry keys that guard nothing';

/** The stdout line naming the block read on a node of chain `chainId`. */
const chainLine = (chainId: number, prefix = '') =>
  new RegExp(`^${prefix}chain ${chainId}, block \\d+ 0x[0-9a-f]{64}$`);

/** stdout without the lines naming the chains read (checked on their own). */
const verdictLines = (stdout: string) => lines(stdout).filter((line) => !/^(second network: )?chain \d+,/.test(line));

const TAMPERED = [
  'VerifierRegister',
  'VerifierTransact21',
  'VerifierTransact22',
  'VerifierTransact23',
  'VerifierTransact42',
];

/** `verify-deployment --ceremony` on network A, `--compare`d with network B. */
async function runOnBothNetworks(name: string, onA: object, onB: object): Promise<CliResult> {
  const [verifiersA, verifiersB] = [await writeJson(`${name}-a.json`, onA), await writeJson(`${name}-b.json`, onB)];
  const network = [networkA.rpcUrl, manifestPath, verifiersA];
  const compare = ['--compare', networkB.rpcUrl, verifiersB];
  return runCli(['verify-deployment', ...network, '--ceremony', published, ...compare], { timeoutMs: 300_000 });
}

let tamperedRun: Promise<CliResult> | undefined;
/** One run of the CLI over every tampered contract (each refusal is asserted by its own test). */
function runTampered(): Promise<CliResult> {
  tamperedRun ??= runOnBothNetworks('tampered', tamperedA, tamperedB);
  return tamperedRun;
}

/** The tampered run refuses `verifier` with `code`, its reason on stderr going on as `reason` (a pattern). */
async function assertTamperedRefusal(verifier: string, code: string, reason: string): Promise<CliResult> {
  const run = await runTampered();
  assert.match(run.stderr, new RegExp(`^${verifier}: \\[${code.replaceAll('.', '\\.')}\\] ${reason}`, 'm'));
  return run;
}

/** verifyDeploymentAgainstCeremony of a changed copy of the publication, against the honest contracts on network A. */
function checkCopy(
  copy: string,
  more: { constantsOnly?: boolean } = {},
): ReturnType<typeof verifyDeploymentAgainstCeremony> {
  return verifyDeploymentAgainstCeremony({
    rpcUrl: networkA.rpcUrl,
    manifest,
    verifiers: honestA,
    ceremonyDir: copy,
    auditorConfig: auditorConfigOf(copy),
    ...more,
  });
}

describe('ceremony verify-deployment --ceremony', { timeout: 300_000 }, () => {
  test('the honest deployment on both networks: exit 0, the identifier, and what each match proved', async () => {
    const run = await runOnBothNetworks('honest', honestA, honestB);
    assert.equal(run.code, 0, run.stderr);
    const [first, chainA, chainB, ...verdicts] = lines(run.stdout);
    assert.equal(first, `ceremony identifier: ${identifier}`);
    assert.match(chainA!, chainLine(31337));
    assert.match(chainB!, chainLine(31338, 'second network: '));
    assert.deepEqual(
      verdicts,
      Object.keys(manifest).map((name) => `${name} match`),
    );
    const stderr = lines(run.stderr);
    assert.equal(stderr[0], TEST_CEREMONY_WARNING);
    assert.equal(stderr.at(-1), ENDPOINT_TRUSTED_NOTE);
    for (const name of Object.keys(manifest)) {
      assert.ok(
        stderr.some((line) =>
          new RegExp(
            `^${name}: proven: the runtime code at ${ADDRESS} is the final key's verifier compiled with ` +
              'solc 0\\.8\\.\\d+ \\{"optimizer":\\{"enabled":true,"runs":200\\},"evmVersion":"paris"\\} ' +
              '\\(final/compiler\\.json, committed in the transcript\\), byte for byte ' +
              "but for the metadata trailer's contents$",
          ).test(line),
        ),
        `${name}\n${run.stderr}`,
      );
      assert.ok(
        stderr.some((line) =>
          new RegExp(
            `^${name}: proven: the same runtime code at ${ADDRESS} on the second network, byte for byte$`,
          ).test(line),
        ),
        `${name}\n${run.stderr}`,
      );
    }
    assert.equal(stderr.length, 20, run.stderr);
  });

  test('a verifier whose IC[3] differs: deployment.constant_mismatch, IC[3].x named', async () => {
    const run = await assertTamperedRefusal(
      'VerifierRegister',
      'deployment.constant_mismatch',
      `IC\\[3\\]\\.x of the verification key \\(0x[0-9a-f]+\\) is not in the runtime bytecode at ${ADDRESS}$`,
    );
    assert.equal(run.code, 1);
  });

  test('a verifier whose γ is its δ: vkey.delta_equals_gamma, naming circuit and verifier', async () => {
    await assertTamperedRefusal(
      'VerifierTransact21',
      'vkey.delta_equals_gamma',
      'circuit transact21 \\(VerifierTransact21\\): δ equals γ in ' +
        `the verifier deployed at ${ADDRESS} \\(δ's constants stand where γ's should; first missing: gamma2\\.x1\\)`,
    );
  });

  test('a verifier of another key that shares δ: deployment.constant_mismatch at its first IC point', async () => {
    await assertTamperedRefusal(
      'VerifierTransact22',
      'deployment.constant_mismatch',
      'IC\\[0\\]\\.x of the verification key \\(0x[0-9a-f]+\\) ',
    );
  });

  test('the right source compiled otherwise: every constant there, deployment.bytecode_mismatch', async () => {
    const run = await assertTamperedRefusal(
      'VerifierTransact23',
      'deployment.bytecode_mismatch',
      `the runtime code at ${ADDRESS} ` +
        'is not the verifier of the final key compiled with solc 0\\.8\\.\\d+ \\{.*\\} ' +
        '\\(final/compiler\\.json, committed in the transcript\\): ' +
        'they differ from byte \\d+ \\(\\d+ and \\d+ bytes long\\)$',
    );
    assert.doesNotMatch(run.stderr, /^VerifierTransact23: \[deployment\.constant_mismatch\]/m);
  });

  test("the second network's code differing: deployment.networks_differ", async () => {
    await assertTamperedRefusal(
      'VerifierTransact42',
      'deployment.networks_differ',
      `the runtime code at ${ADDRESS} on the second network ` +
        `is not the code at ${ADDRESS} on the first: they differ from byte \\d+`,
    );
  });

  test('only the tampered verifiers are MISMATCH, each with one reason', async () => {
    const run = await runTampered();
    assert.deepEqual(verdictLines(run.stdout), [
      `ceremony identifier: ${identifier}`,
      ...Object.keys(manifest).map((name) => `${name} ${TAMPERED.includes(name) ? 'MISMATCH' : 'match'}`),
    ]);
    for (const name of TAMPERED) {
      const reasons = lines(run.stderr).filter((line) => line.startsWith(`${name}: [`));
      assert.equal(reasons.length, 1, `${name}: ${reasons.join('\n')}`);
    }
  });

  test('the δ-only check passes three of them, its output unchanged, and says only δ was checked', async () => {
    const verifiersA = await writeJson('tampered-a-delta-only.json', tamperedA);
    const run = await runCli(['verify-deployment', networkA.rpcUrl, manifestPath, verifiersA]);
    assert.equal(run.code, 1);
    assert.deepEqual(
      verdictLines(run.stdout),
      Object.keys(manifest).map((name) => `${name} ${name === 'VerifierTransact21' ? 'MISMATCH' : 'match'}`),
    );
    assert.match(run.stderr, /^VerifierTransact21: \[vkey\.delta_equals_gamma\]/m);
    assert.equal(
      lines(run.stderr).at(-1),
      'note: only δ was checked (deltax1 and deltax2 occur in the bytecode, the service document’s procedure); ' +
        'α, β, γ, the IC points and the code around them were not: add --ceremony DIR to check the whole final keys',
    );
  });
});

describe('verify-deployment: which chain, and a test-network ceremony', { timeout: 300_000 }, () => {
  const run = (rpcUrl: string, verifiers: string, ...more: string[]) =>
    runCli(
      ['verify-deployment', rpcUrl, manifestPath, verifiers, '--ceremony', published, '--constants-only', ...more],
      {
        timeoutMs: 300_000,
      },
    );

  test('a test-network ceremony against chain 1: deployment.test_ceremony_on_mainnet, unless allowed', async () => {
    const verifiers = await writeJson('mainnet.json', honestOnMainnet);
    const refused = await run(mainnet.rpcUrl, verifiers);
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal(refused.stdout, '');
    assert.match(
      refused.stderr,
      new RegExp(
        "^error \\[deployment\\.test_ceremony_on_mainnet\\]: the ceremony is a test network's " +
          '\\(ceremony\\.json says "testNetwork": true .*\\), and the endpoint is Ethereum mainnet \\(chain 1\\)',
        'm',
      ),
    );
    const allowed = await run(mainnet.rpcUrl, verifiers, '--allow-test-ceremony');
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(lines(allowed.stdout)[1]!, chainLine(1));
    assert.equal(lines(allowed.stderr)[0], TEST_CEREMONY_WARNING);
  });

  test('not marked testNetwork, still one by its ptau; without either, no warning, chain 1 checked', async () => {
    const copy = join(work, 'not-test-network');
    await cp(published, copy, { recursive: true });
    const configPath = join(copy, 'ceremony.json');
    const config = JSON.parse(await readFile(configPath, 'utf8')) as { ptau: string };
    await writeFile(configPath, JSON.stringify({ ...config, testNetwork: false }));
    const marked = await checkCopy(copy, { constantsOnly: true });
    assert.deepEqual(marked.warnings, [
      "TEST-NETWORK CEREMONY (its ptau (ptau/dev-pot10-insecure.ptau) is the development one): its ptau's secret " +
        'is public, so anyone can forge proofs for these keys; ' +
        'a match says the verifiers carry keys that guard nothing',
    ]);
    await rm(join(copy, config.ptau));
    const verifiers = await writeJson('mainnet-real.json', honestOnMainnet);
    const checked = await runCli(
      [
        ...['verify-deployment', mainnet.rpcUrl, manifestPath, verifiers, '--ceremony', copy, '--constants-only'],
        // An auditor whose own ceremony.json says it is no test network (the folder must agree).
        ...['--config', configPath],
      ],
      { timeoutMs: 300_000 },
    );
    assert.equal(checked.code, 0, checked.stderr);
    assert.doesNotMatch(checked.stderr, /TEST-NETWORK/);
  });

  test('--chain-id and --compare-chain-id refuse an endpoint of another chain: deployment.wrong_chain', async () => {
    const [onA, onB] = [await writeJson('pin-a.json', honestA), await writeJson('pin-b.json', honestB)];
    const wrongFirst = await run(networkA.rpcUrl, onA, '--chain-id', '1');
    assert.equal(wrongFirst.code, 1, wrongFirst.stderr);
    assert.match(
      wrongFirst.stderr,
      /^error \[deployment\.wrong_chain\]: RPC endpoint \S+ reports chain 31337, not chain 1/m,
    );
    const compare = ['--compare', networkB.rpcUrl, onB];
    const wrongSecond = await run(
      networkA.rpcUrl,
      onA,
      '--chain-id',
      '31337',
      ...compare,
      '--compare-chain-id',
      '31337',
    );
    assert.equal(wrongSecond.code, 1, wrongSecond.stderr);
    assert.match(
      wrongSecond.stderr,
      /^error \[deployment\.wrong_chain\]: RPC endpoint \S+ reports chain 31338, not chain 31337/m,
    );
    const pinned = await run(networkA.rpcUrl, onA, '--chain-id', '31337', ...compare, '--compare-chain-id', '31338');
    assert.equal(pinned.code, 0, pinned.stderr);
  });

  test('--compare with both endpoints on one chain: warned, and each match says it is one network', async () => {
    const onA = await writeJson('same-chain.json', honestA);
    const same = await run(networkA.rpcUrl, onA, '--compare', networkA.rpcUrl, onA);
    assert.equal(same.code, 0, same.stderr);
    assert.match(lines(same.stdout)[2]!, chainLine(31337, 'second network: '));
    // One state read twice: the second endpoint reads the first's block, and names it the same.
    const chainLines = lines(same.stdout).filter((line) => /^(second network: )?chain /.test(line));
    assert.deepEqual(
      chainLines.map((line) => line.replace('second network: ', '')),
      [chainLines[0], chainLines[0]],
    );
    assert.ok(
      lines(same.stderr).includes(
        'warning: both endpoints report chain 31337: --compare read one network through two endpoints ' +
          '(at the same block, whose hash both give), not two networks',
      ),
      same.stderr,
    );
    assert.match(
      same.stderr,
      new RegExp(
        `^VerifierRegister: proven: the same runtime code at ${ADDRESS} ` +
          'from the second endpoint \\(chain 31337 too\\), byte for byte$',
        'm',
      ),
    );
    assert.doesNotMatch(same.stderr, /on the second network/);
  });
});

describe('verifyDeploymentAgainstCeremony', { timeout: 300_000 }, () => {
  test('a manifest that is not the final keys: deployment.manifest_mismatch, naming the verifier', async () => {
    const entry = manifest.VerifierTransact84!;
    const deltax2 = ((BigInt(entry.deltax2) + 1n) % Q).toString();
    const { VerifierTreeUpdate: _dropped, ...rest } = manifest;
    const report = await verifyDeploymentAgainstCeremony({
      rpcUrl: networkA.rpcUrl,
      manifest: { ...rest, VerifierTransact84: { ...entry, deltax2 }, VerifierNoSuch: entry },
      verifiers: { ...honestA, VerifierNoSuch: honestA.VerifierTransact84 },
      ceremonyDir: published,
      auditorConfig: auditorConfigOf(published),
      constantsOnly: true,
    });
    const reasons = Object.fromEntries(
      report.verifiers.map((v) => [v.verifier, v.match ? (v.weaker ?? 'match') : v.reasons.join('; ')]),
    );
    assert.equal(
      reasons.VerifierTransact84,
      `[deployment.manifest_mismatch] deltax2 is ${deltax2} in the manifest ` +
        `but ${entry.deltax2} in the final key of transact84`,
    );
    assert.equal(
      reasons.VerifierNoSuch,
      '[deployment.manifest_mismatch] VerifierNoSuch is not a verifier of the ceremony',
    );
    assert.equal(
      reasons.VerifierTreeUpdate,
      '[deployment.manifest_mismatch] the manifest has no entry for VerifierTreeUpdate, a verifier of the ceremony',
    );
    // Constants only, as asked: never `match`, and it says what it did not prove.
    assert.equal(reasons.VerifierRegister, 'constants-present');
    assert.equal(report.notRecompiled, undefined);
    const register = report.verifiers.find((v) => v.verifier === 'VerifierRegister')!;
    assert.deepEqual(register.checked, [
      'every constant of the final key (α1, β2, γ2, δ2, IC[0] to IC[6]) is in the runtime code at ' +
        honestA.VerifierRegister,
    ]);
    assert.match(register.notProved ?? '', /^that the code is the verifier, or uses them where the verifier does/);
  });

  test('a compiler record of another solc release, even committed: all MISMATCH, not recompiled', async () => {
    const copy = join(work, 'other-solc');
    await cp(published, copy, { recursive: true });
    const recordPath = join(copy, 'final', 'compiler.json');
    const record = JSON.parse(await readFile(recordPath, 'utf8')) as { compiler: { version: string } };
    const forged = JSON.stringify({ ...record, compiler: { ...record.compiler, version: '0.8.20' } });
    await writeFile(recordPath, forged);
    // The coordinator rewrites its own transcript to commit the forged record: still refused.
    await rewriteTranscript(copy, (entries) =>
      entries.map((e) => (e.type === 'finalised' ? { ...e, compilerRecordHash: hashBytes(forged) } : e)),
    );
    const report = await checkCopy(copy);
    assert.ok(
      report.verifiers.every((v) => !v.match && v.reasons.length === 1),
      JSON.stringify(report.verifiers, null, 1),
    );
    assert.match(
      report.verifiers[0]!.reasons[0]!,
      new RegExp(
        '^\\[deployment\\.not_recompiled\\] the runtime code at 0x[0-9a-fA-F]{40} was not compared with the final ' +
          "key's verifier \\(final/compiler\\.json is not a verifier-compiler record \\(version 1\\): " +
          'compiler\\.version must be the solc release this project ships \\(0\\.8\\.\\d+\\)\\)',
      ),
    );
    assert.match(report.notRecompiled ?? '', /compiler\.version must be the solc release this project ships/);
  });

  test("a final key not the transcript's, a vkey.json alone, a source edited, a transcript cut", async () => {
    const copy = join(work, 'changed-keys');
    await cp(published, copy, { recursive: true });
    await writeFile(join(copy, 'final', 'treeUpdate.zkey'), 'not the final key');
    await rm(join(copy, 'final', 'register.zkey'));
    const source = join(copy, 'final', 'VerifierTransact21.sol');
    await writeFile(source, `${await readFile(source, 'utf8')}// an edit\n`);
    const report = await checkCopy(copy);
    const byName = Object.fromEntries(report.verifiers.map((v) => [v.verifier, v]));
    assert.deepEqual(byName.VerifierTreeUpdate!.reasons, [
      '[chain.file_hash_mismatch] final/treeUpdate.zkey is not the final key the transcript records ' +
        '(BLAKE2b-512 differs)',
    ]);
    // The published vkey.json is the coordinator's word, not committed: no verdict rests on it.
    assert.equal(byName.VerifierRegister!.match, false);
    assert.match(byName.VerifierRegister!.reasons[0]!, /^\[chain\.file_missing\] no final\/register\.zkey: /);
    // The deployed code is judged against the verifier rendered from the final key, not the published source.
    assert.equal(byName.VerifierTransact21!.match, true);
    assert.deepEqual(byName.VerifierTransact21!.warnings, [
      'final/VerifierTransact21.sol is not the verifier snarkjs renders from the final key; ' +
        'the deployed code was judged against the verifier rendered from the final key',
    ]);

    const transcriptPath = join(copy, 'transcript', 'transcript.jsonl');
    const entries = (await readFile(transcriptPath, 'utf8')).trim().split('\n');
    await writeFile(transcriptPath, `${entries.slice(0, -1).join('\n')}\n`);
    const run = await runCli([
      'verify-deployment',
      networkA.rpcUrl,
      manifestPath,
      await writeJson('cut.json', honestA),
      '--ceremony',
      copy,
    ]);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.match(
      run.stderr,
      /^error \[manifest\.not_finalised\]: the transcript of [a-z0-9-]+ has no `finalised` entry/,
    );
  });
});

describe('checkDeployedVerifiers (the receipt check calls it)', { timeout: 120_000 }, () => {
  test('one verdict per verifier, in order, each refusal with its code and first difference', async () => {
    const compiler = committedCompiler(
      await readFile(join(published, 'final', 'compiler.json')),
      hashBytes(await readFile(join(published, 'final', 'compiler.json'))),
    );
    const verdicts = await checkDeployedVerifiers(
      networkA.rpcUrl,
      {
        VerifierRegister: { address: tamperedA.VerifierRegister!, verificationKey: vkeys.VerifierRegister! },
        VerifierTransact21: { address: tamperedA.VerifierTransact21!, verificationKey: vkeys.VerifierTransact21! },
        VerifierTransact22: { address: honestA.VerifierTransact22!, verificationKey: vkeys.VerifierTransact22! },
        VerifierTransact23: {
          address: '0x00000000000000000000000000000000deadbeef',
          verificationKey: vkeys.VerifierTransact23!,
        },
        VerifierTransact42: { address: 'not-an-address', verificationKey: vkeys.VerifierTransact42! },
        VerifierTransact44: {
          address: honestA.VerifierTransact44!,
          verificationKey: { ...vkeys.VerifierTransact44!, IC: [] } as VerificationKeyJson,
        },
        VerifierTransact82: { address: honestA.VerifierTransact82!, verificationKey: vkeys.VerifierTransact82! },
      },
      { compiler },
    );
    assert.deepEqual(
      verdicts.map((v) => [v.verifier, v.match ? 'match' : v.code, v.match ? undefined : v.firstDifference]),
      [
        ['VerifierRegister', 'deployment.constant_mismatch', 'IC[3].x'],
        ['VerifierTransact21', 'vkey.delta_equals_gamma', 'gamma2.x1'],
        ['VerifierTransact22', 'match', undefined],
        ['VerifierTransact23', 'deployment.no_contract', undefined],
        ['VerifierTransact42', 'input.invalid', undefined],
        ['VerifierTransact44', 'input.invalid', undefined],
        ['VerifierTransact82', 'match', undefined],
      ],
    );
    const closed = `http://127.0.0.1:${await freePort()}`;
    const down = await checkDeployedVerifiers(
      closed,
      {
        VerifierRegister: { address: honestA.VerifierRegister!, verificationKey: vkeys.VerifierRegister! },
      },
      { probeTimeoutMs: 1_000, compiler },
    );
    assert.equal(down.length, 1);
    assert.ok(!down[0]!.match && down[0]!.code === 'deployment.rpc_unavailable', JSON.stringify(down));
    assert.match(!down[0]!.match ? down[0]!.reason : '', /^RPC endpoint http:\/\/127\.0\.0\.1:\d+ cannot be reached/);
  });
});
