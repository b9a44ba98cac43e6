/**
 * What the contributor page and the console start from: the ceremony, the sign-in methods and
 * this browser's session, fetched together; the page titled after the ceremony, under the site
 * header, its `main` handed to `show`. A failure to load (or to show) replaces the page with its
 * error.
 */
import type { ApiClient } from '../../../client/api-client.ts';
import type { AuthMethods, CeremonyView, SessionView } from '../api/api-types.ts';
import { errorNotice } from '../sign-in/sign-in-panel.ts';
import { byId, h, replaceChildren } from '../ui/element.ts';
import { renderSiteHeader, type PageName } from '../ui/site-header.ts';

export interface PageStart {
  main: HTMLElement;
  ceremony: CeremonyView;
  methods: AuthMethods;
  session: SessionView;
}

export async function startPage(
  api: ApiClient,
  page: PageName,
  title: string,
  show: (start: PageStart) => Promise<void> | void,
): Promise<void> {
  const app = byId('app');
  try {
    const [ceremony, methods, session] = await Promise.all([
      api.get<CeremonyView>('/api/ceremony'),
      api.get<AuthMethods>('/auth/methods'),
      api.loadSession(),
    ]);
    document.title = `${title} · ${ceremony.title ?? ceremony.id}`;
    const main = h('main', { id: 'main' });
    replaceChildren(app, renderSiteHeader(page, ceremony), main);
    await show({ main, ceremony, methods, session });
  } catch (error) {
    replaceChildren(app, h('main', {}, errorNotice(error)));
  }
}
