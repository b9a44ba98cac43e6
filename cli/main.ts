/**
 * The `ceremony` command: thin wrappers over core (and, later, server and worker). Every command
 * lives in its own module under cli/commands and is listed in COMMANDS below, so `--help` lists
 * them all with a one-line description. Only the module of the command that runs is loaded (the
 * others stand in as name and summary), so `--help` answers without loading snarkjs or Express.
 *
 * Exit codes: 0 success; 1 a refusal or failed check (the message names the code); 2 a usage
 * error (bad arguments, unreadable input files).
 */
import { Command, CommanderError, Help } from 'commander';
import { isCoordinatorError, isUsageError } from '../core/errors.ts';
import { COMMANDS, type CommandEntry } from './commands/index.ts';
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

/** The command `argv` runs (`ceremony NAME …` or `ceremony help NAME`), if it names one. */
function selectedCommand(argv: string[]): CommandEntry | undefined {
  const words = argv.slice(2).filter((arg) => !arg.startsWith('-'));
  const name = words[0] === 'help' ? words[1] : words[0];
  return COMMANDS.find((entry) => entry.name === name);
}

async function buildProgram(selected: CommandEntry | undefined): Promise<Command> {
  const program = new Command('ceremony')
    .description('Groth16 Phase 2 ceremony coordinator: zkey chains, verification, finalisation, delta manifest, audit')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    // A command not loaded has no options or arguments to list: its entry says what they are.
    .configureHelp({
      subcommandTerm: (command) => {
        const entry = COMMANDS.find((e) => e.name === command.name());
        return entry ? `${entry.name} ${entry.usage}`.trim() : new Help().subcommandTerm(command);
      },
    });
  for (const entry of COMMANDS) {
    const command = entry === selected ? (await entry.load())() : new Command(entry.name).description(entry.summary);
    program.addCommand(command.exitOverride());
  }
  return program;
}

async function main(argv: string[]): Promise<number> {
  const selected = selectedCommand(argv);
  try {
    // Inside the try: loading the command's module can fail too (a file missing from dist/).
    const program = await buildProgram(selected);
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here too, with exit code 0.
      return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (isCoordinatorError(error)) {
      process.stderr.write(`error [${error.code}]: ${error.message}\n`);
      return isUsageError(error.code) ? EXIT_USAGE : EXIT_FAILED;
    }
    process.stderr.write(
      `unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return EXIT_FAILED;
  } finally {
    // Only a command that ran can have built the curve; loading it just to release it would undo
    // the fast --help.
    if (selected) await (await import('../core/crypto/bn128.ts')).releaseBn128();
  }
}

silenceSnarkjsHandleWarnings();
process.exitCode = await main(process.argv);
