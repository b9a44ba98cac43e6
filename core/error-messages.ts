/**
 * Every code of the coordinator in plain words: what happened, and what happens next. The words are
 * declared with each code (core/error-codes/), so a new code cannot ship without its explanation.
 * One table for both contributor clients, the page (web/src/api/error-messages.ts) and the terminal
 * (`ceremony contribute --coordinator`), so both give the same reason for the same refusal; where
 * what to do differs (reload the page, or keep the command running), an entry says it for the
 * terminal in `nextInTerminal`.
 */
import { ERROR_ENTRIES, type ErrorCode } from './errors.ts';
import { RERUN, type ErrorWords, type PlainWords } from './error-codes/error-entry.ts';

export type { ErrorWords, PlainWords };

export const ERROR_MESSAGES: Readonly<Record<ErrorCode, ErrorWords>> = ERROR_ENTRIES;

/**
 * The terminal client's words for any code, including ones this version does not know (a newer
 * coordinator's): `what` as the page says it, `next` in terms of the command.
 */
export function terminalWords(code: string, serverMessage?: string | null): PlainWords {
  const known = (ERROR_MESSAGES as Record<string, ErrorWords | undefined>)[code];
  if (known) return { what: known.what, next: known.nextInTerminal ?? known.next };
  if (code === 'network')
    return {
      what: 'The coordinator could not be reached.',
      next:
        'Check your connection and the coordinator’s address, then run the command again: it picks up where ' +
        'the queue stands.',
    };
  return {
    what: serverMessage ? `The coordinator answered: ${serverMessage}` : `Something went wrong (${code}).`,
    next: RERUN,
  };
}
