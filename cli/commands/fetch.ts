/**
 * `ceremony fetch URL DIR`: an auditor's copy of a coordinator's published files, laid out for
 * `ceremony audit DIR` (core/publish/fetch-ceremony.ts), with the ceremony.json of the auditor's own
 * checkout. It does not audit: it prints the command to run next, and says when the ptau needs the
 * auditor's pin, which must come from a source they trust, never from the coordinator.
 */
import { Command } from 'commander';
import { fetchCeremony, type FetchCeremonyResult } from '../../core/publish/fetch-ceremony.ts';
import { withStderrProgress } from '../progress/with-stderr-progress.ts';

const DEFAULT_CONFIG = 'ceremony-data/ceremony.json';

/** What to run next: the audit (left to the auditor), and the ptau pin it needs when the ptau is no public file. */
function nextSteps(result: FetchCeremonyResult, dir: string): string[] {
  const lines = [`next: ceremony audit ${dir}${result.finalised ? '' : ' --in-progress'}`];
  if (!result.finalised) lines.push('the ceremony is not finalised: --in-progress audits what there is so far');
  if (!result.ptau.known)
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
    .option('--config <file>', 'your own ceremony.json (the coordinator serves none)', DEFAULT_CONFIG)
    .option(
      '--resume',
      'complete an interrupted fetch into DIR: keys, r1cs, ptau and final files already there are kept, ' +
        'partial downloads removed',
    )
    .option('--quiet', 'no progress on stderr')
    .addHelpText(
      'after',
      '\nThen audit it: `ceremony audit DIR`, with `--ptau-hash HASH` for a ptau that is no known public file\n' +
        '(its hash from a source you trust, never from the coordinator). Exit 0 fetched, 1 failed, 2 usage.',
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
      for (const line of nextSteps(result, dir)) process.stdout.write(`${line}\n`);
    });
}
