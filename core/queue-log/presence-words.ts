/**
 * What a waiting contributor is told about staying (the lobby's presence rules, server/lobby), in
 * the same words on the page and in the terminal: keep the client open, and what happens if it is
 * closed. No imports: the page bundles it.
 */

export interface PresenceRules {
  /** An entry not seen for this long is passed over (0: never). */
  awayAfterMs: number;
  /** A turn not started within this passes on (0: no such limit). */
  takeTurnWithinMs: number;
  /** A turn started whose client then falls silent this long is missed (0 or absent: only at its deadline). */
  silentTurnAfterMs?: number;
  /** A client that holds the presence stream and closes it is passed over this long after (0 or absent: never). */
  goneAfterDisconnectMs?: number;
}

function span(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  return `${m} minute${m === 1 ? '' : 's'}`;
}

/** The advice, for a page (`this page`) or a terminal (`this command`). */
export function presenceAdvice(rules: PresenceRules, client: 'page' | 'terminal'): string {
  const open = client === 'page' ? 'keep this page open' : 'keep this command running';
  const closed = client === 'page' ? 'If you close it' : 'If it stops';
  const parts = [`You are in line; ${open}: it tells the coordinator you are still here.`];
  // Both clients hold the presence stream, so closing one is seen at once, not after awayAfterMs.
  const passedOverAfter = [rules.awayAfterMs, rules.goneAfterDisconnectMs ?? 0].filter((ms) => ms > 0);
  if (passedOverAfter.length > 0)
    parts.push(
      `${closed} for more than ${span(Math.min(...passedOverAfter))}, you keep your place but are passed over ` +
        'until it is back.',
    );
  if (rules.takeTurnWithinMs > 0)
    parts.push(
      `A turn not started within ${span(rules.takeTurnWithinMs)} goes to the next in line and counts as a ` +
        'missed turn; the first time, you keep your place and take the turn after next when you are back.',
    );
  const missedAfter = [rules.silentTurnAfterMs ?? 0, rules.goneAfterDisconnectMs ?? 0].filter((ms) => ms > 0);
  if (missedAfter.length > 0)
    parts.push(
      `Once your turn has started, ${client === 'page' ? 'closing this page' : 'stopping this command'} for ` +
        `more than ${span(Math.min(...missedAfter))} ends it as a missed turn.`,
    );
  return parts.join(' ');
}
