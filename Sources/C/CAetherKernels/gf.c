// GF(2^8) split-nibble dot-product kernels; see include/caether_gf.h.
#include "caether_gf.h"

#include <immintrin.h>

enum { GROUP = 6, ENTRY = 64 };

int caether_cpu_has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
}

// Carry-less multiply modulo 0x11D; only used to build tables, so speed does not matter.
static uint8_t gf_mul_bitwise(uint8_t a, uint8_t b) {
    unsigned product = 0;
    unsigned x = a;
    while (b) {
        if (b & 1) product ^= x;
        x <<= 1;
        if (x & 0x100) x ^= 0x11D;
        b >>= 1;
    }
    return (uint8_t)product;
}

size_t caether_gf_tables_size(size_t rows, size_t sources) { return rows * sources * ENTRY; }

void caether_gf_build_tables(size_t rows, size_t sources, const uint8_t *coefficients, uint8_t *tables) {
    for (size_t first = 0; first < rows; first += GROUP) {
        size_t group = rows - first < GROUP ? rows - first : GROUP;
        uint8_t *block = tables + first * sources * ENTRY;
        for (size_t j = 0; j < sources; j++) {
            for (size_t p = 0; p < group; p++) {
                uint8_t c = coefficients[(first + p) * sources + j];
                uint8_t *entry = block + (j * group + p) * ENTRY;
                for (unsigned n = 0; n < 16; n++) {
                    uint8_t low = gf_mul_bitwise(c, (uint8_t)n);
                    uint8_t high = gf_mul_bitwise(c, (uint8_t)(n << 4));
                    entry[n] = low;
                    entry[16 + n] = low;
                    entry[32 + n] = high;
                    entry[48 + n] = high;
                }
            }
        }
    }
}

// One group of `rows` (1...6) outputs. Inlined into a switch on a constant so the accumulators
// stay in registers and the row loop unrolls. Up to four rows take 64 bytes a step (two vectors per
// accumulator, each table pair loaded once for both); five and six rows would run out of the 16 ymm
// registers that way and take 32.
__attribute__((target("avx2"), always_inline)) static inline void
dot_group_avx2(size_t length, size_t sources, const uint8_t *tables, const uint8_t *const *src,
               uint8_t *const *dst, const size_t rows) {
    const __m256i mask = _mm256_set1_epi8(0x0f);
    size_t i = 0;
    if (rows <= 4) {
        for (; i + 64 <= length; i += 64) {
            __m256i acc0[4], acc1[4];
            for (size_t p = 0; p < rows; p++) {
                acc0[p] = _mm256_setzero_si256();
                acc1[p] = _mm256_setzero_si256();
            }
            const uint8_t *entry = tables;
            for (size_t j = 0; j < sources; j++) {
                __m256i x0 = _mm256_loadu_si256((const __m256i *)(src[j] + i));
                __m256i x1 = _mm256_loadu_si256((const __m256i *)(src[j] + i + 32));
                __m256i low0 = _mm256_and_si256(x0, mask);
                __m256i low1 = _mm256_and_si256(x1, mask);
                __m256i high0 = _mm256_and_si256(_mm256_srli_epi64(x0, 4), mask);
                __m256i high1 = _mm256_and_si256(_mm256_srli_epi64(x1, 4), mask);
                for (size_t p = 0; p < rows; p++, entry += ENTRY) {
                    __m256i tlow = _mm256_load_si256((const __m256i *)entry);
                    __m256i thigh = _mm256_load_si256((const __m256i *)(entry + 32));
                    acc0[p] = _mm256_xor_si256(acc0[p], _mm256_xor_si256(_mm256_shuffle_epi8(tlow, low0),
                                                                         _mm256_shuffle_epi8(thigh, high0)));
                    acc1[p] = _mm256_xor_si256(acc1[p], _mm256_xor_si256(_mm256_shuffle_epi8(tlow, low1),
                                                                         _mm256_shuffle_epi8(thigh, high1)));
                }
            }
            for (size_t p = 0; p < rows; p++) {
                _mm256_storeu_si256((__m256i *)(dst[p] + i), acc0[p]);
                _mm256_storeu_si256((__m256i *)(dst[p] + i + 32), acc1[p]);
            }
        }
    }
    for (; i + 32 <= length; i += 32) {
        __m256i acc[GROUP];
        for (size_t p = 0; p < rows; p++) acc[p] = _mm256_setzero_si256();
        const uint8_t *entry = tables;
        for (size_t j = 0; j < sources; j++) {
            __m256i x = _mm256_loadu_si256((const __m256i *)(src[j] + i));
            __m256i low = _mm256_and_si256(x, mask);
            __m256i high = _mm256_and_si256(_mm256_srli_epi64(x, 4), mask);
            for (size_t p = 0; p < rows; p++, entry += ENTRY) {
                __m256i tlow = _mm256_load_si256((const __m256i *)entry);
                __m256i thigh = _mm256_load_si256((const __m256i *)(entry + 32));
                acc[p] = _mm256_xor_si256(acc[p], _mm256_xor_si256(_mm256_shuffle_epi8(tlow, low),
                                                                   _mm256_shuffle_epi8(thigh, high)));
            }
        }
        for (size_t p = 0; p < rows; p++) _mm256_storeu_si256((__m256i *)(dst[p] + i), acc[p]);
    }
    for (; i < length; i++) {
        for (size_t p = 0; p < rows; p++) {
            uint8_t acc = 0;
            for (size_t j = 0; j < sources; j++) {
                const uint8_t *entry = tables + (j * rows + p) * ENTRY;
                uint8_t x = src[j][i];
                acc ^= entry[x & 15] ^ entry[32 + (x >> 4)];
            }
            dst[p][i] = acc;
        }
    }
}

__attribute__((target("avx2"))) void caether_gf_dot_prod_avx2(size_t length, size_t rows, size_t sources,
                                                              const uint8_t *tables, const uint8_t *const *src,
                                                              uint8_t *const *dst) {
    for (size_t first = 0; first < rows; first += GROUP) {
        size_t group = rows - first < GROUP ? rows - first : GROUP;
        const uint8_t *block = tables + first * sources * ENTRY;
        uint8_t *const *out = dst + first;
        switch (group) {
        case 1: dot_group_avx2(length, sources, block, src, out, 1); break;
        case 2: dot_group_avx2(length, sources, block, src, out, 2); break;
        case 3: dot_group_avx2(length, sources, block, src, out, 3); break;
        case 4: dot_group_avx2(length, sources, block, src, out, 4); break;
        case 5: dot_group_avx2(length, sources, block, src, out, 5); break;
        default: dot_group_avx2(length, sources, block, src, out, 6); break;
        }
    }
}
