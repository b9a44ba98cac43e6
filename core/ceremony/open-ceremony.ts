/**
 * A ceremony as it stands on disk: its configuration, its verified transcript, and for every
 * circuit the chain the transcript commits to (head index and file, final key if any).
 */
import { loadCeremonyConfig, findCircuit, type CeremonyConfig, type CircuitConfig } from '../config/ceremony-config.ts';
import { ceremonyPaths, type CeremonyPaths } from '../data-folder/ceremony-paths.ts';
import { Transcript, type TranscriptEntry } from '../transcript/transcript.ts';
import { CoordinatorError } from '../errors.ts';

type Entry<T extends TranscriptEntry['type']> = Extract<TranscriptEntry, { type: T }>;
export type BeaconAnnouncementEntry = Entry<'beaconAnnouncement'>;

export interface CircuitChain {
  circuit: CircuitConfig;
  init: Entry<'init'> | undefined;
  contributions: Entry<'contribution'>[];
  beacon: Entry<'beacon'> | undefined;
  /** Index of the head: 0 after init, +1 for each accepted contribution. */
  headIndex: number;
  /** Transcript entry of the head (init or last contribution). */
  head: Entry<'init'> | Entry<'contribution'> | undefined;
}

export interface CeremonyState {
  config: CeremonyConfig;
  paths: CeremonyPaths;
  transcript: Transcript;
  chains: Map<string, CircuitChain>;
  finalised: Entry<'finalised'> | undefined;
  /** The beacon committed to before it was known; once there, contributions are closed. */
  beaconAnnouncement: BeaconAnnouncementEntry | undefined;
}

export function chainsFromTranscript(
  config: CeremonyConfig,
  entries: readonly TranscriptEntry[],
): Map<string, CircuitChain> {
  const chains = new Map<string, CircuitChain>();
  for (const circuit of config.circuits) {
    chains.set(circuit.name, {
      circuit,
      init: undefined,
      contributions: [],
      beacon: undefined,
      headIndex: -1,
      head: undefined,
    });
  }
  const where = (entry: TranscriptEntry): string => `transcript entry ${entry.seq}`;
  for (const entry of entries) {
    if (entry.type === 'finalised') {
      // The reader saw every chain begun sealed; the configuration's chains must all have begun too.
      const unsealed = [...chains.values()].filter((chain) => !chain.beacon).map((chain) => chain.circuit.name);
      if (unsealed.length > 0)
        throw new CoordinatorError(
          'transcript.corrupt',
          `${where(entry)} finalises the ceremony without a beacon for ${unsealed.join(', ')}`,
        );
      continue;
    }
    if (entry.type === 'beaconAnnouncement') continue;
    const chain = chains.get(entry.circuit);
    if (!chain)
      throw new CoordinatorError(
        'transcript.corrupt',
        `${where(entry)} names circuit "${entry.circuit}", which the configuration does not have`,
      );
    if (chain.beacon)
      throw new CoordinatorError(
        'transcript.corrupt',
        `${where(entry)} extends ${entry.circuit} after its final beacon`,
      );
    if (entry.index !== chain.headIndex + 1) {
      throw new CoordinatorError(
        'transcript.corrupt',
        `${where(entry)} has index ${entry.index} for ${entry.circuit}, expected ${chain.headIndex + 1}`,
      );
    }
    if (entry.type === 'init') {
      chain.init = entry;
      chain.head = entry;
      chain.headIndex = 0;
    } else if (entry.type === 'contribution') {
      chain.contributions.push(entry);
      chain.head = entry;
      chain.headIndex = entry.index;
    } else {
      chain.beacon = entry;
    }
  }
  return chains;
}

export async function openCeremony(dataDir: string): Promise<CeremonyState> {
  const config = await loadCeremonyConfig(dataDir);
  const paths = ceremonyPaths(config.dataDir);
  const transcript = await Transcript.load(paths.transcriptPath, config.id);
  const finalised = transcript.entries.find((e): e is Entry<'finalised'> => e.type === 'finalised');
  const beaconAnnouncement = transcript.entries.find(
    (e): e is BeaconAnnouncementEntry => e.type === 'beaconAnnouncement',
  );
  return {
    config,
    paths,
    transcript,
    chains: chainsFromTranscript(config, transcript.entries),
    finalised,
    beaconAnnouncement,
  };
}

/** The chain of a circuit that must already be initialised. */
export function requireChain(state: CeremonyState, circuitName: string): CircuitChain {
  const circuit = findCircuit(state.config, circuitName);
  const chain = state.chains.get(circuit.name)!;
  if (!chain.head) {
    throw new CoordinatorError(
      'ceremony.not_initialised',
      `the ceremony in ${state.config.dataDir} is not initialised; run \`ceremony init\` first`,
    );
  }
  return chain;
}

/** Refuses a contribution once the beacon is announced: it could be chosen knowing the beacon. */
export function refuseAfterBeaconAnnouncement(state: CeremonyState): void {
  const announced = state.beaconAnnouncement;
  if (announced) {
    throw new CoordinatorError(
      'ceremony.beacon_announced',
      `contributions are closed: the beacon was announced (block ${announced.blockNumber} ` +
        `of chain ${announced.chainId}, transcript entry ${announced.seq})`,
    );
  }
}

/**
 * Refuses (`finalise.too_few_contributions`) while a chain not yet sealed has fewer contributions
 * than ceremony.json's minContributions (at least 1: a key with no contribution is secret to no
 * one, its δ coming from the public beacon alone). The coordinator's finalise route asks this
 * before it starts, so the refusal comes before the ceremony enters `finalising`.
 */
export function refuseTooFewContributions(state: CeremonyState): void {
  const minimum = state.config.minContributions;
  const short = [...state.chains.values()].filter((chain) => !chain.beacon && chain.head && chain.headIndex < minimum);
  if (short.length > 0) {
    throw new CoordinatorError(
      'finalise.too_few_contributions',
      `ceremony.json requires at least ${minimum} contribution${minimum === 1 ? '' : 's'} ` +
        'per circuit before finalising; ' +
        `too few for: ${short.map((chain) => `${chain.circuit.name} (${chain.headIndex})`).join(', ')}` +
        (minimum === 1 ? '; a key with no contribution is not secret to anyone' : ''),
    );
  }
}
