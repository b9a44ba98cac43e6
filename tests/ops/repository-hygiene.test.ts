/**
 * What goes into git stays clean: scratch scripts are ignored (scratch/, dot-named scripts at the
 * root), nothing committed is matched by .gitignore, and no file that is or would be committed names
 * a path of one machine or a folder outside the repository (a fresh clone must stand alone).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';

function git(args: string[]): { status: number | null; stdout: string } {
  const result = spawnSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.ok(result.error === undefined, `git ${args.join(' ')}: ${result.error?.message}`);
  return { status: result.status, stdout: result.stdout };
}

test('scratch scripts are ignored, and nothing committed is matched by .gitignore', () => {
  for (const scratch of ['scratch/measure.ts', 'scratch/notes.md', '.m.ts', '.p.mjs', '.try.js']) {
    assert.equal(git(['check-ignore', '-q', '--no-index', scratch]).status, 0, `${scratch} is not ignored`);
  }
  for (const kept of ['.gitignore', '.dockerignore', '.ci/run', 'core/errors.ts']) {
    assert.equal(git(['check-ignore', '-q', '--no-index', kept]).status, 1, `${kept} is ignored`);
  }
  const ignoredButTracked = git(['ls-files', '--cached', '--ignored', '--exclude-standard']).stdout.trim();
  assert.equal(ignoredButTracked, '', 'tracked files that .gitignore matches');
});

test('no file of the repository names a path of one machine or a folder outside the repository', () => {
  const files = git(['ls-files', '--cached', '--others', '--exclude-standard', '-z'])
    .stdout.split('\0')
    .filter(Boolean);
  assert.ok(files.includes('core/errors.ts') && files.includes('README.md'), 'git lists the repository');
  const outside = /\.\.\/shared\b|\/work\/|\/home\/|\/Users\/|\/root\//;
  const found: string[] = [];
  for (const file of files) {
    const full = path.join(REPO_ROOT, file);
    let text: string;
    try {
      if (!statSync(full).isFile()) continue;
      text = readFileSync(full, 'utf8');
    } catch {
      continue; // listed but deleted in the working tree
    }
    if (text.includes('\0')) continue; // binary (r1cs)
    text.split('\n').forEach((line, index) => {
      if (outside.test(line)) found.push(`${file}:${index + 1}: ${line.trim().slice(0, 100)}`);
    });
  }
  assert.deepEqual(found, []);
});
