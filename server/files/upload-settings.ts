/** The uploads' setting: the disk space contribution-uploads.ts keeps free beyond what it may write. */
import { z } from 'zod';
import { settingsFragment } from '../config/setting.ts';

export const UPLOAD_SETTINGS = settingsFragment(
  {
    UPLOAD_DISK_MARGIN_BYTES: {
      group: 'limits',
      schema: z.coerce
        .number()
        .int()
        .nonnegative()
        .max(Number.MAX_SAFE_INTEGER)
        .default(1024 ** 3),
      doc:
        "free space the data folder's disk keeps beyond the largest possible upload (and what uploads under way " +
        'will still write); below it, new uploads are refused (upload.disk_full)',
    },
  },
  (e) => ({ uploads: Object.freeze({ diskMarginBytes: e.UPLOAD_DISK_MARGIN_BYTES }) }),
);
