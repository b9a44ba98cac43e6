/**
 * The operator's and the auditor's commands that write a folder: `ceremony publish`, `ceremony backup`
 * and `ceremony fetch` (an auditor's copy of what a coordinator publishes). No route answers them: their
 * kind gives the CLI's exit status and the docs' HTTP column.
 */
import { type ErrorEntry, OPERATOR } from './error-entry.ts';

export const TOOL_CODES = {
  // `ceremony publish`
  'publish.out_exists': {
    kind: 'conflict',
    what: 'A publication of the ceremony was refused: its destination already exists.',
    next: OPERATOR,
  },

  // `ceremony backup`
  /** The folder to back up into exists already: a backup is always a new folder. */
  'backup.out_exists': {
    kind: 'conflict',
    what: 'A backup of the ceremony was refused: its destination already exists.',
    next: 'Back up into a new folder (for instance one named after the date), never over an earlier backup.',
  },
  /** `--link-dest` names a folder that is no backup of this ceremony (no backup.json, another ceremony). */
  'backup.not_a_backup': {
    kind: 'usage',
    what: 'The earlier backup to link unchanged files from is not a backup of this ceremony.',
    next: 'Name a folder an earlier `ceremony backup` of this ceremony wrote, or leave --link-dest out.',
  },

  // `ceremony fetch`
  /** The folder to fetch into holds files already (and --resume was not given). */
  'fetch.dir_not_empty': {
    kind: 'conflict',
    what: 'A copy of the ceremony was refused: the folder to fetch into already holds files.',
    next: 'Fetch into a new, empty folder, or add --resume to complete an interrupted fetch.',
  },
  /**
   * A request to the coordinator failed: no answer, an HTTP error, a download cut off, a rate limit
   * that outlasts the retries.
   */
  'fetch.http_error': {
    kind: 'upstream',
    what: 'A file could not be fetched from the coordinator (no answer, an HTTP error, or a download cut off).',
    next: 'Run the command again later with --resume; the message names the file and the answer.',
  },
  /** The coordinator answered something its API never answers (not JSON, an entry of no known shape). */
  'fetch.bad_answer': {
    kind: 'upstream',
    what: 'The coordinator answered something its API never answers.',
    next: 'Check the address you gave; if it is the coordinator’s, tell its operators (and the other auditors).',
  },
  /** The coordinator's transcript is of another ceremony than the auditor's ceremony.json (id, circuits). */
  'fetch.other_ceremony': {
    kind: 'refusal',
    what: 'The coordinator serves another ceremony than the ceremony.json you fetch with.',
    next: 'Check the address, and that your checkout holds this ceremony’s ceremony.json.',
  },
} satisfies Record<string, ErrorEntry>;
