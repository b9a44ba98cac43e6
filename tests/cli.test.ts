/** The `ceremony` command lists every sub-command, each has --help, and usage errors exit 2. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from './helpers/run-cli.ts';
import { COMMANDS } from '../cli/commands/index.ts';

test('--help lists every command with a one-line description', async () => {
  const result = await runCli(['--help']);
  assert.equal(result.code, 0);
  for (const make of COMMANDS) {
    const command = make();
    assert.ok(command.description().length > 10, `${command.name()} needs a description`);
    assert.match(result.stdout, new RegExp(`^  ${command.name()}\\b`, 'm'), `${command.name()} missing from --help`);
  }
});

test('every command has its own --help', async () => {
  for (const make of COMMANDS) {
    const name = make().name();
    const result = await runCli([name, '--help']);
    assert.equal(result.code, 0, name);
    assert.match(result.stdout, new RegExp(`^Usage: ceremony ${name}`, 'm'));
  }
});

test('an unknown command or a missing argument exits 2 with a message', async () => {
  const unknown = await runCli(['frobnicate']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command 'frobnicate'/);
  const missing = await runCli(['verify', 'register']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /missing required argument 'file'/);
});
