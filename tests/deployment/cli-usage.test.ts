/**
 * Usage errors of `ceremony verify-deployment` and `ceremony check-manifest`: each exits 2 with a
 * message naming the problem, and prints no verifier line. No node is needed: the inputs are
 * refused before anything is checked.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../helpers/run-cli.ts';

const RPC_URL = 'http://127.0.0.1:8545';
const ADDRESS = '0x5fbdb2315678afecb367f032d93f642f64180aa3';

let dir: string;
let manifest: string;
let verifiers: string;
let notJson: string;
let array: string;
let empty: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'deployment-usage-'));
  const write = async (name: string, text: string) => {
    await writeFile(join(dir, name), text);
    return join(dir, name);
  };
  manifest = await write('manifest.json', JSON.stringify({ VerifierRegister: { deltax1: '1', deltax2: '2' } }));
  verifiers = await write('verifiers.json', JSON.stringify({ VerifierRegister: ADDRESS }));
  notJson = await write('not-json.json', '{ "VerifierRegister": ');
  array = await write('array.json', JSON.stringify([{ deltax1: '1', deltax2: '2' }]));
  empty = await write('empty.json', '{}');
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function assertUsageError(args: string[], stderrPattern: RegExp): Promise<void> {
  const run = await runCli(args);
  assert.equal(run.code, 2, `exit ${run.code}\n${run.stdout}${run.stderr}`);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, stderrPattern);
}

describe('ceremony verify-deployment usage errors exit 2', { concurrency: 4 }, () => {
  test('too few arguments', () =>
    assertUsageError(['verify-deployment', RPC_URL, manifest], /missing required argument 'verifiers\.json'/));
  test('too many arguments', () =>
    assertUsageError(['verify-deployment', RPC_URL, manifest, verifiers, 'extra'], /too many arguments/));
  test('manifest file missing', () =>
    assertUsageError(
      ['verify-deployment', RPC_URL, join(dir, 'absent.json'), verifiers],
      /\[input\.file_not_found\]: manifest file not found/,
    ));
  test('verifiers file missing', () =>
    assertUsageError(
      ['verify-deployment', RPC_URL, manifest, join(dir, 'absent.json')],
      /\[input\.file_not_found\]: verifiers file not found/,
    ));
  test('manifest not JSON', () =>
    assertUsageError(
      ['verify-deployment', RPC_URL, notJson, verifiers],
      /\[input\.not_json\]: manifest file .* is not valid JSON/,
    ));
  test('manifest an array', () =>
    assertUsageError(
      ['verify-deployment', RPC_URL, array, verifiers],
      /\[input\.invalid\]: manifest file .* must hold a JSON object, not an array/,
    ));
  test('manifest empty', () =>
    assertUsageError(
      ['verify-deployment', RPC_URL, empty, verifiers],
      /\[input\.invalid\]: manifest file .* lists no verifiers/,
    ));
  test('verifiers file an array', () =>
    assertUsageError(
      ['verify-deployment', RPC_URL, manifest, array],
      /\[input\.invalid\]: verifiers file .* must hold a JSON object/,
    ));
  test('RPC URL not http(s)', () =>
    assertUsageError(
      ['verify-deployment', 'localhost:8545', manifest, verifiers],
      /\[usage\.invalid_arguments\]: RPC URL localhost:8545 must be http/,
    ));
  test('--compare with one value', () =>
    assertUsageError(
      ['verify-deployment', RPC_URL, manifest, verifiers, '--compare', RPC_URL],
      /\[usage\.invalid_arguments\]: --compare takes two values, the second network's RPC URL and .*; got 1$/m,
    ));
  test('--compare with an RPC URL not http(s)', () =>
    assertUsageError(
      ['verify-deployment', RPC_URL, manifest, verifiers, '--compare', 'ws://127.0.0.1:8546', verifiers],
      /\[usage\.invalid_arguments\]: RPC URL ws:\/\/127\.0\.0\.1:8546 must be http/,
    ));
  test('--compare with a verifiers file missing', () =>
    assertUsageError(
      ['verify-deployment', RPC_URL, manifest, verifiers, '--compare', RPC_URL, join(dir, 'absent.json')],
      /\[input\.file_not_found\]: verifiers file not found/,
    ));
  test('--constants-only without --ceremony', () =>
    assertUsageError(
      ['verify-deployment', RPC_URL, manifest, verifiers, '--constants-only'],
      /\[usage\.invalid_arguments\]: --constants-only goes with --ceremony DIR/,
    ));
});

test('verify-deployment --ceremony with a folder that holds no ceremony exits 1, before any network', async () => {
  const run = await runCli(['verify-deployment', RPC_URL, manifest, verifiers, '--ceremony', dir]);
  assert.equal(run.code, 1);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, /^error \[config\.not_found\]: no ceremony configuration at /);
});

describe('ceremony check-manifest usage errors exit 2', { concurrency: 4 }, () => {
  test('too few arguments', () => assertUsageError(['check-manifest', manifest], /missing required argument 'dir'/));
  test('manifest an array', () =>
    assertUsageError(['check-manifest', array, dir], /\[input\.invalid\]: manifest file .* must hold a JSON object/));
  test('directory missing', () =>
    assertUsageError(
      ['check-manifest', manifest, join(dir, 'absent')],
      /\[input\.file_not_found\]: ceremony folder not found/,
    ));
});

describe('help', { concurrency: 2 }, () => {
  for (const command of ['verify-deployment', 'check-manifest']) {
    test(`${command} --help exits 0 and shows the usage`, async () => {
      const run = await runCli([command, '--help']);
      assert.equal(run.code, 0);
      assert.match(run.stdout, new RegExp(`^Usage: ceremony ${command} `));
    });
  }
});
