/**
 * Renders a check report as the service document prints it: one `NAME match` or `NAME MISMATCH`
 * line per verifier on stdout; reasons, warnings and what a match proved on stderr, a shared failure
 * only once.
 */
import { allVerifiersMatch, type CheckReport } from './verifier-check.ts';

export interface RenderedCheckReport {
  stdout: string;
  stderr: string;
  /** 0 when every verifier matched, 1 otherwise. */
  exitCode: 0 | 1;
}

export function renderCheckReport(report: CheckReport): RenderedCheckReport {
  const out: string[] = [];
  const err: string[] = [];
  if (report.failure !== undefined) err.push(`error: ${report.failure}`);
  for (const check of report.verifiers) {
    out.push(`${check.verifier} ${check.match ? 'match' : 'MISMATCH'}`);
    for (const reason of check.reasons) err.push(`${check.verifier}: ${reason}`);
    for (const warning of check.warnings) err.push(`warning: ${check.verifier}: ${warning}`);
    if (check.match) for (const proven of check.checked ?? []) err.push(`${check.verifier}: proven: ${proven}`);
  }
  return {
    stdout: out.map((line) => `${line}\n`).join(''),
    stderr: err.map((line) => `${line}\n`).join(''),
    exitCode: allVerifiersMatch(report) ? 0 : 1,
  };
}
