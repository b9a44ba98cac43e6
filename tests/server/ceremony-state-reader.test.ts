/**
 * The server's cached view of the ceremony on disk: loaded once while the transcript stays the
 * same, loaded again as soon as a contribution is committed (the transcript is replaced by a
 * rename), and a corrupt transcript is reported on every read rather than cached.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { CeremonyStateReader } from '../../server/ceremony-state-reader.ts';

let dataDir: string;

before(async () => {
  dataDir = await newCeremonyDir({ init: true });
});

after(() => cleanUp(dataDir));

test('the state is loaded once while the transcript is unchanged, and again after a commit', async () => {
  const reader = new CeremonyStateReader(dataDir);
  const first = await reader.read();
  const again = await reader.read();
  assert.equal(again, first, 'the same state object is served');
  assert.equal(reader.loads, 1);
  assert.equal(first.chains.get('register')!.headIndex, 0);

  await contributeLocally(dataDir, 'register', 'alice');
  const afterCommit = await reader.read();
  assert.equal(reader.loads, 2);
  assert.equal(afterCommit.chains.get('register')!.headIndex, 1);
  assert.equal((await reader.read()).chains.get('register')!.headIndex, 1);
  assert.equal(reader.loads, 2);
});

test('a corrupt transcript is refused on every read, not cached; a repaired one is read again', async () => {
  const reader = new CeremonyStateReader(dataDir);
  await reader.read();
  const transcriptPath = ceremonyPaths(dataDir).transcriptPath;
  const good = await readFile(transcriptPath, 'utf8');
  await writeFile(transcriptPath, good.replace('"alice"', '"mallory"'));
  try {
    const loadsBefore = reader.loads;
    await assert.rejects(reader.read(), { code: 'transcript.corrupt' });
    await assert.rejects(reader.read(), { code: 'transcript.corrupt' });
    // A cached rejected promise would also reject twice: each read must have loaded again.
    assert.equal(reader.loads, loadsBefore + 2, 'the failed load was cached');
  } finally {
    await writeFile(transcriptPath, good);
  }
  assert.equal((await reader.read()).chains.get('register')!.headIndex, 1);
});
