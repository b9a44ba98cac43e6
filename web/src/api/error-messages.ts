/**
 * The page's plain words for every code of the coordinator. The table itself is shared with the
 * terminal client and lives in core (core/error-messages.ts), so both clients give the same
 * reasons; this module adds the page's own cases (network failures, problems in the browser).
 */
import { ERROR_MESSAGES, type ErrorWords, type PlainWords } from '../../../core/error-messages.ts';

export { ERROR_MESSAGES, type PlainWords };

/** Plain words for any code, including ones this page does not know (network errors, new codes). */
export function plainWords(code: string, serverMessage?: string | null): PlainWords {
  const known = (ERROR_MESSAGES as Record<string, ErrorWords | undefined>)[code];
  if (known) return { what: known.what, next: known.next };
  if (code === 'network')
    return { what: 'The coordinator could not be reached.', next: 'Check your connection; the page keeps trying.' };
  if (code === 'browser')
    return {
      what: `This page ran into a problem: ${serverMessage ?? 'unknown error'}.`,
      next: 'Reload the page; if it persists, tell the coordinator.',
    };
  return {
    what: serverMessage ? `The coordinator answered: ${serverMessage}` : `Something went wrong (${code}).`,
    next: 'Reload the page; if it persists, tell the coordinator.',
  };
}
