import { Command } from 'commander';
import { verifyCandidate } from '../../core/ceremony/extend-chain.ts';
import { dataDirOption } from './shared-options.ts';
import { helpExamples } from './command-help.ts';

export function verifyCommand(): Command {
  return new Command('verify')
    .description('check that FILE is a valid next link on the head of CIRCUIT, without changing anything')
    .argument('<circuit>', 'circuit whose head FILE should extend')
    .argument('<file>', 'candidate zkey')
    .addOption(dataDirOption())
    .addHelpText(
      'after',
      helpExamples(['is this key a valid next link of the register chain?', 'ceremony verify register upload.zkey']),
    )
    .action(async (circuit: string, file: string, options: { data: string }) => {
      const link = await verifyCandidate(options.data, circuit, file);
      process.stdout.write(`${link.contributionHash}\n`);
      process.stderr.write(
        `valid: contribution #${link.index}${link.recordedName ? ` by "${link.recordedName}"` : ''} ` +
          `extends the head of ${circuit}\n`,
      );
    });
}
