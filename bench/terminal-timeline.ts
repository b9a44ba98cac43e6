/**
 * A terminal turn as a timeline (issue 65: which of its seconds are waiting), read from the trace
 * bench/terminal-trace.mjs writes inside the client's process: the command started → its first
 * request (start-up, imports) → signed in → joined → the turn taken (the first heartbeat answered)
 * → the inputs' first and last byte → the upload's last answer → the verdict known → exit. Beside
 * it, the whole command against `ceremony contribute` (the local CLI) on the same key, whole command
 * too: the goal is a terminal turn at most 1.15× the local one.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The terminal turn, whole command, at most this many times the local `ceremony contribute`'s. */
export const TERMINAL_GOAL = 1.15;

interface TraceEvent {
  at: number;
  event: string;
  method?: string;
  path?: string;
}

/** Epoch ms of each step the trace showed (a step the client did not take is absent). */
export type TerminalTimeline = Array<{ step: string; at: number }>;

const DOWNLOAD = /\/(contribution-inputs|zkeys)\/\d+$/;
const STEPS: Array<[string, 'first' | 'last', (e: TraceEvent) => boolean]> = [
  ['Node up (the trace loaded)', 'first', (e) => e.event === 'started'],
  ['first request (the code loaded before it)', 'first', (e) => e.event === 'request'],
  ['signed in', 'first', (e) => e.event === 'response' && e.method === 'POST' && /^\/auth\//.test(e.path ?? '')],
  ['joined', 'first', (e) => e.event === 'response' && e.path === '/api/me/join'],
  [
    'turn under way (first heartbeat answered)',
    'first',
    (e) => e.event === 'response' && /\/heartbeat$/.test(e.path ?? ''),
  ],
  ['download: first byte', 'first', (e) => e.event === 'response' && DOWNLOAD.test(e.path ?? '')],
  ['download: last byte', 'last', (e) => e.event === 'body end' && DOWNLOAD.test(e.path ?? '')],
  ['upload: last answer', 'last', (e) => e.event === 'response' && e.method === 'PATCH'],
  [
    'verdict known (last GET /api/me answered)',
    'last',
    (e) => e.event === 'response' && /^\/api\/me(\?|$)/.test(e.path ?? ''),
  ],
  ['exit', 'last', (e) => e.event === 'exit'],
];

/** Where the client's trace goes, and how the client is started so that it writes one. */
export async function terminalTrace(): Promise<{
  nodeArgs: string[];
  env: NodeJS.ProcessEnv;
  read(): Promise<TerminalTimeline>;
}> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-terminal-trace-'));
  const file = path.join(dir, 'trace.jsonl');
  return {
    nodeArgs: ['--import', fileURLToPath(new URL('./terminal-trace.mjs', import.meta.url))],
    env: { ...process.env, CEREMONY_BENCH_TRACE: file },
    async read() {
      const text = await readFile(file, 'utf8').catch(() => '');
      await rm(dir, { recursive: true, force: true });
      const events = text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as TraceEvent);
      return STEPS.flatMap(([step, which, matches]) => {
        const found = which === 'first' ? events.find(matches) : events.filter(matches).at(-1);
        return found ? [{ step, at: found.at }] : [];
      });
    },
  };
}

interface TimedTurn {
  label: string;
  startedAt: number;
  timeline: TerminalTimeline;
}

/** The timelines side by side (seconds from the command's start), then terminal ÷ local, whole commands. */
export function printTerminalTimelines(
  turns: TimedTurn[],
  localWholeCommandMs: number,
  out: (line?: string) => void,
): void {
  if (turns.length === 0) return;
  const steps = STEPS.map(([step]) => step).filter((step) =>
    turns.some((t) => t.timeline.some((s) => s.step === step)),
  );
  const width = Math.max(...steps.map((s) => s.length), 'step'.length);
  const cellWidth = Math.max(14, ...turns.map((t) => t.label.length));
  out();
  out("the terminal turn's timeline (seconds from the command's start; the trace of its requests)");
  out(`${'step'.padEnd(width)}  ${turns.map((t) => t.label.padStart(cellWidth)).join('  ')}`);
  for (const step of steps) {
    const cells = turns.map((t) => {
      const at = t.timeline.find((s) => s.step === step)?.at;
      return (at === undefined ? '—' : `${((at - t.startedAt) / 1000).toFixed(2)} s`).padStart(cellWidth);
    });
    out(`${step.padEnd(width)}  ${cells.join('  ')}`);
  }
  for (const turn of turns) {
    const exit = turn.timeline.find((s) => s.step === 'exit')?.at;
    if (exit === undefined) continue;
    const ratio = (exit - turn.startedAt) / localWholeCommandMs;
    out(
      `terminal ÷ local, whole commands (${turn.label}): ${((exit - turn.startedAt) / 1000).toFixed(2)} s ÷ ` +
        `${(localWholeCommandMs / 1000).toFixed(2)} s = ${ratio.toFixed(2)}×  ` +
        `[≤ ${TERMINAL_GOAL}× (${ratio <= TERMINAL_GOAL ? 'met' : 'missed'})]`,
    );
  }
}
