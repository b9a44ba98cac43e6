import { Command } from 'commander';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { dataDirOption } from './shared-options.ts';
import { withStderrProgress } from '../progress/with-stderr-progress.ts';

export function initCommand(): Command {
  return new Command('init')
    .description('check every circuit against ceremony.json and the ptau, and create contribution 0 of each chain')
    .addOption(dataDirOption())
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
