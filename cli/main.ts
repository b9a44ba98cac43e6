/**
 * The `ceremony` command: thin wrappers over core, server and worker. Every command lives in its
 * own module under cli/commands and is listed in COMMANDS (commands/index.ts), so `--help` lists them
 * all, grouped by who runs them, with a one-line description; `--version` prints the project's
 * version and the Node it runs on. Only the module of the command that runs is loaded (the others
 * stand in as name and summary), so `--help` answers without loading snarkjs or Express. Help's
 * style (width, defaults, required options) is commands/command-help.ts's.
 *
 * Exit codes: 0 success; 1 a refusal or failed check (the message names the code); 2 a usage
 * error (bad arguments, unreadable input files); 141 its reader closed the pipe.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { isCoordinatorError, isUsageError } from '../core/errors.ts';
import { COMMAND_ROLES, COMMANDS, type CommandEntry } from './commands/index.ts';
import { helpNotes, styleHelp } from './commands/command-help.ts';
import { takeOptionValuesExactly } from './commands/shared-options.ts';
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';
import { nativeModuleError } from '../core/runtime/native-module-error.ts';
import { cachedBn128 } from '../core/crypto/bn128-cache.ts';

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;
/** A shell's status for a command killed by SIGPIPE (128 + 13): what `set -o pipefail` sees of `ceremony … | head`. */
const EXIT_READER_GONE = 141;

/** The command `argv` runs (`ceremony NAME …` or `ceremony help NAME`), if it names one. */
function selectedCommand(argv: string[]): CommandEntry | undefined {
  const words = argv.slice(2).filter((arg) => !arg.startsWith('-'));
  const name = words[0] === 'help' ? words[1] : words[0];
  return COMMANDS.find((entry) => entry.name === name);
}

/** The project's version, from the package.json above this module (cli/ in the sources, dist/cli/ built). */
function projectVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: unknown };
      if (typeof manifest.version === 'string') return manifest.version;
    } catch {
      // not here: look in the folder above
    }
    const parent = path.dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}

async function buildProgram(selected: CommandEntry | undefined): Promise<Command> {
  const program = styleHelp(new Command('ceremony'))
    .description('Groth16 Phase 2 ceremony coordinator: zkey chains, verification, finalisation, delta manifest, audit')
    .version(`ceremony ${projectVersion()} (Node ${process.versions.node})`, '-V, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .addHelpText(
      'after',
      helpNotes(
        "`ceremony COMMAND --help` shows a command's options and an example; docs/cli.md says more.",
        'Exit status: 0 done, 1 a refusal or a failed check (stderr: error [code]: message), 2 a usage error.',
      ),
    );
  for (const entry of COMMANDS) {
    // A command not loaded stands in as its name and summary: its own help is built only when it runs.
    const command =
      entry === selected
        ? takeOptionValuesExactly((await entry.load())())
        : new Command(entry.name).description(entry.summary);
    program.addCommand(styleHelp(command).helpGroup(COMMAND_ROLES[entry.role]).exitOverride());
  }
  return program.commandsGroup('Help:').helpCommand('help [command]', "show a command's options and examples");
}

async function main(argv: string[]): Promise<number> {
  const selected = selectedCommand(argv);
  try {
    // Inside the try: loading the command's module can fail too (a file missing from dist/).
    const program = await buildProgram(selected);
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK;
  } catch (thrown) {
    // A native module built for another Node can fail wherever it is first loaded: said as such, not as what failed.
    const error = nativeModuleError(thrown) ?? thrown;
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
    // Only a command that ran can have built the curve; loading bn128.ts (and ffjavascript with it)
    // to release none would undo the fast --help.
    if (selected && cachedBn128()) await (await import('../core/crypto/bn128.ts')).releaseBn128();
  }
}

// A reader that stopped reading (`ceremony --help | head`) ends the command as it ends other Unix
// tools, quietly, instead of with Node's trace of an unhandled EPIPE; and not with 0, since what
// the command had still to print (an audit's verdict) was not read.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(EXIT_READER_GONE);
});
silenceSnarkjsHandleWarnings();
process.exitCode = await main(process.argv);
