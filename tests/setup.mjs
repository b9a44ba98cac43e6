// Preloaded into every test process (node --import): quiet the known snarkjs handle warning.
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';

silenceSnarkjsHandleWarnings();
