/**
 * One Node line everywhere the project names one: the Docker image operators deploy, package.json's
 * engines, the Node `scripts/fetch-node.sh` fetches for an older machine (and `.ci/run` with it), and
 * the Node these tests run on. A coordinator started on a line past its end of life says so (a
 * warning in its log, core/runtime/node-support.ts); this keeps the project itself off such a line.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { nodeEndOfLifeWarning, SUPPORTED_NODE_MAJOR } from '../../core/runtime/node-support.ts';

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');

test('the image, engines, fetch-node.sh and the tests themselves run one supported Node line', () => {
  assert.match(read('Dockerfile'), new RegExp(`^FROM node:${SUPPORTED_NODE_MAJOR}-bookworm-slim$`, 'm'));
  const manifest = JSON.parse(read('package.json')) as { engines: { node: string } };
  assert.equal(manifest.engines.node, `>=${SUPPORTED_NODE_MAJOR}`);
  const fetched = /^version=(\d+)\.\d+\.\d+$/m.exec(read('scripts/fetch-node.sh'));
  assert.equal(Number(fetched?.[1]), SUPPORTED_NODE_MAJOR, 'the Node fetch-node.sh fetches');
  const ci = read('.ci/run');
  const switched = ci.search(/^eval "\$\(scripts\/fetch-node\.sh\)"$/m);
  assert.ok(switched >= 0 && switched < ci.indexOf('npm ci'), '.ci/run switches Node before installing');
  assert.ok(
    Number(process.versions.node.split('.')[0]) >= SUPPORTED_NODE_MAJOR,
    `the tests run on Node ${process.versions.node}; run eval "$(scripts/fetch-node.sh)" before npm install`,
  );
  assert.equal(nodeEndOfLifeWarning(process.version, new Date()), undefined, 'the line is past its end of life');
});
