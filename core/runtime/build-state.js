/**
 * Whether the compiled app is up to date with its sources, for the build (scripts/build.js), the
 * `ceremony` command (bin/ceremony.js) and `ceremony serve`. Plain JavaScript, no dependencies:
 * bin/ runs it on every command before anything is compiled. A part is current when its stamp
 * (written last by a successful build) is newer than every source file and folder (a folder's
 * mtime changes when a file in it is added, removed or renamed) and, for the browser app, than
 * every file the last build read: Vite records its module graph (pages and workers, core/ included)
 * in web/dist/.build-inputs.json (vite.config.ts), so the list follows the bundle's imports.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** What each part of the build is made from, its output folder and its stamp (repo-relative). */
export const PARTS = {
  dist: {
    out: 'dist',
    stamp: 'dist/.build-stamp',
    config: 'tsconfig.build.json',
    sources: [
      'core',
      'client',
      'cli',
      'server',
      'worker',
      'types',
      'scripts/start-test-network.ts',
      'tsconfig.json',
      'tsconfig.build.json',
    ],
  },
  web: {
    out: 'web/dist',
    stamp: 'web/dist/.build-stamp',
    config: 'vite.config.ts',
    // The pages and the build's configuration; what they import is in `inputs`, written by the build.
    // Not the whole web/ folder: its own mtime changes whenever web/dist is replaced.
    sources: ['web/index.html', 'web/ceremony', 'web/console', 'web/src', 'web/tsconfig.json', 'vite.config.ts'],
    inputs: 'web/dist/.build-inputs.json',
  },
};

/** The repo-relative files a build recorded reading, or undefined when there is no readable record. */
function recordedInputs(file) {
  try {
    const list = JSON.parse(readFileSync(file, 'utf8'));
    return Array.isArray(list) && list.every((entry) => typeof entry === 'string') ? list : undefined;
  } catch {
    return undefined;
  }
}

function mtimeOrUndefined(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Newest mtime under `entry` (file or folder, recursively), skipping `skip` (absolute paths). */
function newestMtime(entry, skip) {
  if (skip.has(entry)) return 0;
  let stats;
  try {
    stats = statSync(entry);
  } catch {
    return 0;
  }
  let newest = stats.mtimeMs;
  if (stats.isDirectory()) {
    for (const name of readdirSync(entry)) newest = Math.max(newest, newestMtime(path.join(entry, name), skip));
  }
  return newest;
}

/**
 * 'current', 'stale' (built, but a source changed since), 'missing' (never built), or 'no-sources'
 * (an installation without the TypeScript sources: whatever is built is what there is).
 */
export function buildState(part, root = REPO_ROOT) {
  const spec = PARTS[part];
  const stamp = mtimeOrUndefined(path.join(root, spec.stamp));
  // Without the part's build configuration there is nothing to build from: an installed image has
  // core/runtime/ (this file) but no sources, and the image's dependency stage has neither.
  if (mtimeOrUndefined(path.join(root, spec.config)) === undefined) return 'no-sources';
  const sources = spec.sources.map((s) => path.join(root, s));
  if (stamp === undefined) return 'missing';
  const skip = new Set([path.join(root, spec.out)]);
  if (sources.some((s) => newestMtime(s, skip) > stamp)) return 'stale';
  if (spec.inputs === undefined) return 'current';
  // No record (a build from before it was kept, or a damaged one) or a recorded input that is gone
  // or newer: rebuild. A new file matters only once something imports it, which changes the importer.
  const inputs = recordedInputs(path.join(root, spec.inputs));
  if (inputs === undefined) return 'stale';
  return inputs.some((file) => (mtimeOrUndefined(path.join(root, file)) ?? Infinity) > stamp) ? 'stale' : 'current';
}
