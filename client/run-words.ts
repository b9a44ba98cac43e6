/** How the terminal's lines give a place in line and a span of time. */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A standby turn (granted to someone ahead, not taken, offered to this contributor too) as it starts… */
export function standbyStarting(circuit: string): string {
  return `a turn is free on ${circuit}: taking it`;
}

/** …and when another entry took it first: no failure of theirs, they wait on. */
export function standbyTakenElsewhere(circuit: string): string {
  return `${circuit}: someone else took that turn first; waiting in line again`;
}

/** How a turn's first step begins: "your turn", or, on standby, that a free turn is being taken. */
export function turnOpening(standby: boolean): string {
  return standby ? 'a turn is free, taking it' : 'your turn';
}
