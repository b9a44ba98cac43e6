/**
 * docker-compose.yml run by podman as Compose runs it, for tests/ops/compose-stack.test.ts (the file
 * read by compose-file.ts). As Compose: one image built per build context (tagged
 * `<imagePrefix>-<service>`, its stages too, so a rebuild removes what it replaced), networks
 * (`<project>_<name>`, a declared subnet kept) and named volumes (`<project>_<name>`) created on
 * first use and labelled with the project, services started after what they depend on,
 * each on its networks under its service name (a fixed `ipv4_address` kept), env_file read under
 * `environment`, `restart` passed on; `run` is `compose run --rm --no-deps`: a one-off container
 * of a service with its networks, volumes and environment, and the command given.
 *
 * This machine's, not the file's: podman's flags (runc and explicit rlimits: PODMAN_FLAGS), images
 * never pulled (scripts/stand-in-images.sh makes the base images), published ports bound to a free
 * port on loopback (a shared machine; `hostPorts` chooses them beforehand), and a container on
 * several networks told the others' addresses (hostEntries).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../helpers/anvil.ts';
import { startGroup, type GroupProcess } from '../helpers/process-group.ts';
import { checkEnvFile, readComposeFiles, type ComposeSpec, type ServiceSpec } from './compose-file.ts';

/** crun refuses this machine's cgroup v1, and runc cannot raise the rlimits above the host's. */
export const PODMAN_FLAGS = ['--runtime', 'runc', '--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];

export interface PodmanResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `podman ARGS`, its output collected; rejects when it exits non-zero unless `allowFailure`. */
export function podman(
  args: string[],
  options: { allowFailure?: boolean; timeoutMs?: number; onLine?: (line: string) => void } = {},
): Promise<PodmanResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('podman', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let pending = '';
    child.stdout.on('data', (data: Buffer) => {
      stdout += data.toString();
      if (!options.onLine) return;
      const lines = (pending + data.toString()).split('\n');
      pending = lines.pop()!;
      lines.forEach(options.onLine);
    });
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    const timeoutMs = options.timeoutMs ?? 120_000;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code !== 0 && !options.allowFailure) {
        // A failed build's cause (the step's own output) is on stdout, podman's verdict on stderr.
        const why = timedOut ? `killed after ${timeoutMs / 1000} s` : `exited ${code}`;
        const output = `stdout: …${stdout.slice(-3000)}\nstderr: …${stderr.slice(-3000)}`;
        reject(new Error(`podman ${args.slice(0, 3).join(' ')} … ${why}:\n${output}`));
      } else resolve({ code, stdout, stderr });
    });
  });
}

export interface RunOptions {
  /** Replaces the image's entrypoint (exec form). */
  entrypoint?: string[];
  /** More SOURCE:TARGET[:ro] bind mounts, as `compose run -v`. */
  volumes?: string[];
  /** `compose run --user`. */
  user?: string;
  timeoutMs?: number;
}

export interface ProjectOptions {
  /** Host ports chosen beforehand, by `SERVICE:TARGET` (e.g. for a PUBLIC_URL); others get a free port. */
  hostPorts?: Record<string, number>;
  /**
   * Built images are tagged `localhost/<imagePrefix>-<service>` (default: the project's name), so
   * runs of several projects share one build cache; containers run the image built by this run, by id.
   */
  imagePrefix?: string;
}

export class ComposeProject {
  private readonly hostPorts: Map<string, number>;
  private readonly builtImages = new Map<string, string>();
  private readonly created = new Set<string>();
  private readonly started = new Set<string>();
  /** The containers `up` started, by service. */
  private readonly containers = new Map<string, string[]>();
  private readonly followers: GroupProcess[] = [];

  private constructor(
    readonly name: string,
    readonly spec: ComposeSpec,
    private readonly options: ProjectOptions,
  ) {
    this.hostPorts = new Map(Object.entries(options.hostPorts ?? {}));
  }

  /** The compose files read with `variables` (the first file, then overrides), under project `name`. */
  static async load(
    name: string,
    files: string[],
    variables: Record<string, string>,
    options: ProjectOptions = {},
  ): Promise<ComposeProject> {
    return new ComposeProject(name, await readComposeFiles(files, variables), options);
  }

  private service(name: string): ServiceSpec {
    const service = this.spec.services.get(name);
    if (!service) throw new Error(`compose: no service ${name}`);
    return service;
  }

  /** The tag of a built service's image. */
  imageTag(service: string): string {
    return `localhost/${this.options.imagePrefix ?? this.name}-${service}:latest`;
  }

  private imageOf(service: ServiceSpec): string {
    if (!service.build) return service.image!;
    const id = this.builtImages.get(service.name);
    if (!id) throw new Error(`compose: ${service.name}'s image is not built (build() first)`);
    return id;
  }

  private labels(service?: string): string[] {
    const labels = [
      '--label',
      `io.podman.compose.project=${this.name}`,
      '--label',
      `com.docker.compose.project=${this.name}`,
    ];
    return service ? [...labels, '--label', `com.docker.compose.service=${service}`] : labels;
  }

  /**
   * Builds every service's image (one build per context and Dockerfile, tagged for each service
   * that uses it); `progress` hears each build's start. Answers each build's seconds.
   */
  async build(progress: (line: string) => void = () => {}): Promise<Array<{ services: string[]; seconds: number }>> {
    const byContext = new Map<string, ServiceSpec[]>();
    for (const service of this.spec.services.values()) {
      if (!service.build) continue;
      const key = `${service.build.context}\0${service.build.dockerfile}`;
      byContext.set(key, [...(byContext.get(key) ?? []), service]);
    }
    const timings: Array<{ services: string[]; seconds: number }> = [];
    for (const services of byContext.values()) {
      progress(`building ${services.map((s) => s.name).join(', ')} from ${services[0]!.build!.dockerfile}`);
      const started = Date.now();
      const id = await this.buildOne(services, progress);
      for (const service of services) this.builtImages.set(service.name, id);
      timings.push({ services: services.map((s) => s.name), seconds: (Date.now() - started) / 1000 });
    }
    return timings;
  }

  /**
   * One build; its named stages are tagged too (`<tag>-<stage>`, from the layer cache), so that the
   * images a previous build left under these tags, and only those, are removed: a build after a
   * change leaves no untagged gigabytes behind, and the cached stages it reused stay.
   */
  private async buildOne(services: ServiceSpec[], progress: (line: string) => void): Promise<string> {
    const { context, dockerfile } = services[0]!.build!;
    const stages = [...(await readFile(dockerfile, 'utf8')).matchAll(/^FROM\s+\S+\s+AS\s+(\S+)\s*$/gim)].map(
      (m) => m[1]!,
    );
    const finalTags = services.map((service) => this.imageTag(service.name));
    const stageTag = (stage: string) => this.imageTag(`${services[0]!.name}-${stage}`);
    const tags = [...finalTags, ...stages.map(stageTag)];
    const idsOf = async () =>
      Promise.all(
        tags.map(async (tag) =>
          (await podman(['image', 'inspect', '--format', '{{.Id}}', tag], { allowFailure: true })).stdout.trim(),
        ),
      );
    const before = await idsOf();
    // The main build's steps as progress (a cold build runs for many minutes); the stages' builds
    // after it only tag what its cache holds.
    const stepLine = (line: string): void => {
      if (/^(\[[^\]]+\] )?STEP \d+\/\d+/.test(line)) progress(line.slice(0, 160));
    };
    const build = (extra: string[], onLine?: (line: string) => void) =>
      podman(['build', '--pull=never', ...PODMAN_FLAGS, ...extra, '-f', dockerfile, context], {
        timeoutMs: 45 * 60_000,
        onLine,
      });
    const idFile = path.join(tmpdir(), `${this.name}-${services[0]!.name}.image-id`);
    await build(['--iidfile', idFile, ...finalTags.flatMap((tag) => ['-t', tag])], stepLine);
    const id = (await readFile(idFile, 'utf8')).trim();
    await rm(idFile, { force: true });
    for (const stage of stages) await build(['--target', stage, '-t', stageTag(stage)]);
    const after = new Set(await idsOf());
    const replaced = [...new Set(before)].filter((old) => old !== '' && !after.has(old));
    // An image still in use (a container of another run, a parent of a kept stage) stays.
    for (const old of replaced) await podman(['rmi', old], { allowFailure: true });
    return id;
  }

  private async ensureNetwork(name: string): Promise<string> {
    const full = `${this.name}_${name}`;
    if (this.created.has(`network:${full}`)) return full;
    const subnet = this.spec.networks.get(name)?.subnet;
    await podman(['network', 'create', ...this.labels(), ...(subnet ? ['--subnet', subnet] : []), full]);
    this.created.add(`network:${full}`);
    return full;
  }

  private async ensureVolume(name: string): Promise<string> {
    const full = `${this.name}_${name}`;
    if (this.created.has(`volume:${full}`)) return full;
    await podman(['volume', 'create', ...this.labels(), full]);
    this.created.add(`volume:${full}`);
    return full;
  }

  /**
   * The environment a service's container gets: its env_files (checked here, handed to podman as
   * files, so their secrets are not on a command line), then `environment` over them.
   */
  private async environmentOf(service: ServiceSpec): Promise<string[]> {
    const args: string[] = [];
    for (const envFile of service.envFiles) {
      if (!existsSync(envFile.path)) {
        if (envFile.required) throw new Error(`compose: ${service.name}'s env_file ${envFile.path} does not exist`);
        continue;
      }
      checkEnvFile(await readFile(envFile.path, 'utf8'), envFile.path);
      args.push('--env-file', envFile.path);
    }
    return [...args, ...Object.entries(service.environment).flatMap(([key, value]) => ['-e', `${key}=${value}`])];
  }

  /** What every container of `service` shares: networks under the service's name, volumes, environment. */
  private async containerArgs(service: ServiceSpec): Promise<string[]> {
    const args: string[] = [...PODMAN_FLAGS, ...this.labels(service.name)];
    for (const network of service.networks) {
      const options = [`alias=${service.name}`, ...(network.ipv4Address ? [`ip=${network.ipv4Address}`] : [])];
      args.push('--network', `${await this.ensureNetwork(network.name)}:${options.join(',')}`);
    }
    for (const volume of service.volumes) {
      const source = volume.kind === 'named' ? await this.ensureVolume(volume.source) : volume.source;
      args.push('-v', `${source}:${volume.target}${volume.readOnly ? ':ro' : ''}`);
    }
    if (service.networks.length > 1) args.push(...(await this.hostEntries(service)));
    args.push(...(await this.environmentOf(service)));
    if (service.entrypoint) args.push('--entrypoint', JSON.stringify(service.entrypoint));
    return args;
  }

  /**
   * This machine's CNI name service (dnsname) gives a container on several networks one resolver per
   * network, in no fixed order, and the first one's "no such name" ends the lookup: such a
   * container finds the services it shares a network with in /etc/hosts instead (those started
   * before it, as `depends_on` orders them). Docker's resolver, and netavark's, need no such help.
   */
  private async hostEntries(service: ServiceSpec): Promise<string[]> {
    const entries: string[] = [];
    for (const network of service.networks) {
      for (const other of this.spec.services.values()) {
        if (other === service || !other.networks.some((n) => n.name === network.name)) continue;
        for (const container of this.containers.get(other.name) ?? []) {
          // A stopped container has no address; the service's next one answers for it.
          const address = await this.address(container, network.name);
          if (address === '') continue;
          entries.push('--add-host', `${other.name}:${address}`);
          break;
        }
      }
    }
    return entries;
  }

  /** Starts `count` containers of `service`, after what it depends on (started once); answers their names. */
  async up(serviceName: string, count = 1): Promise<string[]> {
    const service = this.service(serviceName);
    for (const dependency of service.dependsOn) if (!this.started.has(dependency)) await this.up(dependency);
    this.started.add(serviceName);
    const names: string[] = [];
    for (let index = 1; index <= count; index++) {
      const name = `${this.name}-${serviceName}-${index}`;
      const args = ['run', '-d', '--name', name, ...(await this.containerArgs(service))];
      for (const port of service.ports) {
        const key = `${serviceName}:${port.target}`;
        if (!this.hostPorts.has(key)) this.hostPorts.set(key, await freePort());
        args.push('-p', `127.0.0.1:${this.hostPorts.get(key)}:${port.target}`);
      }
      if (service.restart) args.push('--restart', service.restart);
      await podman([...args, this.imageOf(service), ...(service.command ?? [])]);
      names.push(name);
      this.containers.set(serviceName, [...(this.containers.get(serviceName) ?? []), name]);
    }
    return names;
  }

  /** `compose run --rm --no-deps [-v …] [--entrypoint …] SERVICE ARGS…`: a one-off container, waited for. */
  async run(serviceName: string, args: string[], options: RunOptions = {}): Promise<PodmanResult> {
    const service = this.service(serviceName);
    const podmanArgs = ['run', '--rm', ...(await this.containerArgs(service))];
    for (const volume of options.volumes ?? []) podmanArgs.push('-v', volume);
    if (options.user) podmanArgs.push('--user', options.user);
    if (options.entrypoint) podmanArgs.push('--entrypoint', JSON.stringify(options.entrypoint));
    return podman([...podmanArgs, this.imageOf(service), ...args], {
      allowFailure: true,
      timeoutMs: options.timeoutMs ?? 300_000,
    });
  }

  /** The container's output from its start, as it comes (`podman logs -f`); stopped by `down`. */
  follow(container: string): GroupProcess {
    const follower = startGroup('podman', ['logs', '-f', container], {
      cwd: this.spec.projectDir,
      env: process.env,
      label: `podman logs -f ${container}`,
    });
    this.followers.push(follower);
    return follower;
  }

  /** The container's main process, as the host sees it (0 when it is not running). */
  async hostPid(container: string): Promise<number> {
    return Number((await podman(['inspect', '--format', '{{.State.Pid}}', container])).stdout.trim());
  }

  /** The container's address on the project's network `network`. */
  async address(container: string, network: string): Promise<string> {
    const format = `{{(index .NetworkSettings.Networks "${this.name}_${network}").IPAddress}}`;
    return (await podman(['inspect', '--format', format, container])).stdout.trim();
  }

  /** Where the project's named volume `volume` is on this machine (rootful podman). */
  async volumePath(volume: string): Promise<string> {
    return (await podman(['volume', 'inspect', '--format', '{{.Mountpoint}}', `${this.name}_${volume}`])).stdout.trim();
  }

  /** `compose stop`: every container of the project, SIGTERM then SIGKILL after `timeoutS`. */
  async stop(timeoutS = 10): Promise<void> {
    const ids = await this.containerIds();
    if (ids.length > 0) await podman(['stop', '--time', String(timeoutS), ...ids], { timeoutMs: 120_000 });
  }

  private async containerIds(): Promise<string[]> {
    const filter = `label=io.podman.compose.project=${this.name}`;
    const listed = await podman(['ps', '-a', '--filter', filter, '--format', '{{.ID}}']);
    return listed.stdout.split('\n').filter(Boolean);
  }

  /** `compose down -v`: the containers, networks and volumes of the project (its images are kept). */
  async down(): Promise<void> {
    await Promise.all(this.followers.map((follower) => follower.stop('SIGKILL')));
    const ids = await this.containerIds();
    if (ids.length > 0) await podman(['rm', '-f', '--time', '0', ...ids], { allowFailure: true });
    const filter = `label=io.podman.compose.project=${this.name}`;
    for (const kind of ['network', 'volume']) {
      const listed = await podman([kind, 'ls', '--filter', filter, '--format', '{{.Name}}'], { allowFailure: true });
      const names = listed.stdout.split('\n').filter(Boolean);
      if (names.length > 0) await podman([kind, 'rm', '-f', ...names], { allowFailure: true });
    }
  }
}
