/**
 * What an entry of the sources (`core/kernel/*-thread.mjs`, `worker/embedded-verifier-entry.js`)
 * loads: the module's compiled build in dist/ when dist/ is current with the sources (the rule
 * bin/ceremony.js applies to the whole app; current means no source is newer than the build, so
 * it is the same code), or else its TypeScript through tsx, registered here. Through tsx, a body
 * costs a thread about 0.4 s of CPU and the embedded verifier about 0.6 s, and the tests start
 * hundreds of them. Plain JavaScript: it runs before anything is compiled.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildState, REPO_ROOT } from './build-state.js';

/** `sourceUrl`: a TypeScript module of the repository at `root` (this one unless a test says), as a file: URL. */
export async function importCompiledOrSource(sourceUrl, root = REPO_ROOT) {
  if (buildState('dist', root) === 'current') {
    const relative = path.relative(root, fileURLToPath(sourceUrl)).replace(/\.ts$/, '.js');
    return import(pathToFileURL(path.join(root, 'dist', relative)).href);
  }
  const { register } = await import('tsx/esm/api');
  register();
  return import(sourceUrl.href);
}
