/**
 * What runs the lobby's clock: a tick every interval (deadlines checked, free circuits granted), one
 * more at the lobby's next due moment when that comes sooner (a turn passes on the moment its time
 * to be taken runs out), and after every move that may free a circuit. Every tick's events go to
 * `onEvents` (the log, the metrics), and every watcher (a held poll) is told to look again.
 */
import type { Db } from '../store/database.ts';
import { systemClock, type Clock } from '../clock.ts';
import type { Lobby } from './lobby.ts';
import type { LobbyEvent } from './lobby-types.ts';

export interface LobbyPacerDeps {
  lobby: Lobby;
  db: Db;
  clock: Clock;
  /** How often deadlines are checked and turns granted (ms). */
  tickIntervalMs: number;
  onEvents: (events: readonly LobbyEvent[]) => void;
}

export class LobbyPacer {
  private timer: NodeJS.Timeout | undefined;
  /** A tick at the lobby's next due moment, when that comes before the interval's next tick. */
  private dueTimer: NodeJS.Timeout | undefined;
  private readonly watchers = new Set<() => void>();

  constructor(private readonly deps: LobbyPacerDeps) {}

  /** Ticks now, then every interval. */
  start(): void {
    this.tick();
    this.timer = setInterval(() => this.tick(), this.deps.tickIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    clearTimeout(this.dueTimer);
  }

  /** Between start and stop: before start, the start-up's settling comes first. */
  get running(): boolean {
    return this.timer !== undefined;
  }

  tick(): void {
    this.moved(this.deps.lobby.tick());
  }

  /**
   * A lobby move that may free a circuit (a contributor leaving their turn) and the tick it calls
   * for, in one transaction when `ticks` says so of its result: the next in line holds the circuit
   * as the move commits, one sync of the database rather than two, and not after whatever the
   * caller still does once the move is made (removing an upload, logging).
   */
  moveAndTick<T>(move: () => T, ticks: (result: T) => boolean = () => true): T {
    let events: LobbyEvent[] | undefined;
    const result = this.deps.db
      .transaction(() => {
        const moved = move();
        if (ticks(moved)) events = this.deps.lobby.tick();
        return moved;
      })
      .immediate();
    if (events) this.moved(events);
    return result;
  }

  /** After the lobby moved: its events said, the next due tick set, the watchers told to look again. */
  moved(events: readonly LobbyEvent[]): void {
    this.deps.onEvents(events);
    this.scheduleDueTick();
    for (const watcher of [...this.watchers]) watcher();
  }

  /**
   * Calls `watcher` after every tick and standby take: a status may have changed then (a grant, a
   * standby offer, a place in line), so a held poll re-reads it. Returns the unsubscribe.
   */
  watch(watcher: () => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /**
   * Ticks again at the lobby's next due moment (nextDueAt) when the interval would come later.
   * Real time only: a service on an injected clock (the tests') is ticked by whoever moves that clock.
   * Public for what brings that moment forward without a move (a presence stream closing: its grace).
   */
  scheduleDueTick(): void {
    clearTimeout(this.dueTimer);
    this.dueTimer = undefined;
    if (this.timer === undefined || this.deps.clock !== systemClock) return;
    const due = this.deps.lobby.nextDueAt();
    if (due === undefined) return;
    const wait = Math.max(0, due - this.deps.clock.now());
    if (wait >= this.deps.tickIntervalMs) return;
    this.dueTimer = setTimeout(() => this.tick(), wait);
    this.dueTimer.unref();
  }
}
