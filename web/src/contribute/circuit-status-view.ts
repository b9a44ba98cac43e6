/**
 * Where the contributor stands on each circuit, in words and progress bars: one table row per
 * circuit, combining the coordinator's state with the browser's own work during a turn. Each row
 * carries `data-circuit` and `data-status` so tests and assistive tools can read it directly.
 */
import type { CeremonyPhase, CircuitProgress, ContributionView } from '../api/api-types.ts';
import { plainWords } from '../api/error-messages.ts';
import { h, tableHead } from '../ui/element.ts';
import {
  formatBytes,
  formatCountdown,
  formatDuration,
  formatPosition,
  formatSeconds,
  formatTime,
  percent,
  shortHash,
} from '../ui/format-units.ts';
import { standbyStarting } from '../../../client/run-words.ts';
import type { SessionSnapshot, TurnActivity } from './contributor-session.ts';
import { rateOf, streamedTimeLeftMs } from './turn-eta.ts';

export type CircuitStatus =
  | 'pending'
  | 'waiting'
  | 'turn'
  | 'preparing'
  | 'downloading'
  | 'computing'
  | 'uploading'
  | 'contributing'
  | 'verifying'
  | 'accepted'
  | 'failed';

export interface CircuitLine {
  circuit: string;
  status: CircuitStatus;
  /** Short status word(s). */
  label: string;
  /** One sentence of detail. */
  detail: string;
  progress?: { value: number; max: number; text: string };
  /** The latest refused attempt on a circuit not yet accepted. */
  refusal?: ContributionView;
  /** Place in the circuit's queue while waiting. */
  position?: number;
}

const LABELS: Record<CircuitStatus, string> = {
  pending: 'Later',
  waiting: 'Waiting',
  turn: 'Your turn',
  preparing: 'Your turn: preparing',
  downloading: 'Downloading',
  computing: 'Computing',
  uploading: 'Uploading',
  contributing: 'Contributing',
  verifying: 'Verifying',
  accepted: 'Accepted',
  failed: 'Problem',
};

/** What a circuit not yet reached says once the ceremony takes no more contributions. */
const CLOSED_DETAIL: Partial<Record<CeremonyPhase, string>> = {
  closed: 'The ceremony closed before your turn here: no turn starts unless the coordinator reopens it.',
  finalising: 'The ceremony closed before your turn here, and is being finalised.',
  finalised: 'The ceremony closed before your turn here, and is finalised.',
};

function latestRefusal(circuit: string, contributions: readonly ContributionView[]): ContributionView | undefined {
  const attempts = contributions.filter((c) => c.circuit === circuit).sort((a, b) => a.createdAt - b.createdAt);
  const last = attempts.at(-1);
  return last && (last.status === 'refused' || last.status === 'error' || last.status === 'discarded')
    ? last
    : undefined;
}

function describeCircuit(
  progress: CircuitProgress,
  snapshot: SessionSnapshot,
  previous: string | undefined,
): CircuitLine {
  const { circuit } = progress;
  const serverNow = Date.now() + snapshot.clockOffsetMs;
  const refusal = progress.state === 'accepted' ? undefined : latestRefusal(circuit, snapshot.me?.contributions ?? []);
  const position = progress.state === 'waiting' ? progress.position : undefined;
  const line = (status: CircuitStatus, detail: string, extra: Partial<CircuitLine> = {}): CircuitLine => ({
    circuit,
    status,
    label: LABELS[status],
    detail,
    refusal,
    position,
    ...extra,
  });

  const phase = snapshot.me?.phase;
  // Closed for good or for now: a wait that leads to no turn says so, not "your turn in 5 minutes".
  if ((progress.state === 'pending' || progress.state === 'waiting') && phase && CLOSED_DETAIL[phase])
    return line(progress.state, CLOSED_DETAIL[phase]!);
  switch (progress.state) {
    case 'pending':
      return line('pending', previous ? `After ${previous}.` : 'Join to take your place in line.');
    case 'waiting': {
      if (progress.eligibleAt && progress.eligibleAt > serverNow) {
        return line(
          'waiting',
          `You missed your turn; you are ${formatPosition(progress.position)} ` +
            `and eligible again in ${formatCountdown(progress.eligibleAt - serverNow)}.`,
        );
      }
      // A turn granted ahead, not taken, offered here too (standby), being taken: it is theirs once downloaded.
      if (progress.standbyUntil !== undefined && snapshot.activities.has(circuit)) {
        const words = standbyStarting(circuit);
        return line('waiting', `${words[0]!.toUpperCase()}${words.slice(1)}.`);
      }
      if (phase === 'paused' || phase === 'setup') {
        return line(
          'waiting',
          `You are ${formatPosition(progress.position)}. No turn starts until ` +
            `the coordinator ${phase === 'paused' ? 'reopens' : 'opens'} the ceremony.`,
        );
      }
      return line(
        'waiting',
        `You are ${formatPosition(progress.position)}; your turn in ${formatDuration(progress.etaMs)}.`,
      );
    }
    case 'verifying':
      return line('verifying', 'The coordinator is checking your contribution.');
    case 'accepted': {
      const local = snapshot.localHashes.get(circuit);
      const match =
        local === undefined
          ? ''
          : local === progress.contributionHash
            ? ' It matches the hash this browser computed.'
            : ' It does NOT match the hash this browser computed: tell the coordinator.';
      return line('accepted', `Contribution #${progress.index}, hash ${shortHash(progress.contributionHash)}.${match}`);
    }
    case 'turn': {
      const deadline = Math.max(progress.deadline, snapshot.deadlines.get(circuit) ?? 0);
      const timeLeft = `${formatCountdown(deadline - serverNow)} left in your turn`;
      return describeActivity(snapshot.activities.get(circuit), timeLeft, line);
    }
  }
}

function describeActivity(
  activity: TurnActivity | undefined,
  timeLeft: string,
  line: (status: CircuitStatus, detail: string, extra?: Partial<CircuitLine>) => CircuitLine,
): CircuitLine {
  if (!activity) return line('turn', `Starting… (${timeLeft})`);
  switch (activity.stage) {
    // The upload is complete, so the coordinator is already verifying it; a poll answered before
    // the upload ended may still say `turn`, which must not make the page look as if it restarted.
    case 'submitted':
      return line('verifying', 'The coordinator is checking your contribution.');
    case 'preparing':
      return line('preparing', `Looking up the current key (${timeLeft}).`);
    case 'downloading': {
      const text = activity.total
        ? `${formatBytes(activity.loaded)} of ${formatBytes(activity.total)} ` +
          `(${percent(activity.loaded, activity.total)}%)`
        : formatBytes(activity.loaded);
      return line('downloading', `Downloading the current key: ${text}. ${timeLeft}.`, {
        progress: { value: activity.loaded, max: activity.total ?? activity.loaded, text },
      });
    }
    case 'computing':
      return line('computing', `Adding your randomness: ${activity.step}, ${activity.percent}%. ${timeLeft}.`, {
        progress: { value: activity.percent, max: 100, text: `${activity.percent}%` },
      });
    case 'uploading': {
      const text =
        `${formatBytes(activity.sent)} of ${formatBytes(activity.total)} ` +
        `(${percent(activity.sent, activity.total)}%)`;
      const resumed = activity.resumedFrom ? ` Resumed at ${formatBytes(activity.resumedFrom)}.` : '';
      return line('uploading', `Uploading your contribution: ${text}.${resumed} ${timeLeft}.`, {
        progress: { value: activity.sent, max: activity.total, text },
      });
    }
    case 'streaming':
      return describeStreaming(activity, timeLeft, line);
    case 'failed': {
      const words = plainWords(activity.code, activity.message);
      return line('failed', `${words.what} ${words.next} Trying again shortly. (${timeLeft})`);
    }
  }
}

type StreamingActivity = Extract<TurnActivity, { stage: 'streaming' }>;

/** "3.2 MB of 12 MB at 8.1 MB/s": a part of a streamed turn, bytes to go and rate. */
function transferWords(part: { done: number; total: number }, rate: number | undefined): string {
  const of = part.total ? ` of ${formatBytes(part.total)}` : '';
  return `${formatBytes(part.done)}${of}${rate ? ` at ${formatBytes(rate)}/s` : ''}`;
}

/** The streamed turn: its three parts at once, each with its rate, and the time left. */
function describeStreaming(
  activity: StreamingActivity,
  timeLeft: string,
  line: (status: CircuitStatus, detail: string, extra?: Partial<CircuitLine>) => CircuitLine,
): CircuitLine {
  const now = Date.now();
  const { down, up, scaled, startedAt } = activity;
  const parts = [
    `received ${transferWords(down, rateOf(down, startedAt, now))}`,
    `mixed ${percent(scaled.done, scaled.total)}% of the points`,
    `sent ${transferWords(up, rateOf(up, startedAt, now))}`,
  ];
  const left = streamedTimeLeftMs(activity, now);
  const eta = left === undefined ? '' : ` About ${formatSeconds(left)} to go.`;
  const resumed = activity.resumedFrom ? ` Resumed at ${formatBytes(activity.resumedFrom)}.` : '';
  // One bar for the turn: the three parts weigh the same, each by its own fraction.
  const fraction = [down, scaled, up].reduce((sum, p) => sum + (p.total ? Math.min(1, p.done / p.total) : 0), 0) / 3;
  const text = `${Math.floor(fraction * 100)}%`;
  return line(
    'contributing',
    `Adding your randomness: ${activity.step}. ${parts.join(', ')}.${eta}${resumed} ${timeLeft}.`,
    { progress: { value: Math.round(fraction * 1000), max: 1000, text } },
  );
}

/**
 * Every circuit's line, in order (each names the circuit before it): computed once per render, shared by the table
 * and the announcer.
 */
export function describeCircuits(circuits: readonly CircuitProgress[], snapshot: SessionSnapshot): CircuitLine[] {
  return circuits.map((progress, i) => describeCircuit(progress, snapshot, circuits[i - 1]?.circuit));
}

export function renderCircuitTable(lines: readonly CircuitLine[]): HTMLTableElement {
  return h(
    'table',
    { id: 'circuits' },
    h('caption', {}, 'Your contributions, circuit by circuit'),
    tableHead(['Circuit', 'Status', 'Progress']),
    h(
      'tbody',
      {},
      lines.map((line) => {
        const status = line.refusal && (line.status === 'waiting' || line.status === 'turn') ? 'refused' : line.status;
        return h(
          'tr',
          { 'data-circuit': line.circuit, 'data-status': status, 'data-position': line.position },
          h('th', { scope: 'row' }, h('code', {}, line.circuit)),
          h(
            'td',
            {},
            h('span', { class: `status status-${line.status}` }, line.label),
            h('div', { class: 'detail' }, line.detail),
            line.refusal ? renderRefusal(line.refusal) : null,
          ),
          h(
            'td',
            {},
            line.progress
              ? h('progress', {
                  value: line.progress.value,
                  max: line.progress.max || 1,
                  'aria-label': `${line.circuit}: ${line.progress.text}`,
                })
              : null,
          ),
        );
      }),
    ),
  );
}

function renderRefusal(refusal: ContributionView): HTMLElement {
  const words = plainWords(refusal.code ?? 'contribution.invalid', refusal.message);
  return h(
    'div',
    { class: 'refusal', 'data-refusal-code': refusal.code ?? '' },
    h('strong', {}, 'Last attempt refused. '),
    words.what,
    ' ',
    h('span', { class: 'next' }, `What happens next: ${words.next}`),
  );
}

/**
 * Every attempt that did not count, newest first: the record of what went wrong and when. Open
 * the first time it appears; after that `open` carries over what the reader chose, since the
 * page rebuilds it on every render.
 */
export function renderAttemptHistory(contributions: readonly ContributionView[], open = true): HTMLElement | null {
  const failed = contributions
    .filter((c) => c.status !== 'accepted' && c.status !== 'verifying')
    .sort((a, b) => b.createdAt - a.createdAt);
  if (failed.length === 0) return null;
  return h(
    'details',
    { id: 'attempts', open },
    h('summary', {}, `Attempts that did not count (${failed.length})`),
    h(
      'ul',
      {},
      failed.map((c) => {
        const words = plainWords(c.code ?? 'contribution.invalid', c.message);
        return h(
          'li',
          { 'data-refusal-code': c.code ?? '' },
          h('code', {}, c.circuit),
          ` — ${formatTime(c.finishedAt ?? c.createdAt)}: ${words.what} `,
          h('span', { class: 'muted' }, `(${c.code ?? c.status})`),
        );
      }),
    ),
  );
}
