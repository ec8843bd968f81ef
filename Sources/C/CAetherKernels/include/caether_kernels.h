#ifndef CAETHER_KERNELS_H
#define CAETHER_KERNELS_H
// Hand-written SIMD kernels. Each is compared against a plain Swift version in aether-bench and
// must beat it to stay. Runtime CPU detection: callers ask caether_cpu_* before using a kernel.
#include <stddef.h>
#include <stdint.h>

/// 1 when the CPU has the SSE4.2 CRC32 instruction.
int caether_cpu_has_sse42(void);

/// CRC32C (Castagnoli) update with the SSE4.2 crc32 instruction, one stream, 8 bytes a step.
/// `crc` is the running value without the final inversion (start with 0xFFFFFFFF).
uint32_t caether_crc32c_hw_serial(uint32_t crc, const void *data, size_t length);

/// 1 when the CPU has SSE4.2 and PCLMULQDQ (what caether_crc32c_hw_interleaved needs).
int caether_cpu_has_pclmul(void);

/// CRC32C update over three interleaved streams joined with PCLMULQDQ; same contract as
/// caether_crc32c_hw_serial, about 3x faster on large buffers. Call only when caether_cpu_has_pclmul().
uint32_t caether_crc32c_hw_interleaved(uint32_t crc, const void *data, size_t length);

#endif
