/**
 * viem, loaded the first time a command reaches the network. Its module graph (about 350 files)
 * costs a command about 0.6 s of CPU to load, and most runs of the commands that can read a chain
 * never do: a receipt check without a deployment, a usage error, a file refused before any request.
 */
import type * as viemModule from 'viem';

export type Viem = typeof viemModule;

let loaded: Viem | undefined;

export async function loadViem(): Promise<Viem> {
  return (loaded ??= await import('viem'));
}

/** viem if something loaded it already: an error can only be one of its own then. */
export function viemIfLoaded(): Viem | undefined {
  return loaded;
}
