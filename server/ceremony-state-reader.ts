/**
 * The ceremony's state (core openCeremony) for the server, read again only when it changed.
 *
 * openCeremony re-reads ceremony.json and re-verifies the whole hash-chained transcript: about
 * 20 ms at 1,800 entries (200 contributors × 9 circuits), on the event loop. Public pages and
 * status polls ask for it all the time; it changes once per accepted contribution. Every change
 * replaces the file by a rename (core/fs/atomic-write.ts), so a stat per read notices it: the key
 * is inode, size and mtime (ns) of the transcript and of ceremony.json.
 *
 * The stat comes before the read, so a cached state is never older than its key; at worst a
 * commit between the two makes the next read load it once more. The state is shared by every
 * caller and must be treated as read-only (core commits open their own).
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { openCeremony, type CeremonyState } from '../core/ceremony/open-ceremony.ts';
import { ceremonyPaths } from '../core/data-folder/ceremony-paths.ts';
import { CONFIG_FILE_NAME } from '../core/config/ceremony-config.ts';
import { CoordinatorError } from '../core/errors.ts';

async function fileVersion(file: string): Promise<string> {
  try {
    const s = await stat(file, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
}

/** The index of the circuit's head in `state`; refused while the ceremony is not initialised. */
export function headIndexOf(state: CeremonyState, circuit: string): number {
  const chain = state.chains.get(circuit);
  if (!chain?.head) throw new CoordinatorError('ceremony.not_initialised', 'the ceremony is not initialised');
  return chain.headIndex;
}

export class CeremonyStateReader {
  private cached: { version: string; state: Promise<CeremonyState> } | undefined;
  private readonly files: readonly string[];
  /** How many times the state was actually loaded (observability, tests). */
  loads = 0;

  constructor(private readonly dataDir: string) {
    this.files = [ceremonyPaths(dataDir).transcriptPath, path.join(dataDir, CONFIG_FILE_NAME)];
  }

  async read(): Promise<CeremonyState> {
    const version = (await Promise.all(this.files.map(fileVersion))).join('|');
    if (this.cached?.version === version) return this.cached.state;
    this.loads++;
    const entry = { version, state: openCeremony(this.dataDir) };
    this.cached = entry;
    // A failed load (a corrupt transcript) is not kept: the next read tries again and reports it.
    entry.state.catch(() => {
      if (this.cached === entry) this.cached = undefined;
    });
    return entry.state;
  }
}
