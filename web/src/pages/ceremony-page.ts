/**
 * The public ceremony page (/ceremony/), no sign-in: each circuit's chain (index, contributor,
 * contribution hash, time), queue lengths, the search of the record and the receipt check
 * (receipt-check-view.ts), the transcript, the queue log (queue-log-view.ts), a download link for
 * every file an auditor needs, how to re-verify it all with `ceremony audit`, and the ceremony's
 * identity with the commands that check it (ceremony-identity-view.ts). Refreshes itself.
 */
import '../styles.css';
import { ApiClient, ApiError } from '../../../client/api-client.ts';
import type { CeremonyView, CircuitView, ManifestView, TranscriptView } from '../api/api-types.ts';
import { errorNotice } from '../sign-in/sign-in-panel.ts';
import { byId, copyButton, downloadText, h, replaceChildren, tableHead } from '../ui/element.ts';
import { formatTime, shortHash } from '../ui/format-units.ts';
import { renderSiteHeader } from '../ui/site-header.ts';
import { createReceiptCheckView } from './receipt-check-view.ts';
import { createQueueLogView } from './queue-log-view.ts';
import { renderIdentity } from './ceremony-identity-view.ts';
import { zkeyFileName, zkeyUrl } from '../../../core/coordinator-api/file-urls.ts';

const api = new ApiClient();
const REFRESH_MS = 5000;
const PHASE_WORDS: Record<CeremonyView['phase'], string> = {
  setup: 'not open yet',
  open: 'open for contributions',
  paused: 'paused',
  closed: 'closed, awaiting finalisation',
  finalising: 'closed, being finalised',
  finalised: 'finalised',
};

function transcriptJsonl(transcript: TranscriptView): string {
  // Byte for byte the coordinator's transcript/transcript.jsonl (one JSON entry per line).
  return transcript.entries.map((entry) => JSON.stringify(entry)).join('\n') + '\n';
}

function renderSummary(ceremony: CeremonyView, transcript: TranscriptView): HTMLElement {
  const contributions = ceremony.circuits.reduce((sum, c) => sum + c.contributions, 0);
  const contributors = new Set(transcript.entries.filter((e) => e.type === 'contribution').map((e) => e.contributor))
    .size;
  const waiting = ceremony.circuits.reduce((sum, c) => sum + c.queueLength, 0);
  const stat = (label: string, value: string | number, id: string) =>
    h('div', {}, h('div', { class: 'stat', id }, String(value)), h('div', { class: 'muted' }, label));
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'page-title' },
    h('h1', { id: 'page-title' }, ceremony.title ?? ceremony.id),
    h(
      'p',
      { class: 'lead' },
      'The ceremony is ',
      h('strong', { id: 'phase', 'data-phase': ceremony.phase }, PHASE_WORDS[ceremony.phase]),
      '. Everything on this page is public and can be re-verified from the files below.',
    ),
    h(
      'div',
      { class: 'grid-2' },
      stat('circuits', ceremony.circuits.length, 'stat-circuits'),
      stat('contributions accepted', contributions, 'stat-contributions'),
      stat('named contributors (anonymous ones count once)', contributors, 'stat-contributors'),
      stat('waiting in queues', waiting, 'stat-waiting'),
    ),
  );
}

function renderFinal(ceremony: CeremonyView, manifest: ManifestView | null): HTMLElement {
  if (!manifest) {
    return h(
      'section',
      { class: 'card', id: 'final' },
      h('h2', {}, 'Final keys and manifest'),
      h(
        'p',
        { class: 'muted' },
        'Not yet: the coordinator finalises the ceremony (a public random ' +
          'beacon applied to each chain’s last key) after it closes. The ' +
          'manifest and the Solidity verifiers appear here then.',
      ),
    );
  }
  const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
  return h(
    'section',
    { class: 'card', id: 'final', 'aria-labelledby': 'final-title' },
    h('h2', { id: 'final-title' }, 'Final keys and manifest'),
    h(
      'p',
      {},
      'The delta manifest ties each deployed verifier contract to this ceremony. Check a deployment against ' +
        'the whole final keys, in the folder the script below fetches, with ',
      h('code', {}, 'ceremony verify-deployment RPC final/manifest.json verifiers.json --ceremony .'),
      ' (without --ceremony it checks δ alone, as the service document defines it).',
    ),
    h(
      'div',
      { class: 'actions' },
      h(
        'a',
        { class: 'button', href: '/api/manifest', download: 'manifest.json', id: 'manifest-link' },
        'Download manifest.json',
      ),
      copyButton('Copy manifest', () => manifestText),
    ),
    h('pre', { id: 'manifest' }, manifestText),
    h(
      'table',
      { id: 'final-files' },
      h('caption', {}, 'Final files'),
      tableHead(['Circuit', 'Verifier contract', 'Final key', 'Verification key', 'Beacon hash']),
      h(
        'tbody',
        {},
        ceremony.circuits.map((c) =>
          h(
            'tr',
            { 'data-circuit': c.name },
            h('th', { scope: 'row' }, h('code', {}, c.name)),
            h(
              'td',
              {},
              h('a', { href: `/api/final/${c.verifier}.sol`, download: `${c.verifier}.sol` }, `${c.verifier}.sol`),
            ),
            h('td', {}, h('a', { href: `/api/final/${c.name}.zkey`, download: `${c.name}.zkey` }, `${c.name}.zkey`)),
            h(
              'td',
              {},
              h(
                'a',
                { href: `/api/final/${c.name}.vkey.json`, download: `${c.name}.vkey.json` },
                `${c.name}.vkey.json`,
              ),
            ),
            h('td', { class: 'hash', title: c.final?.contributionHash ?? '' }, shortHash(c.final?.contributionHash)),
          ),
        ),
      ),
    ),
  );
}

function renderCircuit(circuit: CircuitView, open: boolean): HTMLElement {
  return h(
    'details',
    { class: 'circuit', id: `circuit-${circuit.name}`, 'data-circuit': circuit.name, open },
    h(
      'summary',
      {},
      h('code', {}, circuit.name),
      ` — ${circuit.contributions} contribution${circuit.contributions === 1 ? '' : 's'}, `,
      h('span', { class: 'queue', 'data-queue': circuit.queueLength }, `${circuit.queueLength} waiting`),
    ),
    h(
      'p',
      { class: 'detail' },
      `Verifier ${circuit.verifier}, ${circuit.publicInputs} public ` +
        `inputs${circuit.constraints ? `, ${circuit.constraints} constraints` : ''}. `,
      h(
        'a',
        { href: `/api/circuits/${encodeURIComponent(circuit.name)}/r1cs`, download: `${circuit.name}.r1cs` },
        'r1cs',
      ),
    ),
    h(
      'table',
      { class: 'chain' },
      h('caption', { class: 'visually-hidden' }, `Chain of ${circuit.name}`),
      tableHead(['#', 'Contributor', 'Contribution hash', 'Time', 'File']),
      h(
        'tbody',
        {},
        circuit.chain.map((entry) =>
          h(
            'tr',
            { 'data-index': entry.index },
            h('td', {}, String(entry.index)),
            h(
              'td',
              { class: 'contributor' },
              entry.index === 0
                ? h('span', { class: 'muted' }, 'initial key (r1cs + ptau)')
                : entry.contributor === 'anonymous'
                  ? h('em', {}, 'anonymous')
                  : (entry.contributor ?? '—'),
            ),
            h('td', { class: 'hash', title: entry.contributionHash ?? '' }, shortHash(entry.contributionHash)),
            h('td', {}, formatTime(entry.time)),
            h(
              'td',
              {},
              h(
                'a',
                { href: zkeyUrl(circuit.name, entry.index), download: zkeyFileName(circuit.name, entry.index) },
                zkeyFileName(circuit.name, entry.index),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

function renderTranscript(transcript: TranscriptView, open: boolean): HTMLElement {
  return h(
    'section',
    { class: 'card', id: 'transcript', 'aria-labelledby': 'transcript-title' },
    h('h2', { id: 'transcript-title' }, 'Transcript'),
    h(
      'p',
      {},
      `Every link of every chain, hash-chained: each entry commits to the ` +
        `one before it, so the history cannot be rewritten unnoticed. ` +
        `${transcript.entries.length} entries.`,
    ),
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          id: 'download-transcript',
          onclick: () => downloadText('transcript.jsonl', transcriptJsonl(transcript), 'application/jsonl'),
        },
        'Download transcript.jsonl',
      ),
    ),
    h(
      'details',
      { id: 'transcript-entries', open },
      h('summary', {}, 'All entries'),
      h(
        'table',
        { class: 'chain' },
        tableHead(['Seq', 'Time', 'Entry', 'Contributor', 'Hash']),
        h(
          'tbody',
          {},
          transcript.entries.map((e) =>
            h(
              'tr',
              {},
              h('td', {}, String(e.seq)),
              h('td', {}, formatTime(e.time)),
              h('td', {}, describeEntry(e)),
              h('td', {}, e.contributor ?? ''),
              h(
                'td',
                { class: 'hash', title: e.contributionHash ?? e.manifestHash ?? e.fileHash ?? '' },
                shortHash(e.contributionHash ?? e.manifestHash ?? e.fileHash),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

/** How to re-verify it all: two commands from one's own checkout; nothing of this page runs there. */
function renderAudit(ceremony: CeremonyView, transcript: TranscriptView): HTMLElement {
  // A fixed name, never the ceremony id: the commands are copied into a shell, and the id is the coordinator's word.
  const dir = 'ceremony-audit';
  return h(
    'section',
    { class: 'card', id: 'audit', 'aria-labelledby': 'audit-title' },
    h('h2', { id: 'audit-title' }, 'Re-verify everything yourself'),
    h(
      'ol',
      {},
      h(
        'li',
        {},
        'Check out the project’s repository (it holds ',
        h('code', {}, 'ceremony-data/ceremony.json'),
        ' and the circuits) and run ',
        h('code', {}, 'npm install'),
        ' in it. Everything below runs from your checkout: this page gives you no script to run.',
      ),
      h(
        'li',
        {},
        // Not `npx ceremony`: outside the checkout npx would fetch whatever the registry calls `ceremony`.
        'In the checkout, run ',
        h('code', { id: 'audit-fetch' }, `node bin/ceremony.js fetch ${location.origin} ${dir}`),
        '. It copies your checkout’s ',
        h('code', {}, 'ceremony.json'),
        ' and fetches every file listed on this page into the layout the audit reads: the powers of tau, ' +
          'each r1cs, every zkey of every chain, the transcript, the queue log and, once finalised, the final ' +
          'keys, verification keys, verifiers and manifest.',
      ),
      h(
        'li',
        {},
        'Then run ',
        h('code', { id: 'audit-command' }, `node bin/ceremony.js audit ${dir}`),
        '. It checks contribution 0 of each chain against the r1cs and the ' +
          'powers of tau (without rebuilding it), then each final key against contribution 0: every ' +
          'recorded contribution’s proof of knowledge and δ step, the beacon applied last, and its L and H ' +
          'contribution 0’s scaled to its δ; it checks every file against the transcript and recomputes the ' +
          'manifest (add --every-link to check every key between against the one before it too, such as ' +
          'the one your contribution made). It prints each finding and the ceremony identifier, then ',
        h('code', {}, 'audit passed'),
        ' or the problems. Until the ceremony is finalised, an audit fails as unfinished; add ',
        h('code', {}, '--in-progress'),
        ' to check what is there so far (its last line then says it is not finished).',
      ),
      h(
        'li',
        {},
        'The audit takes the circuits, verifiers, public inputs and the hashes of every r1cs from your checkout’s ',
        h('code', {}, 'ceremony.json'),
        ', never from this coordinator, and fails a ceremony that differs. It trusts no powers of tau it cannot ' +
          'identify: a public Hermez file is recognised by its hash; any other must be pinned by you, with ',
        h('code', {}, '--ptau-hash HASH'),
        ' (its BLAKE2b-512 as ',
        h('code', {}, 'b2sum'),
        ' prints it). This page gives no hash to pin: take it from a source you trust, never from this ' +
          'coordinator. ',
        ceremony.testNetwork
          ? 'This is a test network: its powers of tau are a development file ' +
              'whose secret is public, so make that file yourself (`ceremony dev-ptau`), pin its hash and expect ' +
              'the audit to call it INSECURE.'
          : 'Without a pin the audit fails.',
      ),
    ),
    h(
      'div',
      { class: 'actions' },
      h('a', { class: 'button secondary', href: '/api/ptau', download: 'powers-of-tau.ptau' }, 'Powers of tau (ptau)'),
      copyButton(
        'Copy the commands',
        () => `node bin/ceremony.js fetch ${location.origin} ${dir}\nnode bin/ceremony.js audit ${dir}\n`,
      ),
    ),
    renderIdentity(ceremony, transcript, dir),
  );
}

async function load(): Promise<{ ceremony: CeremonyView; transcript: TranscriptView; manifest: ManifestView | null }> {
  const [ceremony, transcript] = await Promise.all([
    // Revalidated, not fetched again: an unchanged answer is a 304 (and not counted against the address's reads).
    api.get<CeremonyView>('/api/ceremony', { cache: 'no-cache' }),
    api.get<TranscriptView>('/api/transcript', { cache: 'no-cache' }),
  ]);
  const manifest = ceremony.finalised
    ? await api
        .get<ManifestView>('/api/manifest')
        .catch((error: unknown) =>
          error instanceof ApiError && error.code === 'manifest.not_finalised' ? null : Promise.reject(error),
        )
    : null;
  return { ceremony, transcript, manifest };
}

/**
 * Replaces every child of `parent` but `kept` with `before` and `after` it, never detaching `kept`:
 * a detached field loses the reader's focus and caret, and a refresh must not take them away.
 */
function replaceAround(parent: HTMLElement, kept: HTMLElement, before: Node[], after: Node[]): void {
  // Elements marked data-persistent (built once, like `kept`) stay where they are.
  for (const child of [...parent.childNodes])
    if (child !== kept && !(child instanceof HTMLElement && child.dataset.persistent !== undefined)) child.remove();
  if (kept.parentNode !== parent) parent.append(kept);
  kept.before(...before);
  kept.after(...after);
}

async function main(): Promise<void> {
  const app = byId('app');
  const main = h('main', { id: 'main' });
  // Built once: what a reader typed into it, and what it found, survive the refreshes.
  const receiptCheck = createReceiptCheckView();
  const queueLog = createQueueLogView(api);
  let lastState = '';
  const refresh = async () => {
    try {
      const { ceremony, transcript, manifest } = await load();
      // The last entry's hash too: a transcript rewritten to the same length is another identity to show.
      const identity = transcript.entries.at(-1)?.hash;
      const state = JSON.stringify([ceremony, transcript.entries.length, identity, manifest !== null]);
      if (state !== lastState) {
        lastState = state;
        // Keep whatever the reader opened across refreshes.
        const open = new Set([...main.querySelectorAll('details[open]')].map((d) => d.id).filter(Boolean));
        const firstLoad = main.childElementCount === 0;
        document.title = `${ceremony.title ?? ceremony.id} · ceremony`;
        replaceAround(app, main, [renderSiteHeader('ceremony', ceremony)], []);
        receiptCheck.update(ceremony.finalised);
        replaceAround(
          main,
          receiptCheck.element,
          [renderSummary(ceremony, transcript), renderFinal(ceremony, manifest)],
          [
            h(
              'section',
              { class: 'card', id: 'circuits', 'aria-labelledby': 'circuits-title' },
              h('h2', { id: 'circuits-title' }, 'Circuits and their chains'),
              ceremony.circuits.map((c) =>
                renderCircuit(c, (firstLoad && c.chain.length <= 12) || open.has(`circuit-${c.name}`)),
              ),
            ),
            renderTranscript(transcript, open.has('transcript-entries')),
            renderAudit(ceremony, transcript),
          ],
        );
        if (firstLoad) main.append(queueLog.element);
      }
      queueLog.update(ceremony.circuits.map((c) => c.name));
    } catch (error) {
      if (main.childElementCount === 0) replaceChildren(app, h('main', {}, errorNotice(error)));
    } finally {
      setTimeout(() => void refresh(), REFRESH_MS);
    }
  };
  await refresh();
}

void main();

/** A transcript row's event: the circuit and index of a key's entry, the block of a beacon announcement. */
function describeEntry(e: TranscriptView['entries'][number]): string {
  if (e.type === 'finalised') return 'finalised';
  if (e.type === 'beaconAnnouncement')
    return (
      `beacon announced: the hash of block ${e.blockNumber} of chain ${e.chainId}, ` +
      `hashed 2^${e.iterationsExp} times`
    );
  return `${e.type} ${e.circuit ?? ''} #${e.index ?? ''}`;
}
