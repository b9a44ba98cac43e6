/**
 * `ceremony check-fees` against a real anvil node, with pool contracts compiled by solc-js
 * (withdrawal fee 0, fee 30, one that reverts, one without the function), and a real HTTP server
 * playing the relayer: every accepted answer shape, changed fees, errors, non-JSON, and answers
 * that never come. Each failure must fail only its own line while the others are still checked.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Address } from 'viem';
import { checkFees, type FeeClaim } from '../../core/fees/check-fees.ts';
import { readFeeSchedule, type FeeSchedule } from '../../core/fees/fee-schedule.ts';
import type { FeeTargets } from '../../core/fees/fee-targets.ts';
import { OUT_OF_DATE_MARK } from '../../core/fees/render-fee-report.ts';
import { lines, runCli, type CliResult } from '../helpers/run-cli.ts';
import { freePort, startAnvil, type AnvilNode } from '../helpers/anvil.ts';
import { compileContracts, deployContracts } from '../helpers/solidity.ts';
import { startRelayerServer, type RelayerReply, type RelayerServer } from './relayer-server.ts';

const POOLS_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract ZeroFeePool { uint256 public withdrawFeeBps; }
contract ThirtyFeePool { uint256 public withdrawFeeBps = 30; }
contract RevertingPool {
  function withdrawFeeBps() external pure returns (uint256) { revert("withdrawals paused"); }
}
contract PoolWithoutFee { uint256 public depositCount; }
`;

/** An address anvil has no code at. */
const NO_CODE_ADDRESS = '0x00000000000000000000000000000000deadbeef';
/**
 * --timeout-ms where a claim never answers: the test waits it out, so it is short, yet long enough
 * for the other claims' answers to arrive on a loaded 2-core machine.
 */
const TIMEOUT_MS = '5000';
/** --timeout-ms where every claim answers (in milliseconds): a deadline nothing waits out. */
const ANSWERED_TIMEOUT_MS = '60000';

const SPEC_GAS_QUOTE = { feeUsdc: '0.05', dropWei: '500000000000000' };

/** What the relayer stand-in answers, by path: each relayer is a path prefix. */
const RELAYER_ROUTES: Record<string, RelayerReply> = {
  // The document's fees, in a different shape on each relayer.
  '/ok/quote': { text: '50000', contentType: 'application/json' },
  '/ok/gas/quote': { json: SPEC_GAS_QUOTE },
  '/shape-string/quote': { json: '50000' },
  '/shape-string/gas/quote': {
    text: '{"feeUsdc":0.05,"dropWei":500000000000000}',
    contentType: 'application/json',
  },
  '/shape-field/quote': { json: { fee: 50000 } },
  '/shape-field/gas/quote': { json: { feeUsdc: 50000, dropWei: 500000000000000, expiresAt: 1760000000 } },
  '/shape-string-field/quote': { json: { amountUsdc: '50000' } },
  '/shape-string-field/gas/quote': { json: { feeUsdc: '50000', dropWei: '500000000000000' } },
  // Fees that changed since the schedule was published.
  '/changed/quote': { json: { amount: '60000' } },
  '/changed/gas/quote': { json: { feeUsdc: '0.06', dropWei: '400000000000000' } },
  // Answers that cannot be read.
  '/errors/gas/quote': { text: 'Internal Server Error', status: 500 }, // and /errors/quote is a 404
  '/html/quote': { text: '<html><body>Bad gateway</body></html>', contentType: 'text/html' },
  '/html/gas/quote': { hang: 'headers' },
  '/stalls/quote': { hang: 'body' },
  '/stalls/gas/quote': { json: { feeUsdc: 0.05 } },
  '/two-fields/quote': { json: { fee: 50000, token: 'USDC' } },
  '/two-fields/gas/quote': { json: SPEC_GAS_QUOTE },
  // An RPC endpoint that takes requests and never answers.
  '/hang-rpc': { hang: 'headers' },
};

let anvil: AnvilNode;
let relayer: RelayerServer;
let dir: string;
let schedule: FeeSchedule;
const pool: Record<'zeroA' | 'zeroB' | 'thirty' | 'reverting' | 'withoutFee', Address> = {} as never;

before(
  async () => {
    [anvil, relayer, dir, schedule] = await Promise.all([
      startAnvil(),
      startRelayerServer(RELAYER_ROUTES),
      mkdtemp(join(tmpdir(), 'check-fees-')),
      readFeeSchedule(),
    ]);
    const compiled = compileContracts({ 'Pools.sol': POOLS_SOURCE });
    const contract = (name: string) => compiled.get(`Pools.sol:${name}`)!;
    const addresses = await deployContracts(anvil.rpcUrl, [
      contract('ZeroFeePool'),
      contract('ZeroFeePool'),
      contract('ThirtyFeePool'),
      contract('RevertingPool'),
      contract('PoolWithoutFee'),
    ]);
    (['zeroA', 'zeroB', 'thirty', 'reverting', 'withoutFee'] as const).forEach((key, i) => (pool[key] = addresses[i]!));
  },
  { timeout: 120_000 },
);

after(async () => {
  await Promise.all([anvil?.stop(), relayer?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

function targets(relayerName: string, pools: Array<[string, Address | string, string?]>): FeeTargets {
  return {
    pools: pools.map(([name, address, rpcUrl]) => ({
      name,
      address: address as Address,
      rpcUrl: rpcUrl ?? anvil.rpcUrl,
    })),
    relayer: `${relayer.origin}/${relayerName}`,
  };
}

const networks = (): Array<[string, Address]> => [
  ['Network A', pool.zeroA],
  ['Network B', pool.zeroB],
];

let fileCount = 0;
async function writeJson(value: unknown): Promise<string> {
  fileCount += 1;
  const path = join(dir, `file-${fileCount}.json`);
  await writeFile(path, JSON.stringify(value, null, 2));
  return path;
}

/** Whether every claim of `value` answers: its relayer has no hanging route and its pools are on anvil. */
function everyClaimAnswers(value: FeeTargets): boolean {
  const prefix = `${new URL(value.relayer).pathname}/`;
  const hangs = Object.entries(RELAYER_ROUTES).some(([route, reply]) => route.startsWith(prefix) && 'hang' in reply);
  return !hangs && value.pools.every((p) => p.rpcUrl === anvil.rpcUrl);
}

async function checkFeesCli(value: FeeTargets, ...options: string[]): Promise<CliResult> {
  const timeoutMs = everyClaimAnswers(value) ? ANSWERED_TIMEOUT_MS : TIMEOUT_MS;
  return runCli(['check-fees', await writeJson(value), '--timeout-ms', timeoutMs, ...options]);
}

/** check-fees against the relayer `relayerName` and both pools as published; asserts it exits `code`. */
async function checkRelayer(relayerName: string, code: number): Promise<CliResult> {
  const run = await checkFeesCli(targets(relayerName, networks()));
  assert.equal(run.code, code, run.stdout + run.stderr);
  return run;
}

/** The stdout line of a claim, split into its name and the rest. */
function lineOf(run: CliResult, name: string): string {
  const found = lines(run.stdout).filter((line) => line.startsWith(`${name} `));
  assert.equal(found.length, 1, `one line for ${name} in:\n${run.stdout}${run.stderr}`);
  return found[0]!;
}

function assertMatch(run: CliResult, name: string): void {
  assert.match(lineOf(run, name), / match$/, `${name}:\n${run.stdout}${run.stderr}`);
}

function assertMismatch(run: CliResult, name: string, stderr?: RegExp): void {
  assert.match(lineOf(run, name), / MISMATCH/, `${name}:\n${run.stdout}`);
  // The reason is the line on stderr that starts with the claim's name.
  if (stderr) assert.match(run.stderr, new RegExp(`^${escape(name)}: .*${stderr.source}`, 'm'));
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const RELAYER_CLAIMS = ['relayer /quote', 'relayer /gas/quote feeUsdc', 'relayer /gas/quote dropWei'];

describe('ceremony check-fees: live fees read, matching the schedule or not', { concurrency: 4 }, () => {
  test('every fee as published: one line per claim, all match, exit 0', async () => {
    const run = await checkRelayer('ok', 0);
    assert.equal(run.stderr, '');
    assert.equal(lines(run.stdout).length, 5, run.stdout);
    assert.match(lineOf(run, 'pool Network A withdrawFeeBps()'), /live 0 bps +published 0 bps +match$/);
    assertMatch(run, 'pool Network B withdrawFeeBps()');
    assert.match(
      lineOf(run, 'relayer /quote'),
      /live 50000 base units \(0\.05 USDC\), sent as number +published 50000 base units \(0\.05 USDC\) +match$/,
    );
    assert.match(
      lineOf(run, 'relayer /gas/quote feeUsdc'),
      /live 50000 base units \(0\.05 USDC\), sent as decimal USDC 0\.05 +published 50000 base units/,
    );
    assert.match(
      lineOf(run, 'relayer /gas/quote dropWei'),
      /live 500000000000000 wei \(0\.0005 gas token\) +published 500000000000000 wei \(0\.0005 gas token\) +match$/,
    );
    // The command appended both paths to the base URL itself.
    assert.ok(
      relayer.requested.includes('/ok/quote') && relayer.requested.includes('/ok/gas/quote'),
      relayer.requested.join(' '),
    );
  });

  test('a pool charging 30 bps is a MISMATCH showing 30, exit 1; the other claims still match', async () => {
    const run = await checkFeesCli(
      targets('ok', [
        ['Network A', pool.zeroA],
        ['Network B', pool.thirty],
      ]),
    );
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(lineOf(run, 'pool Network B withdrawFeeBps()'), /live 30 bps +published 0 bps +MISMATCH$/);
    assertMatch(run, 'pool Network A withdrawFeeBps()');
    for (const name of RELAYER_CLAIMS) assertMatch(run, name);
    assert.equal(run.stderr, '', 'a value that was read needs no reason');
  });

  test('changed relayer fees are printed as the current value, marked: the schedule is out of date', async () => {
    const run = await checkRelayer('changed', 1);
    assert.match(
      lineOf(run, 'relayer /quote'),
      new RegExp(
        `live 60000 base units \\(0\\.06 USDC\\), field "amount" +published ` +
          `50000 base units \\(0\\.05 USDC\\) +MISMATCH ${escape(OUT_OF_DATE_MARK)}$`,
      ),
    );
    assert.match(
      lineOf(run, 'relayer /gas/quote feeUsdc'),
      new RegExp(
        `live 60000 base units \\(0\\.06 USDC\\), sent as decimal USDC 0\\.06 .*MISMATCH ${escape(OUT_OF_DATE_MARK)}$`,
      ),
    );
    assert.match(
      lineOf(run, 'relayer /gas/quote dropWei'),
      new RegExp(`live 400000000000000 wei \\(0\\.0004 gas token\\) .*MISMATCH ${escape(OUT_OF_DATE_MARK)}$`),
    );
    assertMatch(run, 'pool Network A withdrawFeeBps()');
    assert.equal(run.stderr, '');
  });

  test('--schedule replaces the shipped values: the same live fees then match', async () => {
    const newSchedule = await writeJson({
      source: 'a later edition of the document',
      poolWithdrawFeeBps: 30,
      relayFeeUsdcBaseUnits: '60000',
      gasPurchaseFeeUsdcBaseUnits: 60000,
      gasPurchaseDropWei: '400000000000000',
    });
    const run = await checkFeesCli(targets('changed', [['Network B', pool.thirty]]), '--schedule', newSchedule);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(lineOf(run, 'pool Network B withdrawFeeBps()'), /live 30 bps +published 30 bps +match$/);
    for (const name of RELAYER_CLAIMS) assertMatch(run, name);
  });
});

// The claims that cannot be read: three of them wait out --timeout-ms, together.
describe('ceremony check-fees: a claim that cannot be read fails only its own line', { concurrency: 4 }, () => {
  test('unreadable pools each get a clear reason, never a stack trace, and the rest is still checked', async () => {
    const refused = `http://127.0.0.1:${await freePort()}`;
    const run = await checkFeesCli(
      targets('ok', [
        ['good', pool.zeroA],
        ['reverting', pool.reverting],
        ['without-fee', pool.withoutFee],
        ['empty', NO_CODE_ADDRESS],
        ['refused', pool.zeroA, refused],
        ['silent', pool.zeroA, `${relayer.origin}/hang-rpc`],
      ]),
    );
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assertMatch(run, 'pool good withdrawFeeBps()');
    for (const name of RELAYER_CLAIMS) assertMatch(run, name);
    for (const name of ['reverting', 'without-fee', 'empty', 'refused', 'silent']) {
      assert.match(lineOf(run, `pool ${name} withdrawFeeBps()`), /live unreadable +published 0 bps +MISMATCH$/);
    }
    assertMismatch(
      run,
      'pool reverting withdrawFeeBps()',
      /withdrawFeeBps\(\) at 0x\w{40} reverted: withdrawals paused$/,
    );
    assertMismatch(
      run,
      'pool without-fee withdrawFeeBps()',
      /withdrawFeeBps\(\) at 0x\w{40} reverted without a reason \(does the contract have withdrawFeeBps\(\)\?\)$/,
    );
    assertMismatch(
      run,
      'pool empty withdrawFeeBps()',
      new RegExp(`no contract code at ${NO_CODE_ADDRESS} on ${escape(anvil.rpcUrl)}$`),
    );
    assertMismatch(
      run,
      'pool refused withdrawFeeBps()',
      new RegExp(`eth_getCode at 0x\\w{40} on ${escape(refused)} failed: .*ECONNREFUSED`),
    );
    assertMismatch(
      run,
      'pool silent withdrawFeeBps()',
      /eth_getCode at 0x\w{40} on http:\S+\/hang-rpc failed: .*took too long/,
    );
    assert.equal(lines(run.stderr).length, 5, run.stderr);
    assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
  });

  test('a relayer answering 404 and 500: both named, the pools still checked', async () => {
    const run = await checkRelayer('errors', 1);
    assertMatch(run, 'pool Network A withdrawFeeBps()');
    assertMatch(run, 'pool Network B withdrawFeeBps()');
    assertMismatch(run, 'relayer /quote', /GET http:\S+\/errors\/quote answered 404 Not Found$/);
    assertMismatch(
      run,
      'relayer /gas/quote feeUsdc',
      /GET http:\S+\/errors\/gas\/quote answered 500 Internal Server Error$/,
    );
    assertMismatch(run, 'relayer /gas/quote dropWei', /GET http:\S+\/errors\/gas\/quote answered 500/);
    for (const name of RELAYER_CLAIMS) assert.match(lineOf(run, name), /live unreadable /);
  });

  test('a relayer answering HTML, or never answering, is bounded by --timeout-ms', async () => {
    const run = await checkRelayer('html', 1);
    assertMatch(run, 'pool Network A withdrawFeeBps()');
    assertMismatch(
      run,
      'relayer /quote',
      new RegExp(
        'GET http:\\S+\\/html\\/quote answered a body that is not JSON ' +
          '\\(text\\/html\\): "<html><body>Bad gateway<\\/body><\\/html>"$',
      ),
    );
    assertMismatch(
      run,
      'relayer /gas/quote feeUsdc',
      new RegExp(`GET http:\\S+/html/gas/quote did not answer within ${TIMEOUT_MS} ms$`),
    );
    assertMismatch(run, 'relayer /gas/quote dropWei', /did not answer within/);
  });

  test('a body that stops half way times out; a missing field fails only its own claim', async () => {
    const run = await checkRelayer('stalls', 1);
    assertMismatch(
      run,
      'relayer /quote',
      new RegExp(`GET http:\\S+/stalls/quote did not answer within ${TIMEOUT_MS} ms$`),
    );
    assertMatch(run, 'relayer /gas/quote feeUsdc');
    assertMismatch(
      run,
      'relayer /gas/quote dropWei',
      /GET http:\S+: no dropWei field; the relayer answered \{"feeUsdc":0\.05\}$/,
    );
  });

  test('a /quote object with two fields fails with the fields and the body it got', async () => {
    const run = await checkRelayer('two-fields', 1);
    assertMismatch(
      run,
      'relayer /quote',
      /an object with 2 fields \("fee", "token"\): \{"fee":50000,"token":"USDC"\}$/,
    );
    assertMatch(run, 'relayer /gas/quote feeUsdc');
    assertMatch(run, 'relayer /gas/quote dropWei');
  });
});

describe('checkFees reads every accepted relayer shape to the same fees', { concurrency: 4 }, () => {
  const shapes: Array<[string, RegExp, RegExp]> = [
    ['ok', /, sent as number$/, /, sent as decimal USDC 0\.05$/],
    ['shape-string', /, sent as string$/, /, sent as decimal USDC 0\.05$/],
    ['shape-field', /, field "fee"$/, /, sent as base units 50000$/],
    ['shape-string-field', /, field "amountUsdc"$/, /, sent as base units 50000$/],
  ];
  for (const [name, quoteShape, feeShape] of shapes) {
    test(name, async () => {
      const report = await checkFees({
        targets: targets(name, [['Network A', pool.zeroA]]),
        schedule,
        timeoutMs: Number(ANSWERED_TIMEOUT_MS),
      });
      const claim = (claimName: string): FeeClaim => report.claims.find((c) => c.name === claimName)!;
      for (const c of report.claims) assert.ok(c.match, `${c.name}: ${c.live} ${c.reasons.join('; ')}`);
      assert.match(claim('relayer /quote').live!, quoteShape);
      assert.match(claim('relayer /gas/quote feeUsdc').live!, feeShape);
      assert.equal(claim('relayer /gas/quote dropWei').live, '500000000000000 wei (0.0005 gas token)');
    });
  }
});
