/** The header shared by the three pages: ceremony title, test-network flag and navigation. */
import { h } from './element.ts';

export type PageName = 'contribute' | 'ceremony' | 'console';

const PAGES: Array<{ name: PageName; href: string; label: string }> = [
  { name: 'contribute', href: '/', label: 'Contribute' },
  { name: 'ceremony', href: '/ceremony/', label: 'Ceremony' },
  { name: 'console', href: '/console/', label: 'Coordinator' },
];

export function renderSiteHeader(
  current: PageName,
  ceremony?: { title?: string; id: string; testNetwork: boolean },
): HTMLElement {
  return h(
    'header',
    { class: 'site-header' },
    h(
      'div',
      { class: 'site-title' },
      h('span', { class: 'site-name' }, ceremony?.title ?? ceremony?.id ?? 'Phase 2 ceremony'),
      ceremony?.testNetwork
        ? h(
            'span',
            { class: 'badge warn', title: 'The powers of tau of this ceremony are insecure: for testing only' },
            'test network',
          )
        : null,
    ),
    h(
      'nav',
      { 'aria-label': 'Pages' },
      PAGES.map((page) =>
        h('a', { href: page.href, 'aria-current': page.name === current ? 'page' : null }, page.label),
      ),
    ),
  );
}
