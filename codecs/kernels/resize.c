/*
 * Lanczos-3 passes over RGBA rows, for src/image/stages/resize.ts, with WebAssembly SIMD and the
 * fixed-point arithmetic of src/image/stages/lanczos.ts (14-bit weights that sum to 1 << 14, an
 * int32 sum per channel started at half a unit, shifted and clamped), so that the results are the
 * TypeScript passes' byte for byte:
 * - opaque rows: colour channels to 0..255, alpha written as 255; each pair of taps is one
 *   i32x4.dot_i16x8_s of the pixels' channels (as int16) against the pair of weights;
 * - rows with transparency: filtered premultiplied (colour * alpha and alpha * 255, 0..65025, as
 *   uint16 between the passes) and divided back at the end in double precision, rounded half to
 *   even and clamped as a Uint8ClampedArray store does; a pixel whose alpha rounds to 0 is 0,0,0,0.
 *
 * The module imports its memory and has no allocator: resize.ts lays out the rows, the weights and
 * the windows in it (above the first 64 KiB, where the module keeps its stack). Weights are int16
 * pairs: each output's list is padded with zeros to an even length.
 */
#include <stdint.h>
#include <wasm_simd128.h>

#define BITS 14
#define HALF (1 << (BITS - 1))

/* Four pixels' int32 sums (r, g, b, a in each) to 16 bytes of RGBA, alpha 255. */
static inline v128_t pack4(v128_t p0, v128_t p1, v128_t p2, v128_t p3) {
  p0 = wasm_i32x4_shr(p0, BITS);
  p1 = wasm_i32x4_shr(p1, BITS);
  p2 = wasm_i32x4_shr(p2, BITS);
  p3 = wasm_i32x4_shr(p3, BITS);
  const v128_t bytes = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(p0, p1), wasm_i16x8_narrow_i32x4(p2, p3));
  return wasm_v128_or(bytes, wasm_i32x4_splat((int32_t)0xFF000000));
}

/*
 * One row filtered horizontally: pixel x of dst from count[x] pixels of src starting at pixel
 * start[x], with weights[x * stride ...] (stride even). Reads up to one pixel past an output's
 * last tap (its weight is zero), so src needs 4 readable bytes after its row.
 */
void h_row_opaque(const uint8_t* src, uint32_t* dst, int dst_width, const int32_t* start, const int32_t* count,
                  const int16_t* weights, int stride) {
  /* Two pixels' bytes as channel pairs: r0 r1 g0 g1 b0 b1 a0 a1, then the same for the next two. */
  const v128_t pairs = wasm_i8x16_make(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15);
  for (int x = 0; x < dst_width; x++) {
    const uint8_t* p = src + start[x] * 4;
    const int16_t* w = weights + x * stride;
    const int n = count[x];
    v128_t sum = wasm_i32x4_splat(HALF);
    int k = 0;
    for (; k + 4 <= n; k += 4, p += 16) {
      const v128_t px = wasm_i8x16_swizzle(wasm_v128_load(p), pairs);
      const v128_t w4 = wasm_v128_load64_zero(w + k);
      sum = wasm_i32x4_add(sum, wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(px), wasm_i32x4_shuffle(w4, w4, 0, 0, 0, 0)));
      sum = wasm_i32x4_add(sum, wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(px), wasm_i32x4_shuffle(w4, w4, 1, 1, 1, 1)));
    }
    for (; k < n; k += 2, p += 8) {
      const v128_t px = wasm_i8x16_swizzle(wasm_v128_load64_zero(p), pairs);
      sum = wasm_i32x4_add(sum, wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(px), wasm_v128_load32_splat(w + k)));
    }
    dst[x] = (uint32_t)wasm_i32x4_extract_lane(pack4(sum, sum, sum, sum), 0);
  }
}

/*
 * One row filtered vertically: dst (width pixels, rounded up to a multiple of 4: that many are
 * read from each row and written) from n rows of src, row_bytes apart, with weights[0 .. n)
 * (padded to even with zeros).
 */
void v_row_opaque(const uint8_t* src, int row_bytes, uint8_t* dst, int width, const int16_t* weights, int n) {
  for (int x = 0; x < width * 4; x += 16) {
    v128_t p0 = wasm_i32x4_splat(HALF), p1 = p0, p2 = p0, p3 = p0;
    const uint8_t* p = src + x;
    int k = 0;
    for (; k + 1 < n; k += 2, p += 2 * row_bytes) {
      const v128_t a = wasm_v128_load(p), b = wasm_v128_load(p + row_bytes);
      const v128_t w = wasm_v128_load32_splat(weights + k);
      const v128_t lo = wasm_i8x16_shuffle(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      const v128_t hi = wasm_i8x16_shuffle(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      p0 = wasm_i32x4_add(p0, wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(lo), w));
      p1 = wasm_i32x4_add(p1, wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(lo), w));
      p2 = wasm_i32x4_add(p2, wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(hi), w));
      p3 = wasm_i32x4_add(p3, wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(hi), w));
    }
    if (k < n) {
      const v128_t a = wasm_v128_load(p);
      const v128_t w = wasm_i32x4_splat(weights[k]);
      const v128_t lo = wasm_u16x8_extend_low_u8x16(a), hi = wasm_u16x8_extend_high_u8x16(a);
      p0 = wasm_i32x4_add(p0, wasm_i32x4_mul(wasm_u32x4_extend_low_u16x8(lo), w));
      p1 = wasm_i32x4_add(p1, wasm_i32x4_mul(wasm_u32x4_extend_high_u16x8(lo), w));
      p2 = wasm_i32x4_add(p2, wasm_i32x4_mul(wasm_u32x4_extend_low_u16x8(hi), w));
      p3 = wasm_i32x4_add(p3, wasm_i32x4_mul(wasm_u32x4_extend_high_u16x8(hi), w));
    }
    wasm_v128_store(dst + x, pack4(p0, p1, p2, p3));
  }
}

/* ---- rows with transparency ---- */

#define PMAX 65025

/* r, g, b of a premultiplied sum shifted down; alpha (the sum of weight * alpha) times 255, rounded. */
static inline v128_t premultiplied_result(v128_t sum) {
  const v128_t scaled = wasm_i32x4_add(wasm_i32x4_mul(sum, wasm_i32x4_make(1, 1, 1, 255)), wasm_i32x4_make(0, 0, 0, HALF));
  const v128_t shifted = wasm_i32x4_shr(scaled, BITS);
  return wasm_i32x4_min(wasm_i32x4_max(shifted, wasm_i32x4_splat(0)), wasm_i32x4_splat(PMAX));
}

/* One tap of a premultiplying pass: weight * alpha times r, g, b, and times 1 for the alpha sum. */
static inline v128_t premultiplied_tap(uint32_t pixel, int32_t weight) {
  const v128_t channels = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_i32x4_splat((int32_t)pixel)));
  const v128_t colour_and_one = wasm_v128_or(wasm_v128_and(channels, wasm_i32x4_make(-1, -1, -1, 0)), wasm_i32x4_make(0, 0, 0, 1));
  return wasm_i32x4_mul(colour_and_one, wasm_i32x4_splat(weight * (int32_t)(pixel >> 24)));
}

static inline void store_premultiplied(uint16_t* dst, v128_t values) {
  wasm_v128_store64_lane(dst, wasm_u16x8_narrow_i32x4(values, values), 0);
}

/* h_row_opaque's taps over a row with transparency, premultiplied, into 4 uint16 values a pixel. */
void h_row_premultiply(const uint32_t* src, uint16_t* dst, int dst_width, const int32_t* start, const int32_t* count,
                       const int16_t* weights, int stride) {
  for (int x = 0; x < dst_width; x++) {
    const uint32_t* p = src + start[x];
    const int16_t* w = weights + x * stride;
    v128_t sum = wasm_i32x4_make(HALF, HALF, HALF, 0);
    for (int k = 0; k < count[x]; k++) sum = wasm_i32x4_add(sum, premultiplied_tap(p[k], w[k]));
    store_premultiplied(dst + x * 4, premultiplied_result(sum));
  }
}

/* A row with transparency premultiplied once: colour * alpha and alpha * 255, 4 uint16 values a pixel. */
void premultiply_row(const uint32_t* src, uint16_t* dst, int pixels) {
  for (int x = 0; x < pixels; x++) {
    const uint32_t pixel = src[x];
    const v128_t channels = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_i32x4_splat((int32_t)pixel)));
    const int32_t alpha = (int32_t)(pixel >> 24);
    store_premultiplied(dst + x * 4, wasm_i32x4_mul(channels, wasm_i32x4_make(alpha, alpha, alpha, 255)));
  }
}

/* One tap over premultiplied values: all four times the weight (values up to 65025 need int32). */
static inline v128_t values_tap(const uint16_t* values, int32_t weight) {
  return wasm_i32x4_mul(wasm_u32x4_extend_low_u16x8(wasm_v128_load64_zero(values)), wasm_i32x4_splat(weight));
}

/* n taps over premultiplied values (4 a pixel, 4 apart) started at half a unit, shifted down. */
static inline v128_t values_sum(const uint16_t* p, const int16_t* w, int n) {
  v128_t sum = wasm_i32x4_splat(HALF);
  for (int k = 0; k < n; k++) sum = wasm_i32x4_add(sum, values_tap(p + k * 4, w[k]));
  return wasm_i32x4_shr(sum, BITS);
}

/*
 * h_row_premultiply on a row premultiplied once (premultiply_row): the same sums, since weight *
 * (colour * alpha) is (weight * alpha) * colour and weight * (alpha * 255) is 255 * (weight * alpha),
 * with half a unit added to each. Four operations a tap instead of nine.
 */
void h_row_premultiplied(const uint16_t* src, uint16_t* dst, int dst_width, const int32_t* start, const int32_t* count,
                         const int16_t* weights, int stride) {
  for (int x = 0; x < dst_width; x++) {
    const v128_t shifted = values_sum(src + start[x] * 4, weights + x * stride, count[x]);
    store_premultiplied(dst + x * 4, wasm_i32x4_min(wasm_i32x4_max(shifted, wasm_i32x4_splat(0)), wasm_i32x4_splat(PMAX)));
  }
}

/* v_row_opaque's taps over rows with transparency (pixels, row_pixels apart), premultiplied. */
void v_row_premultiply(const uint32_t* src, int row_pixels, uint16_t* dst, int width, const int16_t* weights, int n) {
  for (int x = 0; x < width; x++) {
    const uint32_t* p = src + x;
    v128_t sum = wasm_i32x4_make(HALF, HALF, HALF, 0);
    for (int k = 0; k < n; k++, p += row_pixels) sum = wasm_i32x4_add(sum, premultiplied_tap(*p, weights[k]));
    store_premultiplied(dst + x * 4, premultiplied_result(sum));
  }
}

/* A value a Uint8ClampedArray stores: clamped to 0..255, rounded half to even (f64.nearest). */
static inline uint8_t clamped_byte(double v) {
  return v > 0 ? (v < 255 ? (uint8_t)__builtin_rint(v) : 255) : 0;
}

/* Premultiplied sums (shifted down) back to RGBA; alpha that rounds to 0 makes 0,0,0,0. */
static inline void unpremultiply(uint8_t* dst, v128_t sum) {
  const int32_t pa = wasm_i32x4_extract_lane(sum, 3);
  if (pa < 128) {
    *(uint32_t*)dst = 0;
    return;
  }
  const double inv = 255.0 / pa;
  dst[0] = clamped_byte(wasm_i32x4_extract_lane(sum, 0) * inv);
  dst[1] = clamped_byte(wasm_i32x4_extract_lane(sum, 1) * inv);
  dst[2] = clamped_byte(wasm_i32x4_extract_lane(sum, 2) * inv);
  dst[3] = clamped_byte(pa / 255.0);
}

/* The second pass, horizontal: premultiplied values (4 a pixel) to RGBA. */
void h_row_unpremultiply(const uint16_t* src, uint8_t* dst, int dst_width, const int32_t* start, const int32_t* count,
                         const int16_t* weights, int stride) {
  for (int x = 0; x < dst_width; x++) unpremultiply(dst + x * 4, values_sum(src + start[x] * 4, weights + x * stride, count[x]));
}

/* The second pass, vertical: premultiplied rows (row_values apart) to RGBA. */
void v_row_unpremultiply(const uint16_t* src, int row_values, uint8_t* dst, int width, const int16_t* weights, int n) {
  for (int x = 0; x < width; x++) {
    const uint16_t* p = src + x * 4;
    v128_t sum = wasm_i32x4_splat(HALF);
    for (int k = 0; k < n; k++, p += row_values) sum = wasm_i32x4_add(sum, values_tap(p, weights[k]));
    unpremultiply(dst + x * 4, wasm_i32x4_shr(sum, BITS));
  }
}

/* Premultiplied values of a row filtered along one axis only, back to RGBA. */
void unpremultiply_row(const uint16_t* src, uint8_t* dst, int pixels) {
  for (int x = 0; x < pixels; x++) unpremultiply(dst + x * 4, wasm_u32x4_extend_low_u16x8(wasm_v128_load64_zero(src + x * 4)));
}
