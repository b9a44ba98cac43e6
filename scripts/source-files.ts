/**
 * The source files the lint checkers read (check-unused-exports, check-import-cycles,
 * check-function-length), found and resolved one way for all three: a checker that walked the tree
 * differently would pass files another one checks.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..');
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'fixtures-cache']);

/** Repo-relative TypeScript and JavaScript files under `dir` (none when the checkout has no such folder). */
export function sourceFiles(dir: string, pattern = /\.(ts|mts|js|mjs)$/): string[] {
  let entries;
  try {
    entries = readdirSync(path.join(ROOT, dir), { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    if (SKIPPED_FOLDERS.has(entry.name)) return [];
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(relative, pattern);
    return pattern.test(entry.name) ? [relative] : [];
  });
}

/** The file a relative specifier of `from` names among `known`; undefined for a package or an unknown file. */
export function resolveSpecifier(known: ReadonlySet<string>, from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  // A compiled name (./x.js) in the sources stands for its TypeScript file.
  for (const candidate of [target, target.replace(/\.js$/, '.ts'), target.replace(/\.mjs$/, '.mts')]) {
    if (known.has(candidate)) return candidate;
  }
  return undefined;
}
