/**
 * `ceremony backup [--data DIR] OUT`: a consistent copy of a ceremony, its coordinator running or
 * not, to a new folder that is itself a data folder (core/data-folder/backup-ceremony.ts says what
 * is copied, how it is made consistent, and what is left out). The coordinator's database and its
 * receipt key are taken where `ceremony serve` takes them (DATABASE_FILE, RECEIPT_KEY_FILE), and put
 * at their default places in OUT. Progress on stderr; on stdout what was written, and which files
 * are secret. Restoring: docs/operations.md.
 */
import { Command, Option } from 'commander';
import { backupCeremony } from '../../core/data-folder/backup-ceremony.ts';
import { helpExamples, helpNotes } from './command-help.ts';
import { dataDirOption } from './shared-options.ts';
import { withStderrProgress } from '../progress/with-stderr-progress.ts';

const SECRET_WORDS: Record<string, string> = {
  'state/receipt-key.pem': 'the receipt signing key',
  'state/link-challenge.seed': "the link check's secret seed",
};

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

export function backupCommand(): Command {
  return new Command('backup')
    .description(
      'copy a ceremony consistently while its coordinator runs (database, transcript, chains, state and ' +
        'the receipt signing key) to a new folder that a coordinator can serve again',
    )
    .argument('<out>', 'a new folder (refused if it exists)')
    .addOption(dataDirOption())
    .addOption(
      new Option(
        '--link-dest <dir>',
        'an earlier backup of this ceremony: files that did not change are hard-linked from it, not copied',
      ),
    )
    .addHelpText(
      'after',
      helpNotes(
        '\nThe coordinator may keep serving: its commits wait a moment while the transcript is read and the\n' +
          'database copied. OUT holds the receipt signing key (mode 0600): keep it as private as the server.\n' +
          'To restore: stop the coordinator, copy OUT into place (cp -a OUT DATA) and start it on DATA\n' +
          '(docs/operations.md, backups and restoring).',
      ),
    )
    .addHelpText(
      'after',
      helpExamples(
        ['a first backup of the running ceremony', 'ceremony backup --data /data /backups/first'],
        [
          'the next ones, hard-linking what did not change',
          'ceremony backup --data /data --link-dest /backups/latest \\\n' + '/backups/$(date -u +%Y%m%dT%H%M%SZ)',
        ],
      ),
    )
    .action(async (out: string, options: { data: string; linkDest?: string }) => {
      const result = await withStderrProgress((progress) =>
        backupCeremony(options.data, out, {
          databaseFile: process.env.DATABASE_FILE || undefined,
          receiptKeyFile: process.env.RECEIPT_KEY_FILE || undefined,
          linkDest: options.linkDest,
          progress,
        }),
      );
      const { record } = result;
      const linked = options.linkDest ? `, ${result.linked} linked from ${options.linkDest}` : '';
      process.stdout.write(
        `backed up ${record.ceremony} to ${result.out}: ${record.files.length} files, ${megabytes(result.bytes)} ` +
          `(${megabytes(result.copiedBytes)} copied${linked})\n` +
          `transcript: ${record.transcript.entries} entries, the last ${record.transcript.lastHash.slice(0, 16)}…\n` +
          (record.database
            ? `database: ${record.database.path} (SQLite online backup, ${megabytes(record.database.bytes)})\n`
            : 'database: none (no coordinator has served this folder)\n'),
      );
      for (const file of record.secret)
        process.stdout.write(`SECRET (mode 0600): ${file}, ${SECRET_WORDS[file] ?? 'private state'}\n`);
      if (record.secret.length > 0)
        process.stdout.write('keep this backup as private as the coordinator: whoever has it can sign receipts\n');
    });
}
