/**
 * Builds the browser app (web/) into web/dist, which the coordinator serves at /: three pages
 * (contribute, public ceremony, coordinator console) and the contribution Web Worker. Nothing is
 * fetched from a CDN at run time: snarkjs is bundled, and the Semaphore proving artifacts are put
 * beside the pages (hard links into node_modules where the filesystem allows, else copies).
 * `npm run dev:web` style use: `npx vite` proxies the API to a coordinator on 127.0.0.1:8080.
 */
import { copyFile, link, mkdir, readdir, writeFile } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const webDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'web');
const SEMAPHORE_ARTIFACT = /^semaphore-\d+\.(wasm|zkey)$/;

/** Serves (dev) and emits (build) the Semaphore circuit artifacts under /semaphore-artifacts/. */
function semaphoreArtifacts(): Plugin {
  const source = path.dirname(createRequire(import.meta.url).resolve('@zk-kit/semaphore-artifacts/package.json'));
  return {
    name: 'semaphore-artifacts',
    configureServer(server) {
      server.middlewares.use('/semaphore-artifacts', (req, res, next) => {
        const name = path.basename(req.url ?? '');
        if (!SEMAPHORE_ARTIFACT.test(name)) return next();
        createReadStream(path.join(source, name))
          .on('error', () => next())
          .pipe(res);
      });
    },
    async writeBundle(options) {
      const target = path.join(options.dir ?? path.join(webDir, 'dist'), 'semaphore-artifacts');
      await mkdir(target, { recursive: true });
      for (const name of (await readdir(source)).filter((n) => SEMAPHORE_ARTIFACT.test(n))) {
        await link(path.join(source, name), path.join(target, name)).catch(() =>
          copyFile(path.join(source, name), path.join(target, name)),
        );
      }
    },
  };
}

/**
 * Records the files of this repository the build read (pages, scripts, styles, the contribution
 * workers and everything they import, core/ included: Rollup's module graph of the pages and of each
 * worker bundle) in web/dist/.build-inputs.json. core/runtime/build-state.js calls web/dist stale when
 * one of them is newer than the build, so the list of sources is the bundle's own, never kept by hand.
 */
function recordBuildInputs(): { pages: Plugin; worker: () => Plugin } {
  const repoRoot = path.dirname(webDir);
  const inputs = new Set<string>();
  const collect = (ids: Iterable<string>) => {
    for (const id of ids) {
      const file = id.split('?')[0]!;
      const relative = path.relative(repoRoot, file);
      const outside = relative.startsWith('..') || relative.split(path.sep).includes('node_modules');
      if (id.startsWith('\0') || !path.isAbsolute(file) || outside) continue;
      inputs.add(relative.split(path.sep).join('/'));
    }
  };
  return {
    pages: {
      name: 'record-build-inputs',
      apply: 'build',
      generateBundle() {
        collect(this.getModuleIds());
      },
      async writeBundle(options) {
        const file = path.join(options.dir ?? path.join(webDir, 'dist'), BUILD_INPUTS_FILE);
        await writeFile(file, `${JSON.stringify([...inputs].sort(), null, 1)}\n`);
      },
    },
    worker: () => ({
      name: 'record-build-inputs-worker',
      generateBundle() {
        collect(this.getModuleIds());
      },
    }),
  };
}

/** The record's name in web/dist (read by core/runtime/build-state.js; tests/ops/web-build-inputs checks both). */
const BUILD_INPUTS_FILE = '.build-inputs.json';
const buildInputs = recordBuildInputs();

const coordinator = process.env.COORDINATOR_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root: webDir,
  base: '/',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: path.join(webDir, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    // snarkjs and the Semaphore prover are large by nature; they load only where needed.
    chunkSizeWarningLimit: 4096,
    rollupOptions: {
      input: {
        contribute: path.join(webDir, 'index.html'),
        ceremony: path.join(webDir, 'ceremony', 'index.html'),
        console: path.join(webDir, 'console', 'index.html'),
      },
    },
  },
  worker: { format: 'es', plugins: () => [buildInputs.worker()] },
  plugins: [semaphoreArtifacts(), buildInputs.pages],
  server: {
    proxy: Object.fromEntries(
      ['/api', '/auth', '/healthz'].map((route) => [route, { target: coordinator, changeOrigin: false }]),
    ),
  },
});
