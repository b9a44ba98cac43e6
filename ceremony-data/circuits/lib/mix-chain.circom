pragma circom 2.1.0;

// A stand-in for a production circuit of the shielded pool: it has exactly the production
// circuit's number of public inputs and `rounds` quadratic constraints, so a ceremony over it
// exercises every code path of the real one at a fraction of the cost. It proves knowledge of a
// `seed` whose squaring chain, stirred with every public input, ends at the last public input.
template MixChain(nPublic, rounds) {
    signal input pub[nPublic];
    signal input seed;

    signal acc[rounds + 1];
    acc[0] <== seed;
    for (var i = 0; i < rounds; i++) {
        // One constraint per round; every public input is used so none is optimised away.
        acc[i + 1] <== acc[i] * (acc[i] + pub[i % (nPublic - 1)]);
    }
    acc[rounds] === pub[nPublic - 1];
}
