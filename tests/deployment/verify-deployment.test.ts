/**
 * `verifyDeployment` and `ceremony verify-deployment` against a real anvil node: verifiers
 * exported from the ceremony's final test keys and verifiers carrying the service document's nine
 * delta points, all compiled from snarkjs's template and deployed, then checked. δ = γ is refused
 * with its own code (vkey.delta_equals_gamma), naming the circuit and the verifier: a manifest
 * naming the G2 generator (γ) as δ, and a deployed verifier whose γ was set to its δ.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as snarkjs from 'snarkjs';
import { getAddress, numberToHex, type Address } from 'viem';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { verifyDeployment } from '../../core/deployment/verify-deployment.ts';
import { ENDPOINT_TRUSTED_NOTE } from '../../core/deployment/render-check-report.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { BN254_G2_GENERATOR_X } from '../../core/deployment/delta-is-g2-generator.ts';
import type { DeltaManifest } from '../../core/manifest/delta-manifest.ts';
import { finalisedCeremony } from '../fixtures/ceremony-fixture.ts';
import { freePort, startAnvil, type AnvilNode } from '../helpers/anvil.ts';
import { compileContracts, deployContracts } from '../helpers/solidity.ts';
import { lines, runCli } from '../helpers/run-cli.ts';
import { allMatch, SPEC_DELTA_MANIFEST } from './spec-delta-manifest.ts';
import { verifierOfZkey, verifierWithDelta, verifierWithGamma } from './verifier-sources.ts';

/** What the δ-only check says last on stderr, whatever its verdict. */
const DELTA_ONLY_NOTE =
  'note: only δ was checked (deltax1 and deltax2 occur in the bytecode, the service document’s procedure); ' +
  'α, β, γ, the IC points and the code around them were not: add --ceremony DIR to check the whole final keys';

/** The line naming the state the code was read at: anvil's chain id, a block number and its hash. */
const ANVIL_CHAIN_LINE = /^chain 31337, block \d+ 0x[0-9a-f]{64}$/;

/** An address anvil has no code at (nothing is deployed from or to it). */
const NO_CODE_ADDRESS = '0x00000000000000000000000000000000deadbeef';

let anvil: AnvilNode;
let workDir: string;
let realManifestPath: string;
let realManifest: DeltaManifest;
let realVerifiers: Record<string, Address>;
let specVerifiers: Record<string, Address>;
/** VerifierRegister rendered from the final key with γ set to its δ (a verifier without Phase 2 in effect). */
let deltaAsGammaVerifier: Address;

before(
  async () => {
    const fixture = await finalisedCeremony();
    anvil = await startAnvil();
    workDir = await mkdtemp(join(tmpdir(), 'verify-deployment-'));
    realManifestPath = join(fixture.finalDir, 'manifest.json');
    realManifest = JSON.parse(await readFile(realManifestPath, 'utf8')) as DeltaManifest;
    assert.deepEqual(Object.keys(SPEC_DELTA_MANIFEST).sort(), fixture.circuits.map((c) => c.verifier).sort());

    const sources: Record<string, string> = {};
    for (const { name, verifier } of fixture.circuits) {
      const zkeyPath = join(fixture.finalDir, `${name}.zkey`);
      sources[`final/${verifier}.sol`] = await verifierOfZkey(zkeyPath, verifier);
      const vkey = await snarkjs.zKey.exportVerificationKey(zkeyPath);
      sources[`spec/${verifier}.sol`] = await verifierWithDelta(vkey, verifier, SPEC_DELTA_MANIFEST[verifier]!);
      if (name === 'register')
        sources[`gamma/${verifier}.sol`] = await verifierWithGamma(
          vkey,
          verifier,
          (vkey as { vk_delta_2: string[][] }).vk_delta_2,
        );
    }
    // One solc call for all eighteen: solc-js pays its start-up once.
    const compiled = compileContracts(sources);
    const names = Object.keys(sources);
    const addresses = await deployContracts(
      anvil.rpcUrl,
      names.map((source) => compiled.get(`${source}:${source.slice(source.indexOf('/') + 1, -'.sol'.length)}`)!),
    );
    realVerifiers = {};
    specVerifiers = {};
    names.forEach((source, i) => {
      const verifier = source.slice(source.indexOf('/') + 1, -'.sol'.length);
      if (source.startsWith('gamma/')) deltaAsGammaVerifier = addresses[i]!;
      else (source.startsWith('final/') ? realVerifiers : specVerifiers)[verifier] = addresses[i]!;
    });
  },
  { timeout: 300_000 },
);

after(async () => {
  await anvil?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
  await releaseBn128();
});

async function writeJson(name: string, value: unknown): Promise<string> {
  const path = join(workDir, name);
  await writeFile(path, `${JSON.stringify(value, null, 2)}\n`);
  return path;
}

/** The decimal string with its last digit changed (and still a valid field element). */
function changedByOneDigit(decimal: string): string {
  const last = Number(decimal.at(-1));
  return decimal.slice(0, -1) + String(last === 9 ? 8 : last + 1);
}

/** The EIP-55 form of the address with the case of one letter flipped: a typo the checksum catches. */
function withBrokenChecksum(address: Address): string {
  const checksummed = getAddress(address);
  const i = checksummed.slice(2).search(/[a-fA-F]/) + 2;
  const letter = checksummed[i]!;
  const flipped = letter === letter.toLowerCase() ? letter.toUpperCase() : letter.toLowerCase();
  return checksummed.slice(0, i) + flipped + checksummed.slice(i + 1);
}

function summary(report: Awaited<ReturnType<typeof verifyDeployment>>): string[] {
  return report.verifiers.map((v) => `${v.verifier} ${v.match ? 'match' : 'MISMATCH'}`);
}

/** An HTTP server that accepts requests and never answers them. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => closeServer(server),
  };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('verifyDeployment against anvil: δ found in the bytecode, or not', { timeout: 30_000 }, () => {
  test('the nine verifiers exported from the final keys match the manifest, in manifest order', async () => {
    const report = await verifyDeployment({ rpcUrl: anvil.rpcUrl, manifest: realManifest, verifiers: realVerifiers });
    assert.equal(report.failure, undefined);
    assert.deepEqual(summary(report), allMatch(realManifest));
    assert.ok(report.verifiers.every((v) => v.reasons.length === 0 && v.warnings.length === 0));
  });

  test(
    "the service document's nine delta points match contracts carrying " + 'them, a leading zero byte included',
    async () => {
      // The case the unpadded hex rule exists for: fewer than 64 hex digits.
      assert.ok(BigInt(SPEC_DELTA_MANIFEST.VerifierTransact44!.deltax1).toString(16).length < 64);
      const report = await verifyDeployment({
        rpcUrl: anvil.rpcUrl,
        manifest: SPEC_DELTA_MANIFEST,
        verifiers: specVerifiers,
      });
      assert.deepEqual(summary(report), allMatch(SPEC_DELTA_MANIFEST));
    },
  );

  test('the final keys do not match the contracts of the document (and vice versa)', async () => {
    const report = await verifyDeployment({
      rpcUrl: anvil.rpcUrl,
      manifest: SPEC_DELTA_MANIFEST,
      verifiers: realVerifiers,
    });
    assert.ok(
      report.verifiers.every((v) => !v.match && v.reasons.length === 2),
      JSON.stringify(report, null, 1),
    );
  });

  test('a delta changed by one digit is a MISMATCH of that verifier only', async () => {
    const entry = realManifest.VerifierTransact22!;
    const manifest = { ...realManifest, VerifierTransact22: { ...entry, deltax2: changedByOneDigit(entry.deltax2) } };
    const report = await verifyDeployment({ rpcUrl: anvil.rpcUrl, manifest, verifiers: realVerifiers });
    const failed = report.verifiers.filter((v) => !v.match);
    assert.deepEqual(
      failed.map((v) => v.verifier),
      ['VerifierTransact22'],
    );
    assert.equal(failed[0]!.reasons.length, 1);
    assert.match(failed[0]!.reasons[0]!, /^deltax2 \(0x[0-9a-f]+\) does not occur in the bytecode/);
  });
});

describe('verifyDeployment against anvil: broken inputs and δ = γ', { timeout: 30_000 }, () => {
  test('each broken input fails only its own verifier, with its reason', async () => {
    const manifest: Record<string, unknown> = {
      ...realManifest,
      VerifierTransact21: { deltax1: realManifest.VerifierTransact21!.deltax1 },
      VerifierTransact22: {
        ...realManifest.VerifierTransact22,
        deltax1: `0x${BigInt(realManifest.VerifierTransact22!.deltax1).toString(16)}`,
      },
      VerifierTransact23: { ...realManifest.VerifierTransact23, deltax2: '' },
      VerifierNotDeployed: realManifest.VerifierRegister,
    };
    const { VerifierTreeUpdate: _omitted, ...others } = realVerifiers;
    const verifiers: Record<string, unknown> = {
      ...others,
      VerifierRegister: NO_CODE_ADDRESS,
      VerifierTransact42: 'not-an-address',
      VerifierTransact44: withBrokenChecksum(realVerifiers.VerifierTransact44!),
      VerifierTransact82: 42,
    };
    const report = await verifyDeployment({ rpcUrl: anvil.rpcUrl, manifest, verifiers });
    const reasons = Object.fromEntries(
      report.verifiers.map((v) => [v.verifier, v.match ? 'match' : v.reasons.join('; ')]),
    );
    assert.deepEqual(Object.keys(reasons), Object.keys(manifest));
    assert.match(reasons.VerifierRegister!, /^no contract code at 0x0+deadbeef$/);
    assert.equal(reasons.VerifierTreeUpdate, 'no address in the verifiers file');
    assert.equal(reasons.VerifierTransact21, 'manifest entry has no deltax2');
    assert.match(reasons.VerifierTransact22!, /^deltax1 "0x[0-9a-f]+" is not a decimal integer string$/);
    assert.match(reasons.VerifierTransact23!, /^deltax2 "" is not a decimal integer string$/);
    assert.match(reasons.VerifierTransact42!, /^address "not-an-address" is not a valid address/);
    assert.match(reasons.VerifierTransact44!, /^address "0x[0-9a-fA-F]{40}" is not a valid address/);
    assert.match(reasons.VerifierTransact82!, /^address 42 is not a valid address/);
    assert.equal(reasons.VerifierTransact84, 'match');
    assert.equal(reasons.VerifierNotDeployed, 'no address in the verifiers file');
    assert.equal(report.failure, undefined);
  });

  test(
    'a manifest naming the G2 generator as delta (γ, in every verifier) is ' +
      'a MISMATCH with its code, naming circuit and verifier',
    async () => {
      const manifest = { VerifierRegister: { deltax1: BN254_G2_GENERATOR_X[1], deltax2: BN254_G2_GENERATOR_X[0] } };
      const report = await verifyDeployment({ rpcUrl: anvil.rpcUrl, manifest, verifiers: realVerifiers });
      assert.equal(report.verifiers[0]!.match, false);
      assert.equal(report.verifiers[0]!.reasons.length, 1, report.verifiers[0]!.reasons.join('\n'));
      assert.match(
        report.verifiers[0]!.reasons[0]!,
        /^\[vkey\.delta_equals_gamma\] circuit register \(VerifierRegister\): δ equals γ in the manifest's entry/,
      );
    },
  );

  test("a deployed verifier whose γ is its δ is a MISMATCH with its code, though its δ is the manifest's", async () => {
    const manifest = { VerifierRegister: realManifest.VerifierRegister! };
    const report = await verifyDeployment({
      rpcUrl: anvil.rpcUrl,
      manifest,
      verifiers: { VerifierRegister: deltaAsGammaVerifier },
    });
    const [check] = report.verifiers;
    assert.equal(check!.match, false);
    assert.match(
      check!.reasons[0]!,
      new RegExp(
        '^\\[vkey\\.delta_equals_gamma\\] circuit register \\(VerifierRegister\\): ' +
          "δ equals γ in the verifier deployed at 0x[0-9a-fA-F]{40} \\(δ's " +
          "constants stand where γ's should\\)",
      ),
    );
    assert.match(
      check!.reasons[1]!,
      /^the G2 generator, γ of every verifier snarkjs exports, does not occur in the bytecode at /,
    );
    assert.equal(check!.reasons.length, 2);
  });
});

describe('verifyDeployment against anvil: an RPC endpoint that fails', { timeout: 30_000 }, () => {
  test('an eth_getCode error fails only that verifier', async () => {
    const failing = realVerifiers.VerifierTransact82!.toLowerCase();
    // A JSON-RPC front of anvil that refuses eth_getCode for one address.
    const proxy = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      const call = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      response.setHeader('content-type', 'application/json');
      if (call.method === 'eth_getCode' && String(call.params[0]).toLowerCase() === failing) {
        response.end(
          JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32000, message: 'state unavailable' } }),
        );
        return;
      }
      const upstream = await fetch(anvil.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      response.end(await upstream.text());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const rpcUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
      const report = await verifyDeployment({ rpcUrl, manifest: realManifest, verifiers: realVerifiers });
      assert.equal(report.failure, undefined);
      const failed = report.verifiers.filter((v) => !v.match);
      assert.deepEqual(
        failed.map((v) => v.verifier),
        ['VerifierTransact82'],
      );
      assert.match(
        failed[0]!.reasons[0]!,
        /^eth_getCode at 0x[0-9a-fA-F]{40} failed: Missing or invalid parameters: state unavailable$/,
      );
    } finally {
      await closeServer(proxy);
    }
  });

  test('an endpoint that never answers is reported once and the check ends within its timeout', async () => {
    const silent = await silentServer();
    try {
      const started = Date.now();
      const report = await verifyDeployment({
        rpcUrl: silent.url,
        manifest: realManifest,
        verifiers: realVerifiers,
        probeTimeoutMs: 300,
      });
      assert.ok(Date.now() - started < 3_000, `took ${Date.now() - started} ms`);
      assert.match(report.failure ?? '', /cannot be reached \(eth_chainId, 300 ms timeout\)/);
      assert.ok(report.verifiers.every((v) => !v.match && v.reasons.length === 0));
    } finally {
      await silent.close();
    }
  });
});

describe('verifyDeployment against anvil: one block of one chain', { timeout: 30_000 }, () => {
  test('every code is read at one block number, not "latest", and the report names it', async () => {
    const blockParams: unknown[] = [];
    // A JSON-RPC front of anvil that records the block of each eth_getCode.
    const proxy = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      const call = JSON.parse(body) as { method: string; params: unknown[] };
      if (call.method === 'eth_getCode') blockParams.push(call.params[1]);
      const upstream = await fetch(anvil.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      response.setHeader('content-type', 'application/json');
      response.end(await upstream.text());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const rpcUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
      const report = await verifyDeployment({ rpcUrl, manifest: realManifest, verifiers: realVerifiers });
      assert.deepEqual(summary(report), allMatch(realManifest));
      assert.equal(report.chain?.chainId, 31337);
      assert.equal(blockParams.length, Object.keys(realManifest).length);
      assert.ok(
        blockParams.every((block) => block === numberToHex(report.chain!.blockNumber)),
        JSON.stringify(blockParams),
      );
      const block = (await (
        await fetch(anvil.rpcUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'eth_getBlockByNumber',
            params: [numberToHex(report.chain!.blockNumber), false],
          }),
        })
      ).json()) as { result: { hash: string } };
      assert.equal(report.chain!.blockHash, block.result.hash);
    } finally {
      await closeServer(proxy);
    }
  });

  test('a block whose hash changed while the code was read (a reorganisation) fails the check', async () => {
    // A front of anvil whose block at a number (asked after the reads) is another than the latest was.
    const proxy = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      const call = JSON.parse(body) as { method: string; params: unknown[] };
      const upstream = await fetch(anvil.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const answer = (await upstream.json()) as { result?: { hash?: string } };
      if (call.method === 'eth_getBlockByNumber' && call.params[0] !== 'latest' && answer.result?.hash)
        answer.result.hash = `0x${'ee'.repeat(32)}`;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const rpcUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
      const report = await verifyDeployment({ rpcUrl, manifest: realManifest, verifiers: realVerifiers });
      assert.match(report.failure ?? '', /has block \d+ as 0x(ee){32}, not 0x[0-9a-f]{64}: the chain reorganised/);
      assert.ok(report.verifiers.every((v) => !v.match));
    } finally {
      await closeServer(proxy);
    }
  });

  test('an endpoint of another chain than the one asked for is refused: deployment.wrong_chain', async () => {
    await assert.rejects(
      verifyDeployment({ rpcUrl: anvil.rpcUrl, manifest: realManifest, verifiers: realVerifiers, chainId: 1 }),
      (error: unknown) =>
        isCoordinatorError(error, 'deployment.wrong_chain') &&
        /reports chain 31337, not chain 1: nothing was checked$/.test(error.message),
    );
    const report = await verifyDeployment({
      rpcUrl: anvil.rpcUrl,
      manifest: realManifest,
      verifiers: realVerifiers,
      chainId: 31337,
    });
    assert.deepEqual(summary(report), allMatch(realManifest));
  });
});

describe('ceremony verify-deployment', { timeout: 60_000 }, () => {
  test('exits 0 and prints one match line per verifier when all nine match', async () => {
    const verifiersPath = await writeJson('final-verifiers.json', realVerifiers);
    const run = await runCli(['verify-deployment', anvil.rpcUrl, realManifestPath, verifiersPath]);
    assert.equal(run.code, 0, run.stderr);
    const [chainLine, ...verdicts] = lines(run.stdout);
    assert.match(chainLine!, ANVIL_CHAIN_LINE);
    assert.deepEqual(verdicts, allMatch(realManifest));
    // The service's procedure checks δ alone, and says so; the endpoint is trusted, and that is said too.
    assert.deepEqual(lines(run.stderr), [ENDPOINT_TRUSTED_NOTE, DELTA_ONLY_NOTE]);
  });

  test('--chain-id: exit 1 and deployment.wrong_chain for an endpoint of another chain, no verdict', async () => {
    const verifiersPath = await writeJson('chain-verifiers.json', realVerifiers);
    const args = ['verify-deployment', anvil.rpcUrl, realManifestPath, verifiersPath, '--chain-id'];
    const wrong = await runCli([...args, '1']);
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.equal(wrong.stdout, '');
    assert.match(
      wrong.stderr,
      /^error \[deployment\.wrong_chain\]: RPC endpoint http:\/\/127\.0\.0\.1:\d+ reports chain 31337, not chain 1/,
    );
    const right = await runCli([...args, '31337']);
    assert.equal(right.code, 0, right.stderr);
    assert.match(lines(right.stdout)[0]!, ANVIL_CHAIN_LINE);
    const usage = await runCli([...args, 'mainnet']);
    assert.equal(usage.code, 2, usage.stderr);
    assert.match(usage.stderr, /--chain-id takes a chain id \(a positive integer\), got "mainnet"/);
  });

  test("exits 0 for the service document's manifest against contracts carrying its deltas", async () => {
    const manifestPath = await writeJson('spec-manifest.json', SPEC_DELTA_MANIFEST);
    const verifiersPath = await writeJson('spec-verifiers.json', specVerifiers);
    const run = await runCli(['verify-deployment', anvil.rpcUrl, manifestPath, verifiersPath]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(lines(run.stdout).slice(1), allMatch(SPEC_DELTA_MANIFEST));
  });

  test('exits 1 when one delta differs by one digit, another has no deltax2 and a third has no code', async () => {
    const manifestPath = await writeJson('bad-manifest.json', {
      ...realManifest,
      VerifierRegister: {
        ...realManifest.VerifierRegister,
        deltax1: changedByOneDigit(realManifest.VerifierRegister!.deltax1),
      },
      VerifierTransact23: { deltax1: realManifest.VerifierTransact23!.deltax1 },
    });
    const verifiersPath = await writeJson('bad-verifiers.json', {
      ...realVerifiers,
      VerifierTransact84: NO_CODE_ADDRESS,
    });
    const run = await runCli(['verify-deployment', anvil.rpcUrl, manifestPath, verifiersPath]);
    assert.equal(run.code, 1);
    const failing = new Set(['VerifierRegister', 'VerifierTransact23', 'VerifierTransact84']);
    assert.deepEqual(
      lines(run.stdout).slice(1),
      Object.keys(realManifest).map((name) => `${name} ${failing.has(name) ? 'MISMATCH' : 'match'}`),
    );
    assert.match(run.stderr, /^VerifierRegister: deltax1 \(0x[0-9a-f]+\) does not occur in the bytecode/m);
    assert.match(run.stderr, /^VerifierTransact23: manifest entry has no deltax2$/m);
    assert.match(run.stderr, /^VerifierTransact84: no contract code at 0x0+deadbeef$/m);
  });

  test('exits 1 for a deployed verifier whose δ is its γ, naming the circuit and the verifier', async () => {
    const manifestPath = await writeJson('gamma-manifest.json', { VerifierRegister: realManifest.VerifierRegister });
    const verifiersPath = await writeJson('gamma-verifiers.json', { VerifierRegister: deltaAsGammaVerifier });
    const run = await runCli(['verify-deployment', anvil.rpcUrl, manifestPath, verifiersPath]);
    assert.equal(run.code, 1);
    assert.deepEqual(lines(run.stdout).slice(1), ['VerifierRegister MISMATCH']);
    assert.match(
      run.stderr,
      /^VerifierRegister: \[vkey\.delta_equals_gamma\] circuit register \(VerifierRegister\): δ equals γ/m,
    );
  });

  test('an unreachable RPC endpoint: every verifier MISMATCH, the reason once, exit 1, quickly', async () => {
    const closedPort = await freePort();
    const verifiersPath = await writeJson('unreachable-verifiers.json', realVerifiers);
    const started = Date.now();
    const run = await runCli(['verify-deployment', `http://127.0.0.1:${closedPort}`, realManifestPath, verifiersPath]);
    const elapsedMs = Date.now() - started;
    assert.equal(run.code, 1);
    assert.deepEqual(
      lines(run.stdout),
      Object.keys(realManifest).map((name) => `${name} MISMATCH`),
    );
    assert.equal(lines(run.stderr).length, 2, run.stderr);
    assert.equal(lines(run.stderr)[1], DELTA_ONLY_NOTE);
    assert.match(run.stderr, /^error: RPC endpoint http:\/\/127\.0\.0\.1:\d+ cannot be reached/);
    assert.ok(elapsedMs < 15_000, `took ${elapsedMs} ms`);
  });
});
