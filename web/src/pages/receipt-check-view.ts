/**
 * The public page's record search and receipt check (/ceremony/#receipt-check). One field takes a
 * contributor's name, a contribution hash (as snarkjs prints it, spaces and all) or a receipt:
 * pasting or dropping a receipt (or the receipts file the contribute page saves) checks it at once
 * with core/receipts/receipt-checker.ts, the same code as `ceremony verify-receipt`: the
 * coordinator's signature (GET /api/receipt-key), the transcript entry with the transcript's hash
 * chain recomputed, the final key read by HTTP range requests (a few kilobytes of keys of a hundred
 * megabytes) and held to the transcript's section hashes, its history recomputed as snarkjs does,
 * every later record's proof of knowledge and δ step and the key's δ pair (pairings on
 * ffjavascript's curve, loaded only when a receipt is checked), and its fixed sections as
 * contribution 0's. A name or hash lists the matching contributions of the transcript and, once
 * finalised, whether each final key's history lists them. The page times its own check and counts
 * the key bytes it fetched (shown, and kept in data attributes for the bench). Built once and kept
 * across the page's refreshes, so what the reader typed and found stays.
 *
 * One render function per part: the verdict card of a receipt, the check's summary, the search's
 * table, the "what this proves" card, the input controls; `createReceiptCheckView` wires them.
 */
import { CoordinatorError, isCoordinatorError } from '../../../core/errors.ts';
import { coordinatorEvidence } from '../../../core/receipts/coordinator-evidence.ts';
import type { PublicTranscriptEntry } from '../../../core/receipts/public-transcript.ts';
import {
  ReceiptChecker,
  receiptSubject,
  RESTS_ON_AUDIT,
  type ReceiptCheckerOptions,
  type ReceiptVerdict,
} from '../../../core/receipts/receipt-checker.ts';
import { MAX_RECEIPTS_FILE_BYTES, parseReceiptsText, type ReceiptsFile } from '../../../core/receipts/receipts-file.ts';
import { h, replaceChildren, tableHead } from '../ui/element.ts';
import { errorBanner } from '../ui/error-banner.ts';
import { formatBytes, formatTime, shortHash } from '../ui/format-units.ts';

const MAX_ROWS = 100;
const STEP_NAMES: Record<string, string> = {
  signature: 'Signature',
  transcript: 'Transcript',
  key: 'Key',
  proofs: 'Later contributions',
  sections: 'Fixed parts',
};
const stepName = (step: string): string => STEP_NAMES[step] ?? step;

type Steps = Array<[string, string]>;
type ContributionEntry = PublicTranscriptEntry & { type: 'contribution' };

function newChecker(onStep?: ReceiptCheckerOptions['onStep']): ReceiptChecker {
  return new ReceiptChecker(coordinatorEvidence({ baseUrl: location.origin, label: 'this coordinator' }), { onStep });
}

function failure(error: unknown): HTMLElement {
  const code = isCoordinatorError(error) ? error.code : 'browser';
  const message = error instanceof Error ? error.message : String(error);
  return errorBanner(code, message, true);
}

/** A receipts text: JSON that reads as receipts (anything else is a search). */
function asReceipts(text: string): ReceiptsFile | CoordinatorError | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    return parseReceiptsText(trimmed);
  } catch (error) {
    if (isCoordinatorError(error)) return error;
    throw error;
  }
}

/** One receipt's card: each step passed with what it established, then the verdict. */
function verdictCard(verdict: ReceiptVerdict, steps: Steps): HTMLElement {
  const subject = receiptSubject(verdict.receipt);
  return h(
    'div',
    {
      class: 'receipt-verdict',
      'data-ok': String(verdict.ok),
      'data-circuit': verdict.receipt.body.circuit,
      'data-index': verdict.receipt.body.index,
      ...(verdict.ok ? {} : { 'data-error-code': verdict.code }),
    },
    h('h3', {}, subject),
    h(
      'ul',
      { class: 'receipt-steps' },
      steps.map(([step, detail]) =>
        h('li', { 'data-step': step }, '✓ ', h('strong', {}, `${stepName(step)}: `), detail),
      ),
    ),
    verdict.ok
      ? h(
          'div',
          { class: 'banner ok', role: 'status' },
          h('strong', {}, `${verdict.message[0]!.toUpperCase()}${verdict.message.slice(1)}.`),
          h('div', { class: 'detail' }, `Left to the audit: ${verdict.restsOnAudit.join('; ')}.`),
        )
      : failure(new CoordinatorError(verdict.code, verdict.message)),
  );
}

/** The check's summary once every receipt has its verdict: the count, the time, the key bytes read. */
function finishSummary(
  summary: HTMLElement,
  verdicts: ReceiptVerdict[],
  elapsedMs: number,
  cost: { read: number; size: number },
  identifier: string | undefined,
): void {
  const failed = verdicts.filter((v) => !v.ok).length;
  summary.dataset.state = 'done';
  summary.dataset.ok = String(failed === 0);
  summary.dataset.elapsedMs = String(elapsedMs);
  summary.dataset.keyBytes = String(cost.read);
  summary.dataset.keySize = String(cost.size);
  if (identifier) summary.dataset.identifier = identifier;
  summary.textContent =
    (failed === 0 ? `All ${verdicts.length} checked: included.` : `${failed} of ${verdicts.length} did not pass.`) +
    ` Checked in ${(elapsedMs / 1000).toFixed(2)} s, reading ${formatBytes(cost.read)} of ${formatBytes(cost.size)}` +
    ' of keys by range requests.' +
    (identifier ? ` Ceremony identifier (the hash of its transcript’s last entry): ${identifier}.` : '');
}

/** Checks every receipt of `file` into `results`; `current()` turns false when another run started. */
async function runReceiptCheck(results: HTMLElement, file: ReceiptsFile, current: () => boolean): Promise<void> {
  const started = performance.now();
  const count = `${file.receipts.length} receipt${file.receipts.length === 1 ? '' : 's'}`;
  const summary = h('p', { id: 'receipt-check-summary', 'data-state': 'checking' }, `Checking ${count}…`);
  const cards = h('div', {});
  replaceChildren(results, summary, cards);
  const steps = new Map<number, Steps>();
  const checker = newChecker((receipt, step, detail) => {
    steps.set(receipt.position, [...(steps.get(receipt.position) ?? []), [step, detail]]);
    summary.textContent = `Checking ${receiptSubject(receipt)}: ${stepName(step).toLowerCase()} checked…`;
  });
  const verdicts: ReceiptVerdict[] = [];
  for (const receipt of file.receipts) {
    const verdict = await checker.check(receipt, file);
    if (!current()) return;
    verdicts.push(verdict);
    cards.append(verdictCard(verdict, steps.get(receipt.position) ?? []));
  }
  const elapsedMs = Math.round(performance.now() - started);
  // What the key reads cost: each circuit's keys were read once, however many receipts named it.
  const costs = await Promise.all(
    [...new Set(file.receipts.map((r) => r.body.circuit))].map((circuit) => checker.readCost(circuit)),
  );
  const cost = costs.reduce(
    (sum, c) => ({ read: sum.read + (c?.bytesRead ?? 0), size: sum.size + (c?.keySize ?? 0) }),
    { read: 0, size: 0 },
  );
  const identifier = (await checker.publicTranscript().catch(() => undefined))?.identifier?.hash;
  finishSummary(summary, verdicts, elapsedMs, cost, identifier);
}

/** The search's table of matching contributions, each with a cell for its final key's verdict. */
function matchesTable(
  matches: ContributionEntry[],
  finalCells: Map<ContributionEntry, HTMLElement>,
  finalised: boolean,
) {
  const rows = matches.slice(0, MAX_ROWS).map((entry) => {
    const cell = h('td', { class: 'final-check' }, finalised ? 'checking…' : 'not finalised yet');
    finalCells.set(entry, cell);
    return h(
      'tr',
      { 'data-circuit': entry.circuit!, 'data-index': entry.index! },
      h('td', {}, h('code', {}, entry.circuit!)),
      h('td', {}, `#${entry.index}`),
      h('td', {}, entry.contributor === 'anonymous' ? h('em', {}, 'anonymous') : entry.contributor!),
      h('td', {}, formatTime(entry.time)),
      h('td', { class: 'hash', title: entry.contributionHash! }, shortHash(entry.contributionHash)),
      h('td', { class: 'hash', title: entry.fileHash! }, shortHash(entry.fileHash)),
      cell,
    );
  });
  const headings = ['Circuit', 'Position', 'Contributor', 'Time', 'Contribution hash', 'File hash', 'Final key'];
  return h('table', { class: 'chain', id: 'record-table' }, tableHead(headings), h('tbody', {}, rows));
}

/** Fills each match's final-key cell: listed in its circuit's final key's history, or not. */
async function markFinalKeys(checker: ReceiptChecker, finalCells: Map<ContributionEntry, HTMLElement>): Promise<void> {
  for (const circuit of new Set([...finalCells.keys()].map((e) => e.circuit!))) {
    let hashes: string[];
    try {
      hashes = (await checker.keyHistory(circuit)).contributionHashes;
    } catch (error) {
      for (const [entry, cell] of finalCells) {
        if (entry.circuit === circuit)
          cell.replaceChildren(
            h('span', { class: 'status-failed', 'data-final': 'error' }, `✗ ${(error as Error).message}`),
          );
      }
      continue;
    }
    for (const [entry, cell] of finalCells) {
      if (entry.circuit !== circuit) continue;
      cell.replaceChildren(
        hashes[entry.index! - 1] === entry.contributionHash
          ? h(
              'span',
              { class: 'status-accepted', 'data-final': 'listed' },
              `✓ listed at record ${entry.index} of ${hashes.length}`,
            )
          : h('span', { class: 'status-failed', 'data-final': 'missing' }, '✗ not in its history'),
      );
    }
  }
}

/** Searches the transcript for a name or a hash into `results`. */
async function runSearch(results: HTMLElement, query: string, finalised: boolean, current: () => boolean) {
  const checker = newChecker();
  replaceChildren(results, h('p', {}, 'Searching the transcript…'));
  // The listing needs the hash chain only; whether a final key lists a match rests on the checked
  // transcript (markFinalKeys), which refuses a legacy format.
  const transcript = await checker.hashChainedTranscript();
  if (!current()) return;
  const hex = query.replace(/\s+/g, '').toLowerCase();
  const byHash = /^[0-9a-f]{8,128}$/.test(hex);
  const name = query.trim().toLowerCase();
  const matches = transcript.entries.filter(
    (e): e is ContributionEntry =>
      e.type === 'contribution' &&
      (byHash
        ? e.contributionHash!.startsWith(hex) || e.fileHash!.startsWith(hex)
        : e.contributor!.toLowerCase().includes(name)),
  );
  if (matches.length === 0) {
    const none = byHash
      ? 'No contribution has a contribution hash or file hash starting with that.'
      : 'No contributor of that name.';
    replaceChildren(results, h('p', { id: 'record-none' }, none));
    return;
  }
  const finalCells = new Map<ContributionEntry, HTMLElement>();
  const found = `${matches.length} contribution${matches.length === 1 ? '' : 's'} found in the transcript`;
  replaceChildren(
    results,
    h(
      'p',
      {},
      `${found} (its hash chain recomputed)${matches.length > MAX_ROWS ? `; the first ${MAX_ROWS} shown` : ''}.`,
    ),
    matchesTable(matches, finalCells, finalised),
  );
  if (finalised) await markFinalKeys(checker, finalCells);
}

/** The card that says what the check proves and what it leaves to the audit (as docs/receipts.md does). */
function provesCard(): HTMLElement {
  return h(
    'details',
    { id: 'receipt-check-proves' },
    h('summary', {}, 'What this check proves, and what it leaves to the audit'),
    h(
      'p',
      {},
      'For each receipt, in your browser, from the ceremony’s public files: ',
      h('strong', {}, 'the signature'),
      ' is the coordinator’s (its receipt key, published at ',
      h('a', { href: '/api/receipt-key' }, '/api/receipt-key'),
      ' and in every publication); ',
      h('strong', {}, 'the transcript'),
      ', its hash chain recomputed from its first entry, records your contribution at your position with the same ' +
        'contribution hash, file hash and name; ',
      h('strong', {}, 'the final key'),
      ', read with range requests (a few kilobytes, not the whole key), is the one the transcript records: every ' +
        'byte read must match the transcript’s hash of its section; its own history lists your contribution at your ' +
        'position, each record’s transcript digest following from the circuit hash and every record before it, ' +
        'the records being the transcript’s chain one for one, beacon included.',
    ),
    h(
      'p',
      {},
      h('strong', {}, 'Every later contribution'),
      ' proves knowledge of its secret and raises δ by it (pairings, in this page), so the final key’s δ carries ' +
        'your secret, which nobody else knows; its δ in G2 is its δ in G1. ',
      h('strong', {}, 'The parts no contribution changes'),
      ' (the public inputs’ points IC, α, β, γ, A, B and the coefficients) are the first key’s, by the transcript’s ' +
        'section hashes.',
    ),
    h(
      'p',
      {},
      `What it leaves to the full audit: ${RESTS_ON_AUDIT.join('; ')}. `,
      h('a', { href: '#audit' }, 'Run the audit'),
      ' (',
      h('code', {}, 'ceremony audit'),
      ') for those, once. This page’s code is served by the coordinator: to depend on nothing it serves, run ',
      h('code', {}, 'ceremony verify-receipt RECEIPTS.json DIR'),
      ', the same check, from your own checkout of the project on a published copy of the ceremony.',
    ),
  );
}

/** The field, its buttons and the file input, calling `go` with what was typed, pasted or dropped. */
function inputControls(go: (text: string) => void, refuse: (error: unknown) => void) {
  const input = h('textarea', {
    id: 'record-query',
    rows: 3,
    spellcheck: false,
    'aria-describedby': 'record-query-hint',
    placeholder: 'alice  ·  7a3f0c1d 9b2e…  ·  {"receipts": […]}',
  });
  const fileInput = h('input', {
    type: 'file',
    id: 'receipts-file',
    class: 'visually-hidden',
    accept: '.json,application/json',
  });
  // A pasted receipt replaces whatever the field held and is checked at once: one paste. Anything
  // else is pasted as usual (a name or a hash waits for Enter).
  input.addEventListener('paste', (event) => {
    const text = event.clipboardData?.getData('text/plain') ?? '';
    if (asReceipts(text) === undefined) return;
    event.preventDefault();
    input.value = text;
    go(text);
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      go(input.value);
    }
  });
  const readFile = async (file: File | undefined): Promise<void> => {
    if (!file) return;
    if (file.size > MAX_RECEIPTS_FILE_BYTES) {
      const why = `${file.name} is ${formatBytes(file.size)}; a receipts file is a few kilobytes`;
      refuse(new CoordinatorError('receipt.malformed', why));
      return;
    }
    input.value = await file.text();
    go(input.value);
  };
  fileInput.addEventListener('change', () => void readFile(fileInput.files?.[0]));
  // A dropped file is read as a receipts file; dropped text is left to the field.
  const carriesFile = (event: DragEvent): boolean => event.dataTransfer?.types.includes('Files') ?? false;
  input.addEventListener('dragover', (event) => carriesFile(event) && event.preventDefault());
  input.addEventListener('drop', (event) => {
    if (!carriesFile(event)) return;
    event.preventDefault();
    void readFile(event.dataTransfer?.files[0]);
  });
  const actions = h(
    'div',
    { class: 'actions' },
    h('button', { type: 'button', id: 'record-go', onclick: () => go(input.value) }, 'Search or check'),
    h('label', { class: 'button secondary', for: 'receipts-file' }, 'Open a receipts file…'),
    fileInput,
  );
  return { input, actions };
}

export interface ReceiptCheckView {
  element: HTMLElement;
  /** Called with each refresh of the page: whether the ceremony is finalised (the search says so). */
  update(finalised: boolean): void;
}

export function createReceiptCheckView(): ReceiptCheckView {
  let finalised = false;
  let running = 0;
  const results = h('div', { id: 'record-results', 'aria-live': 'polite' });
  const refuse = (error: unknown): void => replaceChildren(results, failure(error));

  const go = (text: string): void => {
    const run = ++running;
    const current = (): boolean => run === running;
    const receipts = asReceipts(text);
    const work =
      receipts instanceof CoordinatorError
        ? Promise.reject(receipts)
        : receipts
          ? runReceiptCheck(results, receipts, current)
          : text.trim()
            ? runSearch(results, text, finalised, current)
            : Promise.resolve();
    work.catch(refuse);
  };
  const { input, actions } = inputControls(go, refuse);

  const element = h(
    'section',
    { class: 'card', id: 'receipt-check', 'aria-labelledby': 'receipt-check-title' },
    h('h2', { id: 'receipt-check-title' }, 'Find a contribution, check a receipt'),
    h('label', { for: 'record-query' }, 'Your receipt, a contribution hash, or a contributor’s name'),
    h(
      'p',
      { class: 'hint', id: 'record-query-hint' },
      'Paste or drop the receipts file you downloaded after contributing (or one receipt from it) and it is checked ' +
        'at once. A name or a hash (as your client printed it) finds the contributions it names.',
    ),
    input,
    actions,
    results,
    provesCard(),
  );
  return {
    element,
    update(isFinalised) {
      finalised = isFinalised;
    },
  };
}
