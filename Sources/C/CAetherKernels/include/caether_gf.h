#ifndef CAETHER_GF_H
#define CAETHER_GF_H
// GF(2^8) region kernels for Reed-Solomon (AetherCoding). Field polynomial x^8+x^4+x^3+x^2+1 (0x11D),
// the one ISA-L uses, so products match ISA-L's ec_encode_data byte for byte.
//
// The multiply is the split-nibble table lookup: c*x = lo_c[x & 15] ^ hi_c[x >> 4], with lo_c and
// hi_c the products of c with every 4-bit value; PSHUFB does 32 such lookups at once on AVX2.
// Callers ask caether_cpu_has_avx2 before calling an _avx2 function.
#include <stddef.h>
#include <stdint.h>

/// 1 when the CPU (and OS) support AVX2.
int caether_cpu_has_avx2(void);

/// Bytes of nibble tables caether_gf_build_tables writes for a `rows` x `sources` coefficient matrix.
size_t caether_gf_tables_size(size_t rows, size_t sources);

/// Expands a row-major `rows` x `sources` coefficient matrix into nibble tables (64 bytes a
/// coefficient: the low-nibble products twice, then the high-nibble products twice), grouped six
/// rows at a time and source-major inside a group, the order the dot-product kernel reads them.
void caether_gf_build_tables(size_t rows, size_t sources, const uint8_t *coefficients, uint8_t *tables);

/// dst[r][i] = sum over j of coefficient(r, j) * src[j][i], for i < length, with AVX2.
/// Each 32-byte block of each source is loaded once and feeds up to six outputs (more rows are done
/// six at a time). Any length works; the tail past the last full block uses the same tables.
void caether_gf_dot_prod_avx2(size_t length, size_t rows, size_t sources, const uint8_t *tables,
                              const uint8_t *const *src, uint8_t *const *dst);

#endif
