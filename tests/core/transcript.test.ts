/** The transcript is append-only and hash-chained: any edit, drop or reorder is detected. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseTranscript, Transcript } from '../../core/transcript/transcript.ts';
import { isCoordinatorError } from '../../core/errors.ts';

const HASH = 'ab'.repeat(64);

async function sampleTranscript(): Promise<{ file: string; text: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'transcript-'));
  const file = path.join(dir, 'transcript.jsonl');
  const transcript = await Transcript.load(file, 'unit-test');
  await transcript.append([{ type: 'init', circuit: 'register', index: 0, circuitHash: HASH, fileHash: HASH }]);
  await transcript.append([
    {
      type: 'contribution',
      circuit: 'register',
      index: 1,
      contributor: 'alice',
      contributionHash: HASH,
      fileHash: HASH,
    },
    { type: 'contribution', circuit: 'register', index: 2, contributor: 'bob', contributionHash: HASH, fileHash: HASH },
  ]);
  return { file, text: await readFile(file, 'utf8'), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

function assertCorrupt(text: string, ceremonyId = 'unit-test'): void {
  assert.throws(
    () => parseTranscript(text, ceremonyId),
    (e: unknown) => isCoordinatorError(e, 'transcript.corrupt'),
  );
}

test('entries chain from a genesis bound to the ceremony id and reload intact', async () => {
  const { file, text, cleanup } = await sampleTranscript();
  const reloaded = await Transcript.load(file, 'unit-test');
  assert.equal(reloaded.entries.length, 3);
  assert.deepEqual(
    reloaded.entries.map((e) => e.seq),
    [0, 1, 2],
  );
  assert.equal(reloaded.entries[1]!.prevHash, reloaded.entries[0]!.hash);
  assertCorrupt(text, 'another-ceremony');
  await cleanup();
});

test('an edited, dropped, reordered or re-hashed-in-place entry is detected', async () => {
  const { text, cleanup } = await sampleTranscript();
  const lines = text.trim().split('\n');
  assertCorrupt(text.replace('"alice"', '"alicf"'));
  assertCorrupt([lines[0], lines[2]].join('\n'));
  assertCorrupt([lines[0], lines[2], lines[1]].join('\n'));
  const edited = JSON.parse(lines[1]!);
  edited.contributor = 'mallory';
  assertCorrupt([lines[0], JSON.stringify(edited), lines[2]].join('\n'));
  assertCorrupt(text.slice(0, -20));
  await cleanup();
});

test('appending rewrites the file atomically and leaves no temporary file', async () => {
  const { file, cleanup } = await sampleTranscript();
  const transcript = await Transcript.load(file, 'unit-test');
  await transcript.append([{ type: 'finalised', manifestHash: HASH }]);
  assert.deepEqual(await readdir(path.dirname(file)), ['transcript.jsonl']);
  assert.equal((await Transcript.load(file, 'unit-test')).entries.at(-1)!.type, 'finalised');
  await writeFile(file, 'not json\n');
  await assert.rejects(Transcript.load(file, 'unit-test'), /line 1: not valid JSON/);
  await cleanup();
});
