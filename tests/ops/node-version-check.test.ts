/**
 * `npm install` on a Node older than the project's line stops, printing the line that fetches Node
 * 24 (package.json's preinstall, scripts/check-node-version.js), instead of warning and going on to
 * build native modules for the wrong Node. Run for real with the machine's own older Node and npm
 * where it has one, on a copy of the project's manifest without its dependencies.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { SUPPORTED_NODE_MAJOR } from '../../core/runtime/node-support.ts';
import { nodeVersionProblem, requiredNodeMajor } from '../../scripts/check-node-version.js';

const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  engines: { node: string };
  scripts: Record<string, string>;
};

test('the check requires the engines line, and names the fetch-node.sh line for an older Node', () => {
  assert.equal(manifest.scripts.preinstall, 'node scripts/check-node-version.js');
  assert.equal(requiredNodeMajor(manifest.engines.node), SUPPORTED_NODE_MAJOR);
  const problem = nodeVersionProblem('v20.20.2', SUPPORTED_NODE_MAJOR);
  assert.match(problem ?? '', /needs Node 24 or later; this is Node v20\.20\.2/);
  assert.match(problem ?? '', /^ {2}eval "\$\(scripts\/fetch-node\.sh\)"$/m);
  for (const version of ['v24.0.0', 'v24.22.3', 'v25.1.0']) assert.equal(nodeVersionProblem(version, 24), undefined);
  assert.throws(() => requiredNodeMajor('^24'), /must be ">=N"/);
});

/** The machine's own Node, when it is older than the project's line (Debian's, here). */
function olderNode(): string | undefined {
  for (const node of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(node) || !existsSync(path.join(path.dirname(node), 'npm'))) continue;
    const major = Number(spawnSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout);
    if (major > 0 && major < SUPPORTED_NODE_MAJOR) return node;
  }
  return undefined;
}

test('npm install on an older Node stops before the build, printing the fetch-node.sh line', async (t) => {
  const node = olderNode();
  if (!node) {
    t.skip(`no Node older than ${SUPPORTED_NODE_MAJOR} with its npm on this machine to install with`);
    return;
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'node-version-check-'));
  t.after(() => cleanUp(dir));
  await mkdir(path.join(dir, 'scripts'));
  await copyFile(
    path.join(REPO_ROOT, 'scripts', 'check-node-version.js'),
    path.join(dir, 'scripts', 'check-node-version.js'),
  );
  const { name, version, engines, scripts } = manifest;
  const prepare = "node -e \"require('fs').writeFileSync('PREPARED', '')\"";
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name,
      version,
      type: 'module',
      private: true,
      engines,
      scripts: { preinstall: scripts.preinstall, prepare },
    }),
  );
  const bin = path.dirname(node);
  // The older Node's own npm, first on PATH, and nothing of this run's Node 24 (its headers, its flags).
  const { npm_config_nodedir: _headers, NODE_OPTIONS: _flags, ...env } = process.env;
  const result = spawnSync(path.join(bin, 'npm'), ['install', '--no-audit', '--no-fund', '--offline'], {
    cwd: dir,
    env: { ...env, PATH: `${bin}:${process.env.PATH}` },
    encoding: 'utf8',
    timeout: 120_000,
  });
  const output = `${result.stdout}${result.stderr}`;
  assert.notEqual(result.status, 0, output);
  assert.match(output, /needs Node 24 or later/);
  assert.match(output, /eval "\$\(scripts\/fetch-node\.sh\)"/);
  assert.ok(!existsSync(path.join(dir, 'PREPARED')), 'the install went on to prepare (the build)');
});
