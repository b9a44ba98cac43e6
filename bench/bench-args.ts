/**
 * The bench scripts' command line: node's parseArgs, plus `--help` and a readable mistake. Alone,
 * parseArgs answers both with a stack trace; here `--help` prints the script's own header comment
 * (its usage is written once, where it is read in the source) and a mistyped option prints one
 * line and the comment's `Usage:` part, exit 2.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** What parseArgs returns for `T`: the caller's `values` keep their options' types. */
type ParsedArgs<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/** The exit code of a command-line mistake (as in POSIX tools), apart from a run that failed (1). */
const USAGE_EXIT_CODE = 2;

/** The first `/** … *\/` comment of the file, without its ` * ` prefixes. */
function headerComment(file: string): string {
  const comment = /\/\*\*([\s\S]*?)\*\//.exec(readFileSync(file, 'utf8'))?.[1] ?? '';
  return comment
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, '').trimEnd())
    .join('\n')
    .trim();
}

/** From the comment's `Usage:` line to its end (the whole comment when it has none). */
function usageOf(help: string): string {
  const start = help.search(/^Usage:/m);
  return start < 0 ? help : help.slice(start);
}

/**
 * parseArgs(config) for the script at `moduleUrl` (its `import.meta.url`). With `--help` or `-h`
 * prints the script's header comment and exits 0; on a mistake parseArgs reports (unknown option,
 * missing value, unexpected positional) prints `error: …` and the usage to stderr and exits 2.
 */
export function parseBenchArgs<T extends ParseArgsConfig>(moduleUrl: string, config: T): ParsedArgs<T> {
  const args = config.args ?? process.argv.slice(2);
  const file = fileURLToPath(moduleUrl);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${headerComment(file)}\n`);
    process.exit(0);
  }
  try {
    return parseArgs(config);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS')) throw error;
    process.stderr.write(`error: ${(error as Error).message}\n\n${usageOf(headerComment(file))}\n`);
    process.exit(USAGE_EXIT_CODE);
  }
}
