/**
 * GitHub sign-in from a terminal: the device flow, run by the coordinator on our behalf
 * (server/auth/github-device-flow.ts). We print the code and where to enter it, then ask the
 * coordinator at the pace it names until the person has authorized (a session), cancelled or let
 * the code expire. No GitHub token ever reaches this process.
 */
import { ApiError, type SignedIn } from '../../client/api-client.ts';
import { type CoordinatorClient } from './coordinator-client.ts';

interface DeviceSignInStart {
  handle: string;
  userCode: string;
  verificationUri: string;
  intervalSeconds: number;
  expiresInSeconds: number;
}

/** RFC 8628: after slow_down, wait 5 s longer between polls. */
const SLOW_DOWN_STEP_S = 5;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

function isGithubAddress(address: string): boolean {
  try {
    const url = new URL(address);
    return url.protocol === 'https:' && url.hostname === 'github.com';
  } catch {
    return false;
  }
}

export async function signInWithGithubDevice(
  client: CoordinatorClient,
  tell: (line: string) => void,
  signal?: AbortSignal,
): Promise<SignedIn> {
  const start = await client.request<DeviceSignInStart>('POST', '/auth/github/device', undefined, { signal });
  const minutes = Math.max(1, Math.round(start.expiresInSeconds / 60));
  tell(`To sign in with GitHub, open ${start.verificationUri} in a browser and enter the code ${start.userCode}`);
  // The address comes from the coordinator: one that is not GitHub's could be a page collecting
  // codes. Say so rather than refuse (a test network points at an emulator).
  if (!isGithubAddress(start.verificationUri)) {
    tell(`warning: ${start.verificationUri} is not on github.com; enter the code only if you trust this coordinator`);
  }
  tell(
    `(waiting for you to authorize the ceremony there; the code expires in ` +
      `${minutes} minute${minutes === 1 ? '' : 's'})`,
  );
  let intervalSeconds = start.intervalSeconds;
  // The coordinator says when the code expired; if it cannot be reached by then, we say it.
  const deadline = Date.now() + start.expiresInSeconds * 1000;
  for (;;) {
    await sleep(intervalSeconds * 1000, signal);
    if (Date.now() > deadline)
      throw new ApiError(410, 'auth.device_expired', 'the GitHub sign-in code expired before the sign-in completed');
    try {
      return client.signedIn(
        await client.request<SignedIn>('POST', '/auth/github/device/poll', { handle: start.handle }, { signal }),
      );
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.code === 'auth.device_pending') continue;
      if (error.code === 'auth.device_slow_down') {
        intervalSeconds = Math.max(intervalSeconds + SLOW_DOWN_STEP_S, error.retryAfterSeconds ?? 0);
        continue;
      }
      // A hiccup while the person is at GitHub (the coordinator unreachable, busy or restarting,
      // a rate limit): keep asking until the code expires. GitHub's own refusals end the sign-in.
      if (error.code === 'rate.limited') {
        await sleep((error.retryAfterSeconds ?? intervalSeconds) * 1000, signal);
        continue;
      }
      if (error.code === 'network' || (error.status >= 500 && error.code !== 'auth.github_failed')) continue;
      throw error;
    }
  }
}
