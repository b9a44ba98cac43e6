pragma circom 2.1.0;

include "lib/mix-chain.circom";

// Test stand-in for the production `register` circuit: 6 public inputs, 300 rounds.
component main {public [pub]} = MixChain(6, 300);
