/** Compiles a circom circuit with circom2 (circom in WebAssembly, from npm) in a child process. */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CompileOptions {
  /** Also write the witness generator (`<name>_js/<name>.wasm`) into this folder. */
  wasmDir?: string;
}

/** Returns the path of the written r1cs. */
export async function compileCircuit(
  sourcePath: string,
  outDir: string,
  options: CompileOptions = {},
): Promise<string> {
  const cli = createRequire(import.meta.url).resolve('circom2/cli.js');
  await mkdir(outDir, { recursive: true });
  await run(process.execPath, [cli, sourcePath, '--r1cs', '-o', outDir], { cwd: path.dirname(sourcePath) });
  if (options.wasmDir) {
    await mkdir(options.wasmDir, { recursive: true });
    await run(process.execPath, [cli, sourcePath, '--wasm', '-o', options.wasmDir], { cwd: path.dirname(sourcePath) });
  }
  return path.join(outDir, `${path.basename(sourcePath, '.circom')}.r1cs`);
}
