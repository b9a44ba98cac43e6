/**
 * bench/bench-args.ts, the bench scripts' command line, on a throwaway script in a child process
 * (it exits, as a bench script does): `--help` prints the script's header comment, a mistyped
 * option one line and the usage (exit 2, no stack trace), good options reach the script.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';

const HELP = `A script of the bench-args test: prints the options it was given.

  an indented line, kept indented

Usage: tsx script.ts [--count N (default 1)]
                     [--verbose]`;

const SCRIPT = `/**
${HELP.split('\n')
  .map((line) => ` *${line === '' ? '' : ` ${line}`}`)
  .join('\n')}
 */
import { parseBenchArgs } from '${pathToFileURL(path.join(REPO_ROOT, 'bench', 'bench-args.ts')).href}';

const { values } = parseBenchArgs(import.meta.url, {
  options: { count: { type: 'string', default: '1' }, verbose: { type: 'boolean', default: false } },
});
process.stdout.write(\`\${JSON.stringify(values)}\\n\`);
`;

let dir: string;
let script: string;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'bench-args-'));
  script = path.join(dir, 'script.ts');
  await writeFile(script, SCRIPT);
});

after(() => rm(dir, { recursive: true, force: true }));

const run = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { cwd: REPO_ROOT, encoding: 'utf8' });

test('--help (or -h) prints the script header comment without its " * " prefixes and exits 0', () => {
  for (const flag of ['--help', '-h']) {
    const { status, stdout, stderr } = run('--count', '3', flag);
    assert.equal(status, 0, stderr);
    assert.equal(stdout, `${HELP}\n`);
    assert.equal(stderr, '');
  }
});

test('a mistyped option prints error: and the usage to stderr, no stack trace, and exits 2', () => {
  const { status, stdout, stderr } = run('--bogus');
  assert.equal(status, 2, stderr);
  assert.equal(stdout, '');
  assert.match(stderr, /^error: Unknown option '--bogus'/);
  assert.ok(stderr.endsWith(`\n\n${HELP.slice(HELP.indexOf('Usage:'))}\n`), stderr);
  assert.doesNotMatch(stderr, /^\s*at /m);
});

test('a missing value and a stray argument are reported the same way', () => {
  for (const args of [['--count'], ['stray']]) {
    const { status, stderr } = run(...args);
    assert.equal(status, 2, stderr);
    assert.match(stderr, /^error: .+\n\nUsage: /);
    assert.doesNotMatch(stderr, /^\s*at /m);
  }
});

test('good options reach the script as parseArgs gives them', () => {
  const { status, stdout, stderr } = run('--count', '3', '--verbose');
  assert.equal(status, 0, stderr);
  assert.deepEqual(JSON.parse(stdout), { count: '3', verbose: true });
});
