/**
 * A failure as the pages show it: a banner (`role=alert`, its code in `data-error-code`) saying in
 * plain words what happened and what to do next (api/error-messages.ts), and the message itself
 * below where it helps the reader.
 */
import { plainWords } from '../api/error-messages.ts';
import { h } from './element.ts';

export function errorBanner(code: string, message: string, showMessage: boolean): HTMLElement {
  const words = plainWords(code, message);
  return h(
    'div',
    { class: 'banner bad', role: 'alert', 'data-error-code': code },
    h('strong', {}, words.what),
    ' ',
    words.next,
    showMessage ? h('div', { class: 'detail' }, message) : null,
  );
}
