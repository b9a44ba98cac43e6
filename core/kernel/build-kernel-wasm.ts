/**
 * Rebuilds the kernel from its C files with clang and lld (Debian: `apt-get install clang lld`) and,
 * run as a script (`npm run build:kernel`), rewrites the committed copies of its bytes. Two modules:
 * - the kernel (kernel-wasm.generated.ts): g1-scale.c, g1-msm.c, g1-compose.c, g2-msm.c,
 *   g2-compose.c, point-check.c, g1-uncompressed.c, r1cs-scan.c and fr-fft.c, sharing bn254-fq.h,
 *   bn254-fq-rr.h, bn254-fq2.h, bn254-fq2-rr.h, fq2-over.h, pippenger-msm.h and sparse-compose.h;
 *   plain WebAssembly, which every runtime the project supports runs;
 * - the SIMD scaling kernel (kernel-simd-wasm.generated.ts): g1-scale-x4.c over bn254-fq-rr-x4.h,
 *   built with -msimd128, which a runtime without WebAssembly SIMD refuses (g1-scale-kernel.ts then
 *   uses g1-scale.c's walk from the first module). Auto-vectorisation is off in it: only the
 *   intrinsics make SIMD, as clang's own vectors of 64-bit products lower badly in V8.
 * A test rebuilds both and compares, so the committed bytes are the source's.
 *
 * Another clang or lld version emits other bytes from the same C, so the versions matter: clang
 * writes its own into the module (the `producers` section, read back by kernelProducers), the
 * generated file's header names both (the versions that built the committed bytes), and the script
 * prints them; the test's failure message compares them with the ones installed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const KERNEL_SOURCES = [
  'g1-scale.c',
  'g1-msm.c',
  'g1-compose.c',
  'g2-msm.c',
  'g2-compose.c',
  'point-check.c',
  'g1-uncompressed.c',
  'r1cs-scan.c',
  'fr-fft.c',
].map((file) => path.join(here, file));
export const KERNEL_MODULE_FILE = path.join(here, 'kernel-wasm.generated.ts');
export const KERNEL_SIMD_SOURCES = ['g1-scale-x4.c'].map((file) => path.join(here, file));
export const KERNEL_SIMD_MODULE_FILE = path.join(here, 'kernel-simd-wasm.generated.ts');
/** The SIMD module's flags beyond the kernel's (the header above says why). */
export const SIMD_CLANG_ARGS = ['-msimd128', '-fno-vectorize', '-fno-slp-vectorize'];

const CLANG_ARGS = [
  '--target=wasm32',
  '-O3',
  '-nostdlib',
  '-ffreestanding',
  '-Wall',
  '-Wextra',
  '-Werror',
  '-Wl,--no-entry',
  '-Wl,--export=__heap_base',
  '-Wl,--initial-memory=2097152',
  '-Wl,--max-memory=2147483648',
];

/**
 * Compiles the kernel's C files (or, for a test of one of its headers, other C files) into one
 * WebAssembly module with the kernel's flags and returns the module's bytes.
 */
export function buildKernelWasm(
  clang = process.env.CLANG ?? 'clang',
  sources: readonly string[] = KERNEL_SOURCES,
  extraArgs: readonly string[] = [],
): Buffer {
  const dir = mkdtempSync(path.join(tmpdir(), 'g1-kernel-'));
  try {
    const out = path.join(dir, 'g1-kernel.wasm');
    try {
      execFileSync(clang, [...CLANG_ARGS, ...extraArgs, '-o', out, ...sources], {
        stdio: ['ignore', 'inherit', 'inherit'],
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new Error(`${clang} is not installed: the kernel is built with clang and lld (apt install clang lld)`);
      }
      throw error;
    }
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The first line of `clang --version` and of the WebAssembly linker's `--version` clang runs, as found here. */
export function localToolchain(clang = process.env.CLANG ?? 'clang'): { clang: string; linker: string } {
  const firstLine = (file: string, args: string[]): string => {
    try {
      return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
        .split('\n')[0]!
        .trim();
    } catch {
      return `${path.basename(file)} not found`;
    }
  };
  const linker = firstLine(clang, ['--target=wasm32', '-print-prog-name=wasm-ld']) || 'wasm-ld';
  return { clang: firstLine(clang, ['--version']), linker: firstLine(linker, ['--version']) };
}

/** The tools a WebAssembly module names in its `producers` custom section, e.g. `Debian clang 14.0.6`. */
export function kernelProducers(bytes: Uint8Array): string[] {
  const producers: string[] = [];
  for (const section of WebAssembly.Module.customSections(new WebAssembly.Module(new Uint8Array(bytes)), 'producers')) {
    const data = new Uint8Array(section);
    let at = 0;
    const u32 = (): number => {
      let value = 0;
      for (let shift = 0; ; shift += 7) {
        const byte = data[at++]!;
        value |= (byte & 0x7f) << shift;
        if (byte < 0x80) return value >>> 0;
      }
    };
    const text = (): string => {
      const length = u32();
      at += length;
      return new TextDecoder().decode(data.subarray(at - length, at));
    };
    for (let fields = u32(); fields > 0; fields--) {
      text(); // the field's name: language, processed-by or sdk
      for (let values = u32(); values > 0; values--) producers.push(`${text()} ${text()}`);
    }
  }
  return producers;
}

/** The SIMD scaling kernel (g1-scale-x4.c), built with SIMD_CLANG_ARGS. */
export function buildKernelSimdWasm(clang = process.env.CLANG ?? 'clang'): Buffer {
  return buildKernelWasm(clang, KERNEL_SIMD_SOURCES, SIMD_CLANG_ARGS);
}

/** The TypeScript module that carries the bytes (base64: loads the same in Node, Vite and workers). */
function kernelModuleSource(
  bytes: Buffer,
  toolchain: { clang: string; linker: string },
  module: { sources: readonly string[]; exportName: string; what: string },
): string {
  const sources = module.sources.map((file) => path.basename(file)).join(', ');
  return `// Generated by core/kernel/build-kernel-wasm.ts from ${sources}: do not edit.
// Built with ${toolchain.clang} and ${toolchain.linker}: other versions emit other bytes (npm run build:kernel).
const BASE64 =
  '${bytes.toString('base64')}';

/** ${module.what} */
export function ${module.exportName}(): Uint8Array<ArrayBuffer> {
  const text = atob(BASE64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}
`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const toolchain = localToolchain();
  const modules = [
    {
      file: KERNEL_MODULE_FILE,
      bytes: buildKernelWasm(),
      sources: KERNEL_SOURCES,
      exportName: 'kernelWasm',
      what: "The G1 kernel's WebAssembly bytes.",
    },
    {
      file: KERNEL_SIMD_MODULE_FILE,
      bytes: buildKernelSimdWasm(),
      sources: KERNEL_SIMD_SOURCES,
      exportName: 'kernelSimdWasm',
      what: "The SIMD scaling kernel's WebAssembly bytes (a runtime without WebAssembly SIMD refuses them).",
    },
  ];
  for (const module of modules) {
    writeFileSync(module.file, kernelModuleSource(module.bytes, toolchain, module));
    const written = path.relative(process.cwd(), module.file);
    console.log(`wrote ${written}: ${module.bytes.length} bytes of WebAssembly from ${module.sources.length} C files`);
  }
  console.log(`built with ${toolchain.clang}; ${toolchain.linker}`);
}
