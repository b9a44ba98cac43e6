/**
 * A coordinator log for end-to-end tests: info is dropped, warnings go to stderr as one line each,
 * so a run that goes wrong (a verifier error, a commit that failed) shows why in the test output
 * instead of only the verdict the contributor saw.
 */
import type { ServiceLog } from '../../server/ceremony-service.ts';

export function warningsToStderr(label = 'coordinator'): ServiceLog {
  return {
    info: () => {},
    warn: (message, fields) =>
      void process.stderr.write(`${label} warning: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}\n`),
  };
}
