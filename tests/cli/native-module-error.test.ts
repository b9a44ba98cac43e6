/**
 * A native module Node cannot load (ERR_DLOPEN_FAILED: better-sqlite3 built for another Node) is
 * said as such, with `npm rebuild` to run, wherever it is first loaded: here through the real
 * command, whose first SQLite is a kernel lock (which used to blame the filesystem's locks).
 * Node's loader is real: a preload makes it open a file that is no shared library in place of
 * better-sqlite3's, which fails as a module built for another Node or platform does.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runCli } from '../helpers/run-cli.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { joined } from '../helpers/joined-regex.ts';
import { nativeModuleError } from '../../core/runtime/native-module-error.ts';

let dir: string;
let junk: string;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'native-module-'));
  junk = path.join(dir, 'better_sqlite3.node');
  await writeFile(junk, 'this is not a shared library\n');
});
after(() => cleanUp(dir));

/** The error Node's own loader raises for a file it cannot load. */
function realDlopenFailure(): Error {
  try {
    process.dlopen({ exports: {} }, junk);
  } catch (error) {
    return error as Error;
  }
  throw new Error('the junk module loaded');
}

test('the mapping: a failed load, itself or as the cause of another error, is runtime.native_module_mismatch', () => {
  const failure = realDlopenFailure();
  assert.equal((failure as NodeJS.ErrnoException).code, 'ERR_DLOPEN_FAILED');
  for (const thrown of [failure, new Error('cannot take the lock', { cause: failure })]) {
    const mapped = nativeModuleError(thrown);
    assert.equal(mapped?.code, 'runtime.native_module_mismatch');
    assert.match(mapped.message, /run `npm rebuild` in the project folder with this Node/);
    assert.ok(!mapped.message.includes(dir), 'no path in the message');
  }
  // Node's words for a module built for another Node name both versions; the message keeps them.
  const otherNode = Object.assign(
    new Error(
      "The module '/srv/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\n" +
        'was compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of ' +
        'Node.js requires\nNODE_MODULE_VERSION 137. Please try re-compiling or re-installing\nthe module.',
    ),
    { code: 'ERR_DLOPEN_FAILED' },
  );
  assert.match(
    nativeModuleError(otherNode)!.message,
    joined(
      '',
      /^better-sqlite3 was built for another version of Node /,
      /\(module version 115; Node [\d.]+ needs 137\): run `npm rebuild`/,
    ),
  );
  assert.equal(nativeModuleError(new Error('SQLITE_BUSY')), undefined);
  assert.equal(nativeModuleError(Object.assign(new Error('x'), { code: 'ENOENT' })), undefined);
});

test('the real command says to run npm rebuild, not that the folder lacks POSIX locks', async () => {
  const preload = path.join(dir, 'swap-better-sqlite3.mjs');
  await writeFile(
    preload,
    'const dlopen = process.dlopen;\n' +
      'process.dlopen = (module, file, ...rest) =>\n' +
      `  dlopen(module, file.endsWith('better_sqlite3.node') ? ${JSON.stringify(junk)} : file, ...rest);\n`,
  );
  const out = path.join(dir, 'dev.ptau');
  const result = await runCli(['dev-ptau', '--power', '4', out], {
    env: { NODE_OPTIONS: `--import ${pathToFileURL(preload).href}` },
  });
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stderr,
    joined(
      'm',
      /^error \[runtime\.native_module_mismatch\]: /,
      /better_sqlite3\.node could not be loaded by Node .*: run `npm rebuild`/,
    ),
  );
  assert.doesNotMatch(result.stderr, /POSIX locks|unexpected error/);
  assert.ok(!existsSync(out), 'nothing written');
});
