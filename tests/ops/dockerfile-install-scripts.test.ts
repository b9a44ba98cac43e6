/**
 * The Dockerfile's `npm ci` step sees only what is copied before it (package.json and the lockfile,
 * so the packages' layer survives a change of the sources): every script npm runs during the
 * install (package.json's preinstall, install, postinstall, prepare), and every module those import,
 * must be copied there, or the image's build fails at that step. Checked from the files alone, so a
 * new lifecycle script is caught in seconds, not by the container test's build minutes later.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';

const INSTALL_LIFECYCLE = ['preinstall', 'install', 'postinstall', 'prepare'];

/** The repository's script files a lifecycle command line names (`node scripts/x.js …`). */
function scriptsNamed(commandLine: string): string[] {
  return [...commandLine.matchAll(/(?:^|\s)(scripts\/[\w./-]+\.[cm]?js)\b/g)].map((m) => m[1]!);
}

/** `file` and the repository modules it imports, relative imports followed (paths from the root). */
function withImports(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const source = readFileSync(path.join(REPO_ROOT, file), 'utf8');
  for (const [, specifier] of source.matchAll(/\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/g))
    withImports(path.posix.join(path.posix.dirname(file), specifier!), seen);
  return seen;
}

/** The files a Dockerfile stage's COPY lines (from the context) bring in before its first `npm ci`. */
function copiedBeforeInstall(dockerfile: string): string[] {
  const copied: string[] = [];
  for (const line of dockerfile.split('\n')) {
    if (/^RUN\b.*\bnpm (ci|install)\b/.test(line)) return copied;
    const copy = /^COPY\s+(?!--from)(.+)$/.exec(line.trim());
    if (!copy) continue;
    // COPY SOURCE… TARGET: the sources are the context's paths (each kept at its own path here).
    copied.push(...copy[1]!.trim().split(/\s+/).slice(0, -1));
  }
  throw new Error('the Dockerfile runs no `npm ci`');
}

test("the Dockerfile copies every script of npm's install, and what it imports, before `npm ci`", () => {
  const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const needed = new Set<string>();
  for (const stage of INSTALL_LIFECYCLE)
    for (const script of scriptsNamed(manifest.scripts[stage] ?? '')) withImports(script, needed);
  assert.ok(needed.has('scripts/build.js'), 'prepare runs scripts/build.js (the check reads the scripts)');
  const copied = copiedBeforeInstall(readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8'));
  for (const file of needed) {
    assert.ok(existsSync(path.join(REPO_ROOT, file)), `${file} exists`);
    assert.ok(copied.includes(file), `the Dockerfile copies ${file} before npm ci (copied: ${copied.join(', ')})`);
  }
});
