#include "caether_kernels.h"

#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>

int caether_cpu_has_sse42(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
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
#else
int caether_cpu_has_sse42(void) { return 0; }

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
