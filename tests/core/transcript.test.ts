/** The transcript is append-only and hash-chained: any edit, drop or reorder is detected. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { entryHash, genesisHash, parseTranscript, Transcript } from '../../core/transcript/transcript.ts';
import { isCoordinatorError } from '../../core/errors.ts';
import { chainsFromTranscript } from '../../core/ceremony/open-ceremony.ts';
import { checkPublicTranscript } from '../../core/receipts/public-transcript.ts';
import { refuseLegacyTranscript, transcriptFormats } from '../../core/transcript/legacy-transcript.ts';

const HASH = 'ab'.repeat(64);
const INIT = { type: 'init', circuit: 'register', index: 0, circuitHash: HASH, fileHash: HASH } as const;
const ALICE = {
  type: 'contribution',
  circuit: 'register',
  index: 1,
  contributor: 'alice',
  contributionHash: HASH,
  fileHash: HASH,
} as const;
const BEACON = {
  type: 'beacon',
  circuit: 'register',
  index: 2,
  contributionHash: HASH,
  fileHash: HASH,
  beacon: 'cd'.repeat(32),
  iterationsExp: 10,
} as const;
const FINALISED = { type: 'finalised', manifestHash: HASH } as const;
const SECTIONS = Object.fromEntries([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((id) => [String(id), HASH]));

async function sampleTranscript(): Promise<{ file: string; text: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'transcript-'));
  const file = path.join(dir, 'transcript.jsonl');
  const transcript = await Transcript.load(file, 'unit-test');
  await transcript.append([{ ...INIT, sectionHashes: SECTIONS }]);
  await transcript.append([
    { ...ALICE, sectionHashes: SECTIONS },
    { ...ALICE, index: 2, contributor: 'bob', sectionHashes: SECTIONS },
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
  const beacon = { type: 'beacon', circuit: 'register', index: 3, contributionHash: HASH, fileHash: HASH } as const;
  await transcript.append([
    { ...beacon, beacon: 'ab', iterationsExp: 10, sectionHashes: SECTIONS },
    { type: 'finalised', manifestHash: HASH },
  ]);
  assert.deepEqual(await readdir(path.dirname(file)), ['transcript.jsonl']);
  assert.equal((await Transcript.load(file, 'unit-test')).entries.at(-1)!.type, 'finalised');
  await writeFile(file, 'not json\n');
  await assert.rejects(Transcript.load(file, 'unit-test'), /line 1: not valid JSON/);
  await cleanup();
});

/** A transcript text of `entries` as written by hand (each given its sequence, chain and hash). */
function chained(entries: Array<Record<string, unknown>>, ceremonyId = 'unit-test'): string {
  let prevHash = genesisHash(ceremonyId);
  return entries
    .map((fields, seq) => {
      const unsigned = { time: '2026-01-01T00:00:00.000Z', ...fields, seq, prevHash };
      const entry = { ...unsigned, hash: entryHash(unsigned as never) };
      prevHash = entry.hash;
      return JSON.stringify(entry);
    })
    .join('\n');
}

/**
 * A format-2 transcript of `entries` (key entries given their section hashes), hash-chained as
 * append() writes it but without its order rules: append() refuses what the readers must refuse.
 */
function uncheckedTranscript(entries: object[]): string {
  const keyed = (entry: object): boolean =>
    !['finalised', 'beaconAnnouncement'].includes((entry as { type: string }).type);
  const format2 = entries.map((entry) => ({
    ...entry,
    version: 2,
    ...(keyed(entry) ? { sectionHashes: SECTIONS } : {}),
  }));
  return `${chained(format2)}\n`;
}

test('format 2: new entries carry version 2 and every key entry its ten section hashes', async () => {
  const { file, cleanup } = await sampleTranscript();
  const entries = (await Transcript.load(file, 'unit-test')).entries;
  assert.ok(entries.every((e) => e.version === 2 && 'sectionHashes' in e && e.sectionHashes !== undefined));
  assertCorrupt(chained([{ ...INIT, version: 2 }]));
  const { '7': _dropped, ...nine } = SECTIONS;
  assertCorrupt(chained([{ ...INIT, version: 2, sectionHashes: nine }]));
  assertCorrupt(chained([{ ...INIT, version: 2, sectionHashes: { ...SECTIONS, '11': HASH } }]));
  assertCorrupt(chained([{ ...INIT, sectionHashes: SECTIONS }]), 'unit-test');
  await cleanup();
});

test('nothing writes format 1: append stamps version 2, refuses a key entry without section hashes', async () => {
  const { file, text, cleanup } = await sampleTranscript();
  const transcript = await Transcript.load(file, 'unit-test');
  // What a caller outside the types could pass: an entry of format 1, whole-file hashes only.
  await assert.rejects(
    transcript.append([{ ...ALICE, index: 3, contributor: 'carol' } as never]),
    (e: unknown) =>
      isCoordinatorError(e, 'transcript.corrupt') &&
      /refusing to append a format-2 contribution entry without its section hashes/.test(e.message),
  );
  assert.equal(await readFile(file, 'utf8'), text, 'the file is as it was');
  const [written] = await transcript.append([
    { ...ALICE, index: 3, contributor: 'carol', sectionHashes: SECTIONS, version: 1 } as never,
  ]);
  assert.equal(written!.version, 2, 'the version a caller passes is not the one written');
  await cleanup();
});

test('legacy formats: a transcript of format 1, or format 1 then 2, is told apart from format 2', () => {
  const legacy = parseTranscript(chained([INIT, ALICE]), 'unit-test');
  const mixed = parseTranscript(chained([INIT, { ...ALICE, version: 2, sectionHashes: SECTIONS }]), 'unit-test');
  const current = parseTranscript(uncheckedTranscript([INIT, ALICE]), 'unit-test');
  assert.deepEqual(transcriptFormats(legacy), {
    kind: 'legacy',
    legacyKeys: 2,
    legacyKeyNames: ['contribution 0 of register', 'contribution 1 of register'],
  });
  assert.equal(transcriptFormats(mixed).kind, 'mixed');
  assert.deepEqual(transcriptFormats(current), { kind: 'current', legacyKeys: 0, legacyKeyNames: [] });
  for (const [entries, code, kind] of [
    [legacy, 'transcript.legacy_format', 'legacy'],
    [mixed, 'transcript.mixed_format', 'mixed'],
  ] as const) {
    assert.throws(
      () => refuseLegacyTranscript(entries, false, 'the transcript', 'Allow it.'),
      (e: unknown) => isCoordinatorError(e, code) && /Allow it\.$/.test(e.message),
    );
    assert.equal(refuseLegacyTranscript(entries, true, 'the transcript', 'Allow it.').kind, kind);
  }
  assert.equal(refuseLegacyTranscript(current, false, 'the transcript', 'Allow it.').kind, 'current');
});

test('format 1 (no version) is still read, upgraded by later entries, never downgraded', () => {
  assert.equal(parseTranscript(chained([INIT, ALICE]), 'unit-test').length, 2);
  const upgraded = chained([INIT, { ...ALICE, version: 2, sectionHashes: SECTIONS }]);
  assert.deepEqual(
    parseTranscript(upgraded, 'unit-test').map((e) => e.version),
    [undefined, 2],
  );
  assert.throws(
    () => parseTranscript(chained([{ ...INIT, version: 2, sectionHashes: SECTIONS }, ALICE]), 'unit-test'),
    /line 2: format 1 after an entry of format 2/,
  );
});

test('the finalised entry closes the transcript: once, last, after every chain begun has its beacon', () => {
  const sealed = [INIT, ALICE, BEACON];
  const refusal = (text: string): string => {
    try {
      parseTranscript(text, 'unit-test');
    } catch (error) {
      assert.ok(isCoordinatorError(error, 'transcript.corrupt'));
      return (error as Error).message;
    }
    return assert.fail('the transcript was read as sound');
  };
  const closed = uncheckedTranscript([...sealed, FINALISED]);
  assert.equal(parseTranscript(closed, 'unit-test').at(-1)!.type, 'finalised');
  const secondManifest = { ...FINALISED, manifestHash: 'cd'.repeat(64) };
  assert.match(
    refusal(uncheckedTranscript([...sealed, FINALISED, secondManifest])),
    /line 5: a finalised entry after the finalised entry/,
  );
  assert.match(
    refusal(uncheckedTranscript([INIT, ALICE, FINALISED, BEACON])),
    /line 3: the finalised entry comes before the beacon of register/,
  );
  const otherChain = { ...INIT, circuit: 'treeUpdate' };
  assert.match(refusal(uncheckedTranscript([...sealed, otherChain, FINALISED])), /beacon of treeUpdate/);
});

test('a beacon announcement: once, before any beacon, nothing contributed after it; both readers agree', async () => {
  const ANNOUNCED = { type: 'beaconAnnouncement', chainId: 31337, blockNumber: 120, iterationsExp: 10 } as const;
  // Each case through the coordinator's reader and the receipt check's (the page's), which must say the same.
  const refusals = (entries: object[]): string[] => {
    const text = uncheckedTranscript(entries);
    const raw = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    const messages: string[] = [];
    for (const read of [
      () => parseTranscript(text, 'unit-test'),
      () => checkPublicTranscript('unit-test', raw, 'here'),
    ]) {
      try {
        read();
      } catch (error) {
        assert.ok(isCoordinatorError(error, 'transcript.corrupt'), String(error));
        messages.push((error as Error).message);
      }
    }
    return messages;
  };
  const sound = [INIT, ALICE, ANNOUNCED, BEACON, FINALISED];
  assert.deepEqual(refusals(sound), []);
  const read = checkPublicTranscript(
    'unit-test',
    uncheckedTranscript(sound)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l)),
    'here',
  );
  assert.equal(read.beaconAnnouncement?.blockNumber, 120);
  assert.equal(read.chains.get('register')!.beacon?.seq, 3);
  const cases: Array<[object[], RegExp]> = [
    [[INIT, ALICE, ANNOUNCED, ANNOUNCED], /a second beacon announcement/],
    [[INIT, ALICE, BEACON, ANNOUNCED], /a beacon announcement after a beacon was applied/],
    [[INIT, ANNOUNCED, ALICE], /a contribution entry after the beacon announcement, which closes contributions/],
    [[ANNOUNCED, INIT], /an? init entry after the beacon announcement/],
    [
      [INIT, ALICE, ANNOUNCED, { ...BEACON, iterationsExp: 11 }],
      /hashed 2\^11 times where the announcement says 2\^10/,
    ],
    [[INIT, ALICE, ANNOUNCED, BEACON, FINALISED, ANNOUNCED], /after the finalised entry/],
  ];
  for (const [entries, expected] of cases) {
    const messages = refusals(entries);
    assert.equal(messages.length, 2, `both readers refuse ${String(expected)}`);
    for (const message of messages) assert.match(message, expected);
  }
  // append() refuses the same, before the file is touched.
  const dir = await mkdtemp(path.join(tmpdir(), 'transcript-'));
  const transcript = await Transcript.load(path.join(dir, 'transcript.jsonl'), 'unit-test');
  await transcript.append([{ ...INIT, sectionHashes: SECTIONS }, ANNOUNCED]);
  const before = await readFile(path.join(dir, 'transcript.jsonl'), 'utf8');
  await assert.rejects(
    transcript.append([{ ...ALICE, sectionHashes: SECTIONS }]),
    (error: unknown) =>
      isCoordinatorError(error, 'transcript.corrupt') &&
      /refusing to append a contribution entry after/.test(error.message),
  );
  assert.equal(await readFile(path.join(dir, 'transcript.jsonl'), 'utf8'), before);
  assert.equal(transcript.entries.length, 2);
  await rm(dir, { recursive: true, force: true });
});

test('a finalised entry while a configured circuit has no sealed chain is refused by the configuration', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'transcript-'));
  const transcript = await Transcript.load(path.join(dir, 'transcript.jsonl'), 'unit-test');
  const beacon = { type: 'beacon', circuit: 'register', index: 2, contributionHash: HASH, fileHash: HASH } as const;
  await transcript.append([
    { ...INIT, sectionHashes: SECTIONS },
    { ...ALICE, sectionHashes: SECTIONS },
    { ...beacon, beacon: 'ab', iterationsExp: 10, sectionHashes: SECTIONS },
    { type: 'finalised', manifestHash: HASH },
  ]);
  // Sound as a transcript (every chain it begins is sealed), not as this ceremony's: treeUpdate never began.
  const entries = parseTranscript(await readFile(path.join(dir, 'transcript.jsonl'), 'utf8'), 'unit-test');
  const config = (names: string[]): never => ({ circuits: names.map((name) => ({ name })) }) as never;
  assert.equal(chainsFromTranscript(config(['register']), entries).get('register')!.beacon?.index, 2);
  assert.throws(
    () => chainsFromTranscript(config(['register', 'treeUpdate']), entries),
    (e: unknown) =>
      isCoordinatorError(e, 'transcript.corrupt') &&
      /entry 3 finalises .* without a beacon for treeUpdate/.test(`${e}`),
  );
  await rm(dir, { recursive: true, force: true });
});
