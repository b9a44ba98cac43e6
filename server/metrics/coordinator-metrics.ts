/**
 * The coordinator's Prometheus metrics (prom-client), in a registry of its own per coordinator
 * (never prom-client's global default registry), so several coordinators in one process (tests)
 * never share or clash over a series. State (phase, queues, turns, chain lengths) is read at
 * scrape time from the lobby, the phase store and the ceremony on disk; events (verdicts, turns
 * missed, finished uploads) are counted as they happen, through the service's observer hook and
 * the upload handler; bytes over HTTP by the app's first middleware (http-byte-counter.ts).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CeremonyConfig } from '../../core/config/ceremony-config.ts';
import type { CeremonyState } from '../../core/ceremony/open-ceremony.ts';
import type { Lobby } from '../lobby/lobby.ts';
import type { LobbyEvent } from '../lobby/lobby-types.ts';
import type { CeremonyPhaseStore } from '../ceremony-phase.ts';
import { PHASES } from '../../core/ceremony/ceremony-phases.ts';
import type { ContributionDecision, ServiceObserver } from '../ceremony-service.ts';
import type { DiskSpace } from '../files/check-disk-space.ts';
import { HTTP_ROUTE_GROUPS, type HttpRouteGroup } from './http-byte-counter.ts';

export interface MetricsSources {
  config: CeremonyConfig;
  lobby: Lobby;
  phase: CeremonyPhaseStore;
}

/** What the gauges of the ceremony's state read, from the service and the uploads once they exist. */
export interface CeremonyStateSources {
  /** The ceremony on disk (cached until the transcript changes). */
  ceremonyState: () => Promise<CeremonyState>;
  /**
   * The upload free-space guard (ContributionUploads.diskSpace). Its byte figures are shown here,
   * behind the metrics token, and not in the public /healthz: how close the disk is to refusing
   * uploads tells an attacker how much to upload to stop the ceremony.
   */
  diskSpace?: () => Promise<DiskSpace>;
}

const CIRCUIT_STATES = ['idle', 'turn', 'verifying', 'finalised'] as const;
// Seconds: a verification takes from about a second (test circuits) to minutes (2^18 and up);
// an upload of a real-size key from seconds to many minutes on a slow line.
const VERIFICATION_BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200];
const UPLOAD_BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1200, 1800];

export class CoordinatorMetrics implements ServiceObserver {
  readonly registry = new Registry();
  private readonly accepted: Counter<'circuit'>;
  private readonly refused: Counter<'circuit' | 'code'>;
  private readonly turnsMissed: Counter<'circuit'>;
  private readonly verificationSeconds: Histogram<'circuit'>;
  private readonly uploadSeconds: Histogram<'circuit'>;
  private readonly requestBytes: Counter<'route'>;
  private readonly responseBytes: Counter<'route'>;
  private readonly circuits: string[];

  constructor(private readonly sources: MetricsSources) {
    const registers = [this.registry];
    const circuits = sources.config.circuits.map((c) => c.name);
    this.circuits = circuits;
    collectDefaultMetrics({ register: this.registry });

    new Gauge({
      name: 'ceremony_phase',
      help: 'The ceremony phase: 1 for the current one (setup, open, paused, closed, finalised), 0 for the others',
      labelNames: ['phase'],
      registers,
      collect() {
        const current = sources.phase.get();
        for (const phase of PHASES) this.set({ phase }, phase === current ? 1 : 0);
      },
    });
    new Gauge({
      name: 'ceremony_queue_length',
      help: 'Contributors waiting for a turn, per circuit',
      labelNames: ['circuit'],
      registers,
      collect() {
        for (const [circuit, waiting] of Object.entries(sources.lobby.queueLengths())) this.set({ circuit }, waiting);
      },
    });
    this.accepted = new Counter({
      name: 'ceremony_contributions_accepted_total',
      help: 'Contributions verified and committed, per circuit',
      labelNames: ['circuit'],
      registers,
    });
    this.refused = new Counter({
      name: 'ceremony_contributions_refused_total',
      help:
        'Uploaded contributions not committed, per circuit and error code ' +
        '(verification.unavailable: the verifier could not decide)',
      labelNames: ['circuit', 'code'],
      registers,
    });
    this.turnsMissed = new Counter({
      name: 'ceremony_turns_missed_total',
      help: 'Turns that ended at their deadline without an upload, per circuit',
      labelNames: ['circuit'],
      registers,
    });
    this.verificationSeconds = new Histogram({
      name: 'ceremony_verification_duration_seconds',
      help: 'From a finished upload to its verdict (queue wait plus verification), per circuit',
      labelNames: ['circuit'],
      buckets: VERIFICATION_BUCKETS,
      registers,
    });
    this.uploadSeconds = new Histogram({
      name: 'ceremony_upload_duration_seconds',
      help: 'From the creation of a contribution upload to its last byte (resumptions included), per circuit',
      labelNames: ['circuit'],
      buckets: UPLOAD_BUCKETS,
      registers,
    });
    this.requestBytes = new Counter({
      name: 'ceremony_http_request_bytes_total',
      help: 'Bytes received over HTTP (request lines, headers and bodies, as read from the sockets), per route group',
      labelNames: ['route'],
      registers,
    });
    this.responseBytes = new Counter({
      name: 'ceremony_http_response_bytes_total',
      help: 'Bytes sent over HTTP (status lines, headers and bodies, as written to the sockets), per route group',
      labelNames: ['route'],
      registers,
    });
    // Every circuit's series from the first scrape, so rate() and alerts see a 0, not nothing.
    for (const circuit of circuits) {
      for (const counter of [this.accepted, this.turnsMissed]) counter.inc({ circuit }, 0);
    }
    for (const route of HTTP_ROUTE_GROUPS) {
      this.requestBytes.inc({ route }, 0);
      this.responseBytes.inc({ route }, 0);
    }
  }

  /**
   * Adds the gauges read from the ceremony on disk and the upload guard: called once, when the
   * service and the uploads that answer them exist (they report their events here before that).
   */
  watchCeremony(ceremony: CeremonyStateSources): void {
    const registers = [this.registry];
    const circuits = this.circuits;
    const lobby = this.sources.lobby;
    new Gauge({
      name: 'ceremony_circuit_state',
      help:
        'What each circuit is doing: 1 for its current state (idle, turn: a ' +
        'contributor holds the turn, verifying: an upload is being verified, ' +
        'finalised), 0 for the others',
      labelNames: ['circuit', 'state'],
      registers,
      async collect() {
        const active = new Map(lobby.activeTurns().map((t) => [t.circuit, t.state]));
        const state = await ceremony.ceremonyState();
        for (const circuit of circuits) {
          const current = state.chains.get(circuit)?.beacon ? 'finalised' : (active.get(circuit) ?? 'idle');
          for (const s of CIRCUIT_STATES) this.set({ circuit, state: s }, s === current ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: 'ceremony_chain_contributions',
      help: 'Contributions committed to each chain (the head index)',
      labelNames: ['circuit'],
      registers,
      async collect() {
        const state = await ceremony.ceremonyState();
        for (const circuit of circuits) this.set({ circuit }, Math.max(state.chains.get(circuit)?.headIndex ?? 0, 0));
      },
    });

    if (ceremony.diskSpace) {
      const diskSpace = ceremony.diskSpace;
      // A failed check (logged by /healthz) leaves the gauges out of that scrape rather than failing it.
      const read = (): Promise<DiskSpace | undefined> => diskSpace().catch(() => undefined);
      new Gauge({
        name: 'ceremony_upload_disk_free_bytes',
        help: "Bytes free for the coordinator's user on the disk that holds the data folder",
        registers,
        async collect() {
          const space = await read();
          if (space) this.set(space.freeBytes);
        },
      });
      new Gauge({
        name: 'ceremony_upload_disk_required_bytes',
        help:
          'Free bytes below which uploads are refused (upload.disk_full): the ' +
          'largest key plus UPLOAD_DISK_MARGIN_BYTES',
        registers,
        async collect() {
          const space = await read();
          if (space) this.set(space.requiredBytes);
        },
      });
    }
  }

  lobbyEvent(event: LobbyEvent): void {
    // Turns granted are not counted here: a join can grant one at once, without a tick event.
    if (event.type === 'turn_missed') this.turnsMissed.inc({ circuit: event.circuit });
  }

  contributionDecided(decision: ContributionDecision): void {
    if (decision.outcome === 'accepted') this.accepted.inc({ circuit: decision.circuit });
    else this.refused.inc({ circuit: decision.circuit, code: decision.code });
    this.verificationSeconds.observe({ circuit: decision.circuit }, decision.sinceUploadMs / 1000);
  }

  /** Bytes one request moved on its socket (server/metrics/http-byte-counter.ts). */
  httpBytes(route: HttpRouteGroup, requestBytes: number, responseBytes: number): void {
    if (requestBytes > 0) this.requestBytes.inc({ route }, requestBytes);
    if (responseBytes > 0) this.responseBytes.inc({ route }, responseBytes);
  }

  /** A contribution upload received its last byte, `durationMs` after it was created. */
  uploadFinished(circuit: string, durationMs: number): void {
    this.uploadSeconds.observe({ circuit }, Math.max(durationMs, 0) / 1000);
  }
}
