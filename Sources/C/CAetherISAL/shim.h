#include <isa-l/erasure_code.h>
#include <isa-l/crc.h>
