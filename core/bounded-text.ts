/**
 * Text that leaves a process (a refusal's message, a log field, a verifier's failure) at a bounded
 * length whatever it was made of: an error can quote what an uploader sent, and an attacker sends
 * as much as a limit lets through. Cut in the middle, so both the start (what failed) and the end
 * (often the reason) stay readable.
 */
const DEFAULT_LIMIT = 500;

/** `text` itself when at most `limit` characters long; else its start and end around a note of what was cut. */
export function boundedText(text: string, limit: number = DEFAULT_LIMIT): string {
  if (text.length <= limit) return text;
  const note = ` … (${text.length - limit} characters cut) … `;
  const keep = Math.max(0, limit - note.length);
  const head = Math.ceil(keep / 2);
  return `${text.slice(0, head)}${note}${text.slice(text.length - (keep - head))}`;
}
