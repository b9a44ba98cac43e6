/**
 * Where an honest client's standby take goes (issue 62), for bench/hostile-lobby.ts `--trace`: each
 * honest terminal client runs with bench/terminal-trace.mjs (its HTTP events, in its own process),
 * and each turn taken over on standby by an honest client is laid against the queue log: from the
 * moment the rules' offer reached the taker, when its held poll was answered, each request it made
 * after that, and the take the coordinator logged. Timestamps, not guesses: the coordinator's share
 * is the poll's answer, the client's the rest.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { standbyReachedAt, statedStandby } from '../core/queue-log/turn-order.ts';

interface TraceEvent {
  at: number;
  event: string;
  method?: string;
  path?: string;
}

/** The trace file of the honest client `name` in a run's data folder. */
export function traceFileOf(dataDir: string, name: string): string {
  return path.join(dataDir, `trace-${name}.jsonl`);
}

/** One take: the offer reaching the taker, then each step as ms after it (undefined: not seen). */
interface TakeTimeline {
  circuit: string;
  taker: string;
  skipped: number;
  /** The step's name → ms after the offer reached the taker. */
  steps: Map<string, number>;
  /** The taker's HTTP events from the offer to the take. */
  events: string[];
}

const STEP_NAMES = [
  'held poll answered (its headers in)',
  'the request that took it out',
  'take logged by the coordinator',
] as const;

async function readTrace(file: string): Promise<TraceEvent[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TraceEvent)
    .sort((a, b) => a.at - b.at);
}

/** A few ms either way: the coordinator's and each client's clocks are read in different processes. */
const SKEW_MS = 5;

/**
 * The steps of one take from the taker's trace, from `reached` (the offer) to `taken` (the log's
 * take), and its events from just before the offer to the take, each `+ms event METHOD path`.
 */
function stepsOf(
  trace: readonly TraceEvent[],
  reached: number,
  taken: number,
): { steps: Map<string, number>; events: string[] } {
  const steps = new Map<string, number>();
  const within = trace.filter((e) => e.at >= reached - SKEW_MS && e.at <= taken + SKEW_MS);
  const answered = within.find((e) => e.event === 'response' && (e.path ?? '').startsWith('/api/me'));
  if (answered) steps.set(STEP_NAMES[0], answered.at - reached);
  const took = within
    .filter((e) => e.event === 'request' && /\/(contribution-inputs|zkeys)\b/.test(e.path ?? ''))
    .at(-1);
  if (took) steps.set(STEP_NAMES[1], took.at - reached);
  steps.set(STEP_NAMES[2], taken - reached);
  // From a little before the offer: whether a poll was held over it, or the client busy elsewhere.
  const events = trace
    .filter((e) => e.at >= reached - 300 && e.at <= taken + SKEW_MS)
    .map(
      (e) => `+${Math.round(e.at - reached)} ${e.event} ${e.method ?? ''} ${(e.path ?? '').replace(/^\/api\//, '')}`,
    );
  return { steps, events };
}

/** Each standby take by an honest client in the run's queue log (`entries`), with its trace's steps. */
export async function takeTimelines(
  dataDir: string,
  entries: ReadonlyArray<Record<string, unknown>>,
): Promise<TakeTimeline[]> {
  const standby = statedStandby((entries.find((e) => e.type === 'rules') ?? {}) as Record<string, number>);
  const grantedAt = new Map<string, number>();
  const timelines: TakeTimeline[] = [];
  const traces = new Map<string, TraceEvent[]>();
  for (const entry of entries) {
    const circuit = entry.circuit as string;
    const at = Date.parse(entry.time as string);
    if (entry.type === 'granted') grantedAt.set(circuit, at);
    const taker = entry.takenOverBy;
    if (entry.type !== 'lapsed' || typeof taker !== 'string' || !taker.startsWith('demo:h')) continue;
    const skipped = entries.filter(
      (e) => e.type === 'skipped' && e.circuit === circuit && e.time === entry.time && e.takenOverBy === taker,
    ).length;
    const reached = standbyReachedAt(grantedAt.get(circuit)!, skipped + 1, standby);
    const name = taker.slice('demo:'.length);
    if (!traces.has(name)) traces.set(name, await readTrace(traceFileOf(dataDir, name)));
    timelines.push({ circuit, taker: name, skipped, ...stepsOf(traces.get(name)!, reached, at) });
  }
  return timelines;
}

/** The takes' steps: median and largest per step, then each take on one line. */
export function printTakeTimelines(label: string, timelines: readonly TakeTimeline[]): void {
  const ms = (v: number | undefined) => (v === undefined ? '–' : `${Math.round(v)}`);
  process.stdout.write(`\n${label}: ${timelines.length} standby takes by honest clients, ms after the offer\n`);
  for (const name of STEP_NAMES) {
    const values = timelines.flatMap((t) => t.steps.get(name) ?? []).sort((a, b) => a - b);
    const median = values[Math.floor(values.length / 2)];
    process.stdout.write(`  ${name.padEnd(46)} median ${ms(median).padStart(5)}  max ${ms(values.at(-1))}\n`);
  }
  for (const t of timelines)
    process.stdout.write(
      `  ${t.circuit} ${t.taker} (${t.skipped} let pass): ${STEP_NAMES.map((n) => ms(t.steps.get(n))).join(' / ')}` +
        `\n${t.events.map((e) => `      ${e}\n`).join('')}`,
    );
}
