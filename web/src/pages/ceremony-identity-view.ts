/**
 * The public page's ceremony identity (/ceremony/#identity): the hash of the transcript's last entry,
 * its hash chain recomputed here from the ceremony's genesis, and the commands that check it from
 * one's own checkout: `ceremony audit DIR --identifier HASH`, which refuses any other transcript, and,
 * once finalised, `ceremony verify-deployment … --ceremony DIR` against the deployed contracts, whose
 * code then pins one final key, so one history. Two readers who see the same identifier here and
 * compare it out of band (before anything is deployed) know they are shown one ceremony, not two
 * views of it. The page shows the hash and never asks anyone to trust it: the commands check it.
 * A transcript with format-1 entries is said to need --allow-legacy-transcript.
 */
import type { CeremonyView, TranscriptView } from '../api/api-types.ts';
import { checkPublicTranscript, type PublicTranscript } from '../../../core/receipts/public-transcript.ts';
import { describeLegacyKeys, transcriptFormats } from '../../../core/transcript/legacy-transcript.ts';
import { copyButton, h } from '../ui/element.ts';

/** The commands, as the page shows and copies them: run from the reader's checkout, in `dir`. */
function identityCommands(identifier: string, dir: string, finalised: boolean): string[] {
  return [
    `node bin/ceremony.js audit ${dir} --identifier ${identifier}${finalised ? '' : ' --in-progress'}`,
    ...(finalised
      ? [`node bin/ceremony.js verify-deployment RPC ${dir}/final/manifest.json verifiers.json --ceremony ${dir}`]
      : []),
  ];
}

function checked(ceremony: CeremonyView, transcript: TranscriptView): PublicTranscript | Error {
  try {
    return checkPublicTranscript(ceremony.id, transcript.entries, 'this coordinator');
  } catch (error) {
    return error as Error;
  }
}

/** The identity card's contents for `dir`, the folder the page's fetch command fetches into. */
export function renderIdentity(ceremony: CeremonyView, transcript: TranscriptView, dir: string): HTMLElement {
  const result = checked(ceremony, transcript);
  if (result instanceof Error) {
    return h(
      'div',
      { id: 'identity', 'data-state': 'corrupt' },
      h('p', { class: 'status-failed' }, `No ceremony identifier: ${result.message}`),
    );
  }
  const identifier = result.identifier;
  if (!identifier)
    return h('div', { id: 'identity', 'data-state': 'empty' }, h('p', {}, 'No ceremony identifier yet: no entry.'));
  const commands = identityCommands(identifier.hash, dir, ceremony.finalised);
  const formats = transcriptFormats(result.entries);
  return h(
    'div',
    { id: 'identity', 'data-state': 'ready', 'data-identifier': identifier.hash },
    h('h3', {}, 'The ceremony’s identity'),
    h(
      'p',
      {},
      `The hash of the transcript’s last entry (entry ${identifier.seq}, ${identifier.type}), its chain recomputed ` +
        'in this page: it commits to every entry, so to every key section by section and to the manifest. ',
      h('strong', {}, 'Compare it with other people'),
      ' (before anything is deployed): one identifier, one ceremony. ' +
        (ceremony.finalised
          ? 'Then check it from your checkout: the audit refuses any other transcript, and verify-deployment ' +
            'checks the deployed contracts against the final keys it committed to, byte for byte.'
          : 'It changes with every entry until the ceremony is finalised.'),
    ),
    h('pre', { id: 'identity-hash', class: 'hash' }, identifier.hash),
    ...(formats.kind === 'current'
      ? []
      : [
          h(
            'p',
            { class: 'status-failed', id: 'identity-legacy' },
            `This transcript commits to ${describeLegacyKeys(formats)} by whole-file hash only (format 1): the ` +
              'audit and the receipt check refuse it unless run with --allow-legacy-transcript, and then say ' +
              'what it left unproven.',
          ),
        ]),
    h('pre', { id: 'identity-commands' }, commands.join('\n')),
    h(
      'div',
      { class: 'actions' },
      copyButton('Copy the identifier', () => identifier.hash),
    ),
  );
}
