/** `ceremony check-fees`: checks the published fees against the pools and the relayer. */
import { Command, InvalidArgumentError, Option } from 'commander';
import { checkFees, DEFAULT_FEE_TIMEOUT_MS } from '../../core/fees/check-fees.ts';
import { readFeeSchedule } from '../../core/fees/fee-schedule.ts';
import { readFeeTargets } from '../../core/fees/fee-targets.ts';
import { renderFeeReport } from '../../core/fees/render-fee-report.ts';
import { helpExamples, helpNotes } from './command-help.ts';

const MAX_TIMEOUT_MS = 600_000;

function parseTimeoutMs(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_TIMEOUT_MS) {
    throw new InvalidArgumentError(`expected a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
  }
  return Number(text);
}

export function checkFeesCommand(): Command {
  return new Command('check-fees')
    .description('check the published fees against the pools (withdrawFeeBps) and the relayer (/quote, /gas/quote)')
    .argument('<targets.json>', '{"pools": [{"name", "rpcUrl", "address"}, …], "relayer": "<base URL>"}')
    .addOption(
      new Option('--schedule <file>', 'published fee schedule to compare with').default(
        undefined,
        'the one shipped, core/fees/published-fees.json',
      ),
    )
    .addOption(
      new Option('--timeout-ms <n>', 'bound of each RPC call and relayer request')
        .argParser(parseTimeoutMs)
        .default(DEFAULT_FEE_TIMEOUT_MS),
    )
    .addHelpText(
      'after',
      helpNotes(
        '\nPrints one line per claim: name, live value, published value, "match" or "MISMATCH"; reasons go to ' +
          'stderr.\n' +
          'Where a relayer answer differs, it is the current fee and the line says the schedule is out of date.\n' +
          'Exit status: 0 every claim matches, 1 any MISMATCH or unreadable value, 2 usage or input file error.',
      ),
    )
    .addHelpText(
      'after',
      helpExamples(['the shipped schedule against the live pools and relayer', 'ceremony check-fees targets.json']),
    )
    .action(async (targetsPath: string, options: { schedule?: string; timeoutMs: number }) => {
      const targets = await readFeeTargets(targetsPath);
      const schedule = await readFeeSchedule(options.schedule);
      const rendered = renderFeeReport(await checkFees({ targets, schedule, timeoutMs: options.timeoutMs }));
      process.stdout.write(rendered.stdout);
      process.stderr.write(rendered.stderr);
      process.exitCode = rendered.exitCode;
    });
}
