/**
 * A ceremony folder's transcript rewritten as a coordinator forging its own record would: the
 * entries changed, dropped or added by `change`, then renumbered and every hash of the chain
 * recomputed, so the result is a well-formed transcript that says something else. For the tests of
 * the checks that must not take the transcript's word for the keys (the audit, the receipt check).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { loadCeremonyConfig } from '../../core/config/ceremony-config.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { entryHash, genesisHash, type TranscriptEntry } from '../../core/transcript/transcript.ts';

export async function rewriteTranscript(
  dir: string,
  change: (entries: TranscriptEntry[]) => TranscriptEntry[],
): Promise<void> {
  const file = ceremonyPaths(dir).transcriptPath;
  const { id } = await loadCeremonyConfig(dir);
  const entries = change(
    (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as TranscriptEntry),
  );
  let prevHash = genesisHash(id);
  entries.forEach((entry, seq) => {
    entry.seq = seq;
    entry.prevHash = prevHash;
    entry.hash = entryHash(entry);
    prevHash = entry.hash;
  });
  await writeFile(file, `${entries.map((e) => JSON.stringify(e)).join('\n')}\n`);
}
