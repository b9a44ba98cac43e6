/**
 * docker-compose.yml read as Compose reads it, for the container test's podman driver
 * (compose-project.ts): the subset of the Compose specification the project's file uses, and a
 * refusal of anything beyond it, so the file cannot grow a setting the test would silently skip.
 *
 * As Compose: `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`,
 * `${VAR?error}`, `${VAR:+alt}`, `${VAR+alt}` (nested), `$$`, in values only, from the variables
 * given (never this process's environment); override files merged over the first (maps key by key,
 * anything else replaced: enough for the overrides a test writes). Unlike Compose, a `${VAR}` that
 * is not set is an error rather than a warning and an empty string.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';

export interface ServiceSpec {
  name: string;
  image?: string;
  /** Absolute context folder and Dockerfile. */
  build?: { context: string; dockerfile: string };
  command?: string[];
  entrypoint?: string[];
  environment: Record<string, string>;
  envFiles: Array<{ path: string; required: boolean }>;
  ports: Array<{ published: number; target: number }>;
  volumes: Array<{ source: string; target: string; readOnly: boolean; kind: 'named' | 'bind' }>;
  networks: Array<{ name: string; ipv4Address?: string }>;
  dependsOn: string[];
  restart?: string;
}

export interface ComposeSpec {
  /** The folder of the first file: bind mounts and build contexts are relative to it. */
  projectDir: string;
  services: Map<string, ServiceSpec>;
  networks: Map<string, { subnet?: string }>;
  volumes: string[];
}

type Node = Record<string, unknown>;

const SERVICE_KEYS = new Set([
  'image',
  'build',
  'command',
  'entrypoint',
  'environment',
  'env_file',
  'ports',
  'volumes',
  'networks',
  'depends_on',
  'restart',
]);

/** `${…}` at `start` of `text`: the text between the braces and the index after the closing one. */
function bracedAt(text: string, start: number): { inner: string; end: number } {
  let depth = 1;
  let i = start + 2;
  while (i < text.length && depth > 0) {
    if (text.startsWith('${', i)) {
      depth += 1;
      i += 2;
      continue;
    }
    if (text[i] === '}') depth -= 1;
    i += 1;
  }
  if (depth !== 0) throw new Error(`compose: an unterminated \${ in "${text}"`);
  return { inner: text.slice(start + 2, i - 1), end: i };
}

function resolveVariable(inner: string, vars: Record<string, string>): string {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([\s\S]*))?$/.exec(inner);
  if (!match) throw new Error(`compose: cannot interpolate \${${inner}}`);
  const [, name = '', operator, argument = ''] = match;
  const value = vars[name];
  const isSet = value !== undefined;
  const present = operator?.startsWith(':') ? isSet && value !== '' : isSet;
  switch (operator?.replace(':', '')) {
    case undefined:
      if (!isSet) throw new Error(`compose: \${${name}} is not set`);
      return value!;
    case '-':
      return present ? value! : interpolate(argument, vars);
    case '?':
      if (!present) throw new Error(`compose: ${name}: ${interpolate(argument, vars)}`);
      return value!;
    default: // '+'
      return present ? interpolate(argument, vars) : '';
  }
}

function interpolate(text: string, vars: Record<string, string>): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('$$', i)) {
      out += '$';
      i += 2;
    } else if (text.startsWith('${', i)) {
      const { inner, end } = bracedAt(text, i);
      out += resolveVariable(inner, vars);
      i = end;
    } else if (text[i] === '$' && /[A-Za-z_]/.test(text[i + 1] ?? '')) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i + 1))![0];
      out += resolveVariable(name, vars);
      i += 1 + name.length;
    } else {
      out += text[i];
      i += 1;
    }
  }
  return out;
}

function interpolateValues(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === 'string') return interpolate(value, vars);
  if (Array.isArray(value)) return value.map((item) => interpolateValues(item, vars));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateValues(v, vars)]));
  return value;
}

function isMap(value: unknown): value is Node {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function merge(base: unknown, over: unknown): unknown {
  if (!isMap(base) || !isMap(over)) return over;
  const out: Node = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = key in out ? merge(out[key], value) : value;
  return out;
}

function stringList(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw new Error(`compose: ${what} must be a list of strings (exec form)`);
  return value;
}

function environmentOf(value: unknown, what: string): Record<string, string> {
  if (value === undefined) return {};
  if (!isMap(value)) throw new Error(`compose: ${what}.environment must be a map`);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v ?? '')]));
}

function envFilesOf(value: unknown, projectDir: string, what: string): ServiceSpec['envFiles'] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((entry) => {
    if (typeof entry === 'string') return { path: path.resolve(projectDir, entry), required: true };
    if (!isMap(entry) || typeof entry.path !== 'string') throw new Error(`compose: ${what}.env_file: {path, required}`);
    return { path: path.resolve(projectDir, entry.path), required: entry.required !== false };
  });
}

function portsOf(value: unknown, what: string): ServiceSpec['ports'] {
  return (value === undefined ? [] : stringList(value, `${what}.ports`)).map((port) => {
    const match = /^(\d+):(\d+)$/.exec(port);
    if (!match) throw new Error(`compose: ${what}.ports: only "PUBLISHED:TARGET" is understood, not "${port}"`);
    return { published: Number(match[1]), target: Number(match[2]) };
  });
}

function volumesOf(value: unknown, projectDir: string, named: Set<string>, what: string): ServiceSpec['volumes'] {
  return (value === undefined ? [] : stringList(value, `${what}.volumes`)).map((volume) => {
    const [source = '', target = '', mode, ...rest] = volume.split(':');
    if (!target.startsWith('/') || rest.length > 0 || (mode !== undefined && mode !== 'ro'))
      throw new Error(`compose: ${what}.volumes: "${volume}" is not SOURCE:/TARGET[:ro]`);
    const bind = source.startsWith('.') || source.startsWith('/');
    if (!bind && !named.has(source)) throw new Error(`compose: ${what}.volumes: ${source} is not a declared volume`);
    return {
      source: bind ? path.resolve(projectDir, source) : source,
      target,
      readOnly: mode === 'ro',
      kind: bind ? 'bind' : 'named',
    };
  });
}

function networksOf(value: unknown, declared: Map<string, unknown>, what: string): ServiceSpec['networks'] {
  const entries: Array<[string, unknown]> =
    value === undefined
      ? [['default', null]]
      : Array.isArray(value)
        ? stringList(value, `${what}.networks`).map((name) => [name, null])
        : Object.entries(value as Node);
  return entries.map(([name, options]) => {
    if (!declared.has(name)) throw new Error(`compose: ${what}.networks: ${name} is not a declared network`);
    if (options !== null && (!isMap(options) || Object.keys(options).some((k) => k !== 'ipv4_address')))
      throw new Error(`compose: ${what}.networks.${name}: only ipv4_address is understood`);
    const ipv4Address = isMap(options) ? String(options.ipv4_address) : undefined;
    return ipv4Address === undefined ? { name } : { name, ipv4Address };
  });
}

function buildOf(value: unknown, projectDir: string, what: string): ServiceSpec['build'] {
  if (value === undefined) return undefined;
  const spec = typeof value === 'string' ? { context: value } : value;
  if (
    !isMap(spec) ||
    typeof spec.context !== 'string' ||
    Object.keys(spec).some((k) => !['context', 'dockerfile'].includes(k))
  )
    throw new Error(`compose: ${what}.build: a context (and a dockerfile) only`);
  const context = path.resolve(projectDir, spec.context);
  return {
    context,
    dockerfile: path.resolve(context, typeof spec.dockerfile === 'string' ? spec.dockerfile : 'Dockerfile'),
  };
}

function serviceOf(
  name: string,
  raw: unknown,
  context: { projectDir: string; networks: Map<string, unknown>; volumes: Set<string> },
): ServiceSpec {
  const what = `services.${name}`;
  if (!isMap(raw)) throw new Error(`compose: ${what} must be a map`);
  const unknown = Object.keys(raw).filter((key) => !SERVICE_KEYS.has(key));
  if (unknown.length > 0) throw new Error(`compose: ${what}: this driver does not understand ${unknown.join(', ')}`);
  if ((raw.image === undefined) === (raw.build === undefined)) throw new Error(`compose: ${what}: image or build`);
  const dependsOn = raw.depends_on === undefined ? [] : stringList(raw.depends_on, `${what}.depends_on`);
  const spec: ServiceSpec = {
    name,
    environment: environmentOf(raw.environment, what),
    envFiles: envFilesOf(raw.env_file, context.projectDir, what),
    ports: portsOf(raw.ports, what),
    volumes: volumesOf(raw.volumes, context.projectDir, context.volumes, what),
    networks: networksOf(raw.networks, context.networks, what),
    dependsOn,
  };
  if (typeof raw.image === 'string') spec.image = raw.image;
  const build = buildOf(raw.build, context.projectDir, what);
  if (build) spec.build = build;
  if (raw.command !== undefined) spec.command = stringList(raw.command, `${what}.command`);
  if (raw.entrypoint !== undefined) spec.entrypoint = stringList(raw.entrypoint, `${what}.entrypoint`);
  if (typeof raw.restart === 'string') spec.restart = raw.restart;
  return spec;
}

function networksOfFile(raw: unknown): Map<string, { subnet?: string }> {
  const networks = new Map<string, { subnet?: string }>([['default', {}]]);
  for (const [name, options] of Object.entries(isMap(raw) ? raw : {})) {
    if (options === null) {
      networks.set(name, {});
      continue;
    }
    const configs = isMap(options) && isMap(options.ipam) ? options.ipam.config : undefined;
    const subnet = Array.isArray(configs) && isMap(configs[0]) ? configs[0].subnet : undefined;
    if (!isMap(options) || Object.keys(options).some((k) => k !== 'ipam') || typeof subnet !== 'string')
      throw new Error(`compose: networks.${name}: only ipam.config[0].subnet is understood`);
    networks.set(name, { subnet });
  }
  return networks;
}

/** The compose files (the first, then its overrides), interpolated with `vars`, merged and checked. */
export async function readComposeFiles(files: string[], vars: Record<string, string>): Promise<ComposeSpec> {
  let merged: unknown = {};
  for (const file of files) merged = merge(merged, interpolateValues(parseYaml(await readFile(file, 'utf8')), vars));
  if (!isMap(merged) || !isMap(merged.services)) throw new Error('compose: no services');
  const unknownTop = Object.keys(merged).filter((key) => !['services', 'networks', 'volumes'].includes(key));
  if (unknownTop.length > 0) throw new Error(`compose: this driver does not understand ${unknownTop.join(', ')}`);
  const projectDir = path.dirname(path.resolve(files[0]!));
  const networks = networksOfFile(merged.networks);
  const volumes = Object.keys(isMap(merged.volumes) ? merged.volumes : {});
  for (const [name, options] of Object.entries(isMap(merged.volumes) ? merged.volumes : {}))
    if (options !== null) throw new Error(`compose: volumes.${name}: no options are understood`);
  const context = { projectDir, networks, volumes: new Set(volumes) };
  const services = new Map(Object.entries(merged.services).map(([name, raw]) => [name, serviceOf(name, raw, context)]));
  for (const service of services.values())
    for (const dependency of service.dependsOn)
      if (!services.has(dependency)) throw new Error(`compose: ${service.name} depends on unknown ${dependency}`);
  return { projectDir, services, networks, volumes };
}

/**
 * Checks an env_file: KEY=VALUE lines, comments and blank lines, the form Compose and podman read
 * alike (no quotes, no `export`); anything else is refused rather than read two ways.
 */
export function checkEnvFile(text: string, file: string): void {
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    if (!/^[A-Za-z_][A-Za-z0-9_]*=[^'"]*$/.test(line))
      throw new Error(`compose: ${file}:${index + 1} is not KEY=VALUE (unquoted)`);
  }
}
