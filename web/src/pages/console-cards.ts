/**
 * The coordinator console's cards, each rendered whole from the coordinator's answers at every
 * refresh: the phase and its buttons, the circuits, the queues, the finalise form and the
 * finalised ceremony's files. What each shows is decided in console-state.ts; actions go through
 * the one ConsoleActions of the page, so only one runs at a time and the console refreshes after it.
 */
import { errorNotice } from '../sign-in/sign-in-panel.ts';
import type { ApiClient } from '../../../client/api-client.ts';
import type {
  AdminOverview,
  AdminQueue,
  BeaconAnnounceResult,
  CeremonyView,
  FinaliseResult,
  ManifestView,
} from '../api/api-types.ts';
import { h, replaceChildren, tableHead, type Child } from '../ui/element.ts';
import { formatCountdown, formatTime, shortHash } from '../ui/format-units.ts';
import { beaconAnnouncementState, finaliseReadiness, phaseButtons, removableEntries } from './console-state.ts';

const PHASE_ACTIONS = { open: 'Open', paused: 'Pause', closed: 'Close' } as const;

/**
 * Runs the console's actions one at a time: while one runs, another is ignored and the buttons
 * render disabled. Each clears the feedback area, says its refusal there, and refreshes the
 * console when it ends.
 */
export class ConsoleActions {
  private running = false;

  constructor(
    private readonly feedback: HTMLElement,
    private readonly refresh: () => Promise<void>,
  ) {}

  get busy(): boolean {
    return this.running;
  }

  async run(action: () => Promise<unknown>): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.feedback.replaceChildren();
    try {
      await action();
    } catch (error) {
      this.feedback.replaceChildren(errorNotice(error));
    } finally {
      this.running = false;
      await this.refresh();
    }
  }
}

/** What a card's buttons need: the page's actions, and the coordinator's API to send them to. */
export interface CardContext {
  actions: ConsoleActions;
  api: Pick<ApiClient, 'post'>;
}

export function renderPhaseCard(overview: AdminOverview, { actions, api }: CardContext): Child[] {
  const phase = overview.phase;
  const button = ({ phase: next, allowed }: ReturnType<typeof phaseButtons>[number]) =>
    h(
      'button',
      {
        type: 'button',
        id: `phase-${next}`,
        class: next === 'closed' ? 'danger' : 'secondary',
        disabled: !allowed || actions.busy,
        onclick: () => {
          if (
            next === 'closed' &&
            !confirm('Close the ceremony? No new turns start; you can reopen it until you finalise.')
          )
            return;
          void actions.run(() => api.post('/api/admin/phase', { phase: next }));
        },
      },
      PHASE_ACTIONS[next],
    );
  return [
    h('h2', {}, 'Phase: ', h('span', { id: 'console-phase', 'data-phase': phase }, phase)),
    h(
      'div',
      { class: 'actions', hidden: phase === 'finalised' },
      phaseButtons(phase, overview.beaconAnnouncement !== undefined).map(button),
    ),
    h(
      'p',
      { class: 'hint' },
      phase === 'finalised'
        ? 'The ceremony is finalised: its phase no longer changes.'
        : phase === 'finalising'
          ? 'Finalisation is running: the phase changes when it ends.'
          : overview.beaconAnnouncement
            ? 'The beacon is announced: contributions are closed for good, and the ceremony cannot reopen.'
            : 'Pause keeps every queue and lets a turn under way finish; close stops ' +
              'contributions so the ceremony can be finalised.',
    ),
    overview.finalisationInterruptedAt === undefined
      ? null
      : h(
          'div',
          { class: 'banner warn', id: 'finalisation-interrupted' },
          `A finalisation was interrupted by a coordinator restart (found ` +
            `${formatTime(overview.finalisationInterruptedAt)}); the ceremony is ` +
            `closed again. Finalise again with the same beacon: circuits already ` +
            `sealed are not redone.`,
        ),
  ];
}

export function renderCircuitsCard(overview: AdminOverview, ceremony: CeremonyView): Child[] {
  const turns = new Map(overview.activeTurns.map((t) => [t.circuit, t]));
  const counts = overview.contributionCounts;
  const row = (c: CeremonyView['circuits'][number]) => {
    const turn = turns.get(c.name);
    return h(
      'tr',
      { 'data-circuit': c.name },
      h('th', { scope: 'row' }, h('code', {}, c.name)),
      h('td', { class: 'head' }, String(overview.heads.find((x) => x.circuit === c.name)?.headIndex ?? c.headIndex)),
      h('td', { class: 'hash', title: c.headContributionHash ?? '' }, shortHash(c.headContributionHash)),
      h('td', { class: 'queue' }, String(overview.queues[c.name] ?? 0)),
      h(
        'td',
        {},
        turn
          ? `${turn.contributorId}: ` +
              `${turn.state}${turn.deadline ? ` (${formatCountdown(turn.deadline - Date.now())} left)` : ''}`
          : '—',
      ),
    );
  };
  return [
    h('h2', {}, 'Circuits'),
    h(
      'p',
      {},
      `Contributions: ${counts.accepted} accepted, ${counts.verifying} ` +
        `verifying, ${counts.refused} refused, ${counts.error} errors, ` +
        `${counts.discarded} discarded.`,
    ),
    h(
      'table',
      { id: 'console-circuits' },
      tableHead(['Circuit', 'Head', 'Head hash', 'Queue', 'Turn']),
      h('tbody', {}, ceremony.circuits.map(row)),
    ),
    h('h3', {}, 'Verification jobs'),
    overview.verifying.length === 0
      ? h('p', { class: 'muted', id: 'verification-jobs' }, 'None running.')
      : h(
          'ul',
          { id: 'verification-jobs' },
          overview.verifying.map((v) => h('li', {}, `${v.circuit}: ${v.contributor}, since ${formatTime(v.since)}`)),
        ),
  ];
}

export function renderQueueCard(queue: AdminQueue, { actions, api }: CardContext): Child[] {
  const removable = removableEntries(queue);
  const row = (entry: (typeof removable)[number]) =>
    h(
      'tr',
      { 'data-contributor': entry.contributorId },
      h('td', {}, h('code', {}, entry.circuit)),
      h('td', {}, entry.contributorId),
      h('td', {}, entry.where),
      h('td', {}, entry.missed),
      h(
        'td',
        {},
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            'data-remove': entry.contributorId,
            disabled: actions.busy,
            onclick: () => {
              if (!confirm(`Remove ${entry.contributorId} from the queue of ${entry.circuit}?`)) return;
              void actions.run(() => api.post('/api/admin/queue/remove', { contributorId: entry.contributorId }));
            },
          },
          'Remove',
        ),
      ),
    );
  return [
    h('h2', {}, 'Queues'),
    h(
      'p',
      { class: 'hint' },
      'Remove takes a stuck contributor out of the lobby (a waiting entry, ' +
        'or a turn not yet uploaded); they see why and may join again.',
    ),
    removable.length === 0
      ? h('p', { class: 'muted', id: 'queue-empty' }, 'Nobody is waiting.')
      : h(
          'table',
          { id: 'console-queue' },
          tableHead(['Circuit', 'Contributor', 'Place', 'Missed turns', '']),
          h('tbody', {}, removable.map(row)),
        ),
  ];
}

/**
 * The beacon card: a chain id, a block number and an iteration exponent, then POST
 * /api/admin/beacon/announce; once announced, what was. Its form is made once (what the coordinator
 * types survives the refreshes), as the finalise card's.
 */
export class BeaconCard {
  readonly card = h('section', { class: 'card', id: 'beacon-card' });
  private readonly hint = h('p', { class: 'hint', id: 'announce-hint' });
  private readonly announced = h('p', { id: 'beacon-announced' });
  private readonly announcedHash = h('code', { id: 'beacon-announced-hash', class: 'long-hash' });
  private readonly button = h('button', { type: 'submit', id: 'announce-beacon', class: 'danger' }, 'Announce');
  /** What the announcement answered; outside the form, which is hidden once the beacon is announced. */
  private readonly status = h('p', { role: 'status', id: 'announce-status' });
  private readonly form: HTMLFormElement;

  constructor({ actions, api }: CardContext) {
    const number = (id: string, min: number, max: number, value?: number): HTMLInputElement =>
      h('input', { type: 'number', id, min, max, step: 1, required: true, ...(value === undefined ? {} : { value }) });
    const chainId = number('announce-chain-id', 1, Number.MAX_SAFE_INTEGER, 1);
    const blockNumber = number('announce-block', 0, Number.MAX_SAFE_INTEGER);
    const iterations = number('announce-iterations', 10, 63, 10);
    const status = this.status;
    const field = (input: HTMLInputElement, label: string): Child[] => [h('label', { for: input.id }, label), input];
    this.form = h(
      'form',
      {},
      field(chainId, 'Chain id (1: Ethereum mainnet)'),
      field(blockNumber, 'Block number (not mined yet)'),
      field(iterations, 'Iterations (exponent: 2^n hash rounds, 10 to 63)'),
      h('div', { class: 'actions' }, this.button),
    );
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      const block = `block ${blockNumber.value} of chain ${chainId.value}`;
      if (!confirm(`Announce ${block} as the beacon? Contributions close for good: the ceremony cannot reopen.`))
        return;
      this.button.disabled = true;
      void actions.run(async () => {
        try {
          const answer = await api.post<BeaconAnnounceResult>('/api/admin/beacon/announce', {
            chainId: Number(chainId.value),
            blockNumber: Number(blockNumber.value),
            iterations: Number(iterations.value),
          });
          const { seq, hash, blockNumber: announcedBlock } = answer.announcement;
          status.replaceChildren(
            `Announced as transcript entry ${seq} while the chain was at block ${answer.latestBlock}. ` +
              `Publish its hash now, before block ${announcedBlock} is mined: `,
            h('code', { id: 'announcement-hash', class: 'long-hash' }, hash),
          );
        } catch (error) {
          this.button.disabled = false;
          throw error;
        }
      });
    });
  }

  /** Hidden once finalised; the announcement once made; otherwise the form, live when it may be sent. */
  update(overview: AdminOverview, busy: boolean): void {
    this.card.hidden = overview.phase === 'finalised';
    if (this.card.hidden) return;
    const state = beaconAnnouncementState(overview);
    this.hint.textContent = state.hint;
    this.announced.textContent = state.announced ?? '';
    this.announcedHash.textContent = state.announcedHash ?? '';
    this.form.hidden = state.announced !== undefined;
    if (!this.card.contains(this.form))
      replaceChildren(
        this.card,
        h('h2', {}, 'Beacon'),
        this.announced,
        h('p', {}, this.announcedHash),
        this.hint,
        this.form,
        this.status,
      );
    if (!busy) this.button.disabled = !state.canAnnounce;
  }
}

/**
 * The finalise card: a beacon and an iteration count (or neither, for the announced beacon), then
 * POST /api/admin/finalise. Its form is
 * made once (what the coordinator types survives the refreshes); `update` shows or hides the card
 * and says whether the ceremony can be finalised now.
 */
export class FinaliseCard {
  readonly card = h('section', { class: 'card', id: 'finalise-card' });
  private readonly hint = h('p', { id: 'finalise-hint' });
  private readonly button = h('button', { type: 'submit', id: 'finalise' }, 'Finalise');
  private readonly form: HTMLFormElement;
  private readonly iterations: HTMLInputElement;

  constructor({ actions, api }: CardContext) {
    const beacon = h('input', {
      type: 'text',
      id: 'beacon',
      autocomplete: 'off',
      spellcheck: 'false',
      pattern: '[0-9a-fA-F]+',
      'aria-describedby': 'beacon-hint',
    });
    const iterations = (this.iterations = h('input', {
      type: 'number',
      id: 'iterations',
      min: 10,
      max: 63,
      value: 10,
      required: true,
      'aria-describedby': 'iterations-hint',
    }));
    const status = h('p', { role: 'status', id: 'finalise-status' });
    /** A labelled input and the hint that describes it (its aria-describedby). */
    const field = (input: HTMLInputElement, label: string, hint: string): Child[] => [
      h('label', { for: input.id }, label),
      input,
      h('p', { class: 'hint', id: `${input.id}-hint` }, hint),
    ];
    this.form = h(
      'form',
      {},
      field(
        beacon,
        'Beacon (hex)',
        'A public random value nobody could know in advance, announced ' +
          'beforehand (for example a future block hash), as hexadecimal. Leave it empty after ' +
          '`ceremony announce-beacon`: the coordinator reads the announced block (BEACON_RPC_URL).',
      ),
      field(
        iterations,
        'Iterations (exponent: 2^n hash rounds, 10 to 63)',
        'The beacon is hashed 2^n times before use, so nobody can try many beacons quickly.',
      ),
      h('div', { class: 'actions' }, this.button),
      status,
    );
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (!confirm('Finalise the ceremony? This applies the beacon to every chain and cannot be undone.')) return;
      this.button.disabled = true;
      status.textContent =
        'Finalising: applying the beacon to every chain, verifying the final ' +
        'keys, exporting verification keys and verifiers…';
      void actions.run(async () => {
        try {
          // No beacon: the announced one, read by the coordinator (its iterations are the announced ones too).
          const given = beacon.value.trim();
          await api.post<FinaliseResult>(
            '/api/admin/finalise',
            given === '' ? {} : { beacon: given, iterations: Number(iterations.value) },
          );
          status.textContent = 'Finalised.';
        } catch (error) {
          status.textContent = '';
          this.button.disabled = false;
          throw error;
        }
      });
    });
  }

  /** Hidden once finalised; otherwise the form, live when the ceremony can be finalised (and no action runs). */
  update(overview: AdminOverview, busy: boolean): void {
    this.card.hidden = overview.phase === 'finalised';
    if (this.card.hidden) return;
    if (!this.card.contains(this.form)) replaceChildren(this.card, h('h2', {}, 'Finalise'), this.hint, this.form);
    const { canFinalise, hint } = finaliseReadiness(overview);
    this.hint.textContent = hint;
    // Announced, the exponent is the announcement's: a different one would be refused.
    this.iterations.disabled = overview.beaconAnnouncement !== undefined;
    if (!busy) this.button.disabled = !canFinalise;
  }
}

export function renderFinalisedCard(ceremony: CeremonyView, manifest: ManifestView): HTMLElement {
  return h(
    'section',
    { class: 'card', id: 'finalised', 'aria-labelledby': 'finalised-title' },
    h('h2', { id: 'finalised-title' }, 'Finalised'),
    h(
      'p',
      {},
      'The final keys are verified and published; deploy the verifiers below ' +
        'and check the deployment against the manifest with ',
      h('code', {}, 'ceremony verify-deployment'),
      '.',
    ),
    h('h3', {}, 'Solidity verifiers'),
    h(
      'ul',
      { id: 'verifiers' },
      ceremony.circuits.map((c) =>
        h(
          'li',
          { 'data-verifier': c.verifier },
          h('a', { href: `/api/final/${c.verifier}.sol`, download: `${c.verifier}.sol` }, `${c.verifier}.sol`),
          ' — ',
          h('a', { href: `/api/final/${c.name}.zkey` }, `${c.name}.zkey`),
          ', ',
          h('a', { href: `/api/final/${c.name}.vkey.json` }, `${c.name}.vkey.json`),
        ),
      ),
    ),
    h('h3', {}, 'Manifest'),
    h('p', {}, h('a', { href: '/api/manifest', download: 'manifest.json' }, 'manifest.json')),
    h('pre', { id: 'console-manifest' }, `${JSON.stringify(manifest, null, 2)}\n`),
  );
}
