/*
 * rng: a bit-exact reimplementation of java.util.Random and
 * java.util.Collections.shuffle(List, Random).
 *
 * It is the game's only source of randomness; the order of calls is part of
 * the specification (section 4.2), so two servers with the same seed and the
 * same commands produce the same game.
 */
#ifndef SOPRA_RNG_H
#define SOPRA_RNG_H

#include <stddef.h>
#include <stdint.h>

/* The 48-bit linear congruential state of java.util.Random. Plain value:
 * copy it to fork a sequence, no teardown needed. */
struct rng {
	uint64_t state;
};

/* Seed like `new java.util.Random(seed)`: state = (seed ^ 0x5DEECE66D) mod 2^48.
 * Every signed 64-bit seed is valid. */
void rng_init(struct rng *r, int64_t seed);

/* Java's next(bits): advance the state and return its top `bits` bits
 * (1 <= bits <= 32) as a signed 32-bit value. */
int32_t rng_next_bits(struct rng *r, int bits);

/* Java's nextInt(bound) for bound >= 1, including the power-of-two shortcut
 * and the rejection loop; returns 0 <= v < bound. bound <= 0 returns 0 and
 * draws nothing (Java would throw; callers never pass it). */
int32_t rng_next_int(struct rng *r, int32_t bound);

/* Collections.shuffle(list, rnd) for a list of n ints:
 * for i = n-1 down to 1: swap(v[i], v[nextInt(i+1)]). */
void rng_shuffle_ints(struct rng *r, int *v, size_t n);

#endif
