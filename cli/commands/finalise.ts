import { Command, Option } from 'commander';
import { finaliseCeremony } from '../../core/finalise/finalise-ceremony.ts';
import { DEFAULT_CONFIRMATIONS } from '../../core/finalise/beacon-announcement.ts';
import { dataDirOption, parseWholeNumber } from './shared-options.ts';
import { withStderrProgress } from '../progress/with-stderr-progress.ts';
import { helpExamples, helpNotes } from './command-help.ts';

export function finaliseCommand(): Command {
  return new Command('finalise')
    .description(
      'apply the random beacon to every head; write final keys, verification ' +
        'keys, Solidity verifiers and the delta manifest',
    )
    .option(
      '--rpc <url>',
      'a JSON-RPC endpoint of the announced chain: the beacon is read from it (the announced block hash)',
    )
    .option('--beacon <hex>', 'the beacon, hexadecimal: the announced block hash, or without an announcement any value')
    .option('--iterations <n>', 'the beacon is hashed 2^n times (10..63); with an announcement, the announced n')
    .addOption(
      new Option('--confirmations <n>', 'blocks on top of the announced one before its hash is taken')
        .default(DEFAULT_CONFIRMATIONS)
        .argParser((value) => parseWholeNumber(value, '--confirmations')),
    )
    .addOption(dataDirOption())
    .addHelpText(
      'after',
      helpNotes(
        '\nAfter `ceremony announce-beacon`, `--rpc URL` is enough: the beacon is the announced block hash and\n' +
          'its iterations the announced ones. Without an announcement, --beacon and --iterations are required,\n' +
          'and the audit says the beacon was not committed to before it was known.\n' +
          "Refused (finalise.too_few_contributions) while a chain has fewer contributions than ceremony.json's\n" +
          'minContributions (default 1): a key with no contribution is secret to no one.',
      ),
    )
    .addHelpText(
      'after',
      helpExamples(
        [
          'after `ceremony announce-beacon`: the announced block, once final',
          'ceremony finalise --rpc https://eth.example --data ceremony-data',
        ],
        [
          'a test network without an announcement',
          'ceremony finalise --beacon HEX --iterations 10 --data ceremony-data',
        ],
      ),
    )
    .action(
      async (options: { data: string; beacon?: string; iterations?: string; rpc?: string; confirmations: number }) => {
        const source = {
          ...(options.beacon !== undefined ? { beacon: options.beacon } : {}),
          ...(options.iterations !== undefined ? { iterations: options.iterations } : {}),
          ...(options.rpc !== undefined ? { rpcUrl: options.rpc } : {}),
          confirmations: options.confirmations,
        };
        const result = await withStderrProgress((progress) => finaliseCeremony(options.data, source, progress));
        for (const c of result.circuits) {
          process.stdout.write(
            `${c.circuit} final (${c.contributions} contributions + beacon) contribution hash ${c.contributionHash}\n`,
          );
        }
        process.stdout.write(`manifest written to ${result.manifestPath}\n`);
      },
    );
}
