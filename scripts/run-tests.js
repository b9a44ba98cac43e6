#!/usr/bin/env node
// `npm test`: prepares the shared fixtures once (so parallel test files do not all build them),
// then runs every tests/**/*.test.ts with node's test runner through tsx.
// Pass file paths to run only those: `npm test -- tests/core/init.test.ts`.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'fixtures' || name === 'helpers' ? [] : findTests(full);
    return name.endsWith('.test.ts') ? [full] : [];
  });
}

const files = process.argv.slice(2).length > 0 ? process.argv.slice(2) : findTests('tests').sort();
const node = process.execPath;
const prepare = spawnSync(node, ['--import', 'tsx', 'tests/fixtures/prepare-fixtures.ts'], { stdio: 'inherit' });
if (prepare.status !== 0) process.exit(prepare.status ?? 1);
const run = spawnSync(node, ['--import', 'tsx', '--import', './tests/setup.mjs', '--test', '--test-concurrency=2', ...files], { stdio: 'inherit' });
process.exit(run.status ?? 1);
