/* The demo workload: a few functions with different costs, so the report
 * has a clear hotspot order. Built -O2 -g with frame pointers by demo/run.sh.
 * noipa: gcc would otherwise find sum_medium and light_work pure and hoist
 * their calls out of the loop. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

__attribute__((noipa)) uint64_t hash_heavy(uint64_t seed, int rounds) {
    uint64_t h = seed;
    for (int i = 0; i < rounds; i++)
        h = mix(h + i);
    return h;
}

__attribute__((noipa)) uint64_t sum_medium(const uint32_t *v, int n) {
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        s += v[i] * (uint64_t)(i & 7);
    return s;
}

__attribute__((noipa)) uint64_t light_work(int n) {
    uint64_t s = 1;
    for (int i = 1; i < n; i++)
        s = s * 31 + (uint64_t)i;
    return s;
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 300;
    enum { N = 1 << 16 };
    uint32_t *v = malloc(N * sizeof *v);
    if (!v)
        return 1;
    for (int i = 0; i < N; i++)
        v[i] = (uint32_t)mix((uint64_t)i);
    uint64_t acc = 0;
    for (int it = 0; it < iters; it++) {
        acc += hash_heavy(acc, 20000); /* ~60% */
        acc += sum_medium(v, N / 2);   /* ~30% */
        acc += light_work(10000);      /* ~10% */
    }
    printf("demo checksum %llu\n", (unsigned long long)acc);
    free(v);
    return 0;
}
