/** The `ceremony` command lists every sub-command, each has --help, and usage errors exit 2. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Help } from 'commander';
import { runCli } from '../helpers/run-cli.ts';
import { COMMANDS } from '../../cli/commands/index.ts';

test('--help lists every command with a one-line description', async () => {
  const result = await runCli(['--help']);
  assert.equal(result.code, 0);
  for (const entry of COMMANDS) {
    const command = (await entry.load())();
    assert.ok(command.description().length > 10, `${command.name()} needs a description`);
    // --help lists the summary without loading the module: it must say what the command says.
    assert.equal(command.name(), entry.name);
    assert.equal(
      entry.summary,
      command.description(),
      `${entry.name}: summary in cli/commands/index.ts differs from the command's description`,
    );
    assert.equal(
      `${entry.name} ${entry.usage}`.trim(),
      new Help().subcommandTerm(command),
      `${entry.name}: usage in cli/commands/index.ts differs from the command's`,
    );
    assert.match(result.stdout, new RegExp(`^  ${command.name()}\\b`, 'm'), `${command.name()} missing from --help`);
  }
});

test('every command has its own --help', async () => {
  for (const { name } of COMMANDS) {
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
