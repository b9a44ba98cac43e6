/** Human-readable sizes, durations, times, positions and hashes for the pages. */

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

export function percent(part: number, whole: number | null | undefined): number {
  if (!whole) return 0;
  return Math.min(100, Math.floor((part / whole) * 100));
}

/** "about 3 min", "less than a minute", "about 1 h 20 min". */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return 'less than a minute';
  const minutes = Math.round(ms / 60_000);
  if (minutes < 60) return `about ${minutes} min`;
  return `about ${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** "12 s", "3 min 5 s": a short wait, to the second. */
export function formatSeconds(ms: number): string {
  const seconds = Math.max(1, Math.round(ms / 1000));
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** A countdown "9:05" (m:ss), or "0:00" once past. */
export function formatCountdown(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

export function formatTime(time: string | number): string {
  const date = new Date(time);
  return Number.isNaN(date.getTime())
    ? String(time)
    : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** "next in line", "2nd in line", … */
export function formatPosition(position: number): string {
  if (position <= 1) return 'next in line';
  const suffix =
    position % 100 >= 11 && position % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][position % 10] ?? 'th');
  return `${position}${suffix} in line`;
}

/** The first and last characters of a long hex hash, for tables (the full value stays in a title). */
export function shortHash(hash: string | null | undefined): string {
  if (!hash) return '—';
  return hash.length > 20 ? `${hash.slice(0, 10)}…${hash.slice(-8)}` : hash;
}

/** A 512-bit hash in four lines of four 8-character groups, as snarkjs prints it. */
export function formatHashBlock(hash: string): string {
  const groups = hash.match(/.{1,8}/g) ?? [hash];
  const lines: string[] = [];
  for (let i = 0; i < groups.length; i += 4) lines.push(groups.slice(i, i + 4).join(' '));
  return lines.join('\n');
}

export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
