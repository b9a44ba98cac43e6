/**
 * Puts the G1 kernel under snarkjs's own contribution code. snarkjs scales L and H with
 * `curve.G1.batchApplyKey(points, s⁻¹, 1)`; while a contribution runs, that one function of the
 * shared bn128 curve is replaced by the kernel (on a pool of threads), and everything else, the
 * secret's derivation, the contribution record, the proof of knowledge, the file layout, stays
 * snarkjs's, byte for byte. Calls the kernel cannot take (another group, inc ≠ 1, projective
 * points, a scalar whose chain fails its check) go to the original function.
 */
import { forgetLastScaleChain, planScaleChain, type ScaleChain } from './g1-scale-chain.ts';

/** Scales a buffer of affine G1 points along a chain; the pool behind it decides the threads. */
export interface PointScaler {
  readonly workers: number;
  scale(points: Uint8Array, chain: ScaleChain): Promise<Uint8Array>;
}

type BatchApplyKey = (
  buff: Uint8Array,
  first: unknown,
  inc: unknown,
  inType?: string,
  outType?: string,
) => Promise<Uint8Array>;

interface FieldLike {
  e(value: unknown): unknown;
  eq(a: unknown, b: unknown): boolean;
  one: unknown;
  toObject(value: unknown): bigint;
}

/** The parts of an ffjavascript bn128 curve this patch touches. */
export interface PatchableCurve {
  G1: { batchApplyKey: BatchApplyKey } | object;
  Fr: object;
}

export interface FastApplyKeyStats {
  /** Points the kernel scaled. */
  kernelPoints: number;
  /** Points left to ffjavascript (calls the kernel does not take). */
  fallbackPoints: number;
}

/** Installs the kernel as `curve.G1.batchApplyKey`; the returned function puts the original back. */
export function installFastApplyKey(curve: PatchableCurve, scaler: PointScaler, stats?: FastApplyKeyStats): () => void {
  const group = curve.G1 as { batchApplyKey: BatchApplyKey };
  const Fr = curve.Fr as FieldLike;
  const original = group.batchApplyKey;
  const fast: BatchApplyKey = async (buff, first, inc, inType, outType) => {
    const affine = (inType ?? 'affine') === 'affine' && (outType ?? 'affine') === 'affine';
    const chain = affine && Fr.eq(Fr.e(inc), Fr.one) ? planScaleChain(Fr.toObject(Fr.e(first))) : null;
    if (!chain) {
      if (stats) stats.fallbackPoints += Math.floor(buff.byteLength / 64);
      return original.call(group, buff, first, inc, inType, outType);
    }
    if (stats) stats.kernelPoints += buff.byteLength / 64;
    return scaler.scale(buff, chain);
  };
  group.batchApplyKey = fast;
  return () => {
    if (group.batchApplyKey === fast) group.batchApplyKey = original;
    forgetLastScaleChain();
  };
}

/** The chain kept by `captureScaleChain`, and how to put the original `batchApplyKey` back. */
export interface ScaleChainCapture {
  /** The kernel's chain for the last scalar snarkjs asked to apply; undefined if none was taken. */
  readonly chain: ScaleChain | undefined;
  restore(): void;
}

/**
 * For a contribution on a head's small sections (L one placeholder point, H empty): snarkjs's one
 * `batchApplyKey` call, with s⁻¹, is not computed; the kernel's chain for s⁻¹ is kept instead, for
 * a pool to apply to the real L and H. The placeholder is returned as it came: the small key's L
 * is never used. No chain (a secret the kernel cannot follow) means the secret must not be used.
 */
export function captureScaleChain(curve: PatchableCurve): ScaleChainCapture {
  let chain: ScaleChain | undefined;
  const restore = installFastApplyKey(curve, {
    workers: 1,
    scale: async (points, planned) => {
      chain = planned;
      return points.slice();
    },
  });
  return {
    get chain() {
      return chain;
    },
    restore,
  };
}
