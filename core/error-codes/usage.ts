/**
 * The caller of the `ceremony` command asked wrongly: its arguments, or a file it was given to read
 * (the CLI exits 2). A page meets them only through a coordinator-side tool.
 */
import { type ErrorEntry, OPERATOR } from './error-entry.ts';

export const USAGE_CODES = {
  'usage.invalid_arguments': {
    kind: 'usage',
    what: 'A command of the coordinator was called with invalid arguments.',
    next: OPERATOR,
  },
  'input.file_not_found': { kind: 'usage', what: 'A file the coordinator needs is missing.', next: OPERATOR },
  'input.not_json': { kind: 'usage', what: 'A file the coordinator read is not valid JSON.', next: OPERATOR },
  'input.invalid': { kind: 'usage', what: 'A file the coordinator read is not what it should be.', next: OPERATOR },
} satisfies Record<string, ErrorEntry>;
