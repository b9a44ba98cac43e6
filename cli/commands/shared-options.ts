/** Options and output helpers shared by the `ceremony` sub-commands. */
import { Option } from 'commander';
import { CoordinatorError } from '../../core/errors.ts';

const DEFAULT_DATA_DIR = 'ceremony-data';

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
