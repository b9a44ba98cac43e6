/**
 * What an operator reads: `ceremony --version`; every help wrapped to the terminal's width (COLUMNS
 * where stdout is a pipe), with one style for defaults, required options marked and an example of
 * its own command; and the options that take two values (`--deployment`, `--compare`) take two,
 * leaving the positional arguments that follow them alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { CEREMONY_BIN, environmentWith, runCli } from '../helpers/run-cli.ts';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { COMMANDS } from '../../cli/commands/index.ts';

const over = (width: number, text: string): string[] => text.split('\n').filter((line) => line.length > width);

test('--version prints the version of package.json and the Node it runs on', async () => {
  const { version } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  for (const flag of ['--version', '-V']) {
    const result = await runCli([flag]);
    assert.equal(result.code, 0, flag);
    assert.equal(result.stdout, `ceremony ${version} (Node ${process.versions.node})\n`, flag);
  }
});

test('every command has its own help, wrapped to the terminal, ending with an example of itself', async () => {
  for (const { name } of COMMANDS) {
    const { code, stdout } = await runCli([name, '--help'], { env: { COLUMNS: '80' } });
    assert.equal(code, 0, name);
    assert.match(stdout, new RegExp(`^Usage: ceremony ${name}`, 'm'));
    assert.deepEqual(over(80, stdout), [], `ceremony ${name} --help at 80 columns`);
    const at = stdout.lastIndexOf('\nExamples:\n');
    assert.ok(at >= 0, `ceremony ${name} --help has no Examples section`);
    assert.match(
      stdout.slice(at),
      new RegExp(`^ {2}(?:\\S+=\\S+ )*ceremony ${name}\\b`, 'm'),
      `${name}: an example of itself`,
    );
  }
  for (const width of [60, 120]) {
    const top = await runCli(['--help'], { env: { COLUMNS: String(width) } });
    assert.deepEqual(over(width, top.stdout), [], `ceremony --help at ${width} columns`);
  }
  // Wider text really uses the width: the settings' descriptions take fewer lines at 120 columns.
  const narrow = await runCli(['serve', '--help'], { env: { COLUMNS: '80' } });
  const wide = await runCli(['serve', '--help'], { env: { COLUMNS: '120' } });
  assert.deepEqual(over(120, wide.stdout), [], 'ceremony serve --help at 120 columns');
  assert.ok(wide.stdout.split('\n').length < narrow.stdout.split('\n').length, 'wider help takes fewer lines');
});

const READER_GONE =
  'a reader that closes the pipe (`ceremony --help | head`) ends the command quietly, with SIGPIPE’s status';
test(READER_GONE, async () => {
  const child = spawn(process.execPath, [CEREMONY_BIN, 'serve', '--help'], {
    cwd: REPO_ROOT,
    env: environmentWith(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Closed before the command has started: its first write of the help meets a closed pipe.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  assert.equal(code, 141, stderr);
  assert.doesNotMatch(stderr, /EPIPE|Error|\n\s+at /, 'no trace of an unhandled EPIPE');
});

/** Every option and argument of every command, loaded as the CLI loads them. */
async function everyCommand(): Promise<Command[]> {
  return Promise.all(COMMANDS.map(async (entry) => (await entry.load())()));
}

test('defaults are said one way, "(default: X)", from the option itself, never in its description', async () => {
  for (const command of await everyCommand()) {
    for (const item of [...command.options, ...command.registeredArguments]) {
      assert.doesNotMatch(
        item.description,
        /\(default\b|default [0-9$"]/i,
        `ceremony ${command.name()}: "${item.description}" states its default in its text`,
      );
    }
  }
  const { stdout } = await runCli(['contribute', '--help'], { env: { COLUMNS: '200' } });
  assert.match(stdout, /--name <name> .*\(default: anonymous\)$/m);
  assert.match(stdout, /--max-attempts <n> .*\(default: 3\)$/m);
  assert.match(stdout, /--data <dir> .*\(default: ceremony-data\)$/m);
  const serve = await runCli(['serve', '--help'], { env: { COLUMNS: '200' } });
  assert.match(serve.stdout, /--port <n> .*\(default: \$PORT, else 8080\)$/m);
  assert.doesNotMatch(serve.stdout + stdout, /\(default [^:]|default: "/, 'no other style of default');
});

test('required options are marked (required)', async () => {
  const { stdout } = await runCli(['announce-beacon', '--help'], { env: { COLUMNS: '200' } });
  for (const flag of ['--chain-id <id>', '--block <n>', '--iterations <n>', '--rpc <url>'])
    assert.match(stdout, new RegExp(`^ {2}${flag} .*\\(required\\)$`, 'm'), flag);
  assert.doesNotMatch(stdout, /--min-blocks-ahead.*required/);
  const devPtau = await runCli(['dev-ptau', '--help'], { env: { COLUMNS: '200' } });
  assert.match(devPtau.stdout, /^ {2}--power <n> .*\(required\)$/m);
});

test('the options of two values take two: the positional arguments after them stay positional', async () => {
  // verify-receipt FILE --deployment RPC VERIFIERS DIR: DIR is the published folder, not a third value.
  const receipt = await runCli([
    'verify-receipt',
    'no-such-receipts.json',
    '--deployment',
    'http://127.0.0.1:9',
    'no-such-verifiers.json',
    'no-such-dir',
  ]);
  assert.equal(receipt.code, 2, receipt.stderr);
  assert.doesNotMatch(receipt.stderr, /give either a published folder|takes two values/);
  assert.match(receipt.stderr, /error \[input\.file_not_found\]: .*no-such-verifiers\.json/);

  // verify-deployment --compare RPC2 VERIFIERS2 RPC MANIFEST VERIFIERS: the three arguments are there.
  const deployment = await runCli([
    'verify-deployment',
    '--compare',
    'http://127.0.0.1:9',
    'no-such-verifiers2.json',
    'http://127.0.0.1:9',
    'no-such-manifest.json',
    'no-such-verifiers.json',
  ]);
  assert.equal(deployment.code, 2, deployment.stderr);
  assert.doesNotMatch(deployment.stderr, /missing required argument/);
  assert.match(deployment.stderr, /error \[input\.file_not_found\]: .*no-such-verifiers2\.json/);

  // One value, or three, is a usage error that says what it takes.
  const one = await runCli(['verify-receipt', 'r.json', 'dir', '--deployment', 'http://127.0.0.1:9']);
  assert.equal(one.code, 2);
  assert.match(one.stderr, /--deployment takes two values, the JSON-RPC URL and the verifiers file \(got 1\)/);
});
