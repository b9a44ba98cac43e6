/** Whether the ceremony opens at start (reconcile-phase.ts weighs it against the transcript). */
import { booleanSetting, settingsFragment } from '../config/setting.ts';

export const STARTUP_SETTINGS = settingsFragment(
  {
    OPEN_ON_START: {
      group: 'serving',
      schema: booleanSetting(false),
      doc: 'open the ceremony at start (test networks and demos; production opens from the console)',
      flag: '--open',
    },
  },
  (e) => ({ openOnStart: e.OPEN_ON_START }),
);
