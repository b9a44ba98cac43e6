/**
 * The two primes of BN254 (bn128, alt_bn128), defined once. No imports: the browser bundle (the G1
 * kernel) and server-only modules share it.
 */

/** q: the base field, in which point coordinates live. */
export const BN254_Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;

/** r: the scalar field, the order of G1 and G2 (the r1cs prime, the Semaphore SNARK field). */
export const BN254_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
