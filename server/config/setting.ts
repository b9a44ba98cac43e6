/**
 * What one environment setting of the coordinator is: its schema (its default inside it), the line
 * `ceremony serve --help` and docs/operations.md show for it, and its group there. Each module declares
 * its own settings in a fragment next to it (server/lobby/lobby-settings.ts, …), with the section of
 * the configuration they make; server-config.ts composes the fragments and validates them once, so a
 * setting the coordinator reads is one the help and the docs list (server/config/settings-doc.ts).
 */
import { z } from 'zod';
import { CoordinatorError } from '../../core/errors.ts';
import type { DescriptorBudget } from '../http/descriptor-budget.ts';

/** The groups of `serve --help` and of the settings table, in the order they are shown. */
export const SETTING_GROUPS = {
  serving: 'Serving',
  turns: 'Turns and presence',
  limits: 'Limits',
  signIn: 'Sign-in',
  beacon: 'Beacon',
  metrics: 'Metrics',
} as const;

export type SettingGroup = keyof typeof SETTING_GROUPS;

export interface SettingSpec<Schema extends z.ZodTypeAny = z.ZodTypeAny> {
  group: SettingGroup;
  /** Validates the variable's text; a default inside it is what an unset variable means, and is shown. */
  schema: Schema;
  /** One line: what it sets, and what 0 or an edge value means. */
  doc: string;
  /** What unset means where the schema has no default to show (a derived value, or "off"). */
  unset?: string;
  /** The `ceremony serve` flag that sets it too (a flag wins over its variable). */
  flag?: string;
}

/** Declares settings with their types kept, so the schema built from them is typed. */
export function declareSettings<const Specs extends Record<string, SettingSpec>>(specs: Specs): Specs {
  return specs;
}

type ShapeOf<Specs extends Record<string, SettingSpec>> = { [Name in keyof Specs]: Specs[Name]['schema'] };

/** The object schema of a set of declared settings, keyed by their variable names. */
export function schemaOfSettings<Specs extends Record<string, SettingSpec>>(specs: Specs): z.ZodObject<ShapeOf<Specs>> {
  const shape = Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, spec.schema]));
  return z.object(shape as ShapeOf<Specs>);
}

/** The validated values of a set of declared settings, keyed by their variable names. */
export type SettingsValues<Specs extends Record<string, SettingSpec>> = z.output<z.ZodObject<ShapeOf<Specs>>>;

/** The values an empty environment gives: a module's runtime defaults derive from them, not a copy. */
export function defaultSettings<Specs extends Record<string, SettingSpec>>(specs: Specs): SettingsValues<Specs> {
  return schemaOfSettings(specs).parse({});
}

/** What start-up measured rather than read, from which some sections take their unset values. */
export interface SettingsContext {
  descriptors: DescriptorBudget;
}

/** A module's settings and the section of the configuration it makes of their values. */
export interface SettingsFragment<Specs extends Record<string, SettingSpec>, Section> {
  settings: Specs;
  section: (values: SettingsValues<Specs>, context: SettingsContext) => Section;
}

/** Declares a module's settings with the section they make, their types kept for the config's type. */
export function settingsFragment<const Specs extends Record<string, SettingSpec>, Section extends object>(
  settings: Specs,
  section: (values: SettingsValues<Specs>, context: SettingsContext) => Section,
): SettingsFragment<Specs, Section> {
  return { settings, section };
}

/** A duration in ms from 1: a turn or a window of 0 ms would be none at all. */
export const durationMsSetting = (fallback: number) => z.coerce.number().int().positive().default(fallback);
/** A duration in ms where 0 turns the check off. */
export const offOrMsSetting = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);
/** A count from 1. */
export const countSetting = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const trueOrFalse = () => z.enum(['true', 'false'], { errorMap: () => ({ message: 'must be true or false' }) });

/** A yes/no setting: exactly `true` or `false`, so a typo (`yes`, `1`, `True`) stops the start, not means no. */
export function booleanSetting(fallback: boolean) {
  return trueOrFalse()
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true');
}

/** A yes/no setting whose absence means something of its own (undefined), validated as booleanSetting is. */
export function optionalBooleanSetting() {
  return trueOrFalse()
    .optional()
    .transform((v) => (v === undefined ? undefined : v === 'true'));
}

/** `config.invalid` naming each bad variable (never its value: it may be a secret, or anything in size). */
export function settingsError(section: string, error: z.ZodError): CoordinatorError {
  const issues = error.issues.map((issue) => {
    const message = issue.message.slice(0, 200);
    return issue.path.length > 0 ? `${issue.path.join('.')}: ${message}` : message;
  });
  return new CoordinatorError('config.invalid', `${section} configuration: ${issues.join('; ')}`);
}

/** The default a schema holds, through optional, transform and refinement wrappers; undefined without one. */
function defaultOf(schema: z.ZodTypeAny): unknown {
  const def = schema._def as { typeName?: string; defaultValue?: () => unknown; innerType?: z.ZodTypeAny };
  if (def.typeName === z.ZodFirstPartyTypeKind.ZodDefault) return def.defaultValue!();
  if (def.typeName === z.ZodFirstPartyTypeKind.ZodEffects)
    return defaultOf((schema as z.ZodEffects<z.ZodTypeAny>).innerType());
  if (def.innerType) return defaultOf(def.innerType);
  return undefined;
}

function duration(ms: number): string {
  if (ms === 0) return '0';
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms % size === 0) return `${ms / size} ${unit}`;
  }
  return `${ms} ms`;
}

function bytes(count: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (count !== 0 && count % size === 0) return `${count / size} ${unit}`;
  }
  return `${count} bytes`;
}

/** The default as a person reads it: durations (`…_MS`) and sizes (`…_BYTES`) in their units. */
export function shownDefault(name: string, spec: SettingSpec): string {
  const value = defaultOf(spec.schema);
  if (value === undefined) return spec.unset ?? 'none';
  if (typeof value === 'number' && name.endsWith('_MS')) return duration(value);
  if (typeof value === 'number' && name.endsWith('_BYTES')) return bytes(value);
  return String(value);
}
