/**
 * Renders core's structured progress (core/ceremony/progress.ts) for a person or a log. On a
 * terminal: one live line per circuit (the circuit, its step, the stage snarkjs is in with a
 * percentage, a rate and an ETA), redrawn in place and kept as a "done in" line when the circuit
 * finishes. Anywhere else (CI, a log file): plain lines only, the start of each step, a progress
 * line when a stage runs long, and "done in" per circuit, so logs stay short and greppable.
 *
 * A small own renderer rather than a library (cli-progress and the like): the bars those draw
 * need a total known up front, and ours changes with every snarkjs stage; what we need is a
 * status line, which is a dozen lines of code and easy to test against a fake terminal.
 */
import type { Progress, ProgressEvent } from '../../core/ceremony/progress.ts';

/** What the renderer writes to: process.stderr, or a fake terminal in tests. */
export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(chunk: string): unknown;
}

export interface ProgressRendererOptions {
  now?: () => number;
  /** Terminal: the live line is redrawn at most this often. Default 100 ms. */
  redrawIntervalMs?: number;
  /** Plain output: a stage that runs longer than this gets a progress line, then one per interval. Default 30 s. */
  plainIntervalMs?: number;
}

export interface ProgressRenderer {
  progress: Progress;
  /**
   * A line of its own (a verdict, a notice, a question's answer): on a terminal it is written
   * above the live line, which is then drawn again; elsewhere it is one more plain line.
   */
  note(line: string): void;
  /** Ends the live line (call when the work ends, also on failure). */
  close(): void;
}

interface CircuitState {
  startedAt: number;
  step?: string;
  part?: { name: string; firstAt: number; firstDone: number; done: number; total: number; at: number };
  lastPlainAt: number;
}

const CLEAR_LINE = '\r\x1b[2K';

function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (ms < 60_000) return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function formatRate(perSecond: number): string {
  if (perSecond >= 1e6) return `${(perSecond / 1e6).toFixed(1)}M/s`;
  if (perSecond >= 1e3) return `${(perSecond / 1e3).toFixed(1)}k/s`;
  return `${perSecond.toFixed(perSecond < 10 ? 1 : 0)}/s`;
}

/** Percentage, rate and ETA of a stage, from its counts so far; rate and ETA need two samples. */
function stageFigures(part: NonNullable<CircuitState['part']>): { percent: string; rate?: string; eta?: string } {
  const percent = `${Math.floor((100 * part.done) / part.total)}%`;
  const elapsed = part.at - part.firstAt;
  const progressed = part.done - part.firstDone;
  if (elapsed <= 0 || progressed <= 0) return { percent };
  const perSecond = (progressed * 1000) / elapsed;
  return { percent, rate: formatRate(perSecond), eta: formatDuration(((part.total - part.done) * 1000) / perSecond) };
}

/** The circuit's state after `event`: its step, and its stage's counts (anew when the stage changes or restarts). */
function recordEvent(state: CircuitState, event: ProgressEvent, now: () => number): void {
  if (event.type === 'step') {
    state.step = event.step;
    state.part = undefined;
  } else if (event.type === 'count') {
    const t = now();
    if (state.part?.name !== event.part || event.done < state.part.done) {
      state.part = {
        name: event.part,
        firstAt: t,
        firstDone: event.done,
        done: event.done,
        total: event.total,
        at: t,
      };
    } else {
      Object.assign(state.part, { done: event.done, total: event.total, at: t });
    }
  }
}

export function createProgressRenderer(
  stream: ProgressStream,
  options: ProgressRendererOptions = {},
): ProgressRenderer {
  const now = options.now ?? Date.now;
  const redrawIntervalMs = options.redrawIntervalMs ?? 100;
  const plainIntervalMs = options.plainIntervalMs ?? 30_000;
  const terminal = stream.isTTY === true;
  const circuits = new Map<string, CircuitState>();
  let live: string | undefined; // the circuit whose line is on screen, unfinished
  let lastDrawAt = -Infinity;

  const stateOf = (circuit: string): CircuitState => {
    let state = circuits.get(circuit);
    if (!state) circuits.set(circuit, (state = { startedAt: now(), lastPlainAt: now() }));
    return state;
  };

  const liveLine = (circuit: string, state: CircuitState): string => {
    const parts = [`${circuit}: ${state.step ?? 'working'}`];
    if (state.part) {
      const { percent, rate, eta } = stageFigures(state.part);
      parts.push(`${state.part.name} ${percent}`);
      if (rate) parts.push(rate);
      if (eta) parts.push(`ETA ${eta}`);
    }
    parts.push(`(${formatDuration(now() - state.startedAt)})`);
    const line = parts.join(' · ').replace(' · (', '  (');
    const width = (stream.columns || 100) - 1; // 0 when the terminal does not say
    return line.length > width ? `${line.slice(0, Math.max(0, width - 1))}…` : line;
  };

  const draw = (circuit: string, state: CircuitState): void => {
    if (live !== undefined && live !== circuit) stream.write('\n'); // keep the other circuit's last state
    stream.write(CLEAR_LINE + liveLine(circuit, state));
    live = circuit;
    lastDrawAt = now();
  };

  const onTerminal = (event: ProgressEvent, state: CircuitState): void => {
    if (event.type === 'finished') {
      if (live === event.circuit) stream.write(CLEAR_LINE);
      else if (live !== undefined) stream.write('\n');
      stream.write(`${event.circuit}: done in ${formatDuration(now() - state.startedAt)}\n`);
      live = undefined;
      return;
    }
    const complete = event.type === 'count' && event.done === event.total;
    if (event.type === 'step' || live !== event.circuit || complete || now() - lastDrawAt >= redrawIntervalMs)
      draw(event.circuit, state);
  };

  const onPlain = (event: ProgressEvent, state: CircuitState): void => {
    if (event.type === 'step') {
      stream.write(`… ${event.circuit}: ${event.step}\n`);
      state.lastPlainAt = now();
    } else if (event.type === 'finished') {
      stream.write(`… ${event.circuit}: done in ${formatDuration(now() - state.startedAt)}\n`);
    } else if (now() - state.lastPlainAt >= plainIntervalMs) {
      const { percent, rate, eta } = stageFigures(state.part!);
      stream.write(
        `… ${event.circuit}: ${event.part} ${percent}${rate ? ` (${rate}${eta ? `, ETA ${eta}` : ''})` : ''}\n`,
      );
      state.lastPlainAt = now();
    }
  };

  const progress: Progress = (event) => {
    const state = stateOf(event.circuit);
    recordEvent(state, event, now);
    if (terminal) onTerminal(event, state);
    else onPlain(event, state);
    if (event.type === 'finished') circuits.delete(event.circuit);
  };

  const note = (line: string): void => {
    if (!terminal) {
      stream.write(`${line}\n`);
      return;
    }
    const redraw = live === undefined ? undefined : circuits.get(live);
    stream.write(`${CLEAR_LINE}${line}\n`);
    if (redraw && live !== undefined) stream.write(CLEAR_LINE + liveLine(live, redraw));
  };

  return {
    progress,
    note,
    close: () => {
      if (terminal && live !== undefined) stream.write('\n');
      live = undefined;
    },
  };
}
