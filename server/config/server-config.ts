/**
 * The coordinator's configuration, from the environment (and `ceremony serve` flags), validated
 * once at start-up into a frozen object: a bad value stops the start with `config.invalid` naming
 * the variable. Each module declares its settings in a fragment next to it (schema with its default,
 * doc line, group, and the section of this object they make); this file only composes them, so its
 * type is theirs and a new setting touches its module's fragment only. `serve --help` and
 * docs/operations.md are generated from the same fragments (settings-doc.ts).
 */
import type { z } from 'zod';
import { descriptorBudget } from '../http/descriptor-budget.ts';
import { SERVING_SETTINGS } from './serving-settings.ts';
import { LOBBY_SETTINGS } from '../lobby/lobby-settings.ts';
import { CONNECTION_SETTINGS } from '../http/connection-settings.ts';
import { UPLOAD_SETTINGS } from '../files/upload-settings.ts';
import { RATE_LIMIT_SETTINGS } from '../http/rate-limit-settings.ts';
import { TRUSTED_PROXY_SETTINGS } from '../http/trusted-proxy-settings.ts';
import { BEACON_SETTINGS } from '../routes/beacon-settings.ts';
import { STARTUP_SETTINGS } from '../startup/startup-settings.ts';
import { METRICS_SETTINGS } from '../metrics/metrics-settings.ts';
import { parseSignInEnv, type SignInEnv } from '../auth/sign-in-settings.ts';
import { schemaOfSettings, settingsError, type SettingsContext } from './setting.ts';

/**
 * The fragments in the order their settings are listed within each group of `serve --help` and the
 * docs (sign-in's come last, validated on their own: server/auth/sign-in-settings.ts).
 */
const FRAGMENTS = [
  SERVING_SETTINGS,
  LOBBY_SETTINGS,
  CONNECTION_SETTINGS,
  UPLOAD_SETTINGS,
  RATE_LIMIT_SETTINGS,
  TRUSTED_PROXY_SETTINGS,
  BEACON_SETTINGS,
  STARTUP_SETTINGS,
  METRICS_SETTINGS,
] as const;

/** Every setting of the coordinator but sign-in's: variable name, schema with its default, doc line. */
export const SERVER_SETTINGS: Intersection<(typeof FRAGMENTS)[number]['settings']> = Object.assign(
  {},
  ...FRAGMENTS.map((fragment) => fragment.settings),
);

const serverSchema = schemaOfSettings(SERVER_SETTINGS);

type ServerEnv = z.infer<typeof serverSchema>;

type SectionOf<Fragment> = Fragment extends { section: (...args: never[]) => infer Section } ? Section : never;
type Intersection<Union> = (Union extends unknown ? (part: Union) => void : never) extends (whole: infer All) => void
  ? All
  : never;

export type ServerConfig = Readonly<
  Intersection<SectionOf<(typeof FRAGMENTS)[number]>> & {
    /** The sign-in settings, validated here and turned into the auth section at start (sign-in-settings.ts). */
    signIn: SignInEnv;
  }
>;

export function loadServerConfig(
  env: Record<string, string | undefined>,
  overrides: Partial<Record<keyof ServerEnv, string>> = {},
): ServerConfig {
  const parsed = serverSchema.safeParse({
    ...env,
    ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)),
  });
  if (!parsed.success) throw settingsError('server', parsed.error);
  const signIn = parseSignInEnv(env);
  const context: SettingsContext = { descriptors: descriptorBudget() };
  const sections = FRAGMENTS.map((fragment) => (fragment.section as Section)(parsed.data, context));
  return Object.freeze(Object.assign({}, ...sections, { signIn }) as ServerConfig);
}

/** A fragment's section builder, as the loop calls it: each reads its own variables of the whole. */
type Section = (values: ServerEnv, context: SettingsContext) => object;
