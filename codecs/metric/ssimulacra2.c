/*
 * SSIMULACRA 2.1 a row at a time, for src/image/quality/ssimulacra2-kernels.ts: what
 * src/image/quality/ssimulacra2.ts computes (libjxl's tools/ssimulacra2.cc, its recursive
 * Gaussian run down the rows), in single precision with WebAssembly SIMD. Each column of a scale
 * holds five vectors, [X, Y, B, 0] of: the original (its mean once blurred), the distorted picture,
 * the original squared, the distorted squared, and their product; so the passes across a row, down
 * the rows and the SSIM' and edge maps all work on whole vectors, the maps on three channels at once.
 *
 * The module imports its memory and has no allocator: ssim2_init lays everything out from the
 * address it is given (ssim2_bytes says how much), and the caller copies each row of both
 * pictures (RGBA, 8 bits) to ssim2_row(ctx, 0 or 1) before ssim2_push. The sums of the maps come
 * out per scale (ssim2_sums); norms and the weighted score are the caller's.
 */
#include <math.h>
#include <stdint.h>
#include <wasm_simd128.h>

#define RADIUS 5 /* libjxl's N for sigma 1.5: round(3.2795 * 1.5 + 0.2546) */
#define RING (2 * RADIUS + 1)
#define SCALES 6
#define GROUPS 5 /* vectors a column: mu1, mu2, s11, s22, s12 */
#define COLUMN (GROUPS * 4)
#define NORMS 18 /* per channel: SSIM' 1 and 4, ringing 1 and 4, blurring 1 and 4 sums */

typedef struct {
  int width, height;
  int received; /* rows pushed */
  int emitted;  /* rows scored */
  float* pending; /* the previous row of both pictures in linear light (6 planes), for the next scale */
  float* half;    /* the next scale's row (6 planes of ceil(width / 2)) */
  float* xyb;     /* RADIUS + 1 rows of [X1 Y1 B1 0 X2 Y2 B2 0] per column */
  float* row;     /* COLUMN floats per column: the planes of the row pushed */
  float* across;  /* the same blurred across the row */
  float* state;   /* 6 planes (filter k, last or second last) of COLUMN floats per column */
  float* ring;    /* RING rows of COLUMN floats per column: the filters' sums down the rows */
  float* out;     /* COLUMN floats per column: a blurred row */
  double* sums;   /* NORMS */
} Scale;

typedef struct {
  int width, height, scales;
  uint8_t* rows[2]; /* one RGBA row of each picture */
  float* linear;    /* the scale-0 row of both pictures in linear light (6 planes) */
  float lut[256];
  Scale scale[SCALES];
  double sums[SCALES * NORMS];
} Context;

/* The recursive Gaussian's weights (recursive-gaussian.ts computes the same from sigma 1.5). */
static float n2[3], d1[3];

static uintptr_t take(uintptr_t* at, uintptr_t bytes) {
  uintptr_t start = *at;
  *at += (bytes + 15) & ~(uintptr_t)15;
  return start;
}

static int scale_count(int width, int height) {
  int large = 0;
  for (int w = width, h = height; large < SCALES && w >= 8 && h >= 8; w = (w + 1) / 2, h = (h + 1) / 2) large++;
  return large == 0 ? 0 : (large + 1 < SCALES ? large + 1 : SCALES);
}

static uintptr_t layout(Context* ctx, uintptr_t at, int width, int height) {
  int scales = scale_count(width, height);
  uintptr_t start = at;
  take(&at, sizeof(Context));
  uintptr_t rows0 = take(&at, (uintptr_t)width * 4 + 16);
  uintptr_t rows1 = take(&at, (uintptr_t)width * 4 + 16);
  uintptr_t linear = take(&at, (uintptr_t)width * 6 * 4);
  if (ctx) {
    ctx->width = width;
    ctx->height = height;
    ctx->scales = scales;
    ctx->rows[0] = (uint8_t*)rows0;
    ctx->rows[1] = (uint8_t*)rows1;
    ctx->linear = (float*)linear;
  }
  for (int s = 0, w = width, h = height; s < scales; s++, w = (w + 1) / 2, h = (h + 1) / 2) {
    uintptr_t cols = (uintptr_t)w;
    uintptr_t pending = take(&at, cols * 6 * 4);
    uintptr_t half = take(&at, ((cols + 1) / 2) * 6 * 4);
    uintptr_t xyb = take(&at, cols * 8 * 4 * (RADIUS + 1));
    uintptr_t row = take(&at, cols * COLUMN * 4);
    uintptr_t across = take(&at, cols * COLUMN * 4);
    uintptr_t state = take(&at, cols * COLUMN * 4 * 6);
    uintptr_t ring = take(&at, cols * COLUMN * 4 * RING);
    uintptr_t out = take(&at, cols * COLUMN * 4);
    if (ctx) {
      Scale* sc = &ctx->scale[s];
      sc->width = w;
      sc->height = h;
      sc->received = 0;
      sc->emitted = 0;
      sc->pending = (float*)pending;
      sc->half = (float*)half;
      sc->xyb = (float*)xyb;
      sc->row = (float*)row;
      sc->across = (float*)across;
      sc->state = (float*)state;
      sc->ring = (float*)ring;
      sc->out = (float*)out;
      sc->sums = ctx->sums + s * NORMS;
    }
  }
  return at - start;
}

/* Bytes ssim2_init lays out for pictures of this size. */
uint32_t ssim2_bytes(int width, int height) { return (uint32_t)layout(0, 0, width, height); }

static float srgb_to_linear(float v) { return v <= 0.04045f ? v / 12.92f : powf((v + 0.055f) / 1.055f, 2.4f); }

/* Lays out a score of two width x height pictures at `base` (zeroed memory of ssim2_bytes). */
Context* ssim2_init(uintptr_t base, int width, int height, float n2_1, float n2_3, float n2_5, float d1_1, float d1_3, float d1_5) {
  Context* ctx = (Context*)base;
  layout(ctx, base, width, height);
  n2[0] = n2_1;
  n2[1] = n2_3;
  n2[2] = n2_5;
  d1[0] = d1_1;
  d1[1] = d1_3;
  d1[2] = d1_5;
  for (int v = 0; v < 256; v++) ctx->lut[v] = (float)(v <= 10 ? (v / 255.0) / 12.92 : pow((v / 255.0 + 0.055) / 1.055, 2.4));
  for (int i = 0; i < SCALES * NORMS; i++) ctx->sums[i] = 0;
  return ctx;
}

uint8_t* ssim2_row(Context* ctx, int picture) { return ctx->rows[picture]; }
double* ssim2_sums(Context* ctx) { return ctx->sums; }
int ssim2_scales(Context* ctx) { return ctx->scales; }

/* libjxl's opsin absorbance (lib/jxl/opsin_params.h) at 255 nits. */
#define M00 0.3f
#define M02 0.078f
#define M01 (1.0f - M02 - M00)
#define M10 0.23f
#define M12 0.078f
#define M11 (1.0f - M12 - M10)
#define M20 0.24342268924547819f
#define M21 0.20476744424496821f
#define M22 (1.0f - M20 - M21)
#define BIAS 0.0037930732552754493f

/* libjxl's CubeRootAndAdd: an inverse cube root from the exponent, refined by Newton's method. */
static inline v128_t cube_root_and_add(v128_t x, v128_t add) {
  const v128_t xa_3 = wasm_f32x4_mul(wasm_f32x4_splat(1.0f / 3), x);
  const v128_t m1 = x;
  v128_t m2 = wasm_i32x4_sub(wasm_i32x4_splat(0x54800000), wasm_i32x4_mul(wasm_i32x4_shr(m1, 23), wasm_i32x4_splat(0x002AAAAA)));
  m2 = wasm_v128_andnot(m2, wasm_i32x4_eq(m1, wasm_i32x4_splat(0)));
  v128_t r = m2;
  for (int i = 0; i < 3; i++) {
    const v128_t r2 = wasm_f32x4_mul(r, r);
    r = wasm_f32x4_sub(wasm_f32x4_mul(wasm_f32x4_splat(4.0f / 3), r), wasm_f32x4_mul(xa_3, wasm_f32x4_mul(r2, r2)));
  }
  v128_t r2 = wasm_f32x4_mul(r, r);
  r = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(1.0f / 3), wasm_f32x4_sub(r, wasm_f32x4_mul(x, wasm_f32x4_mul(r2, r2)))), r);
  r2 = wasm_f32x4_mul(r, r);
  return wasm_f32x4_add(wasm_f32x4_mul(r2, x), add);
}

/* One pixel in linear light to ssimulacra2's positive XYB, [X, Y, B, 0]. */
static inline v128_t to_xyb(float r, float g, float b) {
  const v128_t mixed = wasm_f32x4_add(
      wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(r), wasm_f32x4_make(M00, M10, M20, 0)),
                     wasm_f32x4_mul(wasm_f32x4_splat(g), wasm_f32x4_make(M01, M11, M21, 0))),
      wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(b), wasm_f32x4_make(M02, M12, M22, 0)), wasm_f32x4_make(BIAS, BIAS, BIAS, 0)));
  const float neg = -cbrtf(BIAS);
  const v128_t m = cube_root_and_add(wasm_f32x4_max(mixed, wasm_f32x4_splat(0)), wasm_f32x4_make(neg, neg, neg, 0));
  const float m0 = wasm_f32x4_extract_lane(m, 0), m1 = wasm_f32x4_extract_lane(m, 1), m2 = wasm_f32x4_extract_lane(m, 2);
  const float y = 0.5f * (m0 + m1);
  return wasm_f32x4_make((0.5f * (m0 - m1)) * 14.0f + 0.42f, y + 0.01f, (m2 - y) + 0.55f, 0);
}

/* FastGaussian1D on each of a row's GROUPS vectors a column, zero outside the row. */
static void blur_across(const float* in, float* out, int width) {
  const v128_t zero = wasm_f32x4_splat(0);
  const v128_t n21 = wasm_f32x4_splat(n2[0]), n23 = wasm_f32x4_splat(n2[1]), n25 = wasm_f32x4_splat(n2[2]);
  const v128_t d11 = wasm_f32x4_splat(d1[0]), d13 = wasm_f32x4_splat(d1[1]), d15 = wasm_f32x4_splat(d1[2]);
  for (int g = 0; g < GROUPS; g++) {
    v128_t p1a = zero, p2a = zero, p1b = zero, p2b = zero, p1c = zero, p2c = zero;
    for (int n = -RADIUS + 1; n < width; n++) {
      const int left = n - RADIUS - 1, right = n + RADIUS - 1;
      const v128_t l = left >= 0 ? wasm_v128_load(in + left * COLUMN + g * 4) : zero;
      const v128_t r = right < width ? wasm_v128_load(in + right * COLUMN + g * 4) : zero;
      const v128_t sum = wasm_f32x4_add(l, r);
      const v128_t a = wasm_f32x4_sub(wasm_f32x4_mul(n21, sum), wasm_f32x4_add(wasm_f32x4_mul(d11, p1a), p2a));
      const v128_t b = wasm_f32x4_sub(wasm_f32x4_mul(n23, sum), wasm_f32x4_add(wasm_f32x4_mul(d13, p1b), p2b));
      const v128_t c = wasm_f32x4_sub(wasm_f32x4_mul(n25, sum), wasm_f32x4_add(wasm_f32x4_mul(d15, p1c), p2c));
      p2a = p1a;
      p1a = a;
      p2b = p1b;
      p1b = b;
      p2c = p1c;
      p1c = c;
      if (n >= 0) wasm_v128_store(out + n * COLUMN + g * 4, wasm_f32x4_add(a, wasm_f32x4_add(b, c)));
    }
  }
}

static inline int slot_of(int m) { return (m + RADIUS - 1) % RING; }

/* Filter step m = y - RADIUS + 1 down the columns (input row y, or zeros past the picture). */
static void blur_down(Scale* sc, const float* in, int y) {
  const int vectors = sc->width * GROUPS;
  const int plane = sc->width * COLUMN;
  float* ring = sc->ring + slot_of(y - RADIUS + 1) * plane;
  float* s = sc->state;
  const v128_t n21 = wasm_f32x4_splat(n2[0]), n23 = wasm_f32x4_splat(n2[1]), n25 = wasm_f32x4_splat(n2[2]);
  const v128_t d11 = wasm_f32x4_splat(d1[0]), d13 = wasm_f32x4_splat(d1[1]), d15 = wasm_f32x4_splat(d1[2]);
  for (int j = 0; j < vectors; j++) {
    const int at = j * 4;
    const v128_t v = in ? wasm_v128_load(in + at) : wasm_f32x4_splat(0);
    const v128_t a1 = wasm_v128_load(s + at), a2 = wasm_v128_load(s + plane + at);
    const v128_t b1 = wasm_v128_load(s + 2 * plane + at), b2 = wasm_v128_load(s + 3 * plane + at);
    const v128_t c1 = wasm_v128_load(s + 4 * plane + at), c2 = wasm_v128_load(s + 5 * plane + at);
    const v128_t a = wasm_f32x4_sub(wasm_f32x4_mul(n21, v), wasm_f32x4_add(wasm_f32x4_mul(d11, a1), a2));
    const v128_t b = wasm_f32x4_sub(wasm_f32x4_mul(n23, v), wasm_f32x4_add(wasm_f32x4_mul(d13, b1), b2));
    const v128_t c = wasm_f32x4_sub(wasm_f32x4_mul(n25, v), wasm_f32x4_add(wasm_f32x4_mul(d15, c1), c2));
    wasm_v128_store(s + plane + at, a1);
    wasm_v128_store(s + at, a);
    wasm_v128_store(s + 3 * plane + at, b1);
    wasm_v128_store(s + 2 * plane + at, b);
    wasm_v128_store(s + 5 * plane + at, c1);
    wasm_v128_store(s + 4 * plane + at, c);
    wasm_v128_store(ring + at, wasm_f32x4_add(a, wasm_f32x4_add(b, c)));
  }
}

static inline v128_t fourth(v128_t v) {
  const v128_t v2 = wasm_f32x4_mul(v, v);
  return wasm_f32x4_mul(v2, v2);
}

/* Adds a row's four lanes (three channels and a zero) to the sums of norm k, in double precision. */
static inline void add_sums(double* sums, int k, v128_t lo, v128_t hi) {
  sums[k] += wasm_f64x2_extract_lane(lo, 0);
  sums[NORMS / 3 + k] += wasm_f64x2_extract_lane(lo, 1);
  sums[2 * NORMS / 3 + k] += wasm_f64x2_extract_lane(hi, 0);
}

/* Blurred row m (once input row y went in): SSIM' and the edge maps of its three channels. */
static void emit(Scale* sc, int y) {
  const int m = y - RADIUS + 1;
  if (m < 0) return;
  const int width = sc->width;
  const int plane = width * COLUMN;
  const float* now = sc->ring + slot_of(m) * plane;
  const int earlier = m - 2 * RADIUS;
  const float* before = earlier < -RADIUS + 1 ? 0 : sc->ring + slot_of(earlier) * plane;
  const float* xyb = sc->xyb + (m % (RADIUS + 1)) * width * 8;
  const v128_t zero = wasm_f32x4_splat(0), one = wasm_f32x4_splat(1), c2 = wasm_f32x4_splat(0.0009f);
  v128_t acc[6][2];
  for (int k = 0; k < 6; k++) acc[k][0] = acc[k][1] = wasm_f64x2_splat(0);
  for (int x = 0; x < width; x++) {
    v128_t blurred[GROUPS];
    for (int g = 0; g < GROUPS; g++) {
      const v128_t v = wasm_v128_load(now + x * COLUMN + g * 4);
      blurred[g] = before ? wasm_f32x4_add(v, wasm_v128_load(before + x * COLUMN + g * 4)) : v;
    }
    const v128_t mu1 = blurred[0], mu2 = blurred[1];
    const v128_t m11 = wasm_f32x4_mul(mu1, mu1), m22 = wasm_f32x4_mul(mu2, mu2), m12 = wasm_f32x4_mul(mu1, mu2);
    const v128_t diff = wasm_f32x4_sub(mu1, mu2);
    const v128_t num_m = wasm_f32x4_sub(one, wasm_f32x4_mul(diff, diff));
    const v128_t num_s = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(2), wasm_f32x4_sub(blurred[4], m12)), c2);
    const v128_t den_s = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_sub(blurred[2], m11), wasm_f32x4_sub(blurred[3], m22)), c2);
    const v128_t d = wasm_f32x4_max(wasm_f32x4_sub(one, wasm_f32x4_div(wasm_f32x4_mul(num_m, num_s), den_s)), zero);
    const v128_t img1 = wasm_v128_load(xyb + x * 8), img2 = wasm_v128_load(xyb + x * 8 + 4);
    const v128_t edge = wasm_f32x4_sub(
        wasm_f32x4_div(wasm_f32x4_add(one, wasm_f32x4_abs(wasm_f32x4_sub(img2, mu2))), wasm_f32x4_add(one, wasm_f32x4_abs(wasm_f32x4_sub(img1, mu1)))), one);
    const v128_t ringing = wasm_f32x4_max(edge, zero);
    const v128_t blurring = wasm_f32x4_max(wasm_f32x4_neg(edge), zero);
    const v128_t values[6] = {d, fourth(d), ringing, fourth(ringing), blurring, fourth(blurring)};
    for (int k = 0; k < 6; k++) {
      acc[k][0] = wasm_f64x2_add(acc[k][0], wasm_f64x2_promote_low_f32x4(values[k]));
      acc[k][1] = wasm_f64x2_add(acc[k][1], wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(values[k], values[k], 2, 3, 2, 3)));
    }
  }
  for (int k = 0; k < 6; k++) add_sums(sc->sums, k, acc[k][0], acc[k][1]);
  sc->emitted++;
}

static void push_scale(Context* ctx, int s, const float* a, const float* b);

/* Rows 2k and 2k + 1 of a scale (the last twice where its height is odd) averaged into the next one's row k. */
static void downsample(Context* ctx, int s, const float* a, const float* b) {
  Scale* sc = &ctx->scale[s];
  const int width = sc->width, y = sc->received - 1;
  const int last = y == sc->height - 1;
  if (y % 2 == 0 && !last) {
    for (int i = 0; i < 3 * width; i++) sc->pending[i] = a[i], sc->pending[3 * width + i] = b[i];
    return;
  }
  const float* top_a = y % 2 == 0 ? a : sc->pending;
  const float* top_b = y % 2 == 0 ? b : sc->pending + 3 * width;
  const int half = (width + 1) / 2;
  for (int c = 0; c < 3; c++) {
    for (int x = 0; x < half; x++) {
      const int x0 = 2 * x, x1 = x0 + 1 < width ? x0 + 1 : width - 1;
      const float* ta = top_a + c * width;
      const float* ba = a + c * width;
      const float* tb = top_b + c * width;
      const float* bb = b + c * width;
      sc->half[c * half + x] = (ta[x0] + ta[x1] + ba[x0] + ba[x1]) * 0.25f;
      sc->half[(3 + c) * half + x] = (tb[x0] + tb[x1] + bb[x0] + bb[x1]) * 0.25f;
    }
  }
  push_scale(ctx, s + 1, sc->half, sc->half + 3 * half);
}

/* A row of both pictures (3 planes each, linear light) into scale s. */
static void push_scale(Context* ctx, int s, const float* a, const float* b) {
  Scale* sc = &ctx->scale[s];
  const int width = sc->width, y = sc->received++;
  float* xyb = sc->xyb + (y % (RADIUS + 1)) * width * 8;
  for (int x = 0; x < width; x++) {
    const v128_t p1 = to_xyb(a[x], a[width + x], a[2 * width + x]);
    const v128_t p2 = to_xyb(b[x], b[width + x], b[2 * width + x]);
    wasm_v128_store(xyb + x * 8, p1);
    wasm_v128_store(xyb + x * 8 + 4, p2);
    float* column = sc->row + x * COLUMN;
    wasm_v128_store(column, p1);
    wasm_v128_store(column + 4, p2);
    wasm_v128_store(column + 8, wasm_f32x4_mul(p1, p1));
    wasm_v128_store(column + 12, wasm_f32x4_mul(p2, p2));
    wasm_v128_store(column + 16, wasm_f32x4_mul(p1, p2));
  }
  blur_across(sc->row, sc->across, width);
  blur_down(sc, sc->across, y);
  emit(sc, y);
  if (s + 1 < ctx->scales) downsample(ctx, s, a, b);
}

/* The rows at ssim2_row(ctx, 0) and (ctx, 1), RGBA, onto a grey 0.5 where not opaque. */
void ssim2_push(Context* ctx) {
  const int width = ctx->width;
  for (int p = 0; p < 2; p++) {
    const uint8_t* rgba = ctx->rows[p];
    float* out = ctx->linear + p * 3 * width;
    for (int x = 0; x < width; x++) {
      const uint8_t* px = rgba + x * 4;
      if (px[3] == 255) {
        for (int c = 0; c < 3; c++) out[c * width + x] = ctx->lut[px[c]];
      } else {
        const float alpha = px[3] / 255.0f, grey = (1 - alpha) * 0.5f;
        for (int c = 0; c < 3; c++) out[c * width + x] = srgb_to_linear(alpha * px[c] / 255.0f + grey);
      }
    }
  }
  if (ctx->scales > 0) push_scale(ctx, 0, ctx->linear, ctx->linear + 3 * width);
}

/* The last rows of every scale, whose filters still needed the zeros below the picture. */
void ssim2_finish(Context* ctx) {
  for (int s = 0; s < ctx->scales; s++) {
    Scale* sc = &ctx->scale[s];
    for (int y = sc->height; y < sc->height + RADIUS - 1; y++) {
      blur_down(sc, 0, y);
      emit(sc, y);
    }
  }
}
