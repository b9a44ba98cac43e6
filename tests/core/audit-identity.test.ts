/**
 * The transcript the audit holds itself to: one identity, and no downgrade.
 *  - `--identifier HASH` (the hash of the transcript's last entry, compared out of band): the
 *    ceremony of that identifier passes and says so; another view of it (a transcript that stops
 *    earlier, or goes on) fails with transcript.identifier_mismatch, saying which it is; a malformed
 *    identifier is a usage error.
 *  - A transcript of format 1 (whole-file hashes only) fails with transcript.legacy_format, one that
 *    mixes format-1 entries with format-2 ones with transcript.mixed_format; with
 *    --allow-legacy-transcript the legacy one passes, and the transcript finding and the verdict say
 *    what stayed unproven.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import type { TranscriptEntry } from '../../core/transcript/transcript.ts';
import { devPtauHash } from '../fixtures/ceremony-fixture.ts';
import { rewriteTranscript } from '../helpers/forge-transcript.ts';
import { runCli, type CliResult } from '../helpers/run-cli.ts';
import { joined } from '../helpers/joined-regex.ts';
import { twoCircuitCeremony } from '../helpers/two-circuit-ceremony.ts';

const fixture = twoCircuitCeremony();
const { copy } = fixture;
let entries: TranscriptEntry[];

async function audit(dir: string, ...options: string[]): Promise<CliResult> {
  const pins = ['--config', fixture.auditorConfig(), '--ptau-hash', await devPtauHash()];
  return runCli(['audit', dir, '--no-queue-log', '--quiet', ...pins, ...options]);
}

/** The entry as format 1 wrote it: no version, no section hashes. */
function asFormat1(entry: TranscriptEntry): TranscriptEntry {
  const { version: _version, ...rest } = entry as TranscriptEntry & { sectionHashes?: unknown };
  delete rest.sectionHashes;
  return rest as TranscriptEntry;
}

before(async () => {
  entries = (await readFile(ceremonyPaths((await fixture.ready()).dataDir).transcriptPath, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TranscriptEntry);
});

test('--identifier: the ceremony of that identifier passes, and the output says it was the one given', async () => {
  const last = entries.at(-1)!;
  const result = await audit(fixture.published.dataDir, '--identifier', last.hash.toUpperCase());
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /^transcript ok: .*; its identifier is the one given with --identifier$/m);
  assert.match(
    result.stdout,
    new RegExp(
      `^ceremony identifier: ${last.hash}\\n {2}\\(the hash of transcript entry ${last.seq}, its last: ` +
        'finalised; the one given with --identifier\\)$',
      'm',
    ),
  );
});

test('--identifier: another view of the ceremony fails (transcript.identifier_mismatch), saying which', async () => {
  // The identifier a reader compared before finalisation: the transcript has gone on since.
  const earlier = entries.at(-3)!;
  const grown = await audit(fixture.published.dataDir, '--identifier', earlier.hash);
  assert.equal(grown.code, 1, grown.stdout + grown.stderr);
  assert.match(
    grown.stdout,
    new RegExp(
      '^transcript FAIL: \\[transcript\\.identifier_mismatch\\] the published transcript is not the ceremony whose ' +
        `identifier you gave \\(--identifier ${earlier.hash}\\): it is the hash of entry ${earlier.seq} of ` +
        `${entries.length}: the transcript has 2 more since, and its identifier is now ${entries.at(-1)!.hash}$`,
      'm',
    ),
  );
  assert.doesNotMatch(grown.stdout, /^register /m, 'no chain is audited for another identity');
  // A second view the coordinator shows someone else: the same ceremony id, another history (here,
  // bob's register contribution left out of its record), which the identifier compared does not name.
  const other = await copy();
  await rewriteTranscript(other, (list) =>
    list.filter((e) => !(e.type === 'contribution' && e.circuit === 'register' && e.contributor === 'bob')),
  );
  const split = await audit(other, '--identifier', entries.at(-1)!.hash);
  assert.equal(split.code, 1, split.stdout + split.stderr);
  assert.match(
    split.stdout,
    joined(
      'm',
      /^transcript FAIL: \[transcript\.identifier_mismatch\] .*its identifier is [0-9a-f]{128} /,
      /\(the hash of entry \d+, its last\), and no entry has the hash given$/,
    ),
  );
  const malformed = await audit(fixture.published.dataDir, '--identifier', 'abc');
  assert.equal(malformed.code, 2);
  assert.match(malformed.stderr, /^error \[usage\.invalid_arguments\]: --identifier takes the ceremony identifier/m);
});

test('no downgrade: format 1 fails (transcript.legacy_format) unless allowed, saying what it leaves', async () => {
  const dir = await copy();
  await rewriteTranscript(dir, (list) => list.map(asFormat1));
  const refused = await audit(dir);
  assert.equal(refused.code, 1, refused.stdout + refused.stderr);
  assert.match(
    refused.stdout,
    new RegExp(
      '^transcript FAIL: \\[transcript\\.legacy_format\\] the published transcript is of format 1, from before ' +
        'section hashes: its entries commit to 8 keys \\(contribution 0 of register, contribution 0 of transact21, ' +
        'contribution 1 of register, contribution 1 of transact21 and 4 more\\) by whole-file hash only, .*' +
        'Audit it with --allow-legacy-transcript',
      'm',
    ),
  );
  assert.doesNotMatch(refused.stdout, /^register /m);

  const allowed = await audit(dir, '--allow-legacy-transcript');
  assert.equal(allowed.code, 0, allowed.stdout + allowed.stderr);
  assert.match(allowed.stdout, /^transcript ok: \d+ entries, hash chain intact; LEGACY \(format 1\), read because of/m);
  assert.match(
    allowed.stdout.trim().split('\n').at(-1)!,
    joined(
      '',
      /^audit passed; LEGACY transcript, read with --allow-legacy-transcript: 8 keys .* committed by whole-file /,
      /hash only \(format 1\): .*receipt check of them can NOT hold the bytes it reads to the transcript/,
    ),
  );
});

test('no downgrade: format-1 inits, then format-2 entries, fail (transcript.mixed_format)', async () => {
  const dir = await copy();
  await rewriteTranscript(dir, (list) => list.map((e) => (e.type === 'init' ? asFormat1(e) : e)));
  const refused = await audit(dir);
  assert.equal(refused.code, 1, refused.stdout + refused.stderr);
  assert.match(
    refused.stdout,
    new RegExp(
      '^transcript FAIL: \\[transcript\\.mixed_format\\] the published transcript mixes formats: entries of ' +
        'format 1 commit to 2 keys \\(contribution 0 of register, contribution 0 of transact21\\) by whole-file ' +
        'hash only, and format-2 entries follow them, .*\\(the check against contribution 0 would be skipped\\)',
      'm',
    ),
  );
});
