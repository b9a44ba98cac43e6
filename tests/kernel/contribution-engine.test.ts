/**
 * The browser's choice of engine: the kernel on one Web Worker per logical core where the browser
 * runs WebAssembly that accepts the kernel's module and has Workers; snarkjs alone (the fallback),
 * with its reason, where any of that is missing. Node's own WebAssembly stands in for a capable
 * browser's, so the positive case validates the real module bytes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { contributionEngine, type EngineEnvironment } from '../../web/src/contribute/contribution-engine.ts';
import { kernelWasm } from '../../core/kernel/kernel-wasm.generated.ts';

const capable: EngineEnvironment = { webAssembly: WebAssembly, workerAvailable: true, hardwareConcurrency: 4 };

describe('contribution engine', () => {
  it('takes the kernel, one worker per logical core, where WebAssembly accepts the module', () => {
    assert.deepEqual(contributionEngine(capable, kernelWasm), { engine: 'kernel', workers: 4 });
    assert.deepEqual(contributionEngine({ ...capable, hardwareConcurrency: undefined }, kernelWasm), {
      engine: 'kernel',
      workers: 1,
    });
    assert.deepEqual(contributionEngine({ ...capable, hardwareConcurrency: 64 }, kernelWasm), {
      engine: 'kernel',
      workers: 16,
    });
  });

  it('falls back to snarkjs without WebAssembly', () => {
    const choice = contributionEngine({ ...capable, webAssembly: undefined }, kernelWasm);
    assert.equal(choice.engine, 'snarkjs');
    assert.equal(choice.workers, 0);
    assert.match(choice.reason ?? '', /no WebAssembly/);
  });

  it('falls back to snarkjs when WebAssembly refuses the kernel (a feature it lacks) or fails to check it', () => {
    const refuses = contributionEngine({ ...capable, webAssembly: { validate: () => false } }, kernelWasm);
    assert.equal(refuses.engine, 'snarkjs');
    assert.match(refuses.reason ?? '', /cannot run the fast kernel/);
    const throws = contributionEngine(
      {
        ...capable,
        webAssembly: {
          validate: () => {
            throw new TypeError('no');
          },
        },
      },
      kernelWasm,
    );
    assert.equal(throws.engine, 'snarkjs');
    // Damaged module bytes are refused by a real WebAssembly too.
    const damaged = (): Uint8Array<ArrayBuffer> => {
      const bytes = kernelWasm();
      bytes[8] = 0x7f;
      return bytes;
    };
    assert.equal(contributionEngine(capable, damaged).engine, 'snarkjs');
  });

  it('falls back to snarkjs without Web Workers', () => {
    const choice = contributionEngine({ ...capable, workerAvailable: false }, kernelWasm);
    assert.equal(choice.engine, 'snarkjs');
    assert.match(choice.reason ?? '', /no Web Workers/);
  });
});
