/**
 * A local stand-in for the GitHub endpoints OAuth sign-in touches, so tests run the real
 * passport-github2 strategy over real HTTP: `GET /login/oauth/authorize` (redirects back to
 * `redirect_uri` with a one-time `code` and the given `state`), `POST /login/oauth/access_token`
 * (form body → JSON `access_token`), and `GET /user` (Bearer token → the profile set by the test).
 *
 * And the device flow (RFC 8628) as GitHub runs it: `POST /login/device/code` (a device code, a
 * user code, the address to enter it at, the interval and the expiry), the same token endpoint
 * with `grant_type=urn:ietf:params:oauth:grant-type:device_code` (authorization_pending until the
 * person acts; slow_down, with the interval 5 s longer, for a poll before the interval;
 * expired_token; access_denied; then the token, once), and `POST /login/device`, where the test
 * does what the person at github.com/login/device does: enter the user code and authorize or
 * cancel. Answers are HTTP 200 with an `error` field, as GitHub's are.
 */
import express, { type Express } from 'express';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';

export interface GithubProfile {
  id: number;
  login: string;
  followers: number;
  following: number;
  public_repos: number;
  /** ISO 8601. */
  created_at: string;
  [key: string]: unknown;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The profile GitHub gives for an account created `ageDays` days before `now` (ms), with 1 follower,
 * following 5 and 2 public repositories: `fields` names the account and may change any of that.
 */
export function githubProfile(
  now: number,
  ageDays: number,
  fields: Pick<GithubProfile, 'id' | 'login'> & Partial<GithubProfile>,
): GithubProfile {
  const created_at = new Date(now - ageDays * DAY_MS).toISOString();
  return { followers: 1, following: 5, public_repos: 2, created_at, ...fields };
}

export interface GithubEmulator {
  /** e.g. `http://127.0.0.1:PORT` */
  url: string;
  authorizationUrl: string;
  tokenUrl: string;
  userProfileUrl: string;
  deviceCodeUrl: string;
  clientId: string;
  clientSecret: string;
  /** The profile the next authorization is granted for. */
  setProfile(profile: GithubProfile): void;
  /**
   * What the person does at github.com/login/device (over HTTP, `POST /login/device`): enters
   * `userCode` and authorizes (for the current profile) or cancels. Resolves with GitHub's page status.
   */
  actOnDevice(userCode: string, action: 'authorize' | 'cancel'): Promise<number>;
  /** Makes a device code expire now, as if its 15 minutes had passed. */
  expireDevice(userCode: string): void;
  /** Token-endpoint polls of the device code behind `userCode`, with what each was answered. */
  devicePolls(userCode: string): string[];
  /** The `client_id` of every device-code request, in order (the coordinator's own, never the client's). */
  deviceCodeRequests(): Array<Record<string, string>>;
  close(): Promise<void>;
}

export interface GithubEmulatorOptions {
  clientId?: string;
  clientSecret?: string;
  /** Device flow: the polling interval GitHub names (GitHub: 5 s). Default 1 s, to keep tests short. */
  deviceIntervalSeconds?: number;
  /** Device flow: how long a device code lives (GitHub: 900 s). */
  deviceExpiresInSeconds?: number;
}

interface DeviceGrant {
  deviceCode: string;
  userCode: string;
  expiresAt: number;
  intervalMs: number;
  lastPollAt: number | undefined;
  state: 'pending' | 'authorized' | 'cancelled' | 'used';
  profile?: GithubProfile;
  polls: string[];
}

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** What the emulator holds between requests. */
interface EmulatorState {
  clientId: string;
  clientSecret: string;
  /** Its own address, once it listens (the device flow's answers name it). */
  url: string;
  /** The profile the next authorization is granted for. */
  profile: GithubProfile | undefined;
  /** Web flow: one-time codes, each for a profile and the redirect it was issued to. */
  codes: Map<string, { profile: GithubProfile; redirectUri: string }>;
  tokens: Map<string, GithubProfile>;
  /** Device flow: grants by device code. */
  devices: Map<string, DeviceGrant>;
  deviceRequests: Array<Record<string, string>>;
}

export async function startGithubEmulator(options: GithubEmulatorOptions = {}): Promise<GithubEmulator> {
  const state: EmulatorState = {
    clientId: options.clientId ?? 'emulated-client-id',
    clientSecret: options.clientSecret ?? 'emulated-client-secret',
    url: '',
    profile: undefined,
    codes: new Map(),
    tokens: new Map(),
    devices: new Map(),
    deviceRequests: [],
  };
  const app = express();
  addDeviceFlowRoutes(app, state, options);
  addWebFlowRoutes(app, state);
  app.post('/login/oauth/access_token', express.urlencoded({ extended: false }), (req, res) => {
    const body = req.body as Record<string, string>;
    res.json(body.grant_type === DEVICE_GRANT ? deviceTokenAnswer(state, body) : webTokenAnswer(state, body));
  });
  app.get('/user', (req, res) => {
    const match = /^(?:Bearer|token) (.+)$/i.exec(req.get('authorization') ?? '');
    const granted = match ? state.tokens.get(match[1]!) : undefined;
    if (!granted) {
      res.status(401).json({ message: 'Bad credentials' });
      return;
    }
    res.json(granted);
  });

  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.url = url;
  return {
    url,
    authorizationUrl: `${url}/login/oauth/authorize`,
    tokenUrl: `${url}/login/oauth/access_token`,
    userProfileUrl: `${url}/user`,
    deviceCodeUrl: `${url}/login/device/code`,
    clientId: state.clientId,
    clientSecret: state.clientSecret,
    setProfile(next) {
      state.profile = { ...next };
    },
    async actOnDevice(userCode, action) {
      const response = await fetch(`${url}/login/device`, {
        method: 'POST',
        body: new URLSearchParams({ user_code: userCode, action }),
      });
      await response.text();
      return response.status;
    },
    expireDevice(userCode) {
      const grant = byUserCode(state, userCode);
      if (!grant) throw new Error(`no device code for user code ${userCode}`);
      grant.expiresAt = Date.now();
    },
    devicePolls: (userCode) => [...(byUserCode(state, userCode)?.polls ?? [])],
    deviceCodeRequests: () => state.deviceRequests.map((request) => ({ ...request })),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

function byUserCode(state: EmulatorState, userCode: string): DeviceGrant | undefined {
  return [...state.devices.values()].find((d) => d.userCode === userCode);
}

/** A new access token for `profile`, as `GET /user` will answer it. */
function issueToken(state: EmulatorState, profile: GithubProfile): string {
  const token = `gho_${randomBytes(16).toString('hex')}`;
  state.tokens.set(token, profile);
  return token;
}

/** The device flow's own endpoints: the device code, and the person's form at /login/device. */
function addDeviceFlowRoutes(app: Express, state: EmulatorState, options: GithubEmulatorOptions): void {
  app.post('/login/device/code', express.urlencoded({ extended: false }), (req, res) => {
    const body = req.body as Record<string, string>;
    state.deviceRequests.push({ ...body });
    if (body.client_id !== state.clientId) {
      res.json({ error: 'incorrect_client_credentials', error_description: 'The client_id is not valid.' });
      return;
    }
    const deviceCode = randomBytes(20).toString('hex');
    const letters = randomBytes(8).toString('hex').toUpperCase();
    const userCode = `${letters.slice(0, 4)}-${letters.slice(4, 8)}`;
    const interval = options.deviceIntervalSeconds ?? 1;
    const expiresIn = options.deviceExpiresInSeconds ?? 900;
    state.devices.set(deviceCode, {
      deviceCode,
      userCode,
      expiresAt: Date.now() + expiresIn * 1000,
      intervalMs: interval * 1000,
      lastPollAt: undefined,
      state: 'pending',
      polls: [],
    });
    res.json({
      device_code: deviceCode,
      user_code: userCode,
      verification_uri: `${state.url}/login/device`,
      expires_in: expiresIn,
      interval,
    });
  });
  // The person's side: the form at /login/device, user code typed in, then Authorize or Cancel.
  app.post('/login/device', express.urlencoded({ extended: false }), (req, res) => {
    const body = req.body as Record<string, string>;
    const grant = byUserCode(state, body.user_code ?? '');
    if (!grant || grant.state !== 'pending' || grant.expiresAt <= Date.now() || !state.profile) {
      res.status(404).send('That code is not valid.');
      return;
    }
    if (body.action === 'authorize') {
      grant.state = 'authorized';
      grant.profile = { ...state.profile };
    } else {
      grant.state = 'cancelled';
    }
    res.status(200).send(grant.state === 'authorized' ? 'Device authorized.' : 'Authorization cancelled.');
  });
}

/** The web flow's authorize page: straight back to `redirect_uri` with a one-time code for the current profile. */
function addWebFlowRoutes(app: Express, state: EmulatorState): void {
  app.get('/login/oauth/authorize', (req, res) => {
    const redirectUri = String(req.query.redirect_uri ?? '');
    if (req.query.client_id !== state.clientId || !redirectUri || !state.profile) {
      res.status(400).send('bad authorize request');
      return;
    }
    const code = randomBytes(10).toString('hex');
    state.codes.set(code, { profile: { ...state.profile }, redirectUri });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    if (typeof req.query.state === 'string') back.searchParams.set('state', req.query.state);
    res.redirect(302, back.toString());
  });
}

/** The token endpoint for a device code: every poll answered as GitHub does, and remembered. */
function deviceTokenAnswer(state: EmulatorState, body: Record<string, string>): Record<string, unknown> {
  const device = state.devices.get(body.device_code ?? '');
  const answer = (json: Record<string, unknown>): Record<string, unknown> => {
    device?.polls.push(typeof json.error === 'string' ? json.error : 'access_token');
    return json;
  };
  if (body.client_id !== state.clientId) return answer({ error: 'incorrect_client_credentials' });
  if (!device || device.state === 'used') return answer({ error: 'incorrect_device_code' });
  const now = Date.now();
  if (device.expiresAt <= now) return answer({ error: 'expired_token' });
  const early = device.lastPollAt !== undefined && now - device.lastPollAt < device.intervalMs;
  device.lastPollAt = now;
  if (early) {
    device.intervalMs += 5000;
    return answer({ error: 'slow_down', interval: device.intervalMs / 1000 });
  }
  if (device.state === 'cancelled') return answer({ error: 'access_denied' });
  if (device.state === 'pending') return answer({ error: 'authorization_pending' });
  device.state = 'used';
  return answer({ access_token: issueToken(state, device.profile!), token_type: 'bearer', scope: '' });
}

/** The token endpoint for a web flow's code: once, with the client's secret and the redirect it was issued to. */
function webTokenAnswer(state: EmulatorState, body: Record<string, string>): Record<string, unknown> {
  const grant = state.codes.get(body.code ?? '');
  state.codes.delete(body.code ?? '');
  if (
    body.client_id !== state.clientId ||
    body.client_secret !== state.clientSecret ||
    !grant ||
    grant.redirectUri !== body.redirect_uri
  ) {
    return { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' };
  }
  return { access_token: issueToken(state, grant.profile), token_type: 'bearer', scope: '' };
}
