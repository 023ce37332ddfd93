/*
 * The blur, sharpen and grayscale steps (src/image/stages/blur.ts, sharpen.ts, grayscale.ts) with
 * WebAssembly SIMD, computing what their TypeScript did (test/support/filters-reference.ts) byte for
 * byte. JavaScript works in doubles and stores into Float32Arrays, so every value that the
 * TypeScript kept in a Float32Array is rounded to float here at the same point, and every sum is
 * taken in the same order, except where all its terms and partial sums are integers or multiples of
 * 2^-31 below 2^22 (exact in any order). Transcendental functions are tables made by JavaScript
 * (Math.pow differs from musl's in the last bit), except cbrt: musl's and V8's are both FreeBSD's
 * s_cbrt.c, the same bits.
 *
 * The module imports its memory and has no allocator: filter-kernels.ts lays out every buffer.
 */
#include <math.h>
#include <stdint.h>
#include <wasm_simd128.h>

/* ---- the Gaussian of src/image/stages/gaussian.ts (libvips' integer mask, edges repeated) ---- */

/*
 * A Gaussian over rows as they stream past: channels planes a row, a window of rows filtered
 * horizontally (every column, or every step-th from sigma 8 on), and output rows filtered
 * vertically (interpolated between grid rows when step > 1). Rows are `stride` values apart
 * (columns * channels rounded up to 4): the vector loops run over whole groups of four.
 */
typedef struct {
  int32_t width, height, channels, step, margin, columns, radius, window_rows, pad, stride;
  /* Planes hold integers (opaque colour, L*): the horizontal pass is exact in int32. */
  int32_t integer;
  /* Float planes whose horizontal grid sums are exact in any order (see h_grid_float). */
  int32_t exact_sums;
  int32_t pushed, computed, emitted;
  /* Every column and row of integer planes: output rows from exact integer sums (see emit_every_fast). */
  int32_t fast, scale2, near_tie;
  /* Horizontal sums of integer planes below 2^16: 16-bit arithmetic. */
  int32_t narrow;
  double norm;
  const double* weights;   /* the mask at distance 0 .. radius */
  const double* mask;      /* the whole mask (2 * radius + 1 taps), zeros up to a multiple of 8 */
  const int16_t* mask16;   /* the same as int16 (integer planes) */
  void* window;            /* window_rows rows (int32 or float) */
  void* padded;            /* one plane, its edges repeated pad times: width + 2 * pad (+ 8) values (uint16 or float) */
  float* grid;             /* 4 grid rows */
  float* across;           /* columns (+ 4) */
  double* phases;          /* Catmull-Rom weights by phase, transposed: phases[k * step + phase] */
  float* phases32;         /* the same as floats (emit_grid_bytes) */
  const void** rows;       /* 2 * radius + 1 row pointers */
} Gauss;

void gauss_init(Gauss* g, int width, int height, int channels, int step, int radius, int scale, int max_value, int window_rows,
                int integer, int exact_sums, const double* weights, const double* mask, const int16_t* mask16, void* window,
                void* padded, float* grid, float* across, double* phases, float* phases32, const void** rows) {
  g->width = width;
  g->height = height;
  g->channels = channels;
  g->step = step;
  g->margin = step > 1 ? 1 : 0;
  g->columns = step > 1 ? (width - 1) / step + 1 + 3 : width;
  g->radius = radius;
  g->window_rows = window_rows;
  g->pad = radius + 2 * step;
  g->stride = (g->columns * channels + 3) & ~3;
  g->integer = integer;
  g->exact_sums = exact_sums;
  g->pushed = g->computed = g->emitted = 0;
  g->norm = 1 / ((double)scale * (double)scale);
  /*
   * The TypeScript's vertical sum rounds to float after each of its radius + 1 steps, each within
   * half a float unit of a partial sum no larger than max_value: its result is within `error` of
   * the exact N / scale^2, and rounds as it does wherever that is further than `error` from a half.
   */
  const double scale2 = (double)scale * scale;
  const double error = (radius + 1) * (double)max_value * 0x1p-24 * 1.01 + 1e-9;
  g->fast = integer && step == 1 && scale2 * max_value < 0x1p29;
  g->scale2 = (int32_t)scale2;
  g->near_tie = (int32_t)(scale2 * (1 - 2 * error)) - 1;
  g->narrow = integer && (double)scale * max_value < 0x1p16;
  g->weights = weights;
  g->mask = mask;
  g->mask16 = mask16;
  g->window = window;
  g->padded = padded;
  g->grid = grid;
  g->across = across;
  g->phases = phases;
  g->phases32 = phases32;
  g->rows = rows;
  for (int phase = 0; phase < step; phase++) {
    const double f = (double)phase / step, f2 = f * f, f3 = f2 * f;
    phases[phase] = (-f3 + 2 * f2 - f) / 2;
    phases[step + phase] = (3 * f3 - 5 * f2 + 2) / 2;
    phases[2 * step + phase] = (-3 * f3 + 4 * f2 + f) / 2;
    phases[3 * step + phase] = (f3 - f2) / 2;
  }
  for (int k = 0; k < 4 * step; k++) phases32[k] = (float)phases[k];
}

/* Whether the next output row still needs another input row. */
int gauss_wants_input(const Gauss* g) {
  if (g->pushed >= g->height) return 0;
  const int last_grid = g->step > 1 ? g->emitted / g->step + 2 : g->emitted;
  const int last = last_grid * g->step + g->radius;
  return g->pushed <= (last < g->height - 1 ? last : g->height - 1);
}

/* A value a Uint8ClampedArray stores: clamped to 0..255, rounded half to even. */
static inline uint8_t clamped_byte(double v) {
  return v > 0 ? (v < 255 ? (uint8_t)__builtin_rint(v) : 255) : 0;
}

/* Four floats to int32, rounded half to even and clamped to 0..255 as a Uint8ClampedArray stores them. */
static inline v128_t clamped4(v128_t v) {
  const v128_t i = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(v));
  return wasm_i32x4_min(wasm_i32x4_max(i, wasm_i32x4_splat(0)), wasm_i32x4_splat(255));
}

/* A double rounded to float and back, as a store into a Float32Array and a load from it. */
static inline v128_t round32(v128_t v) {
  return wasm_f64x2_promote_low_f32x4(wasm_f32x4_demote_f64x2_zero(v));
}

/* Doubles of the low and high pair of four floats. */
static inline v128_t lo64(v128_t f) {
  return wasm_f64x2_promote_low_f32x4(f);
}
static inline v128_t hi64(v128_t f) {
  return wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(f, f, 2, 3, 2, 3));
}
/* Two pairs of doubles as four floats. */
static inline v128_t to32(v128_t lo, v128_t hi) {
  const v128_t a = wasm_f32x4_demote_f64x2_zero(lo), b = wasm_f32x4_demote_f64x2_zero(hi);
  return wasm_i32x4_shuffle(a, b, 0, 1, 4, 5);
}

/* g->padded's edges: its first and last values repeated pad times each side (and 8 more after). */
static void pad_edges(const Gauss* g) {
  const int pad = g->pad, w = g->width;
  if (g->integer) {
    uint16_t* p = (uint16_t*)g->padded;
    for (int i = 0; i < pad; i++) p[i] = p[pad];
    for (int i = 0; i < pad + 8; i++) p[pad + w + i] = p[pad + w - 1];
  } else {
    float* p = (float*)g->padded;
    for (int i = 0; i < pad; i++) p[i] = p[pad];
    for (int i = 0; i < pad + 8; i++) p[pad + w + i] = p[pad + w - 1];
  }
}

/* Every column, integer planes: exact int32 sums (below 2^24, so the TypeScript's floats were exact too). */
static void h_every_integer(const Gauss* g, int32_t* into) {
  const uint16_t* p = (const uint16_t*)g->padded + g->pad;
  const int w = g->width, r = g->radius;
  const v128_t w0 = wasm_i16x8_splat((int16_t)g->weights[0]);
  int x = 0;
  if (g->narrow)
    for (; x + 8 <= w; x += 8) {
      v128_t sum = wasm_i16x8_mul(w0, wasm_v128_load(p + x));
      for (int t = 1; t <= r; t++)
        sum = wasm_i16x8_add(sum, wasm_i16x8_mul(wasm_i16x8_splat((int16_t)g->weights[t]), wasm_i16x8_add(wasm_v128_load(p + x - t), wasm_v128_load(p + x + t))));
      wasm_v128_store(into + x, wasm_u32x4_extend_low_u16x8(sum));
      wasm_v128_store(into + x + 4, wasm_u32x4_extend_high_u16x8(sum));
    }
  for (; x + 8 <= w; x += 8) {
    const v128_t c = wasm_v128_load(p + x);
    v128_t lo = wasm_u32x4_extmul_low_u16x8(c, w0), hi = wasm_u32x4_extmul_high_u16x8(c, w0);
    for (int t = 1; t <= r; t++) {
      const v128_t wt = wasm_i16x8_splat((int16_t)g->weights[t]);
      const v128_t s = wasm_i16x8_add(wasm_v128_load(p + x - t), wasm_v128_load(p + x + t));
      lo = wasm_i32x4_add(lo, wasm_u32x4_extmul_low_u16x8(s, wt));
      hi = wasm_i32x4_add(hi, wasm_u32x4_extmul_high_u16x8(s, wt));
    }
    wasm_v128_store(into + x, lo);
    wasm_v128_store(into + x + 4, hi);
  }
  for (; x < w; x++) {
    int32_t sum = (int32_t)g->weights[0] * p[x];
    for (int t = 1; t <= r; t++) sum += (int32_t)g->weights[t] * (p[x - t] + p[x + t]);
    into[x] = sum;
  }
}

/* Every column, float planes: each tap's sum rounded to float, as the TypeScript stored it. */
static void h_every_float(const Gauss* g, float* into) {
  const float* p = (const float*)g->padded + g->pad;
  const int w = g->width, r = g->radius;
  const v128_t w0 = wasm_f64x2_splat(g->weights[0]);
  int x = 0;
  for (; x + 4 <= w; x += 4) {
    const v128_t c = wasm_v128_load(p + x);
    v128_t lo = round32(wasm_f64x2_mul(w0, lo64(c))), hi = round32(wasm_f64x2_mul(w0, hi64(c)));
    for (int t = 1; t <= r; t++) {
      const v128_t wt = wasm_f64x2_splat(g->weights[t]);
      const v128_t a = wasm_v128_load(p + x - t), b = wasm_v128_load(p + x + t);
      lo = round32(wasm_f64x2_add(lo, wasm_f64x2_mul(wt, wasm_f64x2_add(lo64(a), lo64(b)))));
      hi = round32(wasm_f64x2_add(hi, wasm_f64x2_mul(wt, wasm_f64x2_add(hi64(a), hi64(b)))));
    }
    wasm_v128_store(into + x, to32(lo, hi));
  }
  for (; x < w; x++) {
    float sum = (float)(g->weights[0] * p[x]);
    for (int t = 1; t <= r; t++) sum = (float)(sum + g->weights[t] * ((double)p[x - t] + (double)p[x + t]));
    into[x] = sum;
  }
}

/* Grid columns, integer planes: the whole mask in pairs of taps (int16 values and weights). */
static void h_grid_integer(const Gauss* g, int32_t* into) {
  const uint16_t* p = (const uint16_t*)g->padded;
  const int r = g->radius, taps = (2 * r + 1 + 7) & ~7;
  for (int c = 0; c < g->columns; c++) {
    const uint16_t* from = p + (c - g->margin) * g->step + g->pad - r;
    v128_t sum = wasm_i32x4_splat(0);
    for (int k = 0; k < taps; k += 8) sum = wasm_i32x4_add(sum, wasm_i32x4_dot_i16x8(wasm_v128_load(g->mask16 + k), wasm_v128_load(from + k)));
    into[c] = wasm_i32x4_extract_lane(sum, 0) + wasm_i32x4_extract_lane(sum, 1) + wasm_i32x4_extract_lane(sum, 2) +
              wasm_i32x4_extract_lane(sum, 3);
  }
}

/*
 * Grid columns, float planes: a double sum rounded to float once. The planes' values are 0 or at
 * least 1/255 with float precision, so multiples of 2^-31; while the mask's sum times 255 stays
 * below 2^22 every partial sum is a multiple of 2^-31 below 2^22, which a double holds exactly, and
 * the order of the taps does not matter (exact_sums). Otherwise the TypeScript's order.
 */
static void h_grid_float(const Gauss* g, float* into) {
  const float* p = (const float*)g->padded;
  const int r = g->radius, taps = (2 * r + 1 + 7) & ~7;
  for (int c = 0; c < g->columns; c++) {
    const int centre = (c - g->margin) * g->step + g->pad;
    if (g->exact_sums) {
      const float* from = p + centre - r;
      v128_t a = wasm_f64x2_splat(0), b = a;
      for (int k = 0; k < taps; k += 4) {
        const v128_t v = wasm_v128_load(from + k);
        a = wasm_f64x2_add(a, wasm_f64x2_mul(wasm_v128_load(g->mask + k), lo64(v)));
        b = wasm_f64x2_add(b, wasm_f64x2_mul(wasm_v128_load(g->mask + k + 2), hi64(v)));
      }
      const v128_t s = wasm_f64x2_add(a, b);
      into[c] = (float)(wasm_f64x2_extract_lane(s, 0) + wasm_f64x2_extract_lane(s, 1));
    } else {
      double sum = g->weights[0] * p[centre];
      for (int t = 1; t <= r; t++) sum += g->weights[t] * ((double)p[centre - t] + (double)p[centre + t]);
      into[c] = (float)sum;
    }
  }
}

/* g->padded (filled) filtered horizontally into plane ch of the window's next row. */
static void push_channel(const Gauss* g, int ch) {
  pad_edges(g);
  const int offset = (g->pushed % g->window_rows) * g->stride + ch * g->columns;
  if (g->integer) {
    int32_t* into = (int32_t*)g->window + offset;
    if (g->step == 1) h_every_integer(g, into);
    else h_grid_integer(g, into);
  } else {
    float* into = (float*)g->window + offset;
    if (g->step == 1) h_every_float(g, into);
    else h_grid_float(g, into);
  }
}

/* The next input row of integer planes: channels planes of width int32 values (sharpen's L*). */
void gauss_push(Gauss* g, const int32_t* planes) {
  uint16_t* p = (uint16_t*)g->padded + g->pad;
  for (int ch = 0; ch < g->channels; ch++) {
    const int32_t* plane = planes + ch * g->width;
    int x = 0;
    for (; x + 8 <= g->width; x += 8) wasm_v128_store(p + x, wasm_u16x8_narrow_i32x4(wasm_v128_load(plane + x), wasm_v128_load(plane + x + 4)));
    for (; x < g->width; x++) p[x] = (uint16_t)plane[x];
    push_channel(g, ch);
  }
  g->pushed++;
}

/* Four window values (from `at`) as two pairs of doubles. */
static inline void load4(const Gauss* g, const void* row, int at, v128_t* lo, v128_t* hi) {
  if (g->integer) {
    const v128_t v = wasm_v128_load((const int32_t*)row + at);
    *lo = wasm_f64x2_convert_low_i32x4(v);
    *hi = wasm_f64x2_convert_low_i32x4(wasm_i32x4_shuffle(v, v, 2, 3, 2, 3));
  } else {
    const v128_t v = wasm_v128_load((const float*)row + at);
    *lo = lo64(v);
    *hi = hi64(v);
  }
}

/* The window's rows around pixel row `centre` (beyond the picture's edges its first or last), into g->rows. */
static const void* const* rows_around(Gauss* g, int centre) {
  const int r = g->radius, last = g->height - 1;
  for (int k = 0; k <= 2 * r; k++) {
    int y = centre - r + k;
    y = y < 0 ? 0 : y > last ? last : y;
    g->rows[k] = (const int32_t*)g->window + (y % g->window_rows) * g->stride;
  }
  return g->rows + r;
}

/*
 * Values [from, to) of a vertical sum (a group of four) as the TypeScript made them: the window's
 * rows down the mask, weight * norm a tap, rounded to float after every tap (Float32Array +=).
 */
static void vertical_exact(const Gauss* g, const void* const* rows, float* out, int from, int to) {
  const v128_t n0 = wasm_f64x2_splat(g->weights[0] * g->norm);
  for (int i = from; i < to; i += 4) {
    v128_t lo, hi;
    load4(g, rows[0], i, &lo, &hi);
    lo = round32(wasm_f64x2_mul(n0, lo));
    hi = round32(wasm_f64x2_mul(n0, hi));
    for (int t = 1; t <= g->radius; t++) {
      const v128_t wt = wasm_f64x2_splat(g->weights[t] * g->norm);
      v128_t alo, ahi, blo, bhi;
      load4(g, rows[-t], i, &alo, &ahi);
      load4(g, rows[t], i, &blo, &bhi);
      lo = round32(wasm_f64x2_add(lo, wasm_f64x2_mul(wt, wasm_f64x2_add(alo, blo))));
      hi = round32(wasm_f64x2_add(hi, wasm_f64x2_mul(wt, wasm_f64x2_add(ahi, bhi))));
    }
    wasm_v128_store(out + i, to32(lo, hi));
  }
}

/* Grid row j (pixel row j * step) into out (stride floats), exactly as the TypeScript made it. */
static void grid_row(Gauss* g, int j, float* out) {
  vertical_exact(g, rows_around(g, j * g->step), out, 0, g->stride);
}

/*
 * Output row y of integer planes filtered at every column and row, whose values only ever get
 * rounded to integers (blur's bytes, sharpen's Math.round): the exact sum N of weight * value in
 * int32, and N / scale^2 rounded, written as a float. Where that is within the TypeScript's error
 * of a half (near_tie), the group of four is made as the TypeScript made it, which rounds the same.
 */
static void emit_every_fast(Gauss* g, int y, float* out, uint8_t* bytes) {
  const int32_t* const* rows = (const int32_t* const*)rows_around(g, y);
  const v128_t w0 = wasm_i32x4_splat((int32_t)g->weights[0]);
  const v128_t inverse = wasm_f32x4_splat((float)(1.0 / g->scale2));
  const v128_t twice_scale2 = wasm_i32x4_splat(2 * g->scale2), near_tie = wasm_i32x4_splat(g->near_tie);
  for (int i = 0; i < g->stride; i += 4) {
    v128_t n = wasm_i32x4_mul(w0, wasm_v128_load(rows[0] + i));
    for (int t = 1; t <= g->radius; t++)
      n = wasm_i32x4_add(n, wasm_i32x4_mul(wasm_i32x4_splat((int32_t)g->weights[t]), wasm_i32x4_add(wasm_v128_load(rows[-t] + i), wasm_v128_load(rows[t] + i))));
    v128_t q = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(n), inverse)));
    const v128_t off = wasm_i32x4_abs(wasm_i32x4_sub(wasm_i32x4_shl(n, 1), wasm_i32x4_mul(q, twice_scale2)));
    const int far = wasm_i32x4_all_true(wasm_i32x4_le(off, near_tie));
    if (!bytes) {
      if (far) wasm_v128_store(out + i, wasm_f32x4_convert_i32x4(q));
      else vertical_exact(g, (const void* const*)rows, out, i, i + 4);
      continue;
    }
    if (!far) {
      vertical_exact(g, (const void* const*)rows, out, i, i + 4);
      q = clamped4(wasm_v128_load(out + i));
    }
    const v128_t narrow = wasm_i16x8_narrow_i32x4(q, q);
    wasm_v128_store32_lane(bytes + i, wasm_u8x16_narrow_i16x8(narrow, narrow), 0);
  }
}

/*
 * Output row y on the grid (step > 1): the grid rows it lies between computed (each once, in
 * order), and their sum for channel ch with the row's Catmull-Rom weights into g->across, rounded
 * to floats as the TypeScript stored them.
 */
static void across_row(Gauss* g, int y, int ch) {
  const int step = g->step, base = y / step, margin = g->margin;
  while (g->computed <= base + 2 + margin) {
    grid_row(g, g->computed - margin, g->grid + (g->computed % 4) * g->stride);
    g->computed++;
  }
  const int phase = y - base * step;
  const double* ph = g->phases;
  const v128_t t0 = wasm_f64x2_splat(ph[phase]), t1 = wasm_f64x2_splat(ph[step + phase]);
  const v128_t t2 = wasm_f64x2_splat(ph[2 * step + phase]), t3 = wasm_f64x2_splat(ph[3 * step + phase]);
  const int offset = ch * g->columns;
  const float* r0 = g->grid + ((base - 1 + margin) % 4) * g->stride + offset;
  const float* r1 = g->grid + ((base + margin) % 4) * g->stride + offset;
  const float* r2 = g->grid + ((base + 1 + margin) % 4) * g->stride + offset;
  const float* r3 = g->grid + ((base + 2 + margin) % 4) * g->stride + offset;
  for (int c = 0; c < g->columns; c += 2) {
    const v128_t a = wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(r0 + c));
    const v128_t b = wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(r1 + c));
    const v128_t d = wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(r2 + c));
    const v128_t e = wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(r3 + c));
    const v128_t sum = wasm_f64x2_add(wasm_f64x2_add(wasm_f64x2_add(wasm_f64x2_mul(t0, a), wasm_f64x2_mul(t1, b)), wasm_f64x2_mul(t2, d)), wasm_f64x2_mul(t3, e));
    wasm_v128_store64_lane(g->across + c, wasm_f32x4_demote_f64x2_zero(sum), 0);
  }
}

/* Output x (phase p of grid column gx) from the across row, as the TypeScript computed it. */
static inline float interpolated(const Gauss* g, int gx, int p) {
  const double* ph = g->phases;
  const float* a = g->across + gx;
  const int step = g->step;
  return (float)(ph[p] * (double)a[0] + ph[step + p] * (double)a[1] + ph[2 * step + p] * (double)a[2] + ph[3 * step + p] * (double)a[3]);
}

/* The next output row into out: channels planes of width floats (out holds stride floats at least). */
void gauss_emit(Gauss* g, float* out) {
  const int y = g->emitted++;
  const int step = g->step;
  if (step == 1) {
    if (g->fast) emit_every_fast(g, y, out, 0);
    else grid_row(g, y, out);
    return;
  }
  const double* ph = g->phases;
  const float* across = g->across;
  const int width = g->width;
  for (int ch = 0; ch < g->channels; ch++) {
    across_row(g, y, ch);
    float* plane = out + ch * width;
    for (int gx = 0, x0 = 0; x0 < width; gx++, x0 += step) {
      const v128_t a0 = wasm_f64x2_splat(across[gx]), a1 = wasm_f64x2_splat(across[gx + 1]);
      const v128_t a2 = wasm_f64x2_splat(across[gx + 2]), a3 = wasm_f64x2_splat(across[gx + 3]);
      const int n = width - x0 < step ? width - x0 : step;
      int p = 0;
      for (; p + 2 <= n; p += 2) {
        const v128_t v = wasm_f64x2_add(
            wasm_f64x2_add(wasm_f64x2_add(wasm_f64x2_mul(wasm_v128_load(ph + p), a0), wasm_f64x2_mul(wasm_v128_load(ph + step + p), a1)),
                           wasm_f64x2_mul(wasm_v128_load(ph + 2 * step + p), a2)),
            wasm_f64x2_mul(wasm_v128_load(ph + 3 * step + p), a3));
        wasm_v128_store64_lane(plane + x0 + p, wasm_f32x4_demote_f64x2_zero(v), 0);
      }
      if (p < n) plane[x0 + p] = interpolated(g, gx, p);
    }
  }
}

/*
 * Four interpolated values (f32x4) as bytes: rounded half to even and clamped, except that a lane
 * within 1e-3 of a half is made as the TypeScript made it (lane j is phase p + j * p_step of grid
 * column gx + j * gx_step). Floats stay within 2e-4 of the TypeScript's doubles here: values below 320, the
 * weights' magnitudes summing to at most 1.25.
 */
static inline __attribute__((always_inline)) uint32_t interpolated_bytes(const Gauss* g, v128_t v, int gx, int gx_step, int p, int p_step) {
  const v128_t nearest = wasm_f32x4_nearest(v);
  const v128_t narrow = wasm_i16x8_narrow_i32x4(wasm_i32x4_trunc_sat_f32x4(nearest), wasm_i32x4_splat(0));
  uint32_t four = (uint32_t)wasm_i32x4_extract_lane(wasm_u8x16_narrow_i16x8(narrow, narrow), 0);
  const v128_t near_half = wasm_f32x4_gt(wasm_f32x4_abs(wasm_f32x4_sub(v, nearest)), wasm_f32x4_splat(0.5f - 1e-3f));
  if (!wasm_v128_any_true(near_half)) return four;
  int32_t lanes[4];
  wasm_v128_store(lanes, near_half);
  for (int j = 0; j < 4; j++) {
    if (!lanes[j]) continue;
    four = (four & ~(0xFFu << (8 * j))) | (uint32_t)clamped_byte(interpolated(g, gx + j * gx_step, p + j * p_step)) << (8 * j);
  }
  return four;
}

/*
 * Output row y on the grid as byte planes (integer planes, whose values are only ever rounded to
 * bytes): the interpolation in floats. With a step of 4 or more, four phases of a grid column at a
 * time; with 2 or 3, four grid columns at a time, their phases interleaved.
 */
static void emit_grid_bytes(Gauss* g, uint8_t* bytes) {
  const int y = g->emitted++;
  const int step = g->step, width = g->width;
  const float* across = g->across;
  const float* ph = g->phases32;
  for (int ch = 0; ch < g->channels; ch++) {
    across_row(g, y, ch);
    uint8_t* plane = bytes + ch * width;
    if (step >= 4) {
      /* Each group of four may write up to three bytes past its column's block: the next block (or plane) writes them again. */
      for (int gx = 0, x0 = 0; x0 < width; gx++, x0 += step) {
        const v128_t a0 = wasm_f32x4_splat(across[gx]), a1 = wasm_f32x4_splat(across[gx + 1]);
        const v128_t a2 = wasm_f32x4_splat(across[gx + 2]), a3 = wasm_f32x4_splat(across[gx + 3]);
        for (int p = 0; p < step && x0 + p < width; p += 4) {
          const v128_t v = wasm_f32x4_add(
              wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(ph + p), a0), wasm_f32x4_mul(wasm_v128_load(ph + step + p), a1)),
                             wasm_f32x4_mul(wasm_v128_load(ph + 2 * step + p), a2)),
              wasm_f32x4_mul(wasm_v128_load(ph + 3 * step + p), a3));
          const uint32_t four = interpolated_bytes(g, v, gx, 0, p, 1);
          __builtin_memcpy(plane + x0 + p, &four, 4);
        }
      }
      continue;
    }
    const int blocks = (width + step - 1) / step;
    for (int gx = 0; gx < blocks; gx += 4) {
      const v128_t a0 = wasm_v128_load(across + gx), a1 = wasm_v128_load(across + gx + 1);
      const v128_t a2 = wasm_v128_load(across + gx + 2), a3 = wasm_v128_load(across + gx + 3);
      uint32_t four[3] = {0, 0, 0};
      for (int p = 0; p < step; p++) {
        const v128_t v = wasm_f32x4_add(
            wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(ph[p]), a0), wasm_f32x4_mul(wasm_f32x4_splat(ph[step + p]), a1)),
                           wasm_f32x4_mul(wasm_f32x4_splat(ph[2 * step + p]), a2)),
            wasm_f32x4_mul(wasm_f32x4_splat(ph[3 * step + p]), a3));
        four[p] = interpolated_bytes(g, v, gx, 1, p, 0);
      }
      /* The phases of each grid column in turn, from x = gx * step: 8 or 12 bytes, stored as 16 (the next group, or plane, writes the rest again). */
      const v128_t words = wasm_i32x4_make((int32_t)four[0], (int32_t)four[1], (int32_t)four[2], 0);
      const v128_t ordered = step == 2 ? wasm_i8x16_shuffle(words, words, 0, 4, 1, 5, 2, 6, 3, 7, 12, 12, 12, 12, 12, 12, 12, 12)
                                       : wasm_i8x16_shuffle(words, words, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, 12, 12, 12, 12);
      wasm_v128_store(plane + gx * step, ordered);
    }
  }
}

/* ---- blur: sharp's blur(sigma), premultiplied with alpha ---- */

/*
 * The next input row of RGBA pixels, as planes: R (grey), R G B, or, with alpha, R G B
 * premultiplied ((c * a) / 255 as a float) and A.
 */
void blur_push(Gauss* g, const uint8_t* rgba) {
  const int w = g->width;
  for (int ch = 0; ch < g->channels; ch++) {
    if (g->integer) {
      uint16_t* p = (uint16_t*)g->padded + g->pad;
      const v128_t bytes = wasm_i8x16_make(ch, ch + 4, ch + 8, ch + 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
      int x = 0;
      for (; x + 8 <= w; x += 8) {
        const v128_t a = wasm_i8x16_swizzle(wasm_v128_load(rgba + x * 4), bytes);
        const v128_t b = wasm_i8x16_swizzle(wasm_v128_load(rgba + x * 4 + 16), bytes);
        wasm_v128_store(p + x, wasm_u16x8_extend_low_u8x16(wasm_i32x4_shuffle(a, b, 0, 4, 0, 0)));
      }
      for (; x < w; x++) p[x] = rgba[x * 4 + ch];
    } else {
      /*
       * (c * a) / 255 rounded to float: a float division of the exact product rounds the same as
       * the TypeScript's double one stored into a Float32Array (n / 255 is never within a double's
       * precision of a float's half-way point; checked for every n).
       */
      float* p = (float*)g->padded + g->pad;
      const v128_t channel = wasm_i8x16_make(ch, -1, -1, -1, ch + 4, -1, -1, -1, ch + 8, -1, -1, -1, ch + 12, -1, -1, -1);
      const v128_t alpha = wasm_i8x16_make(3, -1, -1, -1, 7, -1, -1, -1, 11, -1, -1, -1, 15, -1, -1, -1);
      int x = 0;
      for (; x + 4 <= w; x += 4) {
        const v128_t px = wasm_v128_load(rgba + x * 4);
        const v128_t a = wasm_i8x16_swizzle(px, alpha);
        const v128_t value = ch < 3 ? wasm_i32x4_mul(wasm_i8x16_swizzle(px, channel), a) : a;
        wasm_v128_store(p + x, ch < 3 ? wasm_f32x4_div(wasm_f32x4_convert_i32x4(value), wasm_f32x4_splat(255)) : wasm_f32x4_convert_i32x4(value));
      }
      for (; x < w; x++) p[x] = ch < 3 ? (float)(rgba[x * 4 + ch] * rgba[x * 4 + 3]) / 255.0f : rgba[x * 4 + 3];
    }
    push_channel(g, ch);
  }
  g->pushed++;
}

/* Two doubles the same way, as the low two int32 lanes. */
static inline v128_t clamped2(v128_t v) {
  const v128_t r = wasm_f64x2_min(wasm_f64x2_max(wasm_f64x2_nearest(v), wasm_f64x2_splat(0)), wasm_f64x2_splat(255));
  return wasm_i32x4_trunc_sat_f64x2_zero(r);
}

/* Byte planes (R, or R G B, width apart) as opaque RGBA. */
static void pack_planes(const uint8_t* bytes, uint32_t* out, int width, int channels) {
  const v128_t opaque = wasm_i32x4_splat((int32_t)0xFF000000);
  int x = 0;
  if (channels == 1) {
    for (; x + 4 <= width; x += 4) {
      const v128_t v = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(bytes + x)));
      wasm_v128_store(out + x, wasm_v128_or(wasm_i32x4_mul(v, wasm_i32x4_splat(0x010101)), opaque));
    }
    for (; x < width; x++) out[x] = bytes[x] * 0x010101u | 0xFF000000u;
    return;
  }
  const uint8_t *r = bytes, *g = bytes + width, *b = bytes + 2 * width;
  for (; x + 16 <= width; x += 16) {
    const v128_t rv = wasm_v128_load(r + x), gv = wasm_v128_load(g + x), bv = wasm_v128_load(b + x);
    const v128_t ba = wasm_v128_or(wasm_u16x8_extend_low_u8x16(bv), wasm_i16x8_splat((int16_t)0xFF00));
    const v128_t bah = wasm_v128_or(wasm_u16x8_extend_high_u8x16(bv), wasm_i16x8_splat((int16_t)0xFF00));
    const v128_t rg = wasm_i8x16_shuffle(rv, gv, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const v128_t rgh = wasm_i8x16_shuffle(rv, gv, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    wasm_v128_store(out + x, wasm_i16x8_shuffle(rg, ba, 0, 8, 1, 9, 2, 10, 3, 11));
    wasm_v128_store(out + x + 4, wasm_i16x8_shuffle(rg, ba, 4, 12, 5, 13, 6, 14, 7, 15));
    wasm_v128_store(out + x + 8, wasm_i16x8_shuffle(rgh, bah, 0, 8, 1, 9, 2, 10, 3, 11));
    wasm_v128_store(out + x + 12, wasm_i16x8_shuffle(rgh, bah, 4, 12, 5, 13, 6, 14, 7, 15));
  }
  for (; x < width; x++) out[x] = r[x] | (uint32_t)g[x] << 8 | (uint32_t)b[x] << 16 | 0xFF000000u;
}

/*
 * The next output row: the Gaussian's planes (into `planes`) back to RGBA; with alpha the colour
 * divided by it again (alpha that rounds to 0 makes 0, 0, 0, 0).
 */
void blur_emit(Gauss* g, float* planes, uint8_t* rgba) {
  const int width = g->width;
  uint32_t* out = (uint32_t*)rgba;
  int x = 0;
  if (g->integer && (g->fast || g->step > 1)) {
    /* The planes as bytes, after the float planes (which the groups near a half use). */
    uint8_t* bytes = (uint8_t*)(planes + g->stride);
    if (g->fast) emit_every_fast(g, g->emitted++, planes, bytes);
    else emit_grid_bytes(g, bytes);
    pack_planes(bytes, out, width, g->channels);
    return;
  }
  gauss_emit(g, planes);
  if (g->channels == 4) {
    for (; x + 2 <= width; x += 2) {
      const v128_t alpha = wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(planes + 3 * width + x));
      const v128_t a = clamped2(alpha);
      const v128_t visible = wasm_f64x2_ne(wasm_f64x2_convert_low_i32x4(a), wasm_f64x2_splat(0));
      const v128_t scale = wasm_v128_and(wasm_f64x2_div(wasm_f64x2_splat(255), alpha), visible);
      const v128_t r = clamped2(wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(planes + x)), scale));
      const v128_t gr = clamped2(wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(planes + width + x)), scale));
      const v128_t b = clamped2(wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(planes + 2 * width + x)), scale));
      const v128_t px = wasm_v128_or(wasm_v128_or(r, wasm_i32x4_shl(gr, 8)), wasm_v128_or(wasm_i32x4_shl(b, 16), wasm_i32x4_shl(a, 24)));
      wasm_v128_store64_lane(out + x, px, 0);
    }
    for (; x < width; x++) {
      const double alpha = planes[3 * width + x];
      const uint8_t a = clamped_byte(alpha);
      const double scale = a == 0 ? 0 : 255 / alpha;
      out[x] = clamped_byte(planes[x] * scale) | (uint32_t)clamped_byte(planes[width + x] * scale) << 8 |
               (uint32_t)clamped_byte(planes[2 * width + x] * scale) << 16 | (uint32_t)a << 24;
    }
    return;
  }
  const v128_t opaque = wasm_i32x4_splat((int32_t)0xFF000000);
  if (g->channels == 1) {
    for (; x + 4 <= width; x += 4)
      wasm_v128_store(out + x, wasm_v128_or(wasm_i32x4_mul(clamped4(wasm_v128_load(planes + x)), wasm_i32x4_splat(0x010101)), opaque));
    for (; x < width; x++) out[x] = clamped_byte(planes[x]) * 0x010101u | 0xFF000000u;
    return;
  }
  for (; x + 4 <= width; x += 4) {
    const v128_t r = clamped4(wasm_v128_load(planes + x));
    const v128_t gr = clamped4(wasm_v128_load(planes + width + x));
    const v128_t b = clamped4(wasm_v128_load(planes + 2 * width + x));
    wasm_v128_store(out + x, wasm_v128_or(wasm_v128_or(r, wasm_i32x4_shl(gr, 8)), wasm_v128_or(wasm_i32x4_shl(b, 16), opaque)));
  }
  for (; x < width; x++)
    out[x] = clamped_byte(planes[x]) | (uint32_t)clamped_byte(planes[width + x]) << 8 | (uint32_t)clamped_byte(planes[2 * width + x]) << 16 | 0xFF000000u;
}

/* ---- grayscale: libvips' sRGB -> B_W ---- */

/*
 * The tables grayscale_row reads (1280 doubles) from libvips' (linear: 256 doubles, vips_v2Y_8;
 * encoded: 257 int32, vips_Y2v_8): each value's linear light times its weight in the luminance
 * for R, G and B (the same products the sum takes), then the encoded value of each level and the
 * step to the next, in pairs.
 */
void grayscale_tables(double* tables, const double* linear, const int32_t* encoded) {
  for (int v = 0; v < 256; v++) {
    tables[v] = 0.2126 * linear[v];
    tables[256 + v] = 0.7152 * linear[v];
    tables[512 + v] = 0.0722 * linear[v];
    tables[768 + 2 * v] = encoded[v];
    tables[768 + 2 * v + 1] = encoded[v + 1] - encoded[v];
  }
}

/*
 * Each pixel made grey in place, alpha kept: the luminance of its linear colour, encoded back with
 * interpolation between the levels and rounded as Math.round does (halves up; the value is never
 * negative). Branch-free: on photos the rounding's direction is a coin toss.
 */
void grayscale_row(uint32_t* pixels, int count, const double* tables) {
  const double *red = tables, *green = tables + 256, *blue = tables + 512, *levels = tables + 768;
  const uint8_t* bytes = (const uint8_t*)pixels;
  for (int i = 0; i < count; i++) {
    const double luminance = red[bytes[4 * i]] + green[bytes[4 * i + 1]] + blue[bytes[4 * i + 2]];
    const double scaled = luminance * 255;
    const double at = scaled > 255 ? 255 : scaled < 0 ? 0 : scaled;
    const int k = (int)at;
    const double v = levels[2 * k] + levels[2 * k + 1] * (at - k);
    const double whole = __builtin_floor(v);
    const uint32_t grey = (uint32_t)whole + (v - whole >= 0.5);
    pixels[i] = grey * 0x010101u | (pixels[i] & 0xFF000000u);
  }
}

/* ---- sharpen: vips_sharpen on L* (LabS), a* and b* kept ---- */

typedef struct {
  int32_t width, ring;
  uint32_t* originals;      /* ring rows of RGBA pixels */
  int32_t* lightnesses;     /* ring rows of L* in LabS units */
  float* blurred;           /* one row (stride floats) */
  const double* linear;     /* 256: linear light of each 8-bit value */
  const uint8_t* encode;    /* 16385: 8-bit sRGB of linear / 16384, rounded */
  const int32_t* change;    /* the change of L for differences lo .. lo + count - 1 (indexes as libvips') */
  int32_t change_lo, change_count;
  int32_t* fixups;          /* pixels left to JavaScript: x, then (emit) the change of L */
} Sharpen;

#define LABS_SCALE (32767.0 / 100)
#define EPSILON (216.0 / 24389)
#define KAPPA (24389.0 / 27)

static inline double lab_f(double t) {
  return t > EPSILON ? cbrt(t) : (KAPPA * t + 16) / 116;
}
static inline double lab_f_inverse(double v) {
  return v > 6.0 / 29 ? v * v * v : (116 * v - 16) / KAPPA;
}

void sharpen_init(Sharpen* s, int width, int ring, uint32_t* originals, int32_t* lightnesses, float* blurred,
                  const double* linear, const uint8_t* encode, const int32_t* change, int change_lo, int change_count,
                  int32_t* fixups) {
  s->width = width;
  s->ring = ring;
  s->originals = originals;
  s->lightnesses = lightnesses;
  s->blurred = blurred;
  s->linear = linear;
  s->encode = encode;
  s->change = change;
  s->change_lo = change_lo;
  s->change_count = change_count;
  s->fixups = fixups;
}

/*
 * L* (LabS, truncated as libvips stores it) of originals row `slot` into lightnesses row `slot`.
 * Pixels with alpha strictly between 0 and 255 (premultiplied through Math.pow) are left to
 * JavaScript: their x go to fixups, and their count is returned.
 */
int sharpen_lightness(Sharpen* s, int slot) {
  const uint32_t* row = s->originals + slot * s->width;
  int32_t* out = s->lightnesses + slot * s->width;
  const double* linear = s->linear;
  int fixups = 0;
  for (int x = 0; x < s->width; x++) {
    const uint32_t px = row[x];
    const uint32_t a = px >> 24;
    if (a != 255 && a != 0) {
      s->fixups[fixups++] = x;
      continue;
    }
    const uint32_t on = a == 255 ? 0xFFFFFFFFu : 0;
    const double y = 0.2126 * linear[px & 255 & on] + 0.7152 * linear[(px >> 8) & 255 & on] + 0.0722 * linear[(px >> 16) & 255 & on];
    out[x] = (int32_t)((116 * lab_f(y) - 16) * LABS_SCALE);
  }
  return fixups;
}

/* libvips' table: the change of L for index L - round(blurred) + 32768 (beyond the table, its ends). */
static inline int32_t change_of(const Sharpen* s, int index) {
  int i = index - s->change_lo;
  i = i < 0 ? 0 : i >= s->change_count ? s->change_count - 1 : i;
  return s->change[i];
}

/* The opaque pixel with its L* moved by change (L* units): f(X), f(Y), f(Z) each move by change / 116. */
static uint32_t with_lightness(const Sharpen* s, uint32_t px, double change) {
  const double* linear = s->linear;
  const double r = linear[px & 255], g = linear[(px >> 8) & 255], b = linear[(px >> 16) & 255];
  const double shift = change / 116;
  const double X = lab_f_inverse(lab_f(0.4124 / 0.95047 * r + 0.3576 / 0.95047 * g + 0.1805 / 0.95047 * b) + shift);
  const double Y = lab_f_inverse(lab_f(0.2126 * r + 0.7152 * g + 0.0722 * b) + shift);
  const double Z = lab_f_inverse(lab_f(0.0193 / 1.088827 * r + 0.1192 / 1.088827 * g + 0.9505 / 1.088827 * b) + shift);
  const double red = 3.240625 * 0.95047 * X + -1.537208 * Y + -0.498629 * 1.088827 * Z;
  const double green = -0.968931 * 0.95047 * X + 1.875756 * Y + 0.041518 * 1.088827 * Z;
  const double blue = 0.05571 * 0.95047 * X + -0.204021 * Y + 1.056996 * 1.088827 * Z;
  const double channels[3] = {red, green, blue};
  uint32_t out = 0xFF000000u;
  for (int c = 0; c < 3; c++) {
    const double v = channels[c];
    const uint32_t byte = v <= 0 ? 0 : v >= 1 ? 255 : s->encode[(int32_t)(v * 16384 + 0.5)];
    out |= byte << (8 * c);
  }
  return out;
}

/*
 * Output row y into out: the Gaussian's next row of L*, and each pixel's L* moved by the change its
 * difference from the blur asks for. A pixel whose L* stays is copied; a fully transparent one that
 * moves becomes 0, 0, 0, 0; one with alpha strictly between 0 and 255 that moves is left to
 * JavaScript (fixups: x and the change of L, pairs), and the count of those is returned.
 */
int sharpen_emit(Sharpen* s, Gauss* g, int y, uint32_t* out) {
  gauss_emit(g, s->blurred);
  const int slot = y % s->ring;
  const uint32_t* original = s->originals + slot * s->width;
  const int32_t* before = s->lightnesses + slot * s->width;
  int fixups = 0;
  for (int x = 0; x < s->width; x++) {
    const int32_t L = before[x];
    const int32_t blurred = (int32_t)__builtin_floor((double)s->blurred[x] + 0.5);
    int32_t after = L + change_of(s, L - blurred + 32768);
    after = after < 0 ? 0 : after > 32767 ? 32767 : after;
    const uint32_t px = original[x];
    const uint32_t a = px >> 24;
    if (after == L) out[x] = px;
    else if (a == 255) out[x] = with_lightness(s, px, (after - L) / LABS_SCALE);
    else if (a == 0) out[x] = 0;
    else {
      s->fixups[2 * fixups] = x;
      s->fixups[2 * fixups + 1] = after - L;
      fixups++;
    }
  }
  return fixups;
}
