/** Options and output helpers shared by the `ceremony` sub-commands. */
import { Option } from 'commander';
import type { Progress } from '../../core/ceremony/progress.ts';

export const DEFAULT_DATA_DIR = 'ceremony-data';

export function dataDirOption(): Option {
  return new Option('--data <dir>', 'ceremony data folder (holds ceremony.json)').default(DEFAULT_DATA_DIR);
}

/** Progress goes to stderr so stdout stays machine-readable (hashes, one result a line). */
export const stderrProgress: Progress = (message) => {
  process.stderr.write(`… ${message}\n`);
};
