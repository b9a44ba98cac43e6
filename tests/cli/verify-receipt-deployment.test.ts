/**
 * `ceremony verify-receipt RECEIPTS.json DIR --deployment RPC VERIFIERS` on a real anvil node: the
 * chain's last link, from a contributor's receipt to the deployed verifier of its circuit. A
 * verifier compiled from the final key passes, and the verdict says what it proved; one whose IC
 * point was changed is refused (`deployment.constant_mismatch`, naming the verifier and the
 * constant) although the receipt itself is in the final key; a verifiers file without the
 * circuit's verifier is `deployment.no_verifier`; `--deployment` with one value is a usage error.
 * Through `--coordinator URL` (a real coordinator serving the same folder) the verdict is the same,
 * and the coordinator's own word that its ceremony is a test network's is carried into it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Address } from 'viem';
import { deployedVerifierKeyCheck } from '../../core/deployment/deployed-verifier-key-check.ts';
import { parseVerificationKeyJson } from '../../core/deployment/verification-key-json.ts';
import type { CoordinatorError } from '../../core/errors.ts';
import type { CheckedKeyHistory } from '../../core/receipts/receipt-checker.ts';
import { renderSolidityVerifier } from '../../core/finalise/solidity-verifier.ts';
import { publishCeremony } from '../../core/publish/publish-ceremony.ts';
import { startAnvil, type AnvilNode } from '../helpers/anvil.ts';
import { receiptsCeremony, type ReceiptsCeremony } from '../helpers/receipts-ceremony.ts';
import { runCli } from '../helpers/run-cli.ts';
import { compileContracts, deployContracts } from '../helpers/solidity.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import { startCoordinator } from '../../server/start-coordinator.ts';

const Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;

let ceremony: ReceiptsCeremony;
let anvil: AnvilNode;
let work: string;
let published: string;
/** VerifierRegister compiled from the final key; VerifierTransact21 with IC[1].x changed. */
let honestRegister: Address;
let tamperedTransact21: Address;
let receiptsPath: string;

async function writeJson(name: string, value: unknown): Promise<string> {
  const file = path.join(work, name);
  await writeFile(file, `${JSON.stringify(value, null, 2)}\n`);
  return file;
}

before(async () => {
  ceremony = await receiptsCeremony();
  anvil = await startAnvil();
  work = await mkdtemp(path.join(tmpdir(), 'verify-receipt-deployment-'));
  published = path.join(work, 'published');
  await publishCeremony(ceremony.dataDir, published);
  const final = path.join(published, 'final');
  const record = JSON.parse(await readFile(path.join(final, 'compiler.json'), 'utf8')) as {
    settings: Record<string, unknown>;
  };
  const vkey = async (circuit: string) =>
    parseVerificationKeyJson(
      JSON.parse(await readFile(path.join(final, `${circuit}.vkey.json`), 'utf8')),
      `${circuit}.vkey.json`,
    );
  const transact21 = await vkey('transact21');
  const ic = transact21.IC.map((p, i) => (i === 1 ? [((BigInt(p[0]) + 1n) % Q).toString(), p[1], '1'] : p));
  const compiled = compileContracts(
    {
      'VerifierRegister.sol': await readFile(path.join(final, 'VerifierRegister.sol'), 'utf8'),
      'VerifierTransact21.sol': await renderSolidityVerifier({ ...transact21, IC: ic }, 'VerifierTransact21'),
    },
    record.settings,
  );
  const addresses = await deployContracts(anvil.rpcUrl, [
    compiled.get('VerifierRegister.sol:VerifierRegister')!,
    compiled.get('VerifierTransact21.sol:VerifierTransact21')!,
  ]);
  honestRegister = addresses[0]!;
  tamperedTransact21 = addresses[1]!;
  const alice = ceremony.receiptsOf('alice');
  const of = (circuit: string) => alice.find((r) => (JSON.parse(r.body) as { circuit: string }).circuit === circuit)!;
  receiptsPath = await writeJson('alice.json', [of('register'), of('transact21')]);
});

after(async () => {
  await anvil?.stop();
  if (ceremony) await rm(ceremony.dataDir, { recursive: true, force: true });
  if (work) await rm(work, { recursive: true, force: true });
});

test('a verifier carrying the final key passes; one with an IC point changed is refused, naming it', async () => {
  const verifiers = await writeJson('verifiers.json', {
    VerifierRegister: honestRegister,
    VerifierTransact21: tamperedTransact21,
  });
  const result = await runCli(['verify-receipt', receiptsPath, published, '--deployment', anvil.rpcUrl, verifiers]);
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.match(result.stdout, /^register #\d+ \(alice\) ok: /m);
  assert.match(
    result.stdout,
    /^transact21 #\d+ \(alice\) FAIL \[deployment\.constant_mismatch\]: VerifierTransact21: .*IC\[1\]\.x/m,
  );
  assert.match(
    result.stdout,
    /the deployed verifier of its circuit is the verifier of that final key, compiled offline/,
  );

  const honest = await writeJson('register-only.json', [JSON.parse(await readFile(receiptsPath, 'utf8'))[0]]);
  const passed = await runCli(['verify-receipt', honest, published, '--deployment', anvil.rpcUrl, verifiers]);
  assert.equal(passed.code, 0, passed.stdout + passed.stderr);
  assert.match(passed.stdout, /^deployment read at chain 31337, block \d+ 0x[0-9a-f]{64}, as the endpoint reports it/m);
  const pinned = ['--deployment', anvil.rpcUrl, verifiers, '--chain-id', '1'];
  const wrong = await runCli(['verify-receipt', honest, published, ...pinned]);
  assert.equal(wrong.code, 1, wrong.stdout + wrong.stderr);
  assert.match(wrong.stdout, /FAIL \[deployment\.wrong_chain\]: RPC endpoint \S+ reports chain 31337, not chain 1/);
  assert.match(passed.stderr, /VerifierRegister at 0x[0-9a-fA-F]{40} is the verifier of the final key \(chain 31337/);
  // The fixture is a test network's ceremony: its keys guard nothing, and it is said, on the word of
  // your own ceremony.json (the checkout's, by default), which the publication's agrees with.
  assert.match(
    passed.stderr,
    /^warning: TEST-NETWORK CEREMONY \(your ceremony\.json says "testNetwork": true\).*guards nothing$/m,
  );
  const json = await runCli(['verify-receipt', honest, published, '--deployment', anvil.rpcUrl, verifiers, '--json']);
  assert.equal(json.code, 0, json.stdout + json.stderr);
  assert.match(
    (JSON.parse(json.stdout) as { deployment: { testNetwork: string } }).deployment.testNetwork,
    /^your ceremony\.json says "testNetwork": true$/,
  );
});

test('through --coordinator: the same verdict, and the coordinator’s word that it is a test network', async () => {
  const coordinator = await startCoordinator(
    loadServerConfig({ CEREMONY_DATA: ceremony.dataDir, PORT: '0', COORDINATOR_TOKEN: 'coordinator-token-for-tests' }),
    { log: { info: () => {}, warn: () => {} } },
  );
  try {
    const verifiers = await writeJson('coordinator-verifiers.json', { VerifierRegister: honestRegister });
    const register = await writeJson('coordinator-register.json', [
      (JSON.parse(await readFile(receiptsPath, 'utf8')) as unknown[])[0],
    ]);
    const args = [
      'verify-receipt',
      register,
      '--coordinator',
      coordinator.url,
      '--deployment',
      anvil.rpcUrl,
      verifiers,
    ];
    const text = await runCli(args);
    assert.equal(text.code, 0, text.stdout + text.stderr);
    assert.match(text.stdout, /^register #\d+ \(alice\) ok: /m);
    assert.match(
      text.stderr,
      /^warning: TEST-NETWORK CEREMONY \(your ceremony\.json says "testNetwork": true\).*guards nothing$/m,
    );
    // Where yours says it is no test network, the coordinator's own word still adds the warning.
    const config = JSON.parse(await readFile(path.join(published, 'ceremony.json'), 'utf8')) as Record<string, unknown>;
    const notTest = await writeJson('not-a-test-network.json', { ...config, testNetwork: false });
    const json = await runCli([...args, '--json', '--config', notTest]);
    assert.equal(json.code, 0, json.stdout + json.stderr);
    const report = JSON.parse(json.stdout) as { source: string; deployment: { testNetwork: string } };
    assert.equal(report.deployment.testNetwork, 'the coordinator says "testNetwork": true');
    assert.match(report.source, /127\.0\.0\.1/);
    // Another ceremony's coordinator is refused before any receipt is checked.
    const other = await writeJson('other-ceremony.json', { ...config, id: 'another-ceremony' });
    const refused = await runCli([...args, '--config', other]);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /error \[config\.publication_mismatch\]: the coordinator serves ceremony /);
  } finally {
    await coordinator.close();
  }
});

test('a verifiers file without the circuit’s verifier: deployment.no_verifier; one value: a usage error', async () => {
  const verifiers = await writeJson('register-verifier.json', { VerifierRegister: honestRegister });
  const result = await runCli(['verify-receipt', receiptsPath, published, '--deployment', anvil.rpcUrl, verifiers]);
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.match(result.stdout, /^transact21 #\d+ \(alice\) FAIL \[deployment\.no_verifier\]: .*VerifierTransact21/m);

  const usage = await runCli(['verify-receipt', receiptsPath, published, '--deployment', anvil.rpcUrl]);
  assert.equal(usage.code, 2, usage.stdout + usage.stderr);
  assert.match(usage.stderr, /--deployment takes two values/);
});

test('before finalisation: deployment.not_finalised; a malformed RPC URL is refused before anything', async () => {
  const check = deployedVerifierKeyCheck(anvil.rpcUrl, { VerifierRegister: honestRegister }, { constantsOnly: true });
  const head = { key: 'head', circuit: 'register', index: 3 } as CheckedKeyHistory;
  await assert.rejects(check.run(head), (error: CoordinatorError) => {
    assert.equal(error.code, 'deployment.not_finalised');
    assert.match(error.message, /register is not finalised \(its key is the head, contribution 3\)/);
    return true;
  });
  assert.throws(
    () => deployedVerifierKeyCheck('not a url', {}, { constantsOnly: true }),
    (error: CoordinatorError) => error.code === 'usage.invalid_arguments',
  );
});
