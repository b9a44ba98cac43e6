/**
 * How long-running ceremony work reports what it is doing: structured events that core emits and
 * a front end renders (the CLI: cli/progress). Counts come from the work itself (snarkjs's logger
 * reports "… 1000/262144" as it goes), never from estimates, so a renderer can derive a
 * percentage, a rate and an ETA from them.
 */
import type * as snarkjs from 'snarkjs';

export type ProgressEvent =
  /** A new step of the work on `circuit` starts (a milestone: "verifying contribution 3"). */
  | { type: 'step'; circuit: string; step: string }
  /** `done` of `total` units of `part` (a stage of the current step, as snarkjs names it) are finished. */
  | { type: 'count'; circuit: string; part: string; done: number; total: number }
  /** Every step of the work on `circuit` is finished. */
  | { type: 'finished'; circuit: string };

/** `circuit` is the subject of the work: a circuit name, or e.g. `ptau` for work on no circuit. */
export type Progress = (event: ProgressEvent) => void;

export const silentProgress: Progress = () => {};

/** The `count` events of a contribution's scaling of L and H, for `circuit`. */
export function pointsScaledProgress(progress: Progress, circuit: string): (done: number, total: number) => void {
  return (done, total) => progress({ type: 'count', circuit, part: 'L and H scaled', done, total });
}

// "Applying key: L Section: 1000/262144", "Multiexp start: ... : 0/4096", "H Verification(tau):  0/1024"
const COUNT_MESSAGE = /^(.*?)[:\s]+(\d+)\/(\d+)$/;

/** Parses one snarkjs debug message into a count event, or undefined when it carries no count. */
export function parseSnarkjsCount(circuit: string, message: string): ProgressEvent | undefined {
  const match = COUNT_MESSAGE.exec(message.trim());
  if (!match) return undefined;
  const total = Number(match[3]);
  if (!(total > 0)) return undefined;
  return { type: 'count', circuit, part: match[1]!.trim(), done: Math.min(Number(match[2]), total), total };
}

/**
 * A snarkjs logger that turns its counted debug messages into `count` events for `circuit` and
 * keeps its error messages in `errors` (callers map those to our error codes).
 */
export function snarkjsProgressLogger(progress: Progress, circuit: string, errors: string[] = []): snarkjs.Logger {
  return {
    debug: (message: string) => {
      const event = parseSnarkjsCount(circuit, message);
      if (event) progress(event);
    },
    info: () => {},
    warn: () => {},
    error: (message: string) => {
      errors.push(message);
    },
  };
}
