/* rng: java.util.Random, bit for bit (see include/sopra/rng.h). */
#include "sopra/rng.h"

#define RNG_MULT 0x5DEECE66DULL
#define RNG_ADD  0xBULL
#define RNG_MASK ((1ULL << 48) - 1)

void rng_init(struct rng *r, int64_t seed)
{
	r->state = ((uint64_t)seed ^ RNG_MULT) & RNG_MASK;
}

int32_t rng_next_bits(struct rng *r, int bits)
{
	r->state = (r->state * RNG_MULT + RNG_ADD) & RNG_MASK;
	/* Java: (int)(seed >>> (48 - bits)); the cast keeps the low 32 bits. */
	return (int32_t)(uint32_t)(r->state >> (48 - bits));
}

int32_t rng_next_int(struct rng *r, int32_t bound)
{
	if (bound <= 0)
		return 0;
	if ((bound & -bound) == bound) /* power of two */
		return (int32_t)(((int64_t)bound * (int64_t)rng_next_bits(r, 31)) >> 31);
	int32_t bits, val;
	do {
		bits = rng_next_bits(r, 31);
		val = bits % bound;
		/* Java's overflow test `bits - val + (bound-1) < 0`, in 64 bits. */
	} while ((int64_t)bits - val + (bound - 1) > INT32_MAX);
	return val;
}

void rng_shuffle_ints(struct rng *r, int *v, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)rng_next_int(r, (int32_t)i);
		int t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}
