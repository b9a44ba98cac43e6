import { Command } from 'commander';
import { preferSingleThreadedBn128 } from '../../core/crypto/bn128.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { parseBeaconParameters } from '../../core/finalise/beacon-parameters.ts';
import type { LinkExpectation } from '../../core/link-check/check-link-structure.ts';
import { verifyLinkFromHead } from '../../core/link-check/verify-link-from-head.ts';
import { helpExamples } from './command-help.ts';

export function verifyLinkCommand(): Command {
  return new Command('verify-link')
    .description(
      'check that NEXT is a valid next link on the already-verified PREV (no ' +
        'r1cs or ptau needed); prints the contribution hash',
    )
    .argument('<prev>', 'the verified head zkey')
    .argument('<next>', 'the candidate zkey')
    .option('--beacon <hex>', 'NEXT must be the final beacon contribution with this beacon (hexadecimal)')
    .option('--iterations <n>', 'with --beacon: the beacon is hashed 2^n times (10..63)')
    .addHelpText(
      'after',
      helpExamples(
        [
          'does the next key of a published chain extend the one before it?',
          'ceremony verify-link register_0004.zkey register_0005.zkey',
        ],
        [
          "is a final key the beacon's contribution on the last head?",
          'ceremony verify-link register_0012.zkey final/register.zkey \\\n--beacon HEX --iterations 10',
        ],
      ),
    )
    .action(async (prev: string, next: string, options: { beacon?: string; iterations?: string }) => {
      if ((options.beacon === undefined) !== (options.iterations === undefined)) {
        throw new CoordinatorError('usage.invalid_arguments', '--beacon and --iterations go together');
      }
      // --iterations comes with --beacon (checked above).
      const expect: LinkExpectation =
        options.beacon !== undefined
          ? { kind: 'beacon', ...parseBeaconParameters(options.beacon, options.iterations!) }
          : { kind: 'random' };
      // The sums run on the kernel's threads; the curve only does pairings here.
      preferSingleThreadedBn128();
      const link = await verifyLinkFromHead(prev, next, { expect, sumsDuringStructureCheck: true });
      process.stdout.write(`${link.contributionHash}\n`);
      process.stderr.write(
        `valid: contribution #${link.index}${link.recordedName ? ` by "${link.recordedName}"` : ''} extends ${prev}\n`,
      );
    });
}
