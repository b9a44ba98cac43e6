/**
 * The set-up of a test file whose tests take turns on one coordinator and read what it logs: a
 * test coordinator (tests/helpers/test-coordinator.ts) ticking every 100 ms with its log recorded
 * (tests/helpers/recording-log.ts: warnings still reach stderr), and a scratch folder of the
 * file's own. It registers the file's `before` (both made) and `after` (the coordinator closed, the
 * folder removed); `coordinator` and `scratch` are set once that `before` has run.
 *
 *   const fixture = recordedCoordinator('my-test-'); // or ('my-test-', { SETTING: 'value' })
 *   // a ceremony of some circuits only: ('my-test-', {}, { circuits: ['register'] })
 *   test('…', async () => { await fetch(`${fixture.coordinator.url}/api/ceremony`); … fixture.logged … });
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { cleanUp } from './clean-up.ts';
import { recordingLog, type LoggedLine } from './recording-log.ts';
import { startTestCoordinator, type ServerEnv, type TestCoordinator } from './test-coordinator.ts';
import type { CeremonyDirOptions } from '../fixtures/ceremony-fixture.ts';

export interface RecordedCoordinator {
  coordinator: TestCoordinator;
  scratch: string;
  /** Every line the coordinator logged, in order. */
  readonly logged: LoggedLine[];
}

export function recordedCoordinator(
  scratchPrefix: string,
  env?: ServerEnv,
  ceremony?: Omit<CeremonyDirOptions, 'init'>,
): RecordedCoordinator {
  const recording = recordingLog();
  const fixture = { logged: recording.lines } as RecordedCoordinator;
  before(async () => {
    fixture.coordinator = await startTestCoordinator({ tickIntervalMs: 100, log: recording.log, env, ceremony });
    fixture.scratch = await mkdtemp(path.join(tmpdir(), scratchPrefix));
  });
  after(async () => {
    await fixture.coordinator?.close();
    await cleanUp(fixture.scratch);
  });
  return fixture;
}
