/**
 * No downgrade: what a transcript's formats let a check prove, and the refusal of format 1 where it
 * proves less. Shared by the audit, `ceremony verify-receipt` and the public page (isomorphic: no
 * `node:` imports).
 *
 * A format-1 entry (no `version`) commits to its key by whole-file hash only: a check that reads a
 * key by byte ranges cannot hold those bytes to the transcript, and cannot compare a key's fixed
 * sections with contribution 0's section hashes. A coordinator free to write format 1 would pick it
 * to prove the least (a final key whose IC was altered passes such a check), so a new ceremony
 * writes format 2 only (transcript.ts), and every reader refuses format-1 entries, a transcript of
 * them (`transcript.legacy_format`) or one that mixes them with format-2 entries
 * (`transcript.mixed_format`), unless the reader asks for it (--allow-legacy-transcript), and then
 * says what stayed unproven.
 */
import { CoordinatorError } from '../errors.ts';
import { BEACON_ANNOUNCEMENT, entryVersion } from './transcript-format.ts';

export interface TranscriptFormats {
  /** `current`: format 2 throughout (or empty); `legacy`: format 1 throughout; `mixed`: format 1, then 2. */
  kind: 'current' | 'legacy' | 'mixed';
  /** Format-1 entries that name a key (init, contribution, beacon): committed by whole-file hash only. */
  legacyKeys: number;
  /** The keys of those entries, as messages name them ("contribution 0 of register"), the first few. */
  legacyKeyNames: string[];
}

/** How many keys a message names before it says "and N more". */
const NAMED_KEYS = 4;

interface FormatEntry {
  type: string;
  version?: number;
  circuit?: unknown;
  index?: unknown;
}

const keyName = (entry: FormatEntry): string =>
  entry.type === 'beacon'
    ? `the final key of ${String(entry.circuit)}`
    : `contribution ${String(entry.index)} of ${String(entry.circuit)}`;

/** The formats of `entries` (parsed, in order; their order rules are the parser's). */
export function transcriptFormats(entries: readonly FormatEntry[]): TranscriptFormats {
  const legacy = entries.filter((entry) => entryVersion(entry) < 2);
  const keys = legacy.filter((entry) => entry.type !== 'finalised' && entry.type !== BEACON_ANNOUNCEMENT);
  const kind = legacy.length === 0 ? 'current' : legacy.length === entries.length ? 'legacy' : 'mixed';
  return { kind, legacyKeys: keys.length, legacyKeyNames: keys.slice(0, NAMED_KEYS).map(keyName) };
}

/** "contribution 0 of register, contribution 0 of transact21 and 3 more". */
function namedKeys(formats: TranscriptFormats): string {
  const more = formats.legacyKeys - formats.legacyKeyNames.length;
  return formats.legacyKeyNames.join(', ') + (more > 0 ? ` and ${more} more` : '');
}

/** The keys a transcript commits to by whole-file hash only, for a verdict: "2 keys (contribution 0 of …)". */
export function describeLegacyKeys(formats: TranscriptFormats): string {
  return `${formats.legacyKeys} key${formats.legacyKeys === 1 ? '' : 's'} (${namedKeys(formats)})`;
}

/**
 * The transcript's formats, refused unless format 2 throughout or `allowLegacy`: `transcript.legacy_format`
 * for a format-1 transcript, `transcript.mixed_format` for format-1 entries followed by format-2 ones.
 * `source` names the transcript ("the transcript of the publication ./ceremony"), `remedy` says how to
 * check it anyway ("audit it with --allow-legacy-transcript").
 */
export function refuseLegacyTranscript(
  entries: readonly FormatEntry[],
  allowLegacy: boolean,
  source: string,
  remedy: string,
): TranscriptFormats {
  const formats = transcriptFormats(entries);
  if (formats.kind === 'current' || allowLegacy) return formats;
  const keys = describeLegacyKeys(formats);
  const proves =
    'a check cannot hold the bytes it reads of them to the transcript, nor compare their fixed sections ' +
    "(IC, A, B, the coefficients) and α, β, γ with contribution 0's";
  if (formats.kind === 'legacy') {
    throw new CoordinatorError(
      'transcript.legacy_format',
      `${source} is of format 1, from before section hashes: its entries commit to ${keys} by whole-file hash ` +
        `only, so ${proves}; a new ceremony never writes it. ${remedy}`,
    );
  }
  throw new CoordinatorError(
    'transcript.mixed_format',
    `${source} mixes formats: entries of format 1 commit to ${keys} by whole-file hash only, and format-2 entries ` +
      `follow them, so ${proves} (the check against contribution 0 would be skipped). ${remedy}`,
  );
}
