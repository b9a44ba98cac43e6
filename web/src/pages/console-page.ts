/**
 * The coordinator console (/console/): open, pause and close the ceremony; watch each circuit's
 * head, queue, turn and verification jobs; finalise with a beacon and an iteration count; then
 * the manifest and the Solidity verifiers are listed. Every action needs a coordinator session.
 * This module signs in and refreshes; the cards are console-cards.ts.
 */
import '../styles.css';
import { ApiClient, ApiError } from '../../../client/api-client.ts';
import type {
  AdminOverview,
  AdminQueue,
  AuthMethods,
  CeremonyView,
  ManifestView,
  Principal,
  SessionView,
} from '../api/api-types.ts';
import { errorNotice } from '../sign-in/sign-in-panel.ts';
import { signInForm } from '../sign-in/sign-in-form.ts';
import { h, replaceChildren } from '../ui/element.ts';
import { startPage } from './page-start.ts';
import {
  ConsoleActions,
  BeaconCard,
  FinaliseCard,
  renderCircuitsCard,
  renderFinalisedCard,
  renderPhaseCard,
  renderQueueCard,
  type CardContext,
} from './console-cards.ts';

const api = new ApiClient();
const REFRESH_MS = 2000;

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
  const form = signInForm(
    api,
    { id: 'coordinator-sign-in' },
    [h('label', { for: 'coordinator-token' }, 'Coordinator token'), token],
    {
      route: '/auth/coordinator',
      body: () => ({ token: token.value }),
      onSignedIn: (session) => {
        token.value = '';
        onSignedIn(session);
      },
      onError: (error) => feedback.replaceChildren(errorNotice(error)),
    },
  );
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

/**
 * What a failed refresh put in the feedback area: taken away by the next refresh that fully
 * succeeds, while a refusal an action put there stays until the next action.
 */
class RefreshProblem {
  private notice: HTMLElement | undefined;

  constructor(private readonly feedback: HTMLElement) {}

  show(error: unknown): void {
    this.notice = errorNotice(error);
    this.feedback.replaceChildren(this.notice);
  }

  clear(): void {
    this.notice?.remove();
    this.notice = undefined;
  }
}

/** The finalised ceremony's files, shown once the ceremony is finalised and its manifest could be read. */
class FinalisedSlot {
  readonly element = h('div');
  private shown = false;

  /** Shows the card unless it is already shown; a failed fetch leaves it to the next refresh. */
  async showOnce(ceremony: CeremonyView): Promise<void> {
    if (this.shown) return;
    this.element.replaceChildren(renderFinalisedCard(ceremony, await api.get<ManifestView>('/api/manifest')));
    this.shown = true;
  }
}

/** The console's answers from the coordinator, fetched together for one refresh. */
async function fetchConsoleState(): Promise<[AdminOverview, CeremonyView, AdminQueue]> {
  return Promise.all([
    api.get<AdminOverview>('/api/admin/overview'),
    api.get<CeremonyView>('/api/ceremony'),
    api.get<AdminQueue>('/api/admin/queue'),
  ]);
}

async function showConsole(main: HTMLElement, coordinator: Principal): Promise<void> {
  const feedback = h('div', { 'aria-live': 'polite', id: 'console-feedback' });
  const phaseCard = h('section', { class: 'card', id: 'phase-card' });
  const overviewCard = h('section', { class: 'card', id: 'overview' });
  const queueCard = h('section', { class: 'card', id: 'queue-card' });
  const finalised = new FinalisedSlot();
  const problem = new RefreshProblem(feedback);
  // Refreshes run one after another, never side by side: with a slow coordinator an older answer
  // must not land after a newer one, and the refresh after an action waits for one under way.
  let refreshing: Promise<void> = Promise.resolve();
  const refresh = (): Promise<void> => (refreshing = refreshing.then(update, update));
  const context: CardContext = { actions: new ConsoleActions(feedback, refresh), api };
  const beaconCard = new BeaconCard(context);
  const finaliseCard = new FinaliseCard(context);

  async function update(): Promise<void> {
    let overview: AdminOverview, ceremony: CeremonyView, queue: AdminQueue;
    try {
      [overview, ceremony, queue] = await fetchConsoleState();
    } catch (error) {
      return problem.show(error);
    }
    replaceChildren(phaseCard, renderPhaseCard(overview, context));
    replaceChildren(overviewCard, renderCircuitsCard(overview, ceremony));
    replaceChildren(queueCard, renderQueueCard(queue, context));
    beaconCard.update(overview, context.actions.busy);
    finaliseCard.update(overview, context.actions.busy);
    if (overview.phase === 'finalised') {
      // A failed fetch is said in the feedback and retried at the next refresh.
      try {
        await finalised.showOnce(ceremony);
      } catch (error) {
        return problem.show(error);
      }
    }
    problem.clear();
  }

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
        h('span', {}, 'Signed in as ', h('strong', {}, coordinator.displayName), '.'),
        signOut,
      ),
    ),
    feedback,
    phaseCard,
    overviewCard,
    queueCard,
    beaconCard.card,
    finaliseCard.card,
    finalised.element,
  );
  // The next periodic refresh is armed only when this one has ended (as ceremony-page.ts does).
  const refreshLoop = async () => {
    try {
      await refresh();
    } catch (error) {
      problem.show(error);
    } finally {
      setTimeout(() => void refreshLoop(), REFRESH_MS);
    }
  };
  await refreshLoop();
}

void startPage(api, 'console', 'Console', ({ main, methods, session }) => {
  const start = (signedIn: SessionView) => {
    if (signedIn.principal?.coordinator) void showConsole(main, signedIn.principal);
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
});
