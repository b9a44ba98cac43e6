/**
 * A sign-in form that posts what was typed in it: its fields, then a Sign in button. On submit,
 * `body()` goes to `route` through ApiClient.signIn (which keeps the session's CSRF token); the
 * session goes to `onSignedIn`, a refusal to `onError`. The console's coordinator token and the
 * test network's name sign in through it.
 */
import type { ApiClient } from '../../../client/api-client.ts';
import type { SessionView } from '../api/api-types.ts';
import { h, type Attributes, type Child } from '../ui/element.ts';

export interface SignInSubmit {
  route: string;
  body: () => unknown;
  onSignedIn: (session: SessionView) => void;
  onError: (error: unknown) => void;
}

export function signInForm(
  api: ApiClient,
  attributes: Attributes,
  fields: Child[],
  submit: SignInSubmit,
): HTMLFormElement {
  const form = h(
    'form',
    attributes,
    fields,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Sign in')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      submit.onSignedIn(await api.signIn(submit.route, submit.body()));
    } catch (error) {
      submit.onError(error);
    }
  });
  return form;
}
