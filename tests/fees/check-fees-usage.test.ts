/**
 * Usage errors of `ceremony check-fees`: a missing or malformed TARGETS.json or schedule, or a
 * bad option, exits 2 with a message naming the problem and prints no claim line. Nothing is
 * contacted: the URLs below point at a closed port, and the inputs are refused before any read.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../helpers/run-cli.ts';

const VALID_TARGETS = {
  pools: [{ name: 'Network A', rpcUrl: 'http://127.0.0.1:9', address: '0x5fbdb2315678afecb367f032d93f642f64180aa3' }],
  relayer: 'http://127.0.0.1:9/relayer-mainnet',
};
const VALID_SCHEDULE = {
  poolWithdrawFeeBps: 0,
  relayFeeUsdcBaseUnits: '50000',
  gasPurchaseFeeUsdcBaseUnits: '50000',
  gasPurchaseDropWei: '500000000000000',
};

let dir: string;
const files: Record<string, string> = {};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'check-fees-usage-'));
  const inputs: Record<string, string> = {
    targets: JSON.stringify(VALID_TARGETS),
    notJson: '{"pools": [',
    array: '[]',
    noRelayer: JSON.stringify({ pools: VALID_TARGETS.pools }),
    noPools: JSON.stringify({ pools: [], relayer: VALID_TARGETS.relayer }),
    badChecksum: JSON.stringify({
      ...VALID_TARGETS,
      pools: [{ ...VALID_TARGETS.pools[0], address: '0x5fBDB2315678afecb367f032d93F642f64180aa3' }],
    }),
    badRpc: JSON.stringify({ ...VALID_TARGETS, pools: [{ ...VALID_TARGETS.pools[0], rpcUrl: 'localhost:8545' }] }),
    relayerWithQuery: JSON.stringify({ ...VALID_TARGETS, relayer: 'https://api.example/relayer-mainnet?x=1' }),
    typo: JSON.stringify({
      ...VALID_TARGETS,
      pools: [{ name: 'Network A', rpcURL: 'http://127.0.0.1:9', address: VALID_TARGETS.pools[0]!.address }],
    }),
    duplicateNames: JSON.stringify({ ...VALID_TARGETS, pools: [VALID_TARGETS.pools[0], VALID_TARGETS.pools[0]] }),
    scheduleFraction: JSON.stringify({ ...VALID_SCHEDULE, relayFeeUsdcBaseUnits: '0.05' }),
    scheduleNegative: JSON.stringify({ ...VALID_SCHEDULE, poolWithdrawFeeBps: -1 }),
    scheduleMissing: JSON.stringify({ poolWithdrawFeeBps: 0 }),
  };
  for (const [name, text] of Object.entries(inputs)) {
    files[name] = join(dir, `${name}.json`);
    await writeFile(files[name], text);
  }
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function assertUsageError(args: string[], stderrPattern: RegExp): Promise<void> {
  const run = await runCli(['check-fees', ...args]);
  assert.equal(run.code, 2, `exit ${run.code}\n${run.stdout}${run.stderr}`);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, stderrPattern);
  assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
}

describe('ceremony check-fees usage errors exit 2', { concurrency: 4 }, () => {
  test('no TARGETS.json', () => assertUsageError([], /missing required argument 'targets\.json'/));
  test('TARGETS.json missing', () =>
    assertUsageError([join(dir, 'absent.json')], /\[input\.file_not_found\]: targets file not found/));
  test('TARGETS.json not JSON', () =>
    assertUsageError([files.notJson!], /\[input\.not_json\]: targets file .* is not valid JSON/));
  test('TARGETS.json an array', () =>
    assertUsageError([files.array!], /\[input\.invalid\]: targets file .* must hold a JSON object, not an array/));
  test('no relayer', () =>
    assertUsageError([files.noRelayer!], /\[input\.invalid\]: targets file .* is invalid: relayer: Required/));
  test('no pools', () => assertUsageError([files.noPools!], /pools: at least one pool/));
  test('an address with a bad checksum', () =>
    assertUsageError(
      [files.badChecksum!],
      /pools\.0\.address: an address: 0x and 40 hex digits, with a valid EIP-55 checksum/,
    ));
  test('an RPC URL that is not http(s)', () =>
    assertUsageError([files.badRpc!], /pools\.0\.rpcUrl: an http:\/\/ or https:\/\/ URL/));
  test('a relayer base with a query', () =>
    assertUsageError([files.relayerWithQuery!], /relayer: a base URL without query or fragment/));
  test('a misspelt field', () =>
    assertUsageError([files.typo!], /pools\.0\.rpcUrl: Required; pools\.0: Unrecognized key\(s\) in object: 'rpcURL'/));
  test('two pools with one name', () =>
    assertUsageError([files.duplicateNames!], /pools\.1\.name: duplicate pool name "Network A"/));
  test('schedule missing', () =>
    assertUsageError(
      [files.targets!, '--schedule', join(dir, 'absent.json')],
      /\[input\.file_not_found\]: fee schedule file not found/,
    ));
  test('schedule with a fraction of a base unit', () =>
    assertUsageError(
      [files.targets!, '--schedule', files.scheduleFraction!],
      /\[input\.invalid\]: fee schedule file .* is invalid: relayFeeUsdcBaseUnits: a whole number of base units/,
    ));
  test('schedule without the fees', () =>
    assertUsageError(
      [files.targets!, '--schedule', files.scheduleMissing!],
      /relayFeeUsdcBaseUnits: Required; gasPurchaseFeeUsdcBaseUnits: Required; gasPurchaseDropWei: Required$/m,
    ));
  test('schedule with a negative fee', () =>
    assertUsageError(
      [files.targets!, '--schedule', files.scheduleNegative!],
      /poolWithdrawFeeBps: Number must be greater than or equal to 0/,
    ));
  test('--timeout-ms not a number', () =>
    assertUsageError([files.targets!, '--timeout-ms', 'soon'], /option '--timeout-ms <n>' argument 'soon' is invalid/));
  test('--timeout-ms 0', () =>
    assertUsageError([files.targets!, '--timeout-ms', '0'], /expected a whole number of milliseconds from 1/));
});

test('check-fees --help exits 0 and shows the usage and exit codes', async () => {
  const run = await runCli(['check-fees', '--help']);
  assert.equal(run.code, 0);
  assert.match(run.stdout, /^Usage: ceremony check-fees \[options\] <targets\.json>/);
  assert.match(run.stdout, /--schedule <file>/);
  assert.match(run.stdout, /--timeout-ms <n>/);
  // Help is wrapped to the terminal's width: compare the words, not the line breaks.
  assert.match(
    run.stdout.replace(/\s+/g, ' '),
    /Exit status: 0 every claim matches, 1 any MISMATCH or unreadable value, 2 usage/,
  );
});
