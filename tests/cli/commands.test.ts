/**
 * The `ceremony` command lists every sub-command under the heading of its role (each one's own help:
 * help.test.ts), and usage errors exit 2.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/run-cli.ts';
import { COMMAND_ROLES, COMMANDS } from '../../cli/commands/index.ts';

/** The commands --help lists under each heading, in order. */
function listedByHeading(help: string): Map<string, string[]> {
  const listed = new Map<string, string[]>();
  let heading: string | undefined;
  for (const line of help.split('\n')) {
    if (/^\S.*:$/.test(line)) heading = line;
    else if (heading && /^ {2}[a-z][a-z-]+(\s|$)/.test(line)) listed.get(heading)?.push(line.trim().split(/\s+/)[0]!);
    if (heading && !listed.has(heading)) listed.set(heading, []);
  }
  return listed;
}

test('--help lists every command with a one-line description, under the heading of its role', async () => {
  const result = await runCli(['--help']);
  assert.equal(result.code, 0);
  const listed = listedByHeading(result.stdout);
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
    assert.ok(
      listed.get(COMMAND_ROLES[entry.role])?.includes(entry.name),
      `${entry.name} is not listed under "${COMMAND_ROLES[entry.role]}"`,
    );
  }
  const roles = Object.values(COMMAND_ROLES);
  assert.deepEqual(
    [...listed.keys()].filter((heading) => roles.includes(heading as (typeof roles)[number])),
    roles,
    'the roles in their order',
  );
});

test('an unknown command or a missing argument exits 2 with a message', async () => {
  const unknown = await runCli(['frobnicate']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command 'frobnicate'/);
  const missing = await runCli(['verify', 'register']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /missing required argument 'file'/);
});
