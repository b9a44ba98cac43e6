/**
 * Downloads of files in progress at once, per payer and in all. Each holds a socket and an open
 * file for as long as its reader takes, so without a cap one address (or a thousand) could hold
 * every descriptor the process has: a payer (a client address, or a turn's holder) may have
 * `perPayer` downloads in progress (beyond, `429 download.too_many_in_progress`), and everyone
 * together `total` (beyond, `503 download.server_busy`), both with `Retry-After`. A turn's holder is
 * not counted in the total: however many addresses fill it, a turn can still fetch its inputs.
 *
 * In this process only: what it bounds is this process's descriptors.
 */
import { CoordinatorError } from '../../core/errors.ts';
import { defaultSettings } from '../config/setting.ts';
import { CONNECTION_SETTINGS } from './connection-settings.ts';
import { KeyedSlots } from './keyed-slots.ts';

export interface DownloadSlotLimits {
  /** Downloads in progress at once per payer. */
  perPayer: number;
  /** Downloads in progress at once in all (turn holders' aside). */
  total: number;
}

/** Downloads in progress at once per payer, by default: MAX_DOWNLOADS_PER_ADDRESS's (connection-settings.ts). */
export const DOWNLOADS_PER_ADDRESS = defaultSettings(CONNECTION_SETTINGS.settings).MAX_DOWNLOADS_PER_ADDRESS;

/** How long a refused client should wait: a download of a test key takes well under this. */
const RETRY_AFTER_SECONDS = 5;

export class DownloadSlots {
  private readonly slots = new KeyedSlots();

  constructor(readonly limits: DownloadSlotLimits) {}

  /**
   * Takes a slot for `payer` (synchronously: two requests cannot both take the last one), or throws
   * the refusal. `turnHolder`: not counted in the total. Returns the slot's release (once only).
   */
  take(payer: string, turnHolder: boolean): () => void {
    const mine = this.slots.heldBy(payer);
    if (mine >= this.limits.perPayer)
      throw new CoordinatorError(
        'download.too_many_in_progress',
        `${turnHolder ? 'you have' : 'this address has'} ${mine} downloads in progress from the coordinator, the ` +
          `most it takes at once; finish one first`,
        { retryAfterSeconds: RETRY_AFTER_SECONDS },
      );
    if (!turnHolder && this.slots.total >= this.limits.total)
      throw new CoordinatorError(
        'download.server_busy',
        'the coordinator serves as many downloads at once as it can; try again in a moment, or download ' +
          'through the ceremony’s mirror',
        { retryAfterSeconds: RETRY_AFTER_SECONDS },
      );
    return this.slots.take(payer, !turnHolder);
  }
}
