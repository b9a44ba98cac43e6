/**
 * The list of known public ptau files (core/ptau/known-ptau-files.json) is snarkjs's README table
 * as installed: every power from 8 to 28 once, each file's name, URL and BLAKE2b-512 as published
 * there, so a typo in the list cannot pin the wrong file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { knownPtauFile, knownPtauList } from '../../core/ptau/known-ptau-files.ts';

test('the known ptau list is the table of the installed snarkjs README, powers 8 to 28', async () => {
  const readme = path.join(path.dirname(createRequire(import.meta.url).resolve('snarkjs')), '..', 'README.md');
  const text = await readFile(readme, 'utf8');
  const rows = [
    ...text.matchAll(
      new RegExp(
        String.raw`\|\s+(\d+)\s+\|\s+\S+\s+\|\s+` +
          String.raw`\[(powersOfTau28_hez_final(?:_\d+)?\.ptau)\]\((https:\/\/[^)]+)\)` +
          String.raw`\s+\|\s+([0-9a-f]{128})\s+\|`,
        'g',
      ),
    ),
  ];
  const fromReadme = rows.map(([, power, file, url, blake2b512]) => ({ power: Number(power), file, url, blake2b512 }));
  assert.equal(fromReadme.length, 21);
  assert.deepEqual(knownPtauList().files, fromReadme);
  assert.deepEqual(
    knownPtauList().files.map((f) => f.power),
    Array.from({ length: 21 }, (_, i) => i + 8),
  );
  // The power-28 file's hash also appears on its own in the README, as "its blake2b hash".
  assert.match(text, new RegExp(`blake2b hash is:\\s+${knownPtauList().files.at(-1)!.blake2b512}`));
});

test('a ptau is found by its hash, in any case; any other hash is not', () => {
  const hez18 = knownPtauList().files.find((f) => f.power === 18)!;
  assert.equal(knownPtauFile(hez18.blake2b512.toUpperCase())?.file, 'powersOfTau28_hez_final_18.ptau');
  assert.equal(knownPtauFile('00'.repeat(64)), undefined);
});
