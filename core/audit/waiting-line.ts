/**
 * One circuit's waiting entries in join order, indexed so the audit's replay asks the rules of
 * core/queue-log/turn-order.ts in O(log n) per step rather than by a walk over the queue: the
 * coordinator writes the log the auditor replays, so a log crafted to make every grant scan a long
 * queue of away or cooling-down entries would otherwise cost the auditor O(n²).
 *
 * Each entry holds a slot, given in join order (an entry back in its place keeps its slot). Two min
 * segment trees over the slots hold each entry's eligibleAt when it is not away, one for the
 * entries not passed on and one for those passed on (Infinity elsewhere): "the first entry in FIFO
 * order that may be granted a turn at `now`" is a descent to the leftmost leaf at most `now`.
 * `firstInLine` and `offeredBefore` here answer exactly as turn-order.ts's over the same queue
 * (tests/core/waiting-line.test.ts compares them on random queues).
 */
import type { WaitingEntry } from '../queue-log/turn-order.ts';

export interface Slotted extends WaitingEntry {
  /** The entry's place in its circuit's line, given in join order by WaitingLine.join. */
  slot: number;
}

/** A min segment tree over slots, growing by doubling (amortised O(1) a slot). */
class MinTree {
  private size = 1;
  private tree = new Float64Array(2).fill(Infinity);

  set(slot: number, value: number): void {
    while (slot >= this.size) this.grow();
    let i = slot + this.size;
    this.tree[i] = value;
    for (i >>= 1; i >= 1; i >>= 1) this.tree[i] = Math.min(this.tree[2 * i]!, this.tree[2 * i + 1]!);
  }

  private grow(): void {
    const old = this.tree;
    const oldSize = this.size;
    this.size *= 2;
    this.tree = new Float64Array(2 * this.size).fill(Infinity);
    this.tree.set(old.subarray(oldSize, 2 * oldSize), this.size);
    for (let i = this.size - 1; i >= 1; i--) this.tree[i] = Math.min(this.tree[2 * i]!, this.tree[2 * i + 1]!);
  }

  /** The first slot ≥ `from` and < `to` whose value is at most `limit`, or -1: O(log n). */
  first(limit: number, from = 0, to = this.size): number {
    return this.descend(1, 0, this.size, limit, from, Math.min(to, this.size));
  }

  private descend(node: number, lo: number, hi: number, limit: number, from: number, to: number): number {
    if (hi <= from || lo >= to || this.tree[node]! > limit) return -1;
    if (hi - lo === 1) return lo;
    const mid = (lo + hi) >> 1;
    const left = this.descend(2 * node, lo, mid, limit, from, to);
    return left >= 0 ? left : this.descend(2 * node + 1, mid, hi, limit, from, to);
  }
}

export class WaitingLine<T extends Slotted> {
  private readonly bySlot: (T | undefined)[] = [];
  /** Not away, not passed on: eligibleAt by slot. */
  private readonly ready = new MinTree();
  /** Not away, passed on: eligibleAt by slot. */
  private readonly passed = new MinTree();
  /** The entries passed on, so the turn's end clears them alone, not the whole line. */
  private readonly passedOn = new Set<T>();
  private count = 0;

  get length(): number {
    return this.count;
  }

  /** Puts `entry` at the back of the line: its slot is the next one. */
  join(entry: Omit<T, 'slot'>): T {
    const placed = { ...entry, slot: this.bySlot.length } as T;
    this.bySlot.push(undefined);
    this.insert(placed);
    return placed;
  }

  /** Puts `entry` back in its own place (its slot). */
  insert(entry: T): void {
    if (this.bySlot[entry.slot] !== undefined) throw new Error(`slot ${entry.slot} is taken`);
    this.bySlot[entry.slot] = entry;
    this.count++;
    this.update(entry);
  }

  remove(entry: T): void {
    if (this.bySlot[entry.slot] !== entry) return;
    this.bySlot[entry.slot] = undefined;
    this.count--;
    this.passedOn.delete(entry);
    this.ready.set(entry.slot, Infinity);
    this.passed.set(entry.slot, Infinity);
  }

  /** Sets fields of a waiting entry and re-indexes it. */
  change(entry: T, fields: Partial<WaitingEntry>): void {
    Object.assign(entry, fields);
    if (this.bySlot[entry.slot] === entry) this.update(entry);
  }

  private update(entry: T): void {
    const value = entry.away ? Infinity : entry.eligibleAt;
    this.ready.set(entry.slot, entry.passedOn ? Infinity : value);
    this.passed.set(entry.slot, entry.passedOn ? value : Infinity);
    if (entry.passedOn) this.passedOn.add(entry);
    else this.passedOn.delete(entry);
  }

  /** The circuit's turn ended: the entries passed on are no longer (as many steps as there are of them). */
  endTurn(): void {
    for (const entry of [...this.passedOn]) this.change(entry, { passedOn: false });
  }

  /** turn-order.ts firstInLine over this line. */
  firstInLine(now: number): T | undefined {
    const slot = this.ready.first(now);
    if (slot >= 0) return this.bySlot[slot];
    const passedSlot = this.passed.first(now);
    return passedSlot >= 0 ? this.bySlot[passedSlot] : undefined;
  }

  /**
   * turn-order.ts offeredBefore over this line, `candidate` the entry isCandidate picks. It walks
   * at most `depth` entries of the index, each found in O(log n): when it answers, each entry it
   * returns must be followed by a `skipped` entry of the log, so the walk is the log's own length;
   * when it does not, the audit fails there.
   */
  offeredBefore(candidate: T, depth: number, now: number): T[] | undefined {
    if (depth <= 0 || this.bySlot[candidate.slot] !== candidate) return undefined;
    if (candidate.away || candidate.eligibleAt > now) return undefined;
    const before: T[] = [];
    const walk = (tree: MinTree, to: number): boolean => {
      for (let slot = tree.first(now, 0, to); slot >= 0; slot = tree.first(now, slot + 1, to)) {
        if (slot === candidate.slot) continue;
        if (before.length >= depth - 1) return false;
        before.push(this.bySlot[slot]!);
      }
      return true;
    };
    if (!candidate.passedOn) return walk(this.ready, candidate.slot) ? before : undefined;
    // Passed on: every ready entry comes first (wherever it waits), then the passed-on ones ahead of it.
    return walk(this.ready, Infinity) && walk(this.passed, candidate.slot) ? before : undefined;
  }
}
