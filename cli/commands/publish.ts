import { Command } from 'commander';
import { publishCeremony } from '../../core/publish/publish-ceremony.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { withStderrProgress } from '../progress/with-stderr-progress.ts';
import { helpExamples, helpNotes } from './command-help.ts';

export function publishCommand(): Command {
  return new Command('publish')
    .description(
      'write exactly the public files of a ceremony (never state/ or ' +
        'uploads/) to a new folder or .tar.gz, with SHA256SUMS, for `ceremony audit`',
    )
    .argument('<dir>', 'ceremony data folder (holds ceremony.json)')
    .argument('<out>', 'a new folder, or a file ending in .tar.gz or .tgz; refused if it exists')
    .option(
      '--without-ptau',
      'leave the (large) ptau out; record its path, size and hashes in ptau-source.json instead',
    )
    .option(
      '--ptau-source <url>',
      'with --without-ptau: where auditors can download the ptau (recorded in ptau-source.json)',
    )
    .addHelpText(
      'after',
      helpNotes(
        '\nAudit the result with `ceremony audit OUT` (a tarball: after ' +
          'extracting it; it holds one folder named after it).\nWithout the ' +
          'ptau: `ceremony audit OUT --ptau FILE`, FILE checked against the recorded hash.',
      ),
    )
    .addHelpText(
      'after',
      helpExamples(
        ['a tarball for auditors, the ptau in it', 'ceremony publish ceremony-data ceremony.tar.gz'],
        [
          'a folder without the ptau, saying where to get it',
          'ceremony publish ceremony-data published --without-ptau \\\n--ptau-source https://example.org/pot.ptau',
        ],
      ),
    )
    .action(async (dir: string, out: string, options: { withoutPtau?: boolean; ptauSource?: string }) => {
      if (options.ptauSource !== undefined && !options.withoutPtau) {
        throw new CoordinatorError(
          'usage.invalid_arguments',
          '--ptau-source is recorded only for a publication made with --without-ptau',
        );
      }
      const result = await withStderrProgress((progress) =>
        publishCeremony(dir, out, { withoutPtau: options.withoutPtau, ptauSource: options.ptauSource, progress }),
      );
      process.stdout.write(
        `published ${result.files.length} files (${(result.bytes / 1e6).toFixed(1)} MB) to ${result.out}\n`,
      );
      if (result.ptau === 'recorded')
        process.stdout.write(
          'the ptau was left out: its path, size and hashes are in ptau-source.json; audit with --ptau FILE\n',
        );
    });
}
