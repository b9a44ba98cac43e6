/** Options and output helpers shared by the `ceremony` sub-commands. */
import { Option } from 'commander';

const DEFAULT_DATA_DIR = 'ceremony-data';

export function dataDirOption(): Option {
  return new Option('--data <dir>', 'ceremony data folder (holds ceremony.json)').default(DEFAULT_DATA_DIR);
}
