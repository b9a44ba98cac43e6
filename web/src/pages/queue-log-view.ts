/**
 * The public page's view of the queue log (GET /api/queue-log): every step of every contributor
 * through the queues, newest first, a page at a time, searchable by name (or public id) and
 * filterable by circuit and by event. Built once: what the reader typed and chose survives the
 * page's refreshes (it carries data-persistent); the newest page is read again on each refresh
 * unless the reader went to older entries. How `ceremony audit` checks the log is said under it.
 */
import { type ApiClient } from '../../../client/api-client.ts';
import type { QueueLogEntry } from '../../../core/queue-log/queue-log-entry.ts';
import { QUEUE_LOG_ENTRY_TYPES } from '../../../core/queue-log/queue-log-entry.ts';
import { errorNotice } from '../sign-in/sign-in-panel.ts';
import { h, replaceChildren, tableHead } from '../ui/element.ts';
import { formatSeconds, formatTime, shortHash } from '../ui/format-units.ts';

const PAGE = 50;

interface QueueLogPage {
  ceremony: string;
  total: number;
  entries: QueueLogEntry[];
}

const EVENT_WORDS: Record<QueueLogEntry['type'], string> = {
  rules: 'rules',
  join: 'in line',
  away: 'away',
  back: 'back',
  granted: 'turn granted',
  taken: 'turn taken',
  lapsed: 'turn lapsed',
  skipped: 'let a turn pass',
  refused: 'refused',
  accepted: 'accepted',
  left: 'left',
  removed: 'removed',
};

const JOIN_WORDS = {
  join: 'joined',
  choice: 'moved here by a new choice of circuits',
  accepted: 'after an accepted contribution',
  refused: 'again after a refusal',
  missed: 'again after a missed turn',
} as const;

/** A rule's duration; 0 turns the rule off. */
const span = (ms: number): string => (ms === 0 ? 'off' : formatSeconds(ms));

function detail(entry: QueueLogEntry): string {
  switch (entry.type) {
    case 'rules':
      return (
        `circuits ${entry.circuits.join(', ')}; away when unseen for ${span(entry.presenceMs)}` +
        (entry.disconnectGraceMs ? ` or ${span(entry.disconnectGraceMs)} after its page closes` : '') +
        '; ' +
        `a turn to be taken within ${span(entry.takeTurnMs)}` +
        (entry.takePriorityMs
          ? ` (by the next in line too after ${span(entry.takePriorityMs)}` +
            (entry.standbyStepMs ? `, one more entry every ${span(entry.standbyStepMs)}` : '') +
            ')'
          : '') +
        `, lasting ${span(entry.turnTimeoutMs)} ` +
        (entry.turnSilenceMs ? `(missed once its client is silent for ${span(entry.turnSilenceMs)}) ` : '') +
        (entry.uploadStartMs ? `(missed without upload bytes by ${span(entry.uploadStartMs)}) ` : '') +
        `(at most ${span(entry.maxTurnMs)}); cooldown ${span(entry.cooldownMs)}, ` +
        `out after ${entry.maxMissedTurns} missed turns`
      );
    case 'join':
      return (
        `position ${entry.position}, ${JOIN_WORDS[entry.via]}` +
        (entry.eligibleAt ? `, eligible from ${formatTime(entry.eligibleAt)}` : '')
      );
    case 'away':
      return entry.disconnectedAt
        ? `passed over: its page or terminal closed at ${formatTime(entry.disconnectedAt)}`
        : `passed over: not seen since ${formatTime(entry.seenAt)}`;
    case 'back':
      return 'seen again: eligible';
    case 'granted':
      return (
        (entry.takeBy ? `to be taken by ${formatTime(entry.takeBy)}; ` : '') + `deadline ${formatTime(entry.deadline)}`
      );
    case 'taken':
      return 'started';
    case 'lapsed':
      return entry.taken
        ? `missed (${entry.missedTurns ?? 1} in this circuit)` +
            (entry.silentSince ? `: its client silent since ${formatTime(entry.silentSince)}` : '') +
            (entry.disconnectedAt ? `: its page or terminal closed at ${formatTime(entry.disconnectedAt)}` : '') +
            (entry.uploadDue ? `: no upload by ${formatTime(entry.uploadDue)}` : '') +
            (entry.uploadStalledSince ? `: its upload stalled since ${formatTime(entry.uploadStalledSince)}` : '')
        : (entry.disconnectedAt
            ? `passed on: its page or terminal closed at ${formatTime(entry.disconnectedAt)}`
            : entry.takenOverBy
              ? `not taken: taken on standby by ${entry.takenOverBy}`
              : 'not taken in time: passed on') + `, a missed turn (${entry.missedTurns ?? 1} in this circuit)`;
    case 'skipped':
      return (
        `offered on standby, taken by ${entry.takenOverBy} behind: ` +
        `a missed turn (${entry.missedTurns} in this circuit)`
      );
    case 'refused':
      return `${entry.outcome} [${entry.code}]` + (entry.missedTurns ? `, a missed turn (${entry.missedTurns})` : '');
    case 'accepted':
      return `contribution #${entry.index}, transcript entry ${shortHash(entry.transcriptHash)}`;
    case 'left':
      return entry.from === 'after_verdict'
        ? 'after the verdict'
        : entry.from === 'turn'
          ? `from a turn, a missed turn (${entry.missedTurns ?? 1} in this circuit)`
          : 'from the queue';
    case 'removed':
      return entry.reason === 'missed_turns' ? 'after missed turns' : 'by the coordinator';
  }
}

export interface QueueLogView {
  element: HTMLElement;
  /** Fills the circuit filter (once) and reads the newest page again, unless the reader paged back. */
  update(circuits: readonly string[]): void;
}

/** The search's fields: a name or public id, a circuit (filled by the first update), an event type. */
function filterControls(): { search: HTMLInputElement; circuit: HTMLSelectElement; event: HTMLSelectElement } {
  const search = h('input', {
    type: 'text',
    id: 'queue-log-search',
    placeholder: 'a name (or a public id, e.g. github:123 or anonymous:…)',
    maxlength: 100,
    autocomplete: 'off',
  });
  const circuit = h('select', { id: 'queue-log-circuit' }, h('option', { value: '' }, 'every circuit'));
  const event = h(
    'select',
    { id: 'queue-log-event' },
    h('option', { value: '' }, 'every event'),
    QUEUE_LOG_ENTRY_TYPES.map((type) => h('option', { value: type }, EVENT_WORDS[type])),
  );
  return { search, circuit, event };
}

/** One entry of the log as a row of the table. */
function entryRow(entry: QueueLogEntry): HTMLElement {
  return h(
    'tr',
    { 'data-seq': entry.seq, 'data-type': entry.type },
    h('td', {}, String(entry.seq)),
    h('td', {}, formatTime(entry.time)),
    h('td', {}, EVENT_WORDS[entry.type]),
    h('td', {}, entry.type === 'rules' ? '' : entry.circuit),
    h('td', { title: entry.type === 'rules' ? '' : entry.contributor }, entry.type === 'rules' ? '' : entry.name),
    h('td', {}, detail(entry)),
  );
}

export function createQueueLogView(api: ApiClient): QueueLogView {
  const { search, circuit, event } = filterControls();
  const rows = h('tbody', {});
  const status = h('p', { class: 'hint', id: 'queue-log-status', 'aria-live': 'polite' });
  const older = h(
    'button',
    { type: 'button', class: 'secondary', id: 'queue-log-older', hidden: true },
    'Older entries',
  );
  let oldest: number | undefined;
  let pagedBack = false;
  let loading: Promise<void> | undefined;

  const query = (before: number): string => {
    const params = new URLSearchParams({ before: String(before), limit: String(PAGE) });
    if (search.value.trim()) params.set('contributor', search.value.trim());
    if (circuit.value) params.set('circuit', circuit.value);
    if (event.value) params.set('type', event.value);
    return `/api/queue-log?${params}`;
  };
  const load = (fromStart: boolean): Promise<void> =>
    (loading ??= (async () => {
      try {
        const page = await api.get<QueueLogPage>(query(fromStart ? Number.MAX_SAFE_INTEGER : oldest!));
        if (fromStart) rows.replaceChildren();
        rows.append(...page.entries.map(entryRow));
        oldest = page.entries.at(-1)?.seq ?? oldest;
        older.hidden = page.entries.length < PAGE;
        status.textContent =
          `${rows.childElementCount} shown, newest first, of ${page.total} entries in all` +
          (search.value.trim() || circuit.value || event.value ? ' (filtered)' : '');
      } catch (error) {
        replaceChildren(status, errorNotice(error));
      } finally {
        loading = undefined;
      }
    })());

  const form = h(
    'form',
    { class: 'actions', role: 'search', 'aria-label': 'Search the queue log' },
    h('label', { for: 'queue-log-search', class: 'visually-hidden' }, 'Name'),
    search,
    h('label', { for: 'queue-log-circuit', class: 'visually-hidden' }, 'Circuit'),
    circuit,
    h('label', { for: 'queue-log-event', class: 'visually-hidden' }, 'Event'),
    event,
    h('button', { type: 'submit' }, 'Search'),
  );
  const reload = (): void => {
    pagedBack = false;
    void load(true);
  };
  form.addEventListener('submit', (submitted) => {
    submitted.preventDefault();
    reload();
  });
  circuit.addEventListener('change', reload);
  event.addEventListener('change', reload);
  older.addEventListener('click', () => {
    pagedBack = true;
    void load(false);
  });

  const element = h(
    'section',
    { class: 'card', id: 'queue-log', 'aria-labelledby': 'queue-log-title', 'data-persistent': '' },
    h('h2', { id: 'queue-log-title' }, 'Queue log'),
    h(
      'p',
      {},
      'Every step of every contributor through the queues: joins with their place in line, turns ' +
        'granted, taken and lapsed, contributors away (passed over, their place kept) and back, ' +
        'verdicts, leaves and removals. It is hash-chained like the transcript; each join, refusal ' +
        'and removal comes with a signed receipt, and `ceremony audit` replays the whole log to check ' +
        'that every turn went to the first in line by the rules it states. Anonymous contributors ' +
        'appear under a pseudonym of this ceremony only.',
    ),
    form,
    status,
    h('table', { class: 'chain' }, tableHead(['Seq', 'Time', 'Event', 'Circuit', 'Contributor', 'What']), rows),
    older,
  );
  return {
    element,
    update(circuits) {
      if (circuit.options.length === 1) circuit.append(...circuits.map((name) => h('option', { value: name }, name)));
      if (!pagedBack) void load(true);
    },
  };
}
