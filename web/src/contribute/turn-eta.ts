/**
 * Where a streamed turn's time goes, for the page: each part's rate since the turn started and
 * the time left. Download, compute and upload run at once, so the turn ends with the slowest of
 * them: the time left is the largest of the three parts' own (what is left ÷ its rate so far).
 */
import type { Tally } from './streamed-turn.ts';

export interface StreamedParts {
  startedAt: number;
  down: Tally;
  scaled: Tally;
  up: Tally;
}

/** Units per second of a part since `startedAt`, or undefined before a second's worth of signal. */
export function rateOf(part: Tally, startedAt: number, now: number): number | undefined {
  const seconds = (now - startedAt) / 1000;
  return part.done > 0 && seconds >= 0.5 ? part.done / seconds : undefined;
}

/** Milliseconds left in the turn, or undefined while a part has no rate yet (or no total). */
export function streamedTimeLeftMs(parts: StreamedParts, now: number): number | undefined {
  let left = 0;
  for (const part of [parts.down, parts.scaled, parts.up]) {
    if (part.total <= 0) return undefined;
    if (part.done >= part.total) continue;
    const rate = rateOf(part, parts.startedAt, now);
    if (rate === undefined) return undefined;
    left = Math.max(left, ((part.total - part.done) / rate) * 1000);
  }
  return left;
}
