/**
 * snarkjs's own `zkey new` of an r1cs on a ptau: the reference a test compares the kernel's
 * contribution 0 with, or the contribution 0 of a chain snarkjs builds. It is the same bytes for the
 * same inputs and costs snarkjs 0.5–1 s of CPU a test circuit, so it is made once and kept in the
 * fixture cache under the BLAKE2b-512 of both files and snarkjs's version (other bytes or another
 * snarkjs, another key). Treat it as read-only.
 */
import { readFileSync } from 'node:fs';
import { mkdir, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { hashBytes, hashFile } from '../../core/crypto/file-hash.ts';
import { FIXTURE_CACHE, REPO_ROOT } from '../fixtures/ceremony-fixture.ts';

const SNARKJS_VERSION: string = JSON.parse(
  readFileSync(path.join(REPO_ROOT, 'node_modules', 'snarkjs', 'package.json'), 'utf8'),
).version;

const quiet: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };

export async function snarkjsInitialKey(r1cs: string, ptau: string): Promise<string> {
  const inputs = hashBytes(`${await hashFile(r1cs)}\n${await hashFile(ptau)}\n`);
  const dir = path.join(FIXTURE_CACHE, `snarkjs-zkey-new-${SNARKJS_VERSION}`);
  const target = path.join(dir, `${inputs}.zkey`);
  const cached = await stat(target).then(
    () => true,
    () => false,
  );
  if (!cached) {
    await mkdir(dir, { recursive: true });
    const making = path.join(dir, `.making-${process.pid}-${path.basename(target)}`);
    await snarkjs.zKey.newZKey(r1cs, ptau, making, quiet);
    // Whole or not at all: a test process beside this one reads it only once renamed.
    await rename(making, target);
  }
  return target;
}
