/**
 * The audit's `ptau sections` finding: the sections of the pinned ptau that contribution 0's check
 * relies on, against its powers of τ (check-ptau-sections.ts), or, when this machine has checked
 * this very file with this version of the check for every domain the circuits need, the memo of
 * that check (verified-ptau-memo.ts): the finding then says when it was checked and that it was not
 * checked again. The memo is looked up by the hash the audit computed from the file for its pin,
 * never by one read elsewhere; `recheck` ignores it.
 */
import type { Progress } from '../ceremony/progress.ts';
import type { StageTimer } from '../runtime/stage-timings.ts';
import { checkPtauSections } from './check-ptau-sections.ts';
import { memoCovers, readPtauMemo, rememberVerifiedPtau, type PtauMemo } from './verified-ptau-memo.ts';
import type { AuditedPtau } from './audit-report-parts.ts';

/** Where verified ptau files are remembered, and whether to ignore what is. */
export interface PtauMemoOptions {
  /** Undefined: nothing is remembered. */
  dir?: string;
  recheck: boolean;
}

/** What the check establishes, and what it leaves to the pin (the finding's words). */
const CHECK_WORDS =
  "the Lagrange basis (section 12) at the circuits' domains and H's, and the powers of τ it is derived from " +
  "(section 2), are consistent; sections 14 and 15 (α·λ, β·λ) are no verdict's premise (contribution 0's IC " +
  'and L are checked against α1 and β2) and are checked only to name the culprit if contribution 0 fails; ' +
  'the phase-1 contribution chain is not replayed (the pin stands for it)';

/** The sections against the powers of τ (in 1000 progress steps); what was checked and the ptau's power. */
async function checkSections(
  ptauPath: string,
  circuitPowers: number[],
  progress: Progress,
  timer: StageTimer,
): Promise<{ checked: string[]; power: number }> {
  progress({
    type: 'step',
    circuit: 'ptau',
    step: 'checking the sections contribution 0 relies on against the powers of tau',
  });
  const steps = 1000;
  let reported = -1;
  const timings: Record<string, number> = {};
  const start = timer.now();
  const report = await checkPtauSections(ptauPath, circuitPowers, {
    timings,
    onProgress: (fraction) => {
      const done = Math.floor(fraction * steps);
      if (done === reported) return;
      reported = done;
      progress({ type: 'count', circuit: 'ptau', part: 'sections', done, total: steps });
    },
  });
  timer.add('ptau sections', timer.now() - start);
  for (const [phase, ms] of Object.entries(timings)) timer.add(`  ptau sections: ${phase}`, ms);
  return report;
}

const domainsOf = (powers: readonly number[]): string => `2^${[...new Set(powers)].sort((a, b) => a - b).join(', 2^')}`;

/** The finding's words for a remembered check. */
function describeRemembered(memo: PtauMemo): string {
  return (
    `remembered, not checked again: this machine checked this file (its BLAKE2b-512, computed in this audit) on ` +
    `${memo.checkedAt} with version ${memo.checkVersion} of the check, for domains ${domainsOf(memo.domains)}: ` +
    `${memo.checked.length} checks: ${CHECK_WORDS}; --recheck-ptau checks it again`
  );
}

/**
 * The `ptau sections` finding's summary, once the pin passed (`ptau.blake2b512` is the hash of the
 * file's bytes, computed in this audit); sets `ptau.sectionsChecked` (and `sectionsRemembered`).
 * Throws `audit.ptau_inconsistent` (naming the section) when a section is not what it must be.
 */
export async function ptauSectionsFinding(
  ptau: AuditedPtau,
  ptauPath: string,
  circuitPowers: number[],
  progress: Progress,
  timer: StageTimer,
  memo: PtauMemoOptions,
): Promise<string> {
  const earlier = memo.dir === undefined || memo.recheck ? undefined : await readPtauMemo(memo.dir, ptau.blake2b512);
  if (earlier && memoCovers(earlier, circuitPowers)) {
    progress({ type: 'step', circuit: 'ptau', step: `its sections were checked on ${earlier.checkedAt}: remembered` });
    progress({ type: 'finished', circuit: 'ptau' });
    ptau.sectionsChecked = earlier.checked;
    ptau.sectionsRemembered = { checkedAt: earlier.checkedAt, checkVersion: earlier.checkVersion };
    return describeRemembered(earlier);
  }
  const { checked, power } = await checkSections(ptauPath, circuitPowers, progress, timer);
  ptau.sectionsChecked = checked;
  let remembered = '';
  if (memo.dir !== undefined) {
    const domains = [...new Set(circuitPowers)];
    remembered = await rememberVerifiedPtau(memo.dir, { blake2b512: ptau.blake2b512, power, domains, checked }, earlier)
      .then(() => '; remembered on this machine, so a later audit on this ptau skips this check (--recheck-ptau)')
      .catch(
        (error: NodeJS.ErrnoException) => `; not remembered (the memo could not be written: ${error.code ?? 'error'})`,
      );
  }
  progress({ type: 'finished', circuit: 'ptau' });
  return `${checked.length} checks: ${CHECK_WORDS}${remembered}`;
}
