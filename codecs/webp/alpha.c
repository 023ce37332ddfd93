/*
 * A compact ALPH chunk for pictures too large for libwebp's own alpha encoder: libwebp codes the
 * plane with its lossless encoder, which holds 24-28 bytes a pixel of it (ARGB copies, hash chain,
 * backward references), and without it stores the plane as it is (1 byte a pixel in the file).
 *
 * Here the plane is coded as a WebP lossless image-stream (the ALPH chunk's compression method 1;
 * the values in green, no transforms, no colour cache, one group of prefix codes) of the residuals
 * of the chunk's gradient filter (method 3: what is left after predicting each value from its
 * left, upper and upper-left neighbours), in two passes over the plane, holding nothing per pixel:
 * each pass makes the same greedy choice at each pixel between a literal and a copy of the
 * residuals to the left (a run) or above, whichever repeats longer; the first pass counts the
 * symbols, the second writes them with the prefix codes built from the counts. Masks, cut-outs and uniform transparency come out at a small fraction of the plane; a
 * plane that would not (noise) is stored as it is.
 */
#include <stdint.h>
#include <string.h>

#include "alpha.h"
#include "src/utils/utils.h"
#include "yield.h"

#define GREEN_SYMBOLS (256 + 24) /* literals and length prefixes */
#define DISTANCE_SYMBOLS 40
#define MAX_CODE_LENGTH 15
#define MAX_COPY 4096
#define MIN_COPY 3
/* Distance codes of the two neighbours a copy reads (VP8L's plane codes): above, left. */
#define PLANE_CODE_ABOVE 1
#define PLANE_CODE_LEFT 2

struct bit_writer {
  uint8_t *data;
  size_t capacity, size;
  uint64_t pending;
  int pending_bits;
};

static void put_bits(struct bit_writer *w, uint32_t value, int bits) {
  w->pending |= (uint64_t)value << w->pending_bits;
  w->pending_bits += bits;
  while (w->pending_bits >= 8) {
    if (w->size < w->capacity) w->data[w->size] = (uint8_t)w->pending;
    w->size++;
    w->pending >>= 8;
    w->pending_bits -= 8;
  }
}

static void flush_bits(struct bit_writer *w) {
  if (w->pending_bits > 0) put_bits(w, 0, 8 - w->pending_bits);
}

/* VP8L's prefix coding of a length or distance value (>= 1): symbol, extra bits and their value. */
static void prefix_encode(int value, int *symbol, int *extra_bits, int *extra_value) {
  const int d = value - 1;
  if (d < 4) {
    *symbol = d, *extra_bits = 0, *extra_value = 0;
    return;
  }
  const int high = 31 - __builtin_clz((unsigned)d);
  const int second = (d >> (high - 1)) & 1;
  *symbol = 2 * high + second;
  *extra_bits = high - 1;
  *extra_value = d & ((1 << (high - 1)) - 1);
}

/* A prefix code: lengths (0 for unused symbols) and the canonical codes, bit-reversed for writing. */
struct code {
  int symbols;
  uint8_t lengths[GREEN_SYMBOLS];
  uint16_t bits[GREEN_SYMBOLS];
};

/*
 * Huffman code lengths of at most `limit` bits for `counts` (libwebp's way of limiting them: the
 * smallest counts are raised until the tree is shallow enough).
 */
static void build_lengths(const uint32_t *counts, int symbols, int limit, uint8_t *lengths) {
  uint32_t weight[2 * GREEN_SYMBOLS];
  int parent[2 * GREEN_SYMBOLS];
  int alive[2 * GREEN_SYMBOLS];
  memset(lengths, 0, (size_t)symbols);
  int used = 0;
  for (int s = 0; s < symbols; s++) used += counts[s] > 0;
  if (used == 0) return;
  if (used == 1) {
    for (int s = 0; s < symbols; s++) if (counts[s]) lengths[s] = 1;
    return;
  }
  for (uint32_t floor = 1;; floor *= 2) {
    int nodes = 0;
    int leaf_of[GREEN_SYMBOLS];
    for (int s = 0; s < symbols; s++) {
      leaf_of[s] = -1;
      if (!counts[s]) continue;
      leaf_of[s] = nodes;
      weight[nodes] = counts[s] < floor ? floor : counts[s];
      parent[nodes] = -1;
      alive[nodes] = 1;
      nodes++;
    }
    /* Joins the two lightest live nodes until one is left (O(n^2): n is at most 280). */
    for (int left = used; left > 1; left--) {
      int a = -1, b = -1;
      for (int n = 0; n < nodes; n++) {
        if (!alive[n]) continue;
        if (a < 0 || weight[n] < weight[a]) b = a, a = n;
        else if (b < 0 || weight[n] < weight[b]) b = n;
      }
      weight[nodes] = weight[a] + weight[b];
      parent[nodes] = -1;
      alive[nodes] = 1;
      parent[a] = parent[b] = nodes;
      alive[a] = alive[b] = 0;
      nodes++;
    }
    int deepest = 0;
    for (int s = 0; s < symbols; s++) {
      if (leaf_of[s] < 0) continue;
      int depth = 0;
      for (int n = leaf_of[s]; parent[n] >= 0; n = parent[n]) depth++;
      lengths[s] = (uint8_t)depth;
      if (depth > deepest) deepest = depth;
    }
    if (deepest <= limit) return;
  }
}

/* Canonical codes for the lengths (shorter first, then by symbol), reversed: the reader takes the first bit first. */
static void assign_codes(struct code *code) {
  int count_of[MAX_CODE_LENGTH + 1] = {0};
  int next[MAX_CODE_LENGTH + 2] = {0};
  for (int s = 0; s < code->symbols; s++) count_of[code->lengths[s]]++;
  count_of[0] = 0;
  for (int length = 1, value = 0; length <= MAX_CODE_LENGTH; length++) {
    value = (value + count_of[length - 1]) << 1;
    next[length] = value;
  }
  for (int s = 0; s < code->symbols; s++) {
    const int length = code->lengths[s];
    code->bits[s] = 0;
    if (!length) continue;
    const int canonical = next[length]++;
    int reversed = 0;
    for (int i = 0; i < length; i++) reversed |= ((canonical >> i) & 1) << (length - 1 - i);
    code->bits[s] = (uint16_t)reversed;
  }
}

static void make_code(struct code *code, const uint32_t *counts, int symbols, int limit) {
  code->symbols = symbols;
  build_lengths(counts, symbols, limit, code->lengths);
  assign_codes(code);
}

/* A code with one used symbol reads no bits (VP8LBuildHuffmanTable's special case). */
static void put_symbol(struct bit_writer *w, const struct code *code, int symbol) {
  int used = 0;
  for (int s = 0; s < code->symbols && used < 2; s++) used += code->lengths[s] > 0;
  if (used > 1) put_bits(w, code->bits[symbol], code->lengths[symbol]);
}

static const uint8_t CODE_LENGTH_ORDER[19] = {17, 18, 0, 1, 2, 3, 4, 5, 16, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/*
 * Writes a prefix code: a simple code of symbol 0 where nothing uses it, otherwise a normal code
 * whose lengths are written one by one (code-length symbols 0-15) with a code of their own.
 */
static void write_code(struct bit_writer *w, const struct code *code) {
  int used = 0;
  for (int s = 0; s < code->symbols; s++) used += code->lengths[s] > 0;
  if (used == 0) {
    put_bits(w, 1, 1); /* simple */
    put_bits(w, 0, 1); /* one symbol */
    put_bits(w, 0, 1); /* of one bit */
    put_bits(w, 0, 1); /* symbol 0 */
    return;
  }
  uint32_t length_counts[19] = {0};
  for (int s = 0; s < code->symbols; s++) length_counts[code->lengths[s]]++;
  struct code lengths_code;
  make_code(&lengths_code, length_counts, 19, 7);
  int written = 19;
  while (written > 4 && lengths_code.lengths[CODE_LENGTH_ORDER[written - 1]] == 0) written--;
  put_bits(w, 0, 1); /* normal */
  put_bits(w, (uint32_t)(written - 4), 4);
  for (int i = 0; i < written; i++) put_bits(w, lengths_code.lengths[CODE_LENGTH_ORDER[i]], 3);
  put_bits(w, 0, 1); /* every symbol's length follows */
  for (int s = 0; s < code->symbols; s++) put_symbol(w, &lengths_code, code->lengths[s]);
}

/*
 * The gradient filter's residual at (x, y), as libwebp's GradientUnfilter undoes it: the predictor
 * is clip(left + above - upper left), the pixel above in the first column, the pixel to the left in
 * the first row, and 0 at the top-left corner.
 */
static inline uint8_t residual(const uint8_t *plane, int stride, int x, int y) {
  const uint8_t *row = plane + (size_t)y * stride;
  int predictor;
  if (y == 0) predictor = x == 0 ? 0 : row[x - 1];
  else if (x == 0) predictor = row[-stride];
  else {
    predictor = row[x - 1] + row[x - stride] - row[x - 1 - stride];
    predictor = predictor < 0 ? 0 : predictor > 255 ? 255 : predictor;
  }
  return (uint8_t)(row[x] - predictor);
}

/* Counts the symbols (`w` NULL) or writes them with the codes. */
static void code_pixels(const uint8_t *plane, int stride, int width, int height, uint32_t *green_counts,
                        uint32_t *distance_counts, struct bit_writer *w, const struct code *green,
                        const struct code *distance) {
  const size_t pixels = (size_t)width * height;
#define AT(i) residual(plane, stride, (int)((i) % width), (int)((i) / width))
  size_t i = 0;
  int rows_done = 0;
  while (i < pixels) {
    size_t run_left = 0, run_above = 0;
    if (i >= 1) {
      const uint8_t previous = AT(i - 1);
      while (run_left < MAX_COPY && i + run_left < pixels && AT(i + run_left) == previous) run_left++;
    }
    if (i >= (size_t)width) {
      while (run_above < MAX_COPY && i + run_above < pixels && AT(i + run_above) == AT(i + run_above - width)) run_above++;
    }
    const int above = run_above > run_left;
    const size_t run = above ? run_above : run_left;
    if (run >= MIN_COPY) {
      int symbol, extra_bits, extra_value;
      prefix_encode((int)run, &symbol, &extra_bits, &extra_value);
      int distance_symbol, distance_extra_bits, distance_extra;
      prefix_encode(above ? PLANE_CODE_ABOVE : PLANE_CODE_LEFT, &distance_symbol, &distance_extra_bits, &distance_extra);
      if (w) {
        put_symbol(w, green, 256 + symbol);
        put_bits(w, (uint32_t)extra_value, extra_bits);
        put_symbol(w, distance, distance_symbol);
        put_bits(w, (uint32_t)distance_extra, distance_extra_bits);
      } else {
        green_counts[256 + symbol]++;
        distance_counts[distance_symbol]++;
      }
      i += run;
    } else {
      if (w) put_symbol(w, green, AT(i));
      else green_counts[AT(i)]++;
      i++;
    }
    /* A yield point about every 64 rows' worth of pixels. */
    if ((int)(i / width) >= rows_done + 64) {
      rows_done = (int)(i / width);
      codec_yield_point(64 * width);
    }
  }
#undef AT
}

int alpha_encode_compact(const uint8_t *plane, int stride, int width, int height, uint8_t **out, size_t *out_size) {
  uint32_t green_counts[GREEN_SYMBOLS] = {0};
  uint32_t distance_counts[DISTANCE_SYMBOLS] = {0};
  code_pixels(plane, stride, width, height, green_counts, distance_counts, NULL, NULL, NULL);
  static struct code green, distance, unused;
  make_code(&green, green_counts, GREEN_SYMBOLS, MAX_CODE_LENGTH);
  make_code(&distance, distance_counts, DISTANCE_SYMBOLS, MAX_CODE_LENGTH);
  memset(&unused, 0, sizeof unused);
  unused.symbols = 256;

  /* The size in bits: the data from the counts, and room for the header and the codes. */
  uint64_t data_bits = 0;
  for (int s = 0; s < GREEN_SYMBOLS; s++) {
    if (!green_counts[s]) continue;
    int extra = 0;
    if (s >= 256 + 4) extra = ((s - 256) - 2) >> 1;
    data_bits += (uint64_t)green_counts[s] * ((green.lengths[s] > 0 && green_counts[s] != 0 ? green.lengths[s] : 0) + extra);
  }
  for (int s = 0; s < DISTANCE_SYMBOLS; s++) data_bits += (uint64_t)distance_counts[s] * distance.lengths[s];
  const size_t plane_bytes = (size_t)width * height;
  const size_t capacity = 1 + (size_t)(data_bits / 8) + 4096;
  if (capacity > plane_bytes + 1) {
    /* No smaller than the plane as it is: stored so (compression method 0). */
    uint8_t *raw = (uint8_t *)WebPSafeMalloc(1, plane_bytes + 1);
    if (raw == NULL) return 0;
    raw[0] = 0;
    for (int y = 0; y < height; y++) memcpy(raw + 1 + (size_t)y * width, plane + (size_t)y * stride, (size_t)width);
    *out = raw;
    *out_size = plane_bytes + 1;
    return 1;
  }
  struct bit_writer w = {(uint8_t *)WebPSafeMalloc(1, capacity), capacity, 0, 0, 0};
  if (w.data == NULL) return 0;
  put_bits(&w, 1 | 3 << 2, 8); /* ALPH header: WebP lossless, gradient filter, no pre-processing */
  put_bits(&w, 0, 1); /* no transform */
  put_bits(&w, 0, 1); /* no colour cache */
  put_bits(&w, 0, 1); /* one group of prefix codes */
  write_code(&w, &green);
  write_code(&w, &unused); /* red */
  write_code(&w, &unused); /* blue */
  write_code(&w, &unused); /* alpha */
  write_code(&w, &distance);
  code_pixels(plane, stride, width, height, NULL, NULL, &w, &green, &distance);
  flush_bits(&w);
  if (w.size > capacity) {
    WebPSafeFree(w.data);
    return 0;
  }
  *out = w.data;
  *out_size = w.size;
  return 1;
}
