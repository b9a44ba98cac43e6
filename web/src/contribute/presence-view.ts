/**
 * What the page does about presence (the lobby's rules, server/lobby): while the contributor waits
 * it says "you are in line; keep this open" and what closing it costs (core/queue-log/presence-words.ts,
 * the terminal's words too), shows where they stand in the tab's title so a tab in the background
 * still tells them, and raises a browser notification (when they allowed it) once they are next
 * in line or their turn starts.
 */
import type { MeView } from '../api/api-types.ts';
import { presenceAdvice } from '../../../core/queue-log/presence-words.ts';
import { h } from '../ui/element.ts';

/** The notice while waiting in a queue; null otherwise. */
export function renderPresenceNotice(me: MeView): HTMLElement | null {
  if (!me.status.circuits.some((c) => c.state === 'waiting') || !me.status.presence) return null;
  return h(
    'div',
    { class: 'banner ok', id: 'presence-notice', role: 'note' },
    presenceAdvice(me.status.presence, 'page'),
  );
}

/** The tab's title: where the contributor stands first, then the page's own title. */
export function turnTitle(me: MeView, base: string): string {
  const circuits = me.status.circuits;
  const turn = circuits.find((c) => c.state === 'turn');
  if (turn) return `Your turn: ${turn.circuit} · ${base}`;
  if (circuits.some((c) => c.state === 'verifying')) return `Verifying · ${base}`;
  const waiting = circuits.find((c) => c.state === 'waiting');
  if (waiting?.state === 'waiting')
    return waiting.position === 1 ? `Next in line · ${base}` : `#${waiting.position} in line · ${base}`;
  return me.status.done ? `Done · ${base}` : base;
}

/** One notification per circuit for "next in line" and one for "your turn", when allowed. */
export class TurnNotifier {
  private readonly told = new Set<string>();

  /** Asks for permission (from a click: browsers ask only on a gesture); silently nothing without the API. */
  askPermission(): void {
    if (typeof Notification !== 'undefined' && Notification.permission === 'default')
      void Notification.requestPermission().catch(() => {});
  }

  update(me: MeView): void {
    if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
    for (const progress of me.status.circuits) {
      const event =
        progress.state === 'turn'
          ? 'turn'
          : progress.state === 'waiting' && progress.position === 1 && !progress.eligibleAt
            ? 'next'
            : undefined;
      if (!event || this.told.has(`${event}:${progress.circuit}`)) continue;
      this.told.add(`${event}:${progress.circuit}`);
      try {
        new Notification(
          event === 'turn' ? `Your turn on ${progress.circuit}` : `You are next for ${progress.circuit}`,
          {
            body:
              event === 'turn'
                ? 'The page is contributing now; keep it open until it is accepted.'
                : 'Your turn starts as soon as the one before you is done; keep the page open.',
            tag: `ceremony-${event}-${progress.circuit}`,
          },
        );
      } catch {
        // Some browsers allow notifications from a service worker only: the title still says it.
      }
    }
  }
}
