import { Command } from 'commander';
import { createDevPtau } from '../../core/ptau/dev-ptau.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { withStderrProgress } from '../progress/with-stderr-progress.ts';
import { helpExamples } from './command-help.ts';

export function devPtauCommand(): Command {
  return new Command('dev-ptau')
    .description('make an INSECURE prepared powers of tau from a public secret, for test networks and benchmarks only')
    .requiredOption('--power <n>', 'the ptau supports circuits of up to 2^n constraints')
    .argument('<out>', 'path of the .ptau file to write')
    .addHelpText(
      'after',
      helpExamples([
        'a test network ptau for circuits of up to 2^12 constraints',
        'ceremony dev-ptau --power 12 dev.ptau',
      ]),
    )
    .action(async (out: string, options: { power: string }) => {
      const power = Number(options.power);
      if (!Number.isInteger(power))
        throw new CoordinatorError('usage.invalid_arguments', `--power must be an integer, got "${options.power}"`);
      const started = Date.now();
      await withStderrProgress((progress) => createDevPtau(power, out, progress));
      process.stderr.write(
        `WARNING: ${out} has a publicly known secret. Use it for test networks only, never for mainnet keys.\n`,
      );
      process.stdout.write(`${out} (power ${power}) written in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    });
}
