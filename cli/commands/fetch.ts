/**
 * `ceremony fetch URL DIR`: an auditor's copy of a coordinator's published files, laid out for
 * `ceremony audit DIR` (core/publish/fetch-ceremony.ts), with the ceremony.json of the auditor's own
 * checkout. It does not audit: it prints the command to run next, and says when the ptau needs the
 * auditor's pin, which must come from a source they trust, never from the coordinator.
 */
import { Command } from 'commander';
import { fetchCeremony, type FetchCeremonyResult } from '../../core/publish/fetch-ceremony.ts';
import { withStderrProgress } from '../progress/with-stderr-progress.ts';
import { helpExamples, helpNotes } from './command-help.ts';
import { DEFAULT_AUDITOR_CONFIG } from '../../core/audit/auditor-config.ts';

/**
 * What to run next: the audit (left to the auditor), with the config fetched with, and the pins it needs
 * where the auditor's ceremony.json has none.
 */
function nextSteps(result: FetchCeremonyResult, dir: string, config: string): string[] {
  const withConfig = config === DEFAULT_AUDITOR_CONFIG ? '' : ` --config ${config}`;
  const lines = [`next: ceremony audit ${dir}${withConfig}${result.finalised ? '' : ' --in-progress'}`];
  if (!result.finalised) lines.push('the ceremony is not finalised: --in-progress audits what there is so far');
  if (result.unpinnedR1cs.length > 0)
    lines.push(
      `your ceremony.json pins no r1cs hash for ${result.unpinnedR1cs.join(', ')}: the audit needs ` +
        '--r1cs-hash CIRCUIT=BLAKE2B512 for each, the hash of the r1cs you compiled yourself from its sources',
    );
  if (!result.ptau.known && !result.ptau.pinnedByConfig)
    lines.push(
      `the ptau (${result.ptau.path}) is no known public file: the audit needs --ptau-hash BLAKE2B512, ` +
        'its hash taken from a source you trust (whoever made the file, or a file you made yourself), ' +
        'never from this coordinator',
    );
  return lines;
}

export function fetchCommand(): Command {
  return new Command('fetch')
    .description(
      "download every file a coordinator publishes into DIR, laid out for `ceremony audit`, with your checkout's " +
        'ceremony.json',
    )
    .argument('<url>', "the coordinator's address, e.g. https://ceremony.example")
    .argument('<dir>', 'a new or empty folder')
    .option(
      '--config <file>',
      'your own ceremony.json (the coordinator serves none): the ceremony served must agree with it, and each ' +
        'r1cs and the ptau must have the hashes it pins',
      DEFAULT_AUDITOR_CONFIG,
    )
    .option(
      '--resume',
      'complete an interrupted fetch into DIR: keys, r1cs, ptau and final files already there are kept, ' +
        'partial downloads removed',
    )
    .option('--quiet', 'no progress on stderr')
    .addHelpText(
      'after',
      helpNotes(
        '\nThen audit it: `ceremony audit DIR`, with `--ptau-hash HASH` for a ptau that is neither a known public\n' +
          'file nor pinned by your ceremony.json (its hash from a source you trust, never from the coordinator).\n' +
          'A coordinator serving other circuits than yours is refused (config.publication_mismatch), and an r1cs\n' +
          'or ptau other than the one your ceremony.json pins (r1cs.hash_mismatch, ptau.hash_mismatch).\n' +
          'Exit 0 fetched, 1 failed, 2 usage.',
      ),
    )
    .addHelpText(
      'after',
      helpExamples(
        ["a copy of a coordinator's published files, then its audit", 'ceremony fetch https://ceremony.example mirror'],
        ['the same fetch, interrupted, completed', 'ceremony fetch https://ceremony.example mirror --resume'],
      ),
    )
    .action(async (url: string, dir: string, options: { config: string; resume?: boolean; quiet?: boolean }) => {
      const result = await withStderrProgress(
        (progress) => fetchCeremony(url, dir, { configFile: options.config, resume: options.resume, progress }),
        { quiet: options.quiet },
      );
      const kept =
        (result.kept > 0 ? `; ${result.kept} already there kept` : '') +
        (result.partialRemoved > 0
          ? `; ${result.partialRemoved} partial download${result.partialRemoved === 1 ? '' : 's'} removed`
          : '');
      process.stdout.write(
        `fetched ${result.files} files (${(result.bytes / 1e6).toFixed(1)} MB) of ${result.ceremonyId} ` +
          `into ${result.dir}${kept}\n`,
      );
      for (const line of nextSteps(result, dir, options.config)) process.stdout.write(`${line}\n`);
    });
}
