/*
 * libjpeg-turbo's hottest kernels written for WebAssembly SIMD (wasm_simd128.h), in place of the
 * Arm Neon ones that SIMDe translates into scalar loops through memory (codecs/jpeg/build.sh
 * measures each). codecs/jpeg/build.sh compiles this file into libjpeg-turbo's simd library under
 * the Neon names, so the AArch64 dispatcher (simd/arm/aarch64/jsimd.c) calls these:
 *
 *   jsimd_extrgbx_ycc_convert_neon                                   (encoder: jccolor.c, RGBX in)
 *   jsimd_convsamp_neon, jsimd_fdct_islow_neon, jsimd_quantize_neon   (encoder: jcdctmgr.c)
 *   jsimd_huff_encode_one_block_neon, jsimd_wasm_huff_count_ac       (encoder: jchuff.c)
 *   jsimd_idct_islow_neon                                            (decoder: jddctmgr.c)
 *   jsimd_ycc_extrgbx_convert_neon                                   (decoder: jdcolor.c, RGBX out)
 *
 * Every kernel computes exactly what libjpeg-turbo's C code computes (jccolext.c, jcdctmgr.c,
 * jfdctint.c, jidctint.c, jdcolext.c): the same integer products and sums, wrapping as 32-bit C
 * arithmetic does, rounded at the same points. The one difference is where C's range-limit table wraps an
 * out-of-range sample (only possible with coefficients no encoder writes): here it saturates.
 */
#define JPEG_INTERNALS
#include "jinclude.h"
#include "jpeglib.h"
#include "jdct.h"
#include "jchuff.h"
#include "neon-compat.h"
#include "simd/arm/jchuff.h"

#include <wasm_simd128.h>

/* The 8x8 blocks are held as 16 vectors of four 32-bit lanes: m[2 * r + h] is row r, columns 4h..4h+3. */
typedef v128_t block32[16];

static inline void transpose4x4(v128_t *a, v128_t *b, v128_t *c, v128_t *d) {
  v128_t t0 = wasm_i32x4_shuffle(*a, *b, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(*a, *b, 2, 6, 3, 7);
  v128_t t2 = wasm_i32x4_shuffle(*c, *d, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(*c, *d, 2, 6, 3, 7);
  *a = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5);
  *b = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);
  *c = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5);
  *d = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);
}

/* In place: row r becomes column r. */
static inline void transpose8x8(block32 m) {
  transpose4x4(&m[0], &m[2], &m[4], &m[6]);
  transpose4x4(&m[9], &m[11], &m[13], &m[15]);
  transpose4x4(&m[1], &m[3], &m[5], &m[7]);
  transpose4x4(&m[8], &m[10], &m[12], &m[14]);
  /* The off-diagonal 4x4 blocks trade places. */
  for (int i = 0; i < 4; i++) {
    v128_t upper = m[2 * i + 1];
    m[2 * i + 1] = m[2 * (i + 4)];
    m[2 * (i + 4)] = upper;
  }
}

#define SPLAT(c) wasm_i32x4_splat(c)
#define MUL(v, c) wasm_i32x4_mul(v, SPLAT(c))
/* DESCALE (jdct.h): a right shift by n that rounds half up. */
#define DESCALE_V(v, n) wasm_i32x4_shr(wasm_i32x4_add(v, SPLAT(1 << ((n) - 1))), n)

#define CONST_BITS 13
#define PASS1_BITS 2
#define FIX_0_298631336 2446
#define FIX_0_390180644 3196
#define FIX_0_541196100 4433
#define FIX_0_765366865 6270
#define FIX_0_899976223 7373
#define FIX_1_175875602 9633
#define FIX_1_501321110 12299
#define FIX_1_847759065 15137
#define FIX_1_961570560 16069
#define FIX_2_053119869 16819
#define FIX_2_562915447 20995
#define FIX_3_072711026 25172

/*
 * The odd part shared by the forward and the inverse DCT (jfdctint.c, jidctint.c), on four lanes:
 * i0..i3 are tmp4..tmp7 of the forward DCT and tmp0..tmp3 (inputs 7, 5, 3, 1) of the inverse.
 */
static inline void odd_part(v128_t *i0, v128_t *i1, v128_t *i2, v128_t *i3) {
  v128_t z1 = wasm_i32x4_add(*i0, *i3), z2 = wasm_i32x4_add(*i1, *i2);
  v128_t z3 = wasm_i32x4_add(*i0, *i2), z4 = wasm_i32x4_add(*i1, *i3);
  v128_t z5 = MUL(wasm_i32x4_add(z3, z4), FIX_1_175875602);
  v128_t t0 = MUL(*i0, FIX_0_298631336), t1 = MUL(*i1, FIX_2_053119869);
  v128_t t2 = MUL(*i2, FIX_3_072711026), t3 = MUL(*i3, FIX_1_501321110);
  z1 = MUL(z1, -FIX_0_899976223);
  z2 = MUL(z2, -FIX_2_562915447);
  z3 = wasm_i32x4_add(MUL(z3, -FIX_1_961570560), z5);
  z4 = wasm_i32x4_add(MUL(z4, -FIX_0_390180644), z5);
  *i0 = wasm_i32x4_add(t0, wasm_i32x4_add(z1, z3));
  *i1 = wasm_i32x4_add(t1, wasm_i32x4_add(z2, z4));
  *i2 = wasm_i32x4_add(t2, wasm_i32x4_add(z2, z3));
  *i3 = wasm_i32x4_add(t3, wasm_i32x4_add(z1, z4));
}

/* Colour conversion in jccolor.c's and jdcolor.c's fixed point. */
#define SCALEBITS 16
#define ONE_HALF (1 << (SCALEBITS - 1))
#define FIX(x) ((int32_t)((x) * (1L << SCALEBITS) + 0.5))

static inline uint8_t clamp_sample(int value) {
  return value < 0 ? 0 : value > MAXJSAMPLE ? MAXJSAMPLE : (uint8_t)value;
}

/* Four pixels of R, G or B as 32-bit lanes from four of Y, Cb - 128 and Cr - 128. */
static inline void ycc_to_rgb4(v128_t y, v128_t cb, v128_t cr, v128_t *r, v128_t *g, v128_t *b) {
  const v128_t half = SPLAT(ONE_HALF);
  *r = wasm_i32x4_add(y, wasm_i32x4_shr(wasm_i32x4_add(MUL(cr, FIX(1.40200)), half), SCALEBITS));
  *g = wasm_i32x4_add(y, wasm_i32x4_shr(wasm_i32x4_add(wasm_i32x4_add(MUL(cb, -FIX(0.34414)), half),
                                                       MUL(cr, -FIX(0.71414))), SCALEBITS));
  *b = wasm_i32x4_add(y, wasm_i32x4_shr(wasm_i32x4_add(MUL(cb, FIX(1.77200)), half), SCALEBITS));
}

/* Sixteen 8-bit values as four vectors of 32-bit lanes, less `offset`. */
static inline void widen16(v128_t bytes, int offset, v128_t out[4]) {
  v128_t low = wasm_u16x8_extend_low_u8x16(bytes), high = wasm_u16x8_extend_high_u8x16(bytes);
  const v128_t bias = SPLAT(offset);
  out[0] = wasm_i32x4_sub(wasm_u32x4_extend_low_u16x8(low), bias);
  out[1] = wasm_i32x4_sub(wasm_u32x4_extend_high_u16x8(low), bias);
  out[2] = wasm_i32x4_sub(wasm_u32x4_extend_low_u16x8(high), bias);
  out[3] = wasm_i32x4_sub(wasm_u32x4_extend_high_u16x8(high), bias);
}

/* Four vectors of 32-bit lanes as sixteen samples, clamped to 0..255 as range_limit[] does. */
static inline v128_t narrow16(const v128_t in[4]) {
  return wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(in[0], in[1]), wasm_i16x8_narrow_i32x4(in[2], in[3]));
}

/* ---- Encoder -------------------------------------------------------------------------------- */

/* jcdctmgr.c convsamp(): eight samples of each of eight rows, less CENTERJSAMPLE, as DCTELEMs. */
void jsimd_convsamp_neon(JSAMPARRAY sample_data, JDIMENSION start_col, DCTELEM *workspace) {
  const v128_t center = wasm_i16x8_splat(CENTERJSAMPLE);
  for (int r = 0; r < DCTSIZE; r++)
    wasm_v128_store(workspace + r * DCTSIZE, wasm_i16x8_sub(wasm_u16x8_load8x8(sample_data[r] + start_col), center));
}

/*
 * One pass of jpeg_fdct_islow() on four lanes: x[0..7] are the eight inputs of the 1-D DCT
 * (lane k of each is the k-th of four rows or columns), replaced by its eight outputs.
 * first_pass: outputs scaled up by PASS1_BITS; else that scaling removed.
 */
static inline void fdct_pass(v128_t x[8], int first_pass) {
  v128_t tmp0 = wasm_i32x4_add(x[0], x[7]), tmp7 = wasm_i32x4_sub(x[0], x[7]);
  v128_t tmp1 = wasm_i32x4_add(x[1], x[6]), tmp6 = wasm_i32x4_sub(x[1], x[6]);
  v128_t tmp2 = wasm_i32x4_add(x[2], x[5]), tmp5 = wasm_i32x4_sub(x[2], x[5]);
  v128_t tmp3 = wasm_i32x4_add(x[3], x[4]), tmp4 = wasm_i32x4_sub(x[3], x[4]);
  v128_t tmp10 = wasm_i32x4_add(tmp0, tmp3), tmp13 = wasm_i32x4_sub(tmp0, tmp3);
  v128_t tmp11 = wasm_i32x4_add(tmp1, tmp2), tmp12 = wasm_i32x4_sub(tmp1, tmp2);
  v128_t z1 = MUL(wasm_i32x4_add(tmp12, tmp13), FIX_0_541196100);
  v128_t even2 = wasm_i32x4_add(z1, MUL(tmp13, FIX_0_765366865));
  v128_t even6 = wasm_i32x4_add(z1, MUL(tmp12, -FIX_1_847759065));
  odd_part(&tmp4, &tmp5, &tmp6, &tmp7);
  if (first_pass) {
    x[0] = wasm_i32x4_shl(wasm_i32x4_add(tmp10, tmp11), PASS1_BITS);
    x[4] = wasm_i32x4_shl(wasm_i32x4_sub(tmp10, tmp11), PASS1_BITS);
    x[2] = DESCALE_V(even2, CONST_BITS - PASS1_BITS);
    x[6] = DESCALE_V(even6, CONST_BITS - PASS1_BITS);
    x[7] = DESCALE_V(tmp4, CONST_BITS - PASS1_BITS);
    x[5] = DESCALE_V(tmp5, CONST_BITS - PASS1_BITS);
    x[3] = DESCALE_V(tmp6, CONST_BITS - PASS1_BITS);
    x[1] = DESCALE_V(tmp7, CONST_BITS - PASS1_BITS);
  } else {
    x[0] = DESCALE_V(wasm_i32x4_add(tmp10, tmp11), PASS1_BITS);
    x[4] = DESCALE_V(wasm_i32x4_sub(tmp10, tmp11), PASS1_BITS);
    x[2] = DESCALE_V(even2, CONST_BITS + PASS1_BITS);
    x[6] = DESCALE_V(even6, CONST_BITS + PASS1_BITS);
    x[7] = DESCALE_V(tmp4, CONST_BITS + PASS1_BITS);
    x[5] = DESCALE_V(tmp5, CONST_BITS + PASS1_BITS);
    x[3] = DESCALE_V(tmp6, CONST_BITS + PASS1_BITS);
    x[1] = DESCALE_V(tmp7, CONST_BITS + PASS1_BITS);
  }
}

/* Runs a pass on each half of a transposed block (columns 0-3, then 4-7 of the original rows). */
static inline void fdct_pass_halves(block32 m, int first_pass) {
  for (int h = 0; h < 2; h++) {
    v128_t x[8];
    for (int k = 0; k < 8; k++) x[k] = m[2 * k + h];
    fdct_pass(x, first_pass);
    for (int k = 0; k < 8; k++) m[2 * k + h] = x[k];
  }
}

/*
 * jfdctint.c jpeg_fdct_islow(): rows, then columns, in place on 64 DCTELEMs. Pass 1's outputs
 * are DCTELEMs (16 bits) in C: for 8-bit samples they are at most 2^13 in size, so keeping them
 * in 32 bits between the passes changes nothing.
 */
void jsimd_fdct_islow_neon(DCTELEM *data) {
  block32 m;
  for (int r = 0; r < DCTSIZE; r++) {
    v128_t row = wasm_v128_load(data + r * DCTSIZE);
    m[2 * r] = wasm_i32x4_extend_low_i16x8(row);
    m[2 * r + 1] = wasm_i32x4_extend_high_i16x8(row);
  }
  transpose8x8(m); /* m[2k+h]: element k of rows 4h..4h+3 */
  fdct_pass_halves(m, 1);
  transpose8x8(m); /* back: m[2r+h] is row r */
  fdct_pass_halves(m, 0);
  for (int r = 0; r < DCTSIZE; r++)
    wasm_v128_store(data + r * DCTSIZE, wasm_i16x8_narrow_i32x4(m[2 * r], m[2 * r + 1]));
}

/* The high 16 bits of the unsigned 16x16-bit products (SSE2's pmulhuw). */
static inline v128_t mulhi_u16(v128_t a, v128_t b) {
  v128_t lo = wasm_u32x4_extmul_low_u16x8(a, b), hi = wasm_u32x4_extmul_high_u16x8(a, b);
  return wasm_i16x8_shuffle(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15);
}

/*
 * jcdctmgr.c quantize(): |x| plus the rounding correction, times the reciprocal, shifted right
 * by 16 + shift, with x's sign. The shift is a multiply by `scale` = 2^(16 - shift) keeping the
 * high half, as libjpeg-turbo's x86 SIMD does (compute_reciprocal() sets up the scale for that,
 * and falls back to the C quantize() for divisors where it cannot).
 */
void jsimd_quantize_neon(JCOEFPTR coef_block, DCTELEM *divisors, DCTELEM *workspace) {
  const DCTELEM *recip = divisors, *corr = divisors + DCTSIZE2, *scale = divisors + 2 * DCTSIZE2;
  for (int i = 0; i < DCTSIZE2; i += 8) {
    v128_t x = wasm_v128_load(workspace + i);
    v128_t sign = wasm_i16x8_shr(x, 15);
    v128_t magnitude = wasm_i16x8_add(wasm_i16x8_abs(x), wasm_v128_load(corr + i));
    magnitude = mulhi_u16(mulhi_u16(magnitude, wasm_v128_load(recip + i)), wasm_v128_load(scale + i));
    wasm_v128_store(coef_block + i, wasm_i16x8_sub(wasm_v128_xor(magnitude, sign), sign));
  }
}

/*
 * jccolext.c rgb_ycc_convert() from RGBX (the encoder's RGBA input; alpha is ignored): the sums of
 * jccolor.c's tables (rgb_ycc_start()), computed instead of looked up. Cb and Cr round with
 * 0.5 - epsilon, so they need no clamping, as in C.
 */
static inline v128_t weighted_sum(v128_t r, v128_t g, v128_t b, int32_t cr, int32_t cg, int32_t cb, int32_t bias) {
  v128_t sum = wasm_i32x4_add(wasm_i32x4_add(MUL(r, cr), MUL(g, cg)), wasm_i32x4_add(MUL(b, cb), SPLAT(bias)));
  return wasm_u32x4_shr(sum, SCALEBITS);
}

void jsimd_extrgbx_ycc_convert_neon(JDIMENSION image_width, JSAMPARRAY input_buf, JSAMPIMAGE output_buf,
                                    JDIMENSION output_row, int num_rows) {
  const v128_t byte = SPLAT(0xFF);
  const int32_t chroma_bias = (CENTERJSAMPLE << SCALEBITS) + ONE_HALF - 1;
  while (--num_rows >= 0) {
    const JSAMPLE *in = *input_buf++;
    JSAMPLE *y_row = output_buf[0][output_row], *cb_row = output_buf[1][output_row], *cr_row = output_buf[2][output_row];
    output_row++;
    JDIMENSION col = 0;
    for (; col + 16 <= image_width; col += 16, in += 64) {
      v128_t y[4], cb[4], cr[4];
      for (int q = 0; q < 4; q++) {
        v128_t pixels = wasm_v128_load(in + 16 * q);
        v128_t r = wasm_v128_and(pixels, byte), g = wasm_v128_and(wasm_u32x4_shr(pixels, 8), byte);
        v128_t b = wasm_v128_and(wasm_u32x4_shr(pixels, 16), byte);
        y[q] = weighted_sum(r, g, b, FIX(0.29900), FIX(0.58700), FIX(0.11400), ONE_HALF);
        cb[q] = weighted_sum(r, g, b, -FIX(0.16874), -FIX(0.33126), FIX(0.50000), chroma_bias);
        cr[q] = weighted_sum(r, g, b, FIX(0.50000), -FIX(0.41869), -FIX(0.08131), chroma_bias);
      }
      wasm_v128_store(y_row + col, narrow16(y));
      wasm_v128_store(cb_row + col, narrow16(cb));
      wasm_v128_store(cr_row + col, narrow16(cr));
    }
    for (; col < image_width; col++, in += 4) {
      int r = in[0], g = in[1], b = in[2];
      y_row[col] = (JSAMPLE)((FIX(0.29900) * r + FIX(0.58700) * g + FIX(0.11400) * b + ONE_HALF) >> SCALEBITS);
      cb_row[col] = (JSAMPLE)((-FIX(0.16874) * r + -FIX(0.33126) * g + FIX(0.50000) * b + chroma_bias) >> SCALEBITS);
      cr_row[col] = (JSAMPLE)((FIX(0.50000) * r + -FIX(0.41869) * g + -FIX(0.08131) * b + chroma_bias) >> SCALEBITS);
    }
  }
}

/*
 * The coefficients of a block in zig-zag order, and a map of the non-zero AC ones: the one at
 * zig-zag position k (1..63) is bit 64 - k, so that counting leading zeros walks them in order.
 */
static inline uint64_t zigzag_nonzero(const JCOEF *block, int16_t zigzag[DCTSIZE2]) {
  zigzag[0] = 0;
  for (int k = 1; k < DCTSIZE2; k++) zigzag[k] = block[jpeg_natural_order[k]];
  uint64_t bitmap = 0; /* bit k: zigzag[k] != 0 */
  const v128_t zero = wasm_i16x8_splat(0);
  for (int k = 0; k < DCTSIZE2; k += 16) {
    v128_t nonzero = wasm_i8x16_narrow_i16x8(wasm_i16x8_ne(wasm_v128_load(zigzag + k), zero),
                                             wasm_i16x8_ne(wasm_v128_load(zigzag + k + 8), zero));
    bitmap |= (uint64_t)wasm_i8x16_bitmask(nonzero) << k;
  }
  return __builtin_bitreverse64(bitmap) << 1;
}

/*
 * jchuff.c htest_one_block()'s AC part, for the optimised tables' statistics (a call in place of
 * its loop: codecs/jpeg/build.sh): counts each run/size symbol and the end-of-block, visiting only
 * the non-zero coefficients. Answers the largest size seen (or the first one over MAX_COEF_BITS,
 * which C then rejects, before counting it).
 */
int jsimd_wasm_huff_count_ac(JCOEFPTR block, long ac_counts[]) {
  int16_t zigzag[DCTSIZE2];
  uint64_t bitmap = zigzag_nonzero(block, zigzag);
  unsigned int i = 1, largest = 0;
  while (bitmap != 0) {
    unsigned int r = BUILTIN_CLZLL(bitmap);
    i += r;
    bitmap <<= r;
    int value = zigzag[i];
    unsigned int nbits = 32 - BUILTIN_CLZ((unsigned int)(value < 0 ? -value : value));
    if (nbits > MAX_COEF_BITS) return (int)nbits;
    if (nbits > largest) largest = nbits;
    for (; r > 15; r -= 16) ac_counts[0xF0]++;
    ac_counts[(r << 4) + nbits]++;
    i++;
    bitmap <<= 1;
  }
  if (i != DCTSIZE2) ac_counts[0]++;
  return (int)largest;
}

/*
 * jchuff.c encode_one_block(), as libjpeg-turbo's AArch64 Neon version does it
 * (simd/arm/aarch64/jchuff-neon.c, with its bit buffer and output macros from simd/arm/jchuff.h),
 * visiting only the non-zero coefficients. C's loop tests all 63 AC coefficients, and
 * mispredicts its branches on most blocks.
 */
JOCTET *jsimd_huff_encode_one_block_neon(void *state, JOCTET *buffer, JCOEFPTR block, int last_dc_val,
                                         c_derived_tbl *dctbl, c_derived_tbl *actbl) {
  int16_t zigzag[DCTSIZE2];
  uint64_t bitmap = zigzag_nonzero(block, zigzag);

  working_state *state_ptr = (working_state *)state;
  int free_bits = state_ptr->cur.free_bits;
  uint64_t put_buffer = state_ptr->cur.put_buffer;

  /* nbits is the magnitude's bit count; diff its bits, or for a negative value those of value - 1. */
  int dc = block[0] - last_dc_val;
  unsigned int temp = (unsigned int)(dc < 0 ? -dc : dc);
  unsigned int nbits = temp ? 32 - BUILTIN_CLZ(temp) : 0;
  unsigned int diff = (unsigned int)(dc < 0 ? dc - 1 : dc) & ((1u << nbits) - 1);
  PUT_CODE(dctbl->ehufco[nbits], dctbl->ehufsi[nbits], diff)

  const unsigned int code_0xf0 = actbl->ehufco[0xf0], size_0xf0 = actbl->ehufsi[0xf0];
  unsigned int i = 1;
  while (bitmap != 0) {
    unsigned int r = BUILTIN_CLZLL(bitmap);
    i += r;
    bitmap <<= r;
    int value = zigzag[i];
    temp = (unsigned int)(value < 0 ? -value : value);
    nbits = 32 - BUILTIN_CLZ(temp);
    diff = (unsigned int)(value < 0 ? value - 1 : value) & ((1u << nbits) - 1);
    while (r > 15) {
      PUT_BITS(code_0xf0, size_0xf0)
      r -= 16;
    }
    unsigned int rs = (r << 4) + nbits;
    PUT_CODE(actbl->ehufco[rs], actbl->ehufsi[rs], diff)
    i++;
    bitmap <<= 1;
  }
  /* Zeros to the end of the block: an end-of-block code (RS = 0). */
  if (i != DCTSIZE2) {
    PUT_BITS(actbl->ehufco[0], actbl->ehufsi[0])
  }
  state_ptr->cur.put_buffer = put_buffer;
  state_ptr->cur.free_bits = free_bits;
  return buffer;
}

/* ---- Decoder -------------------------------------------------------------------------------- */

/*
 * One pass of jpeg_idct_islow() on four lanes: x[0..7] are the eight inputs of the 1-D inverse
 * DCT, replaced by its eight outputs before descaling.
 */
static inline void idct_pass(v128_t x[8]) {
  v128_t z1 = MUL(wasm_i32x4_add(x[2], x[6]), FIX_0_541196100);
  v128_t tmp2 = wasm_i32x4_add(z1, MUL(x[6], -FIX_1_847759065));
  v128_t tmp3 = wasm_i32x4_add(z1, MUL(x[2], FIX_0_765366865));
  v128_t tmp0 = wasm_i32x4_shl(wasm_i32x4_add(x[0], x[4]), CONST_BITS);
  v128_t tmp1 = wasm_i32x4_shl(wasm_i32x4_sub(x[0], x[4]), CONST_BITS);
  v128_t tmp10 = wasm_i32x4_add(tmp0, tmp3), tmp13 = wasm_i32x4_sub(tmp0, tmp3);
  v128_t tmp11 = wasm_i32x4_add(tmp1, tmp2), tmp12 = wasm_i32x4_sub(tmp1, tmp2);
  v128_t o0 = x[7], o1 = x[5], o2 = x[3], o3 = x[1];
  odd_part(&o0, &o1, &o2, &o3);
  x[0] = wasm_i32x4_add(tmp10, o3);
  x[7] = wasm_i32x4_sub(tmp10, o3);
  x[1] = wasm_i32x4_add(tmp11, o2);
  x[6] = wasm_i32x4_sub(tmp11, o2);
  x[2] = wasm_i32x4_add(tmp12, o1);
  x[5] = wasm_i32x4_sub(tmp12, o1);
  x[3] = wasm_i32x4_add(tmp13, o0);
  x[4] = wasm_i32x4_sub(tmp13, o0);
}

/* Writes eight rows of eight samples; m[2r+h] holds row r's values before the +CENTERJSAMPLE. */
static inline void store_samples(const block32 m, JSAMPARRAY output_buf, JDIMENSION output_col) {
  const v128_t center = wasm_i16x8_splat(CENTERJSAMPLE);
  for (int r = 0; r < DCTSIZE; r += 2) {
    v128_t row0 = wasm_i16x8_add_sat(wasm_i16x8_narrow_i32x4(m[2 * r], m[2 * r + 1]), center);
    v128_t row1 = wasm_i16x8_add_sat(wasm_i16x8_narrow_i32x4(m[2 * r + 2], m[2 * r + 3]), center);
    v128_t samples = wasm_u8x16_narrow_i16x8(row0, row1);
    wasm_v128_store64_lane(output_buf[r] + output_col, samples, 0);
    wasm_v128_store64_lane(output_buf[r + 1] + output_col, samples, 1);
  }
}

/*
 * jidctint.c jpeg_idct_islow(): dequantize, columns, then rows, into 8x8 samples. A block with
 * only a DC coefficient (most of a smooth photo's chroma) is one value, as C's zero tests find.
 */
void jsimd_idct_islow_neon(void *dct_table, JCOEFPTR coef_block, JSAMPARRAY output_buf,
                           JDIMENSION output_col) {
  const ISLOW_MULT_TYPE *quant = (const ISLOW_MULT_TYPE *)dct_table;
  block32 m;
  v128_t rows[8], ac = wasm_i16x8_replace_lane(wasm_v128_load(coef_block), 0, 0);
  for (int r = 0; r < DCTSIZE; r++) {
    rows[r] = wasm_v128_load(coef_block + r * DCTSIZE);
    if (r) ac = wasm_v128_or(ac, rows[r]);
  }
  if (!wasm_v128_any_true(ac)) {
    /* DESCALE(DESCALE(dc << CONST_BITS, CONST_BITS - PASS1_BITS) << CONST_BITS, CONST_BITS + PASS1_BITS + 3),
       wrapping in 32 bits as C's JLONG arithmetic does (unsigned here, where overflow is defined) */
    uint32_t dc = (uint32_t)((int32_t)coef_block[0] * quant[0]) << PASS1_BITS;
    v128_t value = wasm_i32x4_splat((int32_t)(dc + (1u << (PASS1_BITS + 2))) >> (PASS1_BITS + 3));
    for (int i = 0; i < 16; i++) m[i] = value;
    store_samples(m, output_buf, output_col);
    return;
  }
  for (int r = 0; r < DCTSIZE; r++) {
    v128_t q = wasm_v128_load(quant + r * DCTSIZE);
    m[2 * r] = wasm_i32x4_extmul_low_i16x8(rows[r], q);
    m[2 * r + 1] = wasm_i32x4_extmul_high_i16x8(rows[r], q);
  }
  /* Pass 1, columns: input k of column c is row k, so the lanes are columns. */
  for (int h = 0; h < 2; h++) {
    v128_t x[8];
    for (int k = 0; k < 8; k++) x[k] = m[2 * k + h];
    idct_pass(x);
    for (int k = 0; k < 8; k++) m[2 * k + h] = DESCALE_V(x[k], CONST_BITS - PASS1_BITS);
  }
  /* Pass 2, rows: transposed, input k of row r is element k of the work array's row r. */
  transpose8x8(m);
  for (int h = 0; h < 2; h++) {
    v128_t x[8];
    for (int k = 0; k < 8; k++) x[k] = m[2 * k + h];
    idct_pass(x);
    for (int k = 0; k < 8; k++) m[2 * k + h] = DESCALE_V(x[k], CONST_BITS + PASS1_BITS + 3);
  }
  transpose8x8(m);
  store_samples(m, output_buf, output_col);
}

/*
 * jdcolext.c ycc_rgb_convert() for RGBX output (the decoder's RGBA with opaque alpha): the
 * products of jdcolor.c's tables (build_ycc_rgb_table()), computed instead of looked up.
 */
void jsimd_ycc_extrgbx_convert_neon(JDIMENSION output_width, JSAMPIMAGE input_buf, JDIMENSION input_row,
                                    JSAMPARRAY output_buf, int num_rows) {
  const v128_t opaque = wasm_i8x16_splat((int8_t)0xFF);
  while (--num_rows >= 0) {
    const JSAMPLE *y_row = input_buf[0][input_row], *cb_row = input_buf[1][input_row], *cr_row = input_buf[2][input_row];
    JSAMPLE *out = *output_buf++;
    input_row++;
    JDIMENSION col = 0;
    for (; col + 16 <= output_width; col += 16, out += 64) {
      v128_t y[4], cb[4], cr[4], r[4], g[4], b[4];
      widen16(wasm_v128_load(y_row + col), 0, y);
      widen16(wasm_v128_load(cb_row + col), CENTERJSAMPLE, cb);
      widen16(wasm_v128_load(cr_row + col), CENTERJSAMPLE, cr);
      for (int q = 0; q < 4; q++) ycc_to_rgb4(y[q], cb[q], cr[q], &r[q], &g[q], &b[q]);
      v128_t red = narrow16(r), green = narrow16(g), blue = narrow16(b);
      v128_t rg_low = wasm_i8x16_shuffle(red, green, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      v128_t rg_high = wasm_i8x16_shuffle(red, green, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      v128_t bx_low = wasm_i8x16_shuffle(blue, opaque, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      v128_t bx_high = wasm_i8x16_shuffle(blue, opaque, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      wasm_v128_store(out, wasm_i16x8_shuffle(rg_low, bx_low, 0, 8, 1, 9, 2, 10, 3, 11));
      wasm_v128_store(out + 16, wasm_i16x8_shuffle(rg_low, bx_low, 4, 12, 5, 13, 6, 14, 7, 15));
      wasm_v128_store(out + 32, wasm_i16x8_shuffle(rg_high, bx_high, 0, 8, 1, 9, 2, 10, 3, 11));
      wasm_v128_store(out + 48, wasm_i16x8_shuffle(rg_high, bx_high, 4, 12, 5, 13, 6, 14, 7, 15));
    }
    for (; col < output_width; col++, out += 4) {
      int y = y_row[col], cb = cb_row[col] - CENTERJSAMPLE, cr = cr_row[col] - CENTERJSAMPLE;
      out[0] = clamp_sample(y + ((FIX(1.40200) * cr + ONE_HALF) >> SCALEBITS));
      out[1] = clamp_sample(y + ((-FIX(0.34414) * cb + ONE_HALF + -FIX(0.71414) * cr) >> SCALEBITS));
      out[2] = clamp_sample(y + ((FIX(1.77200) * cb + ONE_HALF) >> SCALEBITS));
      out[3] = 0xFF;
    }
  }
}
