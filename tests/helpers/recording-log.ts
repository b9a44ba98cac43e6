/**
 * A coordinator log that keeps every line for the test to read (what was spliced, refused,
 * started), and still puts each warning on stderr, so a run that goes wrong says why.
 */
import type { ServiceLog } from '../../server/ceremony-service.ts';

export interface LoggedLine {
  message: string;
  fields?: Record<string, unknown>;
}

export function recordingLog(): { lines: LoggedLine[]; log: ServiceLog } {
  const lines: LoggedLine[] = [];
  const keep = (message: string, fields?: Record<string, unknown>): void =>
    void lines.push({ message, ...(fields ? { fields } : {}) });
  return {
    lines,
    log: {
      info: keep,
      warn: (message, fields) => {
        keep(message, fields);
        process.stderr.write(`[coordinator] ${message} ${JSON.stringify(fields ?? {})}\n`);
      },
    },
  };
}
