import { Command } from 'commander';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { dataDirOption } from './shared-options.ts';
import { withStderrProgress } from '../progress/with-stderr-progress.ts';

export function contributeCommand(): Command {
  return new Command('contribute')
    .description('add one contribution (fresh OS entropy, never stored) to the head of a circuit, verify it and commit it')
    .argument('[circuit]', 'circuit to contribute to (omit with --all)')
    .option('--all', 'contribute to every circuit, in ceremony order')
    .option('--name <name>', 'contributor name recorded in the key and the transcript', 'anonymous')
    .addOption(dataDirOption())
    .action(async (circuit: string | undefined, options: { data: string; name: string; all?: boolean }) => {
      if (Boolean(circuit) === Boolean(options.all)) {
        throw new CoordinatorError('usage.invalid_arguments', 'name one circuit, or pass --all for every circuit');
      }
      const circuits = options.all ? (await openCeremony(options.data)).config.circuits.map((c) => c.name) : [circuit!];
      await withStderrProgress(async (progress) => {
        for (const name of circuits) {
          const accepted = await contributeLocally(options.data, name, options.name, progress);
          process.stdout.write(`${accepted.circuit} #${accepted.index} contribution hash ${accepted.contributionHash}\n`);
        }
      });
    });
}
