/**
 * One-circuit test-network ceremonies on a bench chain, for the benches that run a coordinator:
 * a template data folder per chain (cached in the fixture cache) whose head is the chain's z0, and
 * a fresh copy of it per run. The template is what `ceremony init` makes, with the chain's z0 in
 * place of a second `snarkjs zkey new` (deterministic, so the same bytes; minutes at 2^18): the
 * ceremony.json, the r1cs, the ptau (linked), contribution 0 and its transcript entry. It is built
 * in a temporary folder and renamed into place, so a bench stopped half-way leaves no half template.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openCeremony } from '../core/ceremony/open-ceremony.ts';
import { ceremonyPaths } from '../core/data-folder/ceremony-paths.ts';
import { readZkeyInfo } from '../core/zkey/zkey-file.ts';
import { hashKeyFile } from '../core/zkey/zkey-hashes.ts';
import { FIXTURE_CACHE, REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { benchChain, benchLog as log, realShapedChain, type BenchChain, type RealShapedChain } from './bench-chain.ts';

/** The one circuit of a bench ceremony. */
export const BENCH_CIRCUIT = 'mul';

const exists = (p: string): Promise<boolean> =>
  stat(p).then(
    () => true,
    () => false,
  );

/** The template of `chain` (cached as FIXTURE_CACHE/bench-server-LABEL/): a ceremony whose head is z0. */
export async function benchCeremonyTemplate(chain: BenchChain, label: string): Promise<string> {
  const template = path.join(FIXTURE_CACHE, `bench-server-${label}`);
  if (await exists(path.join(template, 'ready'))) return template;
  const building = `${template}.${process.pid}.tmp`;
  await rm(building, { recursive: true, force: true });
  try {
    await mkdir(path.join(building, 'circuits'), { recursive: true });
    await mkdir(path.join(building, 'ptau'), { recursive: true });
    await cp(chain.r1cs, path.join(building, 'circuits', `${BENCH_CIRCUIT}.r1cs`));
    await symlink(chain.ptau, path.join(building, 'ptau', 'dev.ptau'));
    const config = {
      id: `bench-server-${label}`,
      title: 'server benchmark',
      testNetwork: true,
      ptau: 'ptau/dev.ptau',
      circuits: [
        {
          name: BENCH_CIRCUIT,
          verifier: 'VerifierMul',
          publicInputs: (chain as Partial<RealShapedChain>).publicInputs ?? 12,
          r1cs: `circuits/${BENCH_CIRCUIT}.r1cs`,
        },
      ],
    };
    await writeFile(path.join(building, 'ceremony.json'), JSON.stringify(config, null, 2));
    log(`initialising the benchmark ceremony ${label} from the chain's contribution 0`);
    const state = await openCeremony(building);
    const z0 = ceremonyPaths(building).zkeyPath(BENCH_CIRCUIT, 0);
    await mkdir(path.dirname(z0), { recursive: true });
    await cp(chain.z0, z0);
    const info = await readZkeyInfo(z0);
    await state.transcript.append([
      {
        type: 'init',
        circuit: BENCH_CIRCUIT,
        index: 0,
        circuitHash: info.mpc.csHash.toString('hex'),
        ...(await hashKeyFile(z0, 'contribution 0')),
      },
    ]);
    await writeFile(path.join(building, 'ready'), '');
    // Another bench may have finished the same template meanwhile: theirs stays.
    if (!(await exists(path.join(template, 'ready')))) {
      await rm(template, { recursive: true, force: true });
      await rename(building, template);
    }
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  return template;
}

/**
 * A fresh copy of a template to run a coordinator on, under the system's temporary folder: not
 * under a dot-folder, as the coordinator serves zkeys with express's sendFile({ dotfiles: 'deny' }),
 * which refuses any path with a dot-folder in it (403). The caller removes it.
 */
export async function benchCeremonyCopy(template: string, prefix: string): Promise<string> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `${prefix}-`));
  await cp(template, dataDir, { recursive: true, verbatimSymlinks: true });
  return dataDir;
}

/**
 * What a bench that runs the compiled coordinator needs first: dist/ (and web/dist) built where
 * stale, the chain of `target` (a real shape's name or a power of two), its ceremony template,
 * and a fresh copy of the template under `prefix` (the caller removes it).
 */
export async function compiledBenchCeremony(
  target: string | number,
  prefix: string,
): Promise<{ chain: BenchChain; template: string; dataDir: string }> {
  const build = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'build.js')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (build.status !== 0) throw new Error('the build failed');
  const chain: BenchChain = typeof target === 'string' ? await realShapedChain(target) : await benchChain(target);
  const template = await benchCeremonyTemplate(chain, String(target));
  return { chain, template, dataDir: await benchCeremonyCopy(template, prefix) };
}
