#include "caether_kernels.h"

#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#include <wmmintrin.h>

int caether_cpu_has_sse42(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

int caether_cpu_has_pclmul(void) {
    __builtin_cpu_init();
    return (__builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul")) ? 1 : 0;
}

__attribute__((target("sse4.2"))) uint32_t caether_crc32c_hw_serial(uint32_t crc, const void *data, size_t length) {
    const unsigned char *p = data;
    uint64_t c = crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (length > 0) {
        c32 = _mm_crc32_u8(c32, *p++);
        length--;
    }
    return c32;
}

// Three independent streams hide the crc32 instruction's 3-cycle latency (one issue per cycle).
// The streams' CRCs are joined by shifting with a carry-less multiply: for a reflected CRC r,
// crc32_u64(0, clmul(r, K)) = r * x^(8n) mod P when K = x^(8n-33) mod P (bit-reflected), because
// the 63-bit product read as a reflected 64-bit value carries one extra factor of x and crc32_u64
// multiplies by x^32. K values below were computed with that formula (x^k by repeated shift-and-reduce).
typedef struct {
    size_t block;
    uint64_t shift1;  // x^(8*block - 33) mod P
    uint64_t shift2;  // x^(16*block - 33) mod P
} caether_crc_stride;

static const caether_crc_stride caether_crc_strides[] = {
    {8192, 0x54a86326u, 0x1dc403ccu},
    {1024, 0x170076fau, 0xa51b6135u},
    {128, 0x0d3b6092u, 0xb9e02b86u},
};

__attribute__((target("sse4.2,pclmul"))) static inline uint64_t caether_crc_shift_join(uint64_t a, uint64_t ka,
                                                                                      uint64_t b, uint64_t kb) {
    __m128i pa = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)a), _mm_cvtsi64_si128((long long)ka), 0x00);
    __m128i pb = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)b), _mm_cvtsi64_si128((long long)kb), 0x00);
    return _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(_mm_xor_si128(pa, pb)));
}

__attribute__((target("sse4.2,pclmul"))) uint32_t caether_crc32c_hw_interleaved(uint32_t crc, const void *data,
                                                                               size_t length) {
    const unsigned char *p = data;
    uint64_t c0 = crc;
    for (size_t s = 0; s < sizeof(caether_crc_strides) / sizeof(caether_crc_strides[0]); s++) {
        const size_t block = caether_crc_strides[s].block;
        while (length >= 3 * block) {
            const unsigned char *p1 = p + block;
            const unsigned char *p2 = p + 2 * block;
            uint64_t c1 = 0, c2 = 0;
            for (size_t i = 0; i < block; i += 8) {
                uint64_t w0, w1, w2;
                memcpy(&w0, p + i, 8);
                memcpy(&w1, p1 + i, 8);
                memcpy(&w2, p2 + i, 8);
                c0 = _mm_crc32_u64(c0, w0);
                c1 = _mm_crc32_u64(c1, w1);
                c2 = _mm_crc32_u64(c2, w2);
            }
            c0 = caether_crc_shift_join(c0, caether_crc_strides[s].shift2, c1, caether_crc_strides[s].shift1) ^ c2;
            p += 3 * block;
            length -= 3 * block;
        }
    }
    return caether_crc32c_hw_serial((uint32_t)c0, p, length);
}
#else
int caether_cpu_has_sse42(void) { return 0; }
int caether_cpu_has_pclmul(void) { return 0; }

// No interleaving without the instructions: the portable loop below is the whole kernel.
uint32_t caether_crc32c_hw_interleaved(uint32_t crc, const void *data, size_t length) {
    return caether_crc32c_hw_serial(crc, data, length);
}

// No CRC instruction on this architecture: a bitwise loop keeps the function correct everywhere.
uint32_t caether_crc32c_hw_serial(uint32_t crc, const void *data, size_t length) {
    const unsigned char *p = data;
    while (length-- > 0) {
        crc ^= *p++;
        for (int bit = 0; bit < 8; bit++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return crc;
}
#endif
