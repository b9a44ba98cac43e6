/** Options shared by the `ceremony` sub-commands, and the parse of options that take several values. */
import { Option, type Command } from 'commander';
import { DEFAULT_AUDITOR_CONFIG } from '../../core/audit/auditor-config.ts';
import { CoordinatorError } from '../../core/errors.ts';

const DEFAULT_DATA_DIR = 'ceremony-data';

/**
 * `--config FILE`: the auditor's own ceremony.json (default: the checkout's), never the coordinator's;
 * `against` says what must agree with it.
 */
export function auditorConfigOption(against: string): Option {
  return new Option('--config <file>', `your own ceremony.json, never the coordinator's: ${against}`).default(
    DEFAULT_AUDITOR_CONFIG,
  );
}

export function dataDirOption(): Option {
  return new Option('--data <dir>', 'ceremony data folder (holds ceremony.json)').default(DEFAULT_DATA_DIR);
}

/** A block number or a count given as `option` on the command line: a non-negative integer. */
export function parseWholeNumber(text: string, option: string): number {
  const value = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(value))
    throw new CoordinatorError('usage.invalid_arguments', `${option} takes a whole number, got "${text}"`);
  return value;
}

const placeholders = (option: Option): number => (option.flags.match(/<[^>]+>/g) ?? []).length;

/**
 * An option that takes exactly as many values as its flags name (`--deployment <rpc> <verifiers>`),
 * collected in order. Unlike commander's variadic option it stops after them, so a positional
 * argument may follow (`takeOptionValuesExactly` makes the command parse it so).
 */
export function valuesOption(flags: string, description: string): Option {
  return new Option(flags, description).argParser((value: string, previous: string[] | undefined) => [
    ...(previous ?? []),
    value,
  ]);
}

/** `--deployment A B DIR` → `--deployment=A --deployment=B DIR`: each value given alone, DIR left positional. */
function spreadOptionValues(options: readonly Option[], args: readonly string[]): string[] {
  const spread: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return [...spread, ...args.slice(i)];
    const option = options.find((o) => o.long === arg || o.short === arg);
    const count = option ? placeholders(option) : 0;
    const values = args.slice(i + 1, i + 1 + count);
    if (count > 1 && values.length === count && values.every((value) => !value.startsWith('-'))) {
      spread.push(...values.map((value) => `${option!.long}=${value}`));
      i += count;
    } else spread.push(arg);
  }
  return spread;
}

/** Makes `command` give each valuesOption exactly its values: the command's own parse, on args spread first. */
export function takeOptionValuesExactly(command: Command): Command {
  const parse = command.parseOptions.bind(command);
  command.parseOptions = (args: string[]) => parse(spreadOptionValues(command.options, args));
  return command;
}
