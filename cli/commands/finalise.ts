import { Command } from 'commander';
import { finaliseCeremony } from '../../core/finalise/finalise-ceremony.ts';
import { parseBeaconParameters } from '../../core/finalise/beacon-parameters.ts';
import { dataDirOption } from './shared-options.ts';
import { withStderrProgress } from '../progress/with-stderr-progress.ts';

export function finaliseCommand(): Command {
  return new Command('finalise')
    .description(
      'apply the random beacon to every head; write final keys, verification ' +
        'keys, Solidity verifiers and the delta manifest',
    )
    .requiredOption('--beacon <hex>', 'random beacon value, hexadecimal (announced before it was known)')
    .requiredOption('--iterations <n>', 'the beacon is hashed 2^n times (10..63)')
    .addOption(dataDirOption())
    .addHelpText(
      'after',
      "\nRefused (finalise.too_few_contributions) while a chain has fewer contributions than ceremony.json's\n" +
        'minContributions (default 1): a key with no contribution is secret to no one.',
    )
    .action(async (options: { data: string; beacon: string; iterations: string }) => {
      const beacon = parseBeaconParameters(options.beacon, options.iterations);
      const result = await withStderrProgress((progress) => finaliseCeremony(options.data, beacon, progress));
      for (const c of result.circuits) {
        process.stdout.write(
          `${c.circuit} final (${c.contributions} contributions + beacon) contribution hash ${c.contributionHash}\n`,
        );
      }
      process.stdout.write(`manifest written to ${result.manifestPath}\n`);
    });
}
