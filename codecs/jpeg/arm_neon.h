/*
 * <arm_neon.h> for libjpeg-turbo's Arm Neon intrinsics (the C files in simd/arm) compiled to WebAssembly
 * SIMD (-msimd128): SIMDe's implementations of the Neon intrinsics under their Arm names
 * (codecs/jpeg/build.sh puts this directory before the compiler's own headers, whose arm_neon.h
 * lacks many of the intrinsics libjpeg-turbo uses).
 */
#ifndef CODEC_ARM_NEON_H
#define CODEC_ARM_NEON_H

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/arm/neon.h>

#endif
