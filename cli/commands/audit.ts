import { Command } from 'commander';
import { auditCeremony } from '../../core/audit/audit-ceremony.ts';
import { withStderrProgress } from '../progress/with-stderr-progress.ts';

export function auditCommand(): Command {
  return new Command('audit')
    .description('re-verify a published ceremony folder from its files alone: every link, every final key, the transcript and the manifest')
    .argument('<dir>', 'published ceremony folder (ceremony.json, circuits, ptau, chains, transcript, final)')
    .option('--ptau <file>', 'the powers of tau, for a publication made without it (checked against its ptau-source.json)')
    .option('--quiet', 'no progress lines on stderr')
    .action(async (dir: string, options: { quiet?: boolean; ptau?: string }) => {
      const report = await withStderrProgress((progress) => auditCeremony(dir, progress, { ptauPath: options.ptau }), { quiet: options.quiet });
      for (const finding of report.findings) {
        process.stdout.write(`${finding.subject} ${finding.ok ? 'ok' : 'FAIL'}: ${finding.summary}\n`);
      }
      const failures = report.findings.filter((f) => !f.ok).length;
      process.stdout.write(failures === 0 ? 'audit passed\n' : `audit FAILED: ${failures} problem${failures === 1 ? '' : 's'}\n`);
      if (failures > 0) process.exitCode = 1;
    });
}
