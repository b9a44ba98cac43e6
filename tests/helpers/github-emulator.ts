/**
 * A local stand-in for the three GitHub endpoints OAuth sign-in touches, so tests run the real
 * passport-github2 strategy over real HTTP: `GET /login/oauth/authorize` (redirects back to
 * `redirect_uri` with a one-time `code` and the given `state`), `POST /login/oauth/access_token`
 * (form body → JSON `access_token`), and `GET /user` (Bearer token → the profile set by the test).
 */
import express from 'express';
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

export interface GithubEmulator {
  /** e.g. `http://127.0.0.1:PORT` */
  url: string;
  authorizationUrl: string;
  tokenUrl: string;
  userProfileUrl: string;
  clientId: string;
  clientSecret: string;
  /** The profile the next authorization is granted for. */
  setProfile(profile: GithubProfile): void;
  close(): Promise<void>;
}

export async function startGithubEmulator(options: { clientId?: string; clientSecret?: string } = {}): Promise<GithubEmulator> {
  const clientId = options.clientId ?? 'emulated-client-id';
  const clientSecret = options.clientSecret ?? 'emulated-client-secret';
  let profile: GithubProfile | undefined;
  const codes = new Map<string, { profile: GithubProfile; redirectUri: string }>();
  const tokens = new Map<string, GithubProfile>();

  const app = express();
  app.get('/login/oauth/authorize', (req, res) => {
    const redirectUri = String(req.query.redirect_uri ?? '');
    if (req.query.client_id !== clientId || !redirectUri || !profile) {
      res.status(400).send('bad authorize request');
      return;
    }
    const code = randomBytes(10).toString('hex');
    codes.set(code, { profile: { ...profile }, redirectUri });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    if (typeof req.query.state === 'string') back.searchParams.set('state', req.query.state);
    res.redirect(302, back.toString());
  });
  app.post('/login/oauth/access_token', express.urlencoded({ extended: false }), (req, res) => {
    const body = req.body as Record<string, string>;
    const grant = codes.get(body.code ?? '');
    codes.delete(body.code ?? '');
    if (body.client_id !== clientId || body.client_secret !== clientSecret || !grant || grant.redirectUri !== body.redirect_uri) {
      res.json({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      return;
    }
    const token = `gho_${randomBytes(16).toString('hex')}`;
    tokens.set(token, grant.profile);
    res.json({ access_token: token, token_type: 'bearer', scope: '' });
  });
  app.get('/user', (req, res) => {
    const match = /^(?:Bearer|token) (.+)$/i.exec(req.get('authorization') ?? '');
    const granted = match ? tokens.get(match[1]!) : undefined;
    if (!granted) {
      res.status(401).json({ message: 'Bad credentials' });
      return;
    }
    res.json(granted);
  });

  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    authorizationUrl: `${url}/login/oauth/authorize`,
    tokenUrl: `${url}/login/oauth/access_token`,
    userProfileUrl: `${url}/user`,
    clientId,
    clientSecret,
    setProfile(next) {
      profile = { ...next };
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
