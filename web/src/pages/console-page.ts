/**
 * The coordinator console (/console/): open, pause and close the ceremony; watch each circuit's
 * head, queue, turn and verification jobs; finalise with a beacon and an iteration count; then
 * the manifest and the Solidity verifiers are listed. Every action needs a coordinator session.
 */
import '../styles.css';
import { ApiClient, ApiError } from '../api/api-client.ts';
import type {
  AdminOverview,
  AuthMethods,
  CeremonyPhase,
  CeremonyView,
  FinaliseResult,
  ManifestView,
  SessionView,
} from '../api/api-types.ts';
import { errorNotice } from '../sign-in/sign-in-panel.ts';
import { byId, h, replaceChildren } from '../ui/element.ts';
import { formatCountdown, formatTime, shortHash } from '../ui/format-units.ts';
import { renderSiteHeader } from '../ui/site-header.ts';

const api = new ApiClient();

/** GET /api/admin/queue (server/routes/coordinator-router.ts). */
interface AdminQueue {
  entries: Array<{
    circuit: string;
    contributorId: string;
    position: number;
    enqueuedAt: number;
    eligibleAt?: number;
    missedTurns: number;
  }>;
  activeTurns: AdminOverview['activeTurns'];
}
const REFRESH_MS = 2000;

/**
 * Which phase changes the three phase buttons may offer: a copy of ALLOWED in
 * server/ceremony-phase.ts (keep the two in step). It cannot be imported: that module loads
 * ./store/database.ts (better-sqlite3) at run time, which must stay out of the browser bundle.
 * `closed → finalising → finalised` is left out here because finalising has its own form (POST
 * /api/admin/finalise); while it runs, the phase does not change.
 */
const NEXT_PHASES: Record<CeremonyPhase, Array<'open' | 'paused' | 'closed'>> = {
  setup: ['open', 'closed'],
  open: ['paused', 'closed'],
  paused: ['open', 'closed'],
  closed: ['open'],
  finalising: [],
  finalised: [],
};
const PHASE_ACTIONS = { open: 'Open', paused: 'Pause', closed: 'Close' } as const;

function renderSignIn(
  methods: AuthMethods,
  onSignedIn: (session: SessionView) => void,
  refusal?: unknown,
): HTMLElement {
  const token = h('input', {
    type: 'password',
    id: 'coordinator-token',
    autocomplete: 'current-password',
    required: true,
  });
  const feedback = h('div', { 'aria-live': 'polite' }, refusal ? errorNotice(refusal) : null);
  const form = h(
    'form',
    { id: 'coordinator-sign-in' },
    h('label', { for: 'coordinator-token' }, 'Coordinator token'),
    token,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Sign in')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const session = await api.post<SessionView>('/auth/coordinator', { token: token.value });
      api.csrfToken = session.csrfToken;
      token.value = '';
      onSignedIn(session);
    } catch (error) {
      feedback.replaceChildren(errorNotice(error));
    }
  });
  return h(
    'section',
    { class: 'card', id: 'sign-in' },
    h('h1', {}, 'Coordinator console'),
    h('p', { class: 'lead' }, 'Sign in as a coordinator of this ceremony.'),
    methods.coordinatorToken ? form : null,
    methods.github
      ? h(
          'p',
          {},
          h('a', { class: 'button secondary', href: '/auth/github' }, 'Sign in with GitHub'),
          ' (coordinator accounts only)',
        )
      : null,
    !methods.coordinatorToken && !methods.github
      ? h(
          'p',
          {},
          'No coordinator sign-in is configured (set COORDINATOR_TOKEN or ' +
            'COORDINATOR_GITHUB_IDS). On a test network started with `npm start`, ' +
            'open the coordinator sign-in link it printed.',
        )
      : null,
    feedback,
  );
}

function renderFinalised(ceremony: CeremonyView, manifest: ManifestView): HTMLElement {
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

async function showConsole(main: HTMLElement, session: SessionView): Promise<void> {
  const feedback = h('div', { 'aria-live': 'polite', id: 'console-feedback' });
  const phaseCard = h('section', { class: 'card', id: 'phase-card' });
  const overviewCard = h('section', { class: 'card', id: 'overview' });
  const queueCard = h('section', { class: 'card', id: 'queue-card' });
  const finaliseCard = h('section', { class: 'card', id: 'finalise-card' });
  const finalisedSlot = h('div');
  const signOut = h(
    'button',
    { type: 'button', class: 'secondary', onclick: () => void api.signOut().then(() => location.reload()) },
    'Sign out',
  );
  replaceChildren(
    main,
    h(
      'section',
      { class: 'card' },
      h('h1', {}, 'Coordinator console'),
      h(
        'div',
        { class: 'actions' },
        h('span', {}, 'Signed in as ', h('strong', {}, session.principal!.displayName), '.'),
        signOut,
      ),
    ),
    feedback,
    phaseCard,
    overviewCard,
    queueCard,
    finaliseCard,
    finalisedSlot,
  );

  let busy = false;
  const act = async (action: () => Promise<unknown>) => {
    if (busy) return;
    busy = true;
    feedback.replaceChildren();
    try {
      await action();
    } catch (error) {
      feedback.replaceChildren(errorNotice(error));
    } finally {
      busy = false;
      await refresh();
    }
  };

  const beacon = h('input', {
    type: 'text',
    id: 'beacon',
    autocomplete: 'off',
    spellcheck: 'false',
    pattern: '[0-9a-fA-F]+',
    required: true,
    'aria-describedby': 'beacon-hint',
  });
  const iterations = h('input', {
    type: 'number',
    id: 'iterations',
    min: 10,
    max: 63,
    value: 10,
    required: true,
    'aria-describedby': 'iterations-hint',
  });
  const finaliseButton = h('button', { type: 'submit', id: 'finalise' }, 'Finalise');
  const finaliseStatus = h('p', { role: 'status', id: 'finalise-status' });
  const finaliseForm = h(
    'form',
    {},
    h('label', { for: 'beacon' }, 'Beacon (hex)'),
    beacon,
    h(
      'p',
      { class: 'hint', id: 'beacon-hint' },
      'A public random value nobody could know in advance, announced ' +
        'beforehand (for example a future block hash), as hexadecimal.',
    ),
    h('label', { for: 'iterations' }, 'Iterations (exponent: 2^n hash rounds, 10 to 63)'),
    iterations,
    h(
      'p',
      { class: 'hint', id: 'iterations-hint' },
      'The beacon is hashed 2^n times before use, so nobody can try many beacons quickly.',
    ),
    h('div', { class: 'actions' }, finaliseButton),
    finaliseStatus,
  );
  finaliseForm.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!confirm('Finalise the ceremony? This applies the beacon to every chain and cannot be undone.')) return;
    finaliseButton.disabled = true;
    finaliseStatus.textContent =
      'Finalising: applying the beacon to every chain, verifying the final ' +
      'keys, exporting verification keys and verifiers…';
    void act(async () => {
      try {
        await api.post<FinaliseResult>('/api/admin/finalise', {
          beacon: beacon.value.trim(),
          iterations: Number(iterations.value),
        });
        finaliseStatus.textContent = 'Finalised.';
      } catch (error) {
        finaliseStatus.textContent = '';
        finaliseButton.disabled = false;
        throw error;
      }
    });
  });

  let finalisedShown = false;
  /** What a failed refresh put in the feedback area; taken away by the next refresh that fully succeeds. */
  let refreshNotice: HTMLElement | undefined;
  const showRefreshProblem = (error: unknown) => {
    refreshNotice = errorNotice(error);
    feedback.replaceChildren(refreshNotice);
  };
  const update = async () => {
    let overview: AdminOverview;
    let ceremony: CeremonyView;
    let queue: AdminQueue;
    try {
      [overview, ceremony, queue] = await Promise.all([
        api.get<AdminOverview>('/api/admin/overview'),
        api.get<CeremonyView>('/api/ceremony'),
        api.get<AdminQueue>('/api/admin/queue'),
      ]);
    } catch (error) {
      showRefreshProblem(error);
      return;
    }
    const phase = overview.phase;
    replaceChildren(
      phaseCard,
      h('h2', {}, 'Phase: ', h('span', { id: 'console-phase', 'data-phase': phase }, phase)),
      h(
        'div',
        { class: 'actions', hidden: phase === 'finalised' },
        (['open', 'paused', 'closed'] as const).map((next) =>
          h(
            'button',
            {
              type: 'button',
              id: `phase-${next}`,
              class: next === 'closed' ? 'danger' : 'secondary',
              disabled: !NEXT_PHASES[phase].includes(next) || busy,
              onclick: () => {
                if (
                  next === 'closed' &&
                  !confirm('Close the ceremony? No new turns start; you can reopen it until you finalise.')
                )
                  return;
                void act(() => api.post('/api/admin/phase', { phase: next }));
              },
            },
            PHASE_ACTIONS[next],
          ),
        ),
      ),
      h(
        'p',
        { class: 'hint' },
        phase === 'finalised'
          ? 'The ceremony is finalised: its phase no longer changes.'
          : phase === 'finalising'
            ? 'Finalisation is running: the phase changes when it ends.'
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
    );
    const turns = new Map(overview.activeTurns.map((t) => [t.circuit, t]));
    const counts = overview.contributionCounts;
    replaceChildren(
      overviewCard,
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
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Circuit', 'Head', 'Head hash', 'Queue', 'Turn'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        h(
          'tbody',
          {},
          ceremony.circuits.map((c) => {
            const turn = turns.get(c.name);
            return h(
              'tr',
              { 'data-circuit': c.name },
              h('th', { scope: 'row' }, h('code', {}, c.name)),
              h(
                'td',
                { class: 'head' },
                String(overview.heads.find((x) => x.circuit === c.name)?.headIndex ?? c.headIndex),
              ),
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
          }),
        ),
      ),
      h('h3', {}, 'Verification jobs'),
      overview.verifying.length === 0
        ? h('p', { class: 'muted', id: 'verification-jobs' }, 'None running.')
        : h(
            'ul',
            { id: 'verification-jobs' },
            overview.verifying.map((v) => h('li', {}, `${v.circuit}: ${v.contributor}, since ${formatTime(v.since)}`)),
          ),
    );
    const removable = [
      ...queue.activeTurns
        .filter((t) => t.state === 'turn')
        .map((t) => ({ circuit: t.circuit, contributorId: t.contributorId, where: 'turn', missed: '' })),
      ...queue.entries.map((e) => ({
        circuit: e.circuit,
        contributorId: e.contributorId,
        where: `#${e.position}${e.eligibleAt ? ' (cooling down)' : ''}`,
        missed: String(e.missedTurns),
      })),
    ];
    replaceChildren(
      queueCard,
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
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Circuit', 'Contributor', 'Place', 'Missed turns', ''].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            h(
              'tbody',
              {},
              removable.map((entry) =>
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
                        disabled: busy,
                        onclick: () => {
                          if (!confirm(`Remove ${entry.contributorId} from the queue of ${entry.circuit}?`)) return;
                          void act(() => api.post('/api/admin/queue/remove', { contributorId: entry.contributorId }));
                        },
                      },
                      'Remove',
                    ),
                  ),
                ),
              ),
            ),
          ),
    );
    // The coordinator refuses to finalise below ceremony.json's minContributions (finalise.too_few_contributions).
    const short = overview.heads.filter((head) => head.headIndex < overview.minContributions);
    const canFinalise = phase === 'closed' && overview.verifying.length === 0 && short.length === 0;
    finaliseCard.hidden = phase === 'finalised';
    if (!finaliseCard.hidden && !finaliseCard.contains(finaliseForm)) {
      replaceChildren(finaliseCard, h('h2', {}, 'Finalise'), h('p', { id: 'finalise-hint' }), finaliseForm);
    }
    const hint = finaliseCard.querySelector('#finalise-hint');
    if (hint) {
      const minimum = overview.minContributions;
      const required =
        `Every circuit needs at least ${minimum} ` + `contribution${minimum === 1 ? '' : 's'} before finalising`;
      hint.textContent = canFinalise
        ? 'The ceremony is closed and no verification is running: it can be finalised.'
        : short.length > 0
          ? `${required}; too few for: ${short.map((head) => `${head.circuit} (${head.headIndex})`).join(', ')}.`
          : 'Close the ceremony and let running verifications finish before finalising.';
    }
    if (!busy) finaliseButton.disabled = !canFinalise;
    if (phase === 'finalised' && !finalisedShown) {
      // Marked shown only once it is: a failed fetch is said in the feedback and retried next refresh.
      try {
        const manifest = await api.get<ManifestView>('/api/manifest');
        finalisedSlot.replaceChildren(renderFinalised(ceremony, manifest));
        finalisedShown = true;
      } catch (error) {
        showRefreshProblem(error);
        return;
      }
    }
    refreshNotice?.remove();
    refreshNotice = undefined;
  };
  // Refreshes run one after another, never side by side: with a slow coordinator an older answer
  // must not land after a newer one, and the refresh after an action waits for one under way.
  let refreshing: Promise<void> = Promise.resolve();
  const refresh = (): Promise<void> => (refreshing = refreshing.then(update, update));
  // The next periodic refresh is armed only when this one has ended (as ceremony-page.ts does).
  const refreshLoop = async () => {
    try {
      await refresh();
    } catch (error) {
      showRefreshProblem(error);
    } finally {
      setTimeout(() => void refreshLoop(), REFRESH_MS);
    }
  };
  await refreshLoop();
}

async function main(): Promise<void> {
  const app = byId('app');
  const main = h('main', { id: 'main' });
  try {
    const [ceremony, methods, session] = await Promise.all([
      api.get<CeremonyView>('/api/ceremony'),
      api.get<AuthMethods>('/auth/methods'),
      api.loadSession(),
    ]);
    document.title = `Console · ${ceremony.title ?? ceremony.id}`;
    replaceChildren(app, renderSiteHeader('console', ceremony), main);
    const start = (signedIn: SessionView) => {
      if (signedIn.principal?.coordinator) void showConsole(main, signedIn);
      else
        replaceChildren(
          main,
          renderSignIn(
            methods,
            start,
            signedIn.principal
              ? new ApiError(403, 'auth.not_coordinator', `${signedIn.principal.displayName} is not a coordinator`)
              : undefined,
          ),
        );
    };
    start(session);
  } catch (error) {
    replaceChildren(app, h('main', {}, errorNotice(error)));
  }
}

void main();
