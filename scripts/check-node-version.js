// npm's `preinstall`: stops `npm install` (and `npm ci`) on a Node older than package.json's
// engines.node, printing the line that puts Node 24 first on PATH, rather than npm's warning and an
// install that goes on to build native modules for the wrong Node. Plain JavaScript with nothing
// newer than Node 14 can run, since its whole point is to run on an old Node.
//
// npm runs a project's own preinstall after the dependencies are placed and their install scripts
// have run, so a native module may already have been built for the old Node: the message says to
// run `npm rebuild` with the new one.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const FETCH_NODE = 'eval "$(scripts/fetch-node.sh)"';

/** The major version `engines.node` (`>=N`) requires; throws on any other form. */
export function requiredNodeMajor(engines) {
  const match = /^>=\s*(\d+)(?:\.0\.0)?$/.exec(String(engines ?? '').trim());
  if (!match) throw new Error(`package.json's engines.node must be ">=N", not ${JSON.stringify(engines)}`);
  return Number(match[1]);
}

/** What to print when `version` (process.version) is older than `required`; undefined when it is not. */
export function nodeVersionProblem(version, required) {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (major >= required) return undefined;
  return [
    `This project needs Node ${required} or later; this is Node ${version}. Put Node ${required} first on PATH`,
    '(from the npm registry, hash pinned) and install again:',
    '',
    `  ${FETCH_NODE}`,
    '  npm rebuild && npm install',
    '',
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const problem = nodeVersionProblem(process.version, requiredNodeMajor(manifest.engines?.node));
  if (problem) {
    process.stderr.write(problem);
    process.exit(1);
  }
}
