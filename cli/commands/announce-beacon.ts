import { Command, Option } from 'commander';
import { announceBeacon, DEFAULT_MIN_BLOCKS_AHEAD } from '../../core/finalise/beacon-announcement.ts';
import { parseChainId } from '../../core/deployment/deployed-code-reader.ts';
import { dataDirOption, parseWholeNumber } from './shared-options.ts';
import { helpExamples, helpNotes } from './command-help.ts';

export function announceBeaconCommand(): Command {
  return new Command('announce-beacon')
    .description(
      'commit the transcript to the beacon before anyone can know it: the hash of a future block of a public ' +
        'chain; closes contributions',
    )
    .requiredOption('--chain-id <id>', 'the EVM chain (EIP-155 id) whose block hash is the beacon', (v) =>
      parseChainId(v, '--chain-id'),
    )
    .requiredOption('--block <n>', 'the block whose hash is the beacon: not mined yet', (v) =>
      parseWholeNumber(v, '--block'),
    )
    .requiredOption('--iterations <n>', 'the beacon is hashed 2^n times (10..63)')
    .requiredOption('--rpc <url>', 'a JSON-RPC endpoint of that chain, to check the block is still in the future')
    .addOption(
      new Option('--min-blocks-ahead <n>', 'how far ahead of the latest block the announced one must be')
        .default(DEFAULT_MIN_BLOCKS_AHEAD)
        .argParser((v) => parseWholeNumber(v, '--min-blocks-ahead')),
    )
    .addOption(dataDirOption())
    .addHelpText(
      'after',
      helpNotes(
        '\nPublish the announcement (the transcript, or its last entry hash) before the block is mined: only a\n' +
          'public record of that time shows nobody knew the beacon. From here on the ceremony takes no\n' +
          'contribution; once the block has its confirmations, `ceremony finalise --rpc URL` takes its hash.',
      ),
    )
    .addHelpText(
      'after',
      helpExamples([
        'the hash of a block of Ethereum about a day ahead, hashed 2^10 times',
        'ceremony announce-beacon --chain-id 1 --block 21007200 --iterations 10 \\\n' +
          '--rpc https://eth.example --data ceremony-data',
      ]),
    )
    .action(
      async (options: {
        data: string;
        chainId: number;
        block: number;
        iterations: string;
        rpc: string;
        minBlocksAhead: number;
      }) => {
        const iterationsExp = Number(options.iterations);
        const { entry, latestBlock } = await announceBeacon(
          options.data,
          { chainId: options.chainId, blockNumber: options.block, iterationsExp },
          { rpcUrl: options.rpc, minBlocksAhead: options.minBlocksAhead },
        );
        process.stdout.write(
          `beacon announced: the hash of block ${options.block} of chain ${options.chainId} ` +
            `(${options.block - latestBlock} blocks after the latest, ${latestBlock}), ` +
            `hashed 2^${iterationsExp} times\n` +
            `transcript entry ${entry.seq}, hash ${entry.hash}\n` +
            'contributions are closed; publish this now, before the block is mined\n',
        );
      },
    );
}
