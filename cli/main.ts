/**
 * The `ceremony` command: thin wrappers over core (and, later, server and worker). Every command
 * lives in its own module under cli/commands and is listed in COMMANDS below, so `--help` lists
 * them all with a one-line description.
 *
 * Exit codes: 0 success; 1 a refusal or failed check (the message names the code); 2 a usage
 * error (bad arguments, unreadable input files).
 */
import { Command, CommanderError } from 'commander';
import { isCoordinatorError } from '../core/errors.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { COMMANDS } from './commands/index.ts';
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

function buildProgram(): Command {
  const program = new Command('ceremony')
    .description('Groth16 Phase 2 ceremony coordinator: zkey chains, verification, finalisation, delta manifest, audit')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  for (const makeCommand of COMMANDS) {
    program.addCommand(makeCommand().exitOverride());
  }
  return program;
}

async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here too, with exit code 0.
      return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (isCoordinatorError(error)) {
      process.stderr.write(`error [${error.code}]: ${error.message}\n`);
      return error.code.startsWith('usage.') || error.code.startsWith('input.') ? EXIT_USAGE : EXIT_FAILED;
    }
    process.stderr.write(`unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return EXIT_FAILED;
  } finally {
    await releaseBn128();
  }
}

silenceSnarkjsHandleWarnings();
process.exitCode = await main(process.argv);
