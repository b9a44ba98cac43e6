/**
 * The sign-in choices this coordinator offers (`GET /auth/methods`): GitHub, anonymous Semaphore
 * identity, and on a local test network a name-only sign-in. Calls `onSignedIn` with the session.
 */
import type { ApiClient } from '../../../client/api-client.ts';
import { ApiError } from '../../../client/api-client.ts';
import type { AuthMethods, SessionView } from '../api/api-types.ts';
import { copyButton, h, replaceChildren } from '../ui/element.ts';
import { errorBanner } from '../ui/error-banner.ts';
import { signInForm } from './sign-in-form.ts';
import {
  createIdentity,
  forgetStoredIdentity,
  importIdentity,
  signInWithSemaphore,
  storedIdentity,
  type BrowserIdentity,
} from './semaphore-sign-in.ts';

export function errorNotice(error: unknown): HTMLElement {
  const code = error instanceof ApiError ? error.code : 'browser';
  const message = error instanceof Error ? error.message : String(error);
  return errorBanner(code, message, code.startsWith('semaphore.'));
}

/**
 * `initialError` is a refusal to show at once: GitHub sign-in happens in redirects, so the
 * coordinator reports its refusal by sending the browser back here with `?signInError=<code>`.
 */
export function renderSignInPanel(
  api: ApiClient,
  methods: AuthMethods,
  onSignedIn: (session: SessionView) => void,
  initialError?: unknown,
): HTMLElement {
  const feedback = h('div', { 'aria-live': 'polite' });
  const fail = (error: unknown) => replaceChildren(feedback, errorNotice(error));
  if (initialError !== undefined) fail(initialError);
  const choices: HTMLElement[] = [];

  if (methods.github) {
    choices.push(
      h(
        'div',
        { class: 'method' },
        h('h3', {}, 'With GitHub'),
        h('p', {}, 'Your GitHub login is shown beside your contributions in the public transcript.'),
        h('a', { class: 'button', href: '/auth/github', id: 'github-sign-in' }, 'Sign in with GitHub'),
      ),
    );
  }
  if (methods.semaphore) choices.push(renderSemaphoreChoice(api, onSignedIn, feedback, fail));
  if (methods.demo) {
    const name = h('input', {
      type: 'text',
      id: 'demo-name',
      name: 'name',
      autocomplete: 'off',
      pattern: '[A-Za-z0-9\\-]{1,32}',
      required: true,
      'aria-describedby': 'demo-hint',
    });
    const form = signInForm(
      api,
      { class: 'method', id: 'demo-sign-in' },
      [
        h('h3', {}, 'Test network'),
        h(
          'p',
          { id: 'demo-hint', class: 'hint' },
          'This coordinator runs a test network on this machine: any name ' +
            '(letters, digits, dashes) signs you in, no account needed.',
        ),
        h('label', { for: 'demo-name' }, 'Name'),
        name,
      ],
      { route: '/auth/demo', body: () => ({ name: name.value.trim() }), onSignedIn, onError: fail },
    );
    choices.push(form);
  }

  return h(
    'section',
    { class: 'card', id: 'sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h2', { id: 'sign-in-title' }, 'Sign in to contribute'),
    choices.length > 0
      ? h('div', { class: 'methods' }, choices)
      : h('p', {}, 'This coordinator offers no sign-in method yet.'),
    feedback,
  );
}

/**
 * The identity kept in this browser, its commitment and its sign-in, copy and forget buttons; or,
 * with none kept, the button that creates one. `render` draws the choice again for another identity.
 */
function storedIdentityBlock(
  identity: BrowserIdentity | undefined,
  signInStored: HTMLButtonElement,
  render: (identity: BrowserIdentity | undefined) => void,
  fail: (error: unknown) => void,
): HTMLElement {
  return identity
    ? h(
        'div',
        {},
        h('p', {}, 'Identity kept in this browser. Its commitment (public; the coordinator adds it to the group):'),
        h('pre', { class: 'hash', id: 'semaphore-commitment' }, identity.commitment),
        h(
          'div',
          { class: 'actions' },
          signInStored,
          copyButton('Copy commitment', () => identity.commitment),
          copyButton('Copy secret export', () => identity.exported, {
            title: 'Your identity itself: keep it private, it is how you sign in from another browser',
          }),
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: () => {
                if (confirm('Forget this identity? Without its export you cannot sign in with it again.')) {
                  forgetStoredIdentity();
                  render(undefined);
                }
              },
            },
            'Forget',
          ),
        ),
      )
    : h(
        'div',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            id: 'semaphore-create',
            onclick: async () => {
              try {
                render(await createIdentity());
              } catch (error) {
                fail(error);
              }
            },
          },
          'Create an identity',
        ),
      );
}

function renderSemaphoreChoice(
  api: ApiClient,
  onSignedIn: (session: SessionView) => void,
  feedback: HTMLElement,
  fail: (error: unknown) => void,
): HTMLElement {
  const container = h('div', { class: 'method', id: 'semaphore-sign-in' });
  const status = h('p', { role: 'status', class: 'hint', id: 'semaphore-status' });
  const pasted = h('textarea', {
    id: 'semaphore-import',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'semaphore-import-hint',
  });

  const signIn = async (identity: BrowserIdentity, buttons: HTMLButtonElement[]) => {
    buttons.forEach((b) => (b.disabled = true));
    feedback.replaceChildren();
    try {
      const session = await signInWithSemaphore(api, identity, (text) => (status.textContent = text));
      status.textContent = '';
      onSignedIn(session);
    } catch (error) {
      status.textContent = '';
      fail(error);
    } finally {
      buttons.forEach((b) => (b.disabled = false));
    }
  };

  const render = (identity: BrowserIdentity | undefined) => {
    const signInStored = h('button', { type: 'button', id: 'semaphore-sign-in-stored' }, 'Sign in anonymously');
    if (identity) signInStored.addEventListener('click', () => void signIn(identity, [signInStored]));
    const stored = storedIdentityBlock(identity, signInStored, render, fail);
    const usePasted = h(
      'button',
      { type: 'button', class: 'secondary', id: 'semaphore-sign-in-pasted' },
      'Sign in with this identity',
    );
    usePasted.addEventListener('click', async () => {
      try {
        await signIn(await importIdentity(pasted.value), [usePasted]);
      } catch (error) {
        fail(error);
      }
    });
    replaceChildren(
      container,
      h('h3', {}, 'Anonymously, with a Semaphore identity'),
      h(
        'p',
        {},
        'A zero-knowledge proof made in this browser shows you belong to the ' +
          'ceremony’s group without saying who you are. Your identity’s secret ' +
          'never leaves this browser; your contributions are listed as “anonymous”.',
      ),
      stored,
      h(
        'details',
        {},
        h('summary', {}, 'Use an exported identity'),
        h('label', { for: 'semaphore-import' }, 'Exported identity'),
        pasted,
        h(
          'p',
          { class: 'hint', id: 'semaphore-import-hint' },
          'Used only in this page to make the proof; not stored, not sent.',
        ),
        usePasted,
      ),
      status,
    );
  };

  render(undefined);
  void storedIdentity().then((identity) => identity && render(identity));
  return container;
}
