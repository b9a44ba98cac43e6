/**
 * The contributor page (/): sign in, join, and let the page take every turn: download the
 * current key, add this browser's randomness in a Web Worker, upload, wait for the verdict; then
 * an attestation and the signed receipts. The coordinator's `/api/me` drives it all, so closing
 * and reopening the tab resumes where things stand.
 */
import '../styles.css';
import { ApiClient, ApiError } from '../../../client/api-client.ts';
import type { CeremonyPhase, CeremonyView, MeView, SessionView } from '../api/api-types.ts';
import {
  describeCircuits,
  renderAttemptHistory,
  renderCircuitTable,
  type CircuitLine,
} from '../contribute/circuit-status-view.ts';
import { renderAttestation, renderReceiptsSoFar } from '../contribute/attestation-view.ts';
import { renderPresenceNotice, TurnNotifier, turnTitle } from '../contribute/presence-view.ts';
import { ContributorSession, type SessionSnapshot } from '../contribute/contributor-session.ts';
import { errorNotice, renderSignInPanel } from '../sign-in/sign-in-panel.ts';
import { ERROR_MESSAGES, plainWords } from '../api/error-messages.ts';
import { h, replaceChildren } from '../ui/element.ts';
import { startPage } from './page-start.ts';

const api = new ApiClient();

const PHASE_NOTICES: Partial<Record<CeremonyPhase, { tone: string; text: string }>> = {
  setup: {
    tone: 'warn',
    text: 'The ceremony has not opened yet. You can join now; turns start when the coordinator opens it.',
  },
  paused: {
    tone: 'warn',
    text:
      'The coordinator has paused the ceremony: no new turns start for now. ' +
      'Your place in line is kept, and a turn already under way can finish.',
  },
  closed: {
    tone: 'warn',
    text: 'The ceremony is closed: it takes no more contributions. Thank you for your interest.',
  },
  finalising: {
    tone: 'warn',
    text:
      'The ceremony is closed and being finalised: it takes no more ' +
      'contributions. Its final keys appear on the public ceremony page soon.',
  },
  finalised: {
    tone: 'ok',
    text: 'The ceremony is finalised. Its final keys and manifest are on the public ceremony page.',
  },
};

function kindOf(session: SessionView): string {
  switch (session.principal?.kind) {
    case 'github':
      return 'GitHub';
    case 'semaphore':
      return 'anonymous Semaphore identity';
    case 'demo':
      return 'test-network name';
    default:
      return 'coordinator token';
  }
}

function renderIntro(ceremony: CeremonyView): HTMLElement {
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'page-title' },
    h('h1', { id: 'page-title' }, 'Contribute to the ceremony'),
    h(
      'p',
      { class: 'lead' },
      `This ceremony makes the proving keys of ${ceremony.circuits.length} ` +
        `circuits. Your browser adds its own secret randomness to each key and ` +
        `then forgets it; as long as one contributor’s randomness is gone for ` +
        `good, nobody can forge proofs. `,
      'Everything runs in this page: keep the tab open until the last ' +
        'circuit is accepted. You wait in line for each circuit in turn; the ' +
        'page shows your place and what it is doing.',
    ),
  );
}

function renderEntropyCard(): { card: HTMLElement; take: () => string } {
  const field = h('textarea', {
    id: 'entropy',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'entropy-hint',
  });
  const card = h(
    'section',
    { class: 'card', 'aria-labelledby': 'entropy-title' },
    h('h2', { id: 'entropy-title' }, 'Extra randomness (optional)'),
    h('label', { for: 'entropy', class: 'visually-hidden' }, 'Extra randomness'),
    field,
    h(
      'p',
      { class: 'hint', id: 'entropy-hint' },
      'Type anything here. It is mixed with 64 random bytes from your ' +
        'browser’s crypto.getRandomValues into the next circuit’s secret, ' +
        'never sent anywhere, and erased from the page as soon as that ' +
        'circuit’s contribution is made. Type again for the next circuit if ' +
        'you like; without it, the browser’s randomness is used alone.',
    ),
  );
  return {
    card,
    take: () => {
      const text = field.value;
      field.value = '';
      return text;
    },
  };
}

function renderConnectionProblem(code: string): HTMLElement {
  if (code === 'auth.required') {
    return h(
      'div',
      { class: 'banner bad', role: 'alert' },
      'Your session has ended, so the page can no longer act for you. ',
      h('a', { href: '/' }, 'Sign in again'),
      ': your place in line and your accepted contributions are kept.',
    );
  }
  const words = plainWords(code);
  return h(
    'div',
    { class: 'banner bad', role: 'alert' },
    `${words.what} The page keeps trying; a turn’s deadline still runs meanwhile.`,
  );
}

async function showSession(main: HTMLElement, ceremony: CeremonyView, session: SessionView): Promise<void> {
  const { card: account, signOut } = renderAccountCard(session);
  if (session.principal!.kind === 'coordinator-token') {
    showCoordinatorSession(main, account, signOut);
    return;
  }

  const phaseBanner = h('div', { id: 'phase-notice' });
  const entropy = renderEntropyCard();
  const join = renderJoinCard();
  const notifier = new TurnNotifier();
  const pageTitle = document.title;
  const receiptsLink = renderReceiptsSoFar(api, ceremony);
  const status = h('section', { class: 'card', id: 'status', 'aria-labelledby': 'status-title' });
  const announcer = h('p', { class: 'visually-hidden', role: 'status', id: 'announcer' });
  const attestationSlot = h('div');
  replaceChildren(main, account, phaseBanner, attestationSlot, join.card, status, entropy.card, announcer);

  const contributor = new ContributorSession({
    api,
    ceremonyId: ceremony.id,
    takeTypedEntropy: entropy.take,
    onChange: () => scheduleRender(),
  });
  wireSessionControls(contributor, signOut, join, notifier);

  const announced = new Map<string, string>();
  let attestationShown = false;
  let renderQueued = false;
  const scheduleRender = () => {
    if (renderQueued) return;
    renderQueued = true;
    requestAnimationFrame(() => {
      renderQueued = false;
      render(contributor.snapshot());
    });
  };
  const render = (snapshot: SessionSnapshot) => {
    const me = snapshot.me;
    if (!me) return;
    renderPhaseBanner(phaseBanner, me.phase, snapshot.connectionError);
    renderJoinState(join, me, contributor.joined);
    entropy.card.hidden = me.status.done || isClosed(me.phase);
    const lines = describeCircuits(me.status.circuits, snapshot);
    renderStatusCard(status, me, lines, contributor.joined || me.status.removed ? receiptsLink : null);
    announceChanges(announcer, announced, lines);
    document.title = turnTitle(me, pageTitle);
    notifier.update(me);
    if (me.status.done && !attestationShown) {
      attestationShown = true;
      attestationSlot.replaceChildren(renderAttestation(api, me, ceremony));
    }
  };
  // Countdowns move even when nothing else does.
  setInterval(() => {
    if (contributor.hasTurnInProgress) scheduleRender();
  }, 1000);
  await contributor.start();
}

/** The phases in which the ceremony takes no more contributions. */
function isClosed(phase: CeremonyPhase): boolean {
  return phase === 'closed' || phase === 'finalising' || phase === 'finalised';
}

/** Who is signed in, and the sign-out button (its action is the caller's). */
function renderAccountCard(session: SessionView): { card: HTMLElement; signOut: HTMLButtonElement } {
  const signOut = h('button', { type: 'button', class: 'secondary', id: 'sign-out' }, 'Sign out');
  const card = h(
    'section',
    { class: 'card', id: 'account' },
    h(
      'div',
      { class: 'actions' },
      h(
        'span',
        {},
        'Signed in as ',
        h('strong', { id: 'signed-in-as' }, session.principal!.displayName),
        ` (${kindOf(session)}).`,
      ),
      signOut,
    ),
  );
  return { card, signOut };
}

/** The coordinator's session cannot contribute: the page points to the console instead. */
function showCoordinatorSession(main: HTMLElement, account: HTMLElement, signOut: HTMLButtonElement): void {
  replaceChildren(
    main,
    account,
    h(
      'section',
      { class: 'card' },
      h(
        'p',
        {},
        'This session is the coordinator’s; it cannot contribute. Open the ',
        h('a', { href: '/console/' }, 'coordinator console'),
        ', or sign out and sign in as a contributor.',
      ),
    ),
  );
  signOut.addEventListener('click', () => void api.signOut().then(() => location.reload()));
}

interface JoinCard {
  card: HTMLElement;
  button: HTMLButtonElement;
  /** A join that failed says why here. */
  feedback: HTMLElement;
  /** Why the contributor left a queue, when they did. */
  removalNotice: HTMLElement;
}

function renderJoinCard(): JoinCard {
  const feedback = h('div', { 'aria-live': 'polite' });
  const button = h('button', { type: 'button', id: 'join' }, 'Join the ceremony');
  const card = h(
    'section',
    { class: 'card', id: 'join-card' },
    h('h2', {}, 'Ready?'),
    h(
      'p',
      {},
      'Joining puts you in line for the first circuit. When a turn comes the ' +
        'page downloads the current key, adds your randomness and uploads the ' +
        'result, circuit after circuit, with no further clicks. Your turn is ' +
        'kept alive while this tab is open.',
    ),
    button,
    feedback,
  );
  const removalNotice = h('div', { id: 'removal-notice', 'aria-live': 'polite' });
  card.prepend(removalNotice);
  return { card, button, feedback, removalNotice };
}

/** Sign out (a turn under way asks first), join, and the browser's warning before a turn's tab closes. */
function wireSessionControls(
  contributor: ContributorSession,
  signOut: HTMLButtonElement,
  join: JoinCard,
  notifier: TurnNotifier,
): void {
  signOut.addEventListener('click', async () => {
    if (
      contributor.hasTurnInProgress &&
      !confirm('It is your turn on a circuit. Sign out anyway? You will lose this turn.')
    )
      return;
    contributor.stop();
    await api.signOut().catch(() => {});
    location.reload();
  });
  join.button.addEventListener('click', async () => {
    join.button.disabled = true;
    notifier.askPermission();
    try {
      await contributor.join();
    } catch (error) {
      join.feedback.replaceChildren(errorNotice(error));
      join.button.disabled = false;
    }
  });
  window.addEventListener('beforeunload', (event) => {
    if (!contributor.hasTurnInProgress) return;
    event.preventDefault();
    // Older browsers show the dialog only when returnValue is set.
    event.returnValue = '';
  });
}

/** The ceremony's phase, when it says something to a contributor, and a lost connection. */
function renderPhaseBanner(banner: HTMLElement, phase: CeremonyPhase, connectionError: string | null): void {
  const notice = PHASE_NOTICES[phase];
  replaceChildren(
    banner,
    notice ? h('div', { class: `banner ${notice.tone}`, 'data-phase': phase }, notice.text) : null,
    connectionError ? renderConnectionProblem(connectionError) : null,
  );
}

/** The join card: hidden once joined or closed; why the contributor left a queue, and joining again after it. */
function renderJoinState(join: JoinCard, me: MeView, joined: boolean): void {
  join.card.hidden = joined || isClosed(me.phase);
  const removed = me.status.removed;
  replaceChildren(
    join.removalNotice,
    removed
      ? h(
          'div',
          { class: 'banner warn', 'data-reason': removed.reason },
          h('strong', {}, `You left the queue for ${removed.circuit}. `),
          `${removed.message.charAt(0).toUpperCase()}${removed.message.slice(1)}.`,
        )
      : null,
  );
  if (removed && !join.card.hidden) join.button.disabled = false;
}

/** The progress card: every circuit's line, the attempts so far, and the receipts once there are any. */
function renderStatusCard(
  status: HTMLElement,
  me: MeView,
  lines: CircuitLine[],
  receiptsLink: HTMLElement | null,
): void {
  const accepted = me.status.circuits.filter((c) => c.state === 'accepted').length;
  // Rebuilt every render: keep the attempts list as open or closed as the reader left it.
  const attemptsOpen = status.querySelector<HTMLDetailsElement>('details#attempts')?.open;
  replaceChildren(
    status,
    h('h2', { id: 'status-title' }, `Progress: ${accepted} of ${me.status.circuits.length} circuits accepted`),
    renderPresenceNotice(me),
    renderCircuitTable(lines),
    renderAttemptHistory(me.contributions, attemptsOpen),
    receiptsLink,
  );
}

/** Tells a screen reader of each circuit's turn, verification, acceptance or failure, once (`announced` remembers). */
function announceChanges(announcer: HTMLElement, announced: Map<string, string>, lines: readonly CircuitLine[]): void {
  for (const line of lines) {
    if (
      announced.get(line.circuit) !== line.status &&
      ['turn', 'verifying', 'accepted', 'failed'].includes(line.status)
    ) {
      announcer.textContent = `${line.circuit}: ${line.label}. ${line.detail}`;
    }
    announced.set(line.circuit, line.status);
  }
}

/**
 * The refusal code the coordinator's GitHub callback put in the address (`?signInError=<code>`),
 * removed from the address so a reload or a shared link does not show it again.
 */
function takeSignInError(): ApiError | undefined {
  const url = new URL(location.href);
  const code = url.searchParams.get('signInError');
  if (code === null) return undefined;
  url.searchParams.delete('signInError');
  history.replaceState(history.state, '', `${url.pathname}${url.search}${url.hash}`);
  // The address is anyone's to write: only a code of our own table is shown, in its own words.
  return new ApiError(0, Object.hasOwn(ERROR_MESSAGES, code) ? code : 'auth.github_failed', '');
}

void startPage(api, 'contribute', 'Contribute', async ({ main, ceremony, methods, session }) => {
  const body = h('div');
  main.append(renderIntro(ceremony), body);
  // Taken out of the address in any case; shown only to someone who is still signed out.
  const signInError = takeSignInError();
  if (session.principal) {
    await showSession(body, ceremony, session);
  } else {
    body.append(renderSignInPanel(api, methods, (signedIn) => void showSession(body, ceremony, signedIn), signInError));
  }
});
