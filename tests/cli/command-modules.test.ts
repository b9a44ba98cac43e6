/**
 * What a command loads before it does anything: viem (about 350 modules, 0.6 s of CPU) only once a
 * command reaches the network. `--help` of the three commands that can read a chain, and a usage
 * error, never load it. Traced with a module hook preloaded into the real command (NODE_OPTIONS).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cleanUp } from '../helpers/clean-up.ts';
import { runCli } from '../helpers/run-cli.ts';

let dir: string;
let preload: string;
let log: string;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'command-modules-'));
  log = path.join(dir, 'resolved.log');
  // The hooks run on their own thread: each resolved URL is appended to the log there.
  await writeFile(
    path.join(dir, 'hooks.mjs'),
    "import { appendFileSync } from 'node:fs';\n" +
      'export async function resolve(specifier, context, next) {\n' +
      '  const resolved = await next(specifier, context);\n' +
      `  appendFileSync(${JSON.stringify(log)}, resolved.url + '\\n');\n` +
      '  return resolved;\n}\n',
  );
  await writeFile(
    path.join(dir, 'preload.mjs'),
    "import { register } from 'node:module';\n" +
      `register(${JSON.stringify(pathToFileURL(path.join(dir, 'hooks.mjs')).href)});\n`,
  );
  preload = pathToFileURL(path.join(dir, 'preload.mjs')).href;
});

after(() => cleanUp(dir));

async function modulesLoadedBy(args: string[]): Promise<{ code: number | null; urls: string[] }> {
  await writeFile(log, '');
  const result = await runCli(args, { env: { NODE_OPTIONS: `--import ${preload}` } });
  return { code: result.code, urls: (await readFile(log, 'utf8')).split('\n').filter(Boolean) };
}

test('--help of the commands that can read a chain, and their usage errors, load no viem module', async () => {
  for (const args of [
    ['check-fees', '--help'],
    ['verify-receipt', '--help'],
    ['verify-deployment', '--help'],
    ['verify-deployment', '--rpc', 'not a url'],
  ]) {
    const { code, urls } = await modulesLoadedBy(args);
    assert.ok(code === 0 || code === 2, `ceremony ${args.join(' ')} exited ${code}`);
    assert.ok(
      urls.some((url) => url.includes('/node_modules/commander/')),
      `the trace saw the command's modules (${urls.length} resolved)`,
    );
    const viem = urls.filter((url) => url.includes('/node_modules/viem/'));
    assert.deepEqual(viem.slice(0, 3), [], `ceremony ${args.join(' ')} loaded viem (${viem.length} modules)`);
  }
});
