/**
 * minContributions in ceremony.json: validated once (an integer of at least 1, default 1), and
 * `ceremony finalise` refuses a chain below it, naming the circuit and its count, until the
 * chain has enough. (The coordinator's route: tests/server/min-contributions.test.ts; the audit:
 * tests/core/audit-trust.test.ts.)
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { newCeremonyDir, REGISTER_ONLY, TEST_BEACON, TEST_BEACON_ITERATIONS } from '../fixtures/ceremony-fixture.ts';
import { loadCeremonyConfig } from '../../core/config/ceremony-config.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { finaliseCeremony } from '../../core/finalise/finalise-ceremony.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { isCoordinatorError } from '../../core/errors.ts';

const dirs: string[] = [];

after(async () => {
  await releaseBn128();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function ceremonyDir(overrides: Record<string, unknown>): Promise<string> {
  const dir = await newCeremonyDir({ configOverrides: overrides });
  dirs.push(dir);
  return dir;
}

test('minContributions defaults to 1 and must be an integer of at least 1', async () => {
  const dir = await ceremonyDir(REGISTER_ONLY);
  assert.equal((await loadCeremonyConfig(dir)).minContributions, 1);
  for (const bad of [0, -1, 1.5, '2']) {
    const file = path.join(dir, 'ceremony.json');
    const config = JSON.parse(await readFile(file, 'utf8'));
    await writeFile(file, JSON.stringify({ ...config, minContributions: bad }));
    await assert.rejects(
      loadCeremonyConfig(dir),
      (error: unknown) => isCoordinatorError(error, 'config.invalid') && /minContributions: /.test(error.message),
      String(bad),
    );
  }
});

test('finalise refuses a chain below minContributions, naming it, and finalises once it has enough', async () => {
  const dir = await ceremonyDir({ ...REGISTER_ONLY, minContributions: 2 });
  await initCeremony(dir);
  await contributeLocally(dir, 'register', 'alice');
  const beacon = { beaconHex: TEST_BEACON, iterationsExp: TEST_BEACON_ITERATIONS };
  await assert.rejects(finaliseCeremony(dir, beacon), (error: unknown) => {
    assert.ok(isCoordinatorError(error, 'finalise.too_few_contributions'), String(error));
    assert.match(
      error.message,
      /^ceremony\.json requires at least 2 contributions per circuit before finalising; too few for: register \(1\)$/,
    );
    return true;
  });
  await contributeLocally(dir, 'register', 'bob');
  const result = await finaliseCeremony(dir, beacon);
  assert.deepEqual(
    result.circuits.map((c) => [c.circuit, c.contributions]),
    [['register', 2]],
  );
});
