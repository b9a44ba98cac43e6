import { Command } from 'commander';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { dataDirOption } from './shared-options.ts';
import { withStderrProgress } from '../progress/with-stderr-progress.ts';
import { helpExamples } from './command-help.ts';

export function initCommand(): Command {
  return new Command('init')
    .description('check every circuit against ceremony.json and the ptau, and create contribution 0 of each chain')
    .addOption(dataDirOption())
    .addHelpText(
      'after',
      helpExamples([
        "the project's test ceremony (ceremony.json, circuits and a prepared ptau in the folder)",
        'ceremony init --data ceremony-data',
      ]),
    )
    .action(async (options: { data: string }) => {
      const circuits = await withStderrProgress((progress) => initCeremony(options.data, progress));
      for (const c of circuits) {
        process.stdout.write(
          `${c.circuit} initialised: ${c.constraints} constraints, ` +
            `${c.publicInputs} public inputs, circuit hash ${c.circuitHash}\n`,
        );
      }
    });
}
