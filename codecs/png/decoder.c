/*
 * A PNG band decoder on Chromium's zlib (codecs/png/build.sh): the image data (the IDAT chunks'
 * payloads, pulled from JavaScript in 64 KiB pieces) is inflated straight into a batch of rows
 * (BATCH_BYTES, or one row where a row is larger), each row is unfiltered in place against the one
 * before it and expanded to RGBA words (R in the low byte) in the band, in one pass. It holds
 * zlib's inflate state with its 32 KiB window, the input piece, the batch and one row (the last of
 * the batch before) per stream, and the band.
 *
 * An Adam7 image's seven reduced images lie one after the other in the zlib stream; each gets its
 * own stream that inflates and drops the passes before it, so every image row takes the next row
 * of the passes that cover it without a frame (the data is inflated about twice).
 *
 * Nothing after the image's last row is inflated (a stream that goes on with gigabytes of zeros
 * costs nothing), so the Adler-32 at the end is not checked, nor computed: the chunk CRCs that
 * header.ts verifies cover the same bytes, and sharp's PNG loader skips it too (libspng's
 * SPNG_CTX_IGNORE_ADLER32 at its default failOn). Computing it would cost 7-8% of the inflate.
 *
 * Call order: decoder_create, decoder_palette (palette images), decoder_set_key (a tRNS key),
 * decoder_read until the region's last row, decoder_destroy (at any point). Negative returns are
 * codec_status values; decoder_message says why.
 */
#include <emscripten.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wasm_simd128.h>

#include "codec.h"
#include "zlib.h"

/*
 * Compressed bytes asked of JavaScript at once, and inflated data asked of zlib at once. inflate()
 * runs its fast loop only while 15 bytes of input and 260 of output room are left, and copies the
 * last 32 KiB it wrote into its window after every call: a call per row (12 KB at 4000 px RGB)
 * spent ~10% of a decode in the slow loop and the window copy. The 12 MP photo decodes in 6% less
 * CPU with 64 KiB pieces and 128 KiB batches than with 32 and 64 KiB (8-9% with 128 and 256 KiB),
 * for 96 KiB more a stream (docs/performance.md, PNG decoding).
 */
#define INPUT_BYTES 65536
#define BATCH_BYTES 131072
/* Room after each row for the unfilters' SIMD loads, which read up to 2 bytes past its last pixel. */
#define ROW_PADDING 16

/*
 * Copies the next compressed bytes of stream `stream` (each Adam7 pass reads the image data from
 * its start) into buffer[0..size) and returns how many; 0 at the end of the image data.
 */
EM_JS(int, js_read_input, (int stream, uint8_t *buffer, int size), {
  return Module.pngReadInput(stream, HEAPU8.subarray(buffer, buffer + size));
});

enum colour_type { GREY = 0, RGB = 2, PALETTE = 3, GREY_ALPHA = 4, RGBA = 6 };

struct pass {
  int x0, y0, dx, dy, width, height;
  /* Offset of the pass's first filter byte in the inflated data. */
  uint64_t offset;
  size_t row_bytes; /* without the filter byte */
  /* The batch: rows inflated together, each with its filter byte at [0], unfiltered as handed out. */
  uint8_t *batch, *next;
  int batch_rows, batch_left;
  /* The row before the batch's first (zeros before the pass's first row). */
  uint8_t *prior;
  int rows_read;
  int started, ended, input_ended;
  z_stream z;
  uint8_t *input;
};

struct decoder {
  int width, height, bit_depth, colour_type, bpp;
  int region_x, region_y, region_width, region_height, band_rows;
  struct pass passes[7];
  int pass_count, stream_ids[7];
  /* RGBA words of palette indexes and of grey samples up to 8 bits. */
  uint32_t table[256];
  int key[3], has_key;
  uint32_t *band;
  int y; /* next image row to decode */
  int status;
  char message[CODEC_MESSAGE_BYTES];
};

static int fail(struct decoder *d, int status, const char *message) {
  if (d->status == 0) {
    d->status = status;
    snprintf(d->message, sizeof d->message, "%s", message);
  }
  return d->status;
}

static int channels_of(int colour_type) {
  switch (colour_type) {
    case GREY: case PALETTE: return 1;
    case GREY_ALPHA: return 2;
    case RGB: return 3;
    default: return 4;
  }
}

static const int ADAM7[7][4] = { {0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2} };

EMSCRIPTEN_KEEPALIVE
struct decoder *decoder_create(int width, int height, int bit_depth, int colour_type, int interlaced,
                               int region_x, int region_y, int region_width, int region_height, int band_rows) {
  struct decoder *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->width = width;
  d->height = height;
  d->bit_depth = bit_depth;
  d->colour_type = colour_type;
  int bits = bit_depth * channels_of(colour_type);
  d->bpp = bits >= 8 ? bits / 8 : 1;
  d->region_x = region_x;
  d->region_y = region_y;
  d->region_width = region_width;
  d->region_height = region_height;
  d->band_rows = band_rows;
  d->y = 0;
  uint64_t offset = 0;
  for (int i = 0; i < (interlaced ? 7 : 1); i++) {
    const int *layout = interlaced ? ADAM7[i] : (const int[4]){0, 0, 1, 1};
    int pass_width = width > layout[0] ? ((int64_t)width - layout[0] + layout[2] - 1) / layout[2] : 0;
    int pass_height = height > layout[1] ? ((int64_t)height - layout[1] + layout[3] - 1) / layout[3] : 0;
    size_t row_bytes = ((uint64_t)pass_width * bits + 7) / 8;
    if (pass_width > 0 && pass_height > 0) {
      struct pass *p = &d->passes[d->pass_count];
      *p = (struct pass){ layout[0], layout[1], layout[2], layout[3], pass_width, pass_height, offset, row_bytes };
      d->stream_ids[d->pass_count++] = i;
      size_t fit = BATCH_BYTES / (1 + row_bytes);
      p->batch_rows = fit < 1 ? 1 : fit < (size_t)pass_height ? (int)fit : pass_height;
      p->batch = malloc((size_t)p->batch_rows * (1 + row_bytes) + ROW_PADDING);
      p->prior = calloc(1, 1 + row_bytes + ROW_PADDING);
      p->input = malloc(INPUT_BYTES);
      if (!p->batch || !p->prior || !p->input) fail(d, CODEC_OUT_OF_MEMORY, "png: no memory for rows");
    }
    if (pass_width > 0) offset += (uint64_t)pass_height * (1 + row_bytes);
  }
  int rows = band_rows < region_height ? band_rows : region_height;
  d->band = malloc((size_t)rows * region_width * 4);
  if (!d->band) fail(d, CODEC_OUT_OF_MEMORY, "png: no memory for the band");
  /* Grey up to 8 bits scaled to 0..255 (x255, x85, x17, x1), as libpng's expand does. */
  if (colour_type == GREY && bit_depth <= 8) {
    int levels = 1 << bit_depth;
    for (int v = 0; v < levels; v++) {
      uint32_t g = v * (255 / (levels - 1));
      d->table[v] = g | g << 8 | g << 16 | 0xffu << 24;
    }
  }
  return d;
}

/* The 256 RGBA words palette indexes stand for (JavaScript fills them from PLTE and tRNS). */
EMSCRIPTEN_KEEPALIVE uint32_t *decoder_palette(struct decoder *d) { return d->table; }

/* A tRNS key: the grey or RGB sample values (at the file's bit depth) that are transparent. */
EMSCRIPTEN_KEEPALIVE void decoder_set_key(struct decoder *d, int k0, int k1, int k2) {
  d->key[0] = k0, d->key[1] = k1, d->key[2] = k2;
  d->has_key = 1;
  if (d->colour_type == GREY && d->bit_depth <= 8 && k0 < (1 << d->bit_depth)) d->table[k0] &= 0x00ffffffu;
}

/* Inflates into out[0..size); 0, or a status. `size` 0 asks nothing. */
static int inflate_into(struct decoder *d, int index, uint8_t *out, size_t size) {
  struct pass *p = &d->passes[index];
  p->z.next_out = out;
  p->z.avail_out = size;
  while (p->z.avail_out > 0) {
    if (p->ended) return fail(d, CODEC_DAMAGED, "png: the image data ends before the last row");
    if (p->z.avail_in == 0 && !p->input_ended) {
      int n = js_read_input(d->stream_ids[index], p->input, INPUT_BYTES);
      if (n == 0) p->input_ended = 1;
      p->z.next_in = p->input;
      p->z.avail_in = n;
    }
    int ret = inflate(&p->z, Z_NO_FLUSH);
    if (ret == Z_STREAM_END) p->ended = 1;
    else if (ret == Z_BUF_ERROR && p->input_ended) p->ended = 1;
    else if (ret == Z_MEM_ERROR) return fail(d, CODEC_OUT_OF_MEMORY, "png: zlib has no memory");
    else if (ret != Z_OK && ret != Z_BUF_ERROR) {
      char message[CODEC_MESSAGE_BYTES];
      snprintf(message, sizeof message, "png: image data: %s", p->z.msg ? p->z.msg : "zlib error");
      return fail(d, CODEC_DAMAGED, message);
    }
  }
  return 0;
}

static int start_stream(struct decoder *d, int index) {
  struct pass *p = &d->passes[index];
  p->started = 1;
  if (inflateInit(&p->z) != Z_OK) return fail(d, CODEC_OUT_OF_MEMORY, "png: zlib has no memory");
  /* The Adler-32 at the end is never read (see above), so it is not computed either (~10% of inflate). */
  inflateValidate(&p->z, 0);
  /* The passes before this one, dropped through the input buffer (its bytes are read by then). */
  uint8_t scratch[4096];
  for (uint64_t left = p->offset; left > 0;) {
    size_t n = left < sizeof scratch ? left : sizeof scratch;
    int status = inflate_into(d, index, scratch, n);
    if (status) return status;
    left -= n;
  }
  return 0;
}

/*
 * Sub, Avg and Paeth for pixels of 2 to 8 bytes, one pixel a step (each pixel depends on the one
 * before it) in SIMD lanes, as libpng's SSE2 and Neon filters do. A pixel is loaded with the bytes
 * after it (4 or 8 bytes: ROW_PADDING covers the last pixel's) and only its own bytes are stored
 * back, so the lanes past it are never used. A store that overlapped the next pixel's load would
 * stall it (the store cannot be forwarded to a load it covers only in part): a 3-byte pixel is
 * stored as 2 bytes and 1. `bpp` is a constant in every caller, so each size is its own loop.
 */
#define UNFILTER_INLINE static inline __attribute__((always_inline))

UNFILTER_INLINE v128_t load_lanes(const uint8_t *at, int bpp) {
  return bpp <= 4 ? wasm_v128_load32_zero(at) : wasm_v128_load64_zero(at);
}

UNFILTER_INLINE void store_lanes(uint8_t *at, v128_t v, int bpp) {
  switch (bpp) {
    case 2: wasm_v128_store16_lane(at, v, 0); return;
    case 3: wasm_v128_store16_lane(at, v, 0); wasm_v128_store8_lane(at + 2, v, 2); return;
    case 4: wasm_v128_store32_lane(at, v, 0); return;
    case 6: wasm_v128_store32_lane(at, v, 0); wasm_v128_store16_lane(at + 4, v, 2); return;
    case 8: wasm_v128_store64_lane(at, v, 0); return;
  }
}

UNFILTER_INLINE void unsub_lanes(uint8_t *row, size_t n, int bpp) {
  v128_t a = wasm_i8x16_splat(0);
  for (size_t i = 0; i < n; i += bpp) {
    a = wasm_i8x16_add(load_lanes(row + i, bpp), a);
    store_lanes(row + i, a, bpp);
  }
}

/* The truncating average (a + b) >> 1 of bytes: the rounding one, less one where a + b is odd. */
UNFILTER_INLINE void unaverage_lanes(uint8_t *row, const uint8_t *prior, size_t n, int bpp) {
  const v128_t one = wasm_i8x16_splat(1);
  v128_t a = wasm_i8x16_splat(0);
  for (size_t i = 0; i < n; i += bpp) {
    v128_t x = load_lanes(row + i, bpp), b = load_lanes(prior + i, bpp);
    v128_t average = wasm_i8x16_sub(wasm_u8x16_avgr(a, b), wasm_v128_and(wasm_v128_xor(a, b), one));
    a = wasm_i8x16_add(x, average);
    store_lanes(row + i, a, bpp);
  }
}

/* Paeth in 16-bit lanes, where a + b - 2c fits; ties go to a, then b, then c (PNG spec, 9.4). */
UNFILTER_INLINE void unpaeth_lanes(uint8_t *row, const uint8_t *prior, size_t n, int bpp) {
  const v128_t low = wasm_i16x8_splat(255);
  v128_t a = wasm_i16x8_splat(0), c = a;
  for (size_t i = 0; i < n; i += bpp) {
    v128_t b = wasm_u16x8_extend_low_u8x16(load_lanes(prior + i, bpp));
    v128_t x = wasm_u16x8_extend_low_u8x16(load_lanes(row + i, bpp));
    v128_t pa = wasm_i16x8_sub(b, c), pb = wasm_i16x8_sub(a, c);
    v128_t pc = wasm_i16x8_abs(wasm_i16x8_add(pa, pb));
    pa = wasm_i16x8_abs(pa), pb = wasm_i16x8_abs(pb);
    v128_t smallest = wasm_i16x8_min(pa, wasm_i16x8_min(pb, pc));
    v128_t predictor = wasm_v128_bitselect(a, wasm_v128_bitselect(b, c, wasm_i16x8_eq(pb, smallest)), wasm_i16x8_eq(pa, smallest));
    a = wasm_v128_and(wasm_i16x8_add(x, predictor), low);
    store_lanes(row + i, wasm_u8x16_narrow_i16x8(a, a), bpp);
    c = b;
  }
}

static void unpaeth_bytes(uint8_t *row, const uint8_t *prior, size_t n) {
  row[0] += prior[0];
  for (size_t i = 1; i < n; i++) {
    int a = row[i - 1], b = prior[i], c = prior[i - 1];
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - c - c);
    row[i] += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
  }
}

/* One function per pixel size, so that the lane loops above are specialised. */
#define FOR_PIXEL_SIZES(bpp, call) \
  switch (bpp) { \
    case 2: call(2); break; \
    case 3: call(3); break; \
    case 4: call(4); break; \
    case 6: call(6); break; \
    case 8: call(8); break; \
  }

static void unsub(uint8_t *row, size_t n, int bpp) {
  if (bpp == 1) {
    for (size_t i = 1; i < n; i++) row[i] += row[i - 1];
    return;
  }
#define UNSUB(size) unsub_lanes(row, n, size)
  FOR_PIXEL_SIZES(bpp, UNSUB)
#undef UNSUB
}

static void unaverage(uint8_t *row, const uint8_t *prior, size_t n, int bpp) {
  if (bpp == 1) {
    row[0] += prior[0] >> 1;
    for (size_t i = 1; i < n; i++) row[i] += (row[i - 1] + prior[i]) >> 1;
    return;
  }
#define UNAVERAGE(size) unaverage_lanes(row, prior, n, size)
  FOR_PIXEL_SIZES(bpp, UNAVERAGE)
#undef UNAVERAGE
}

static void unpaeth(uint8_t *row, const uint8_t *prior, size_t n, int bpp) {
  if (bpp == 1) {
    unpaeth_bytes(row, prior, n);
    return;
  }
#define UNPAETH(size) unpaeth_lanes(row, prior, n, size)
  FOR_PIXEL_SIZES(bpp, UNPAETH)
#undef UNPAETH
}

/* Reverses the filter of row[1..] in place against prior (PNG spec, 9.2). */
static int unfilter(struct decoder *d, uint8_t *row, const uint8_t *prior, size_t n) {
  int bpp = d->bpp;
  uint8_t *x = row + 1;
  const uint8_t *b = prior + 1;
  switch (row[0]) {
    case 0: return 0;
    case 1: unsub(x, n, bpp); return 0;
    case 2: for (size_t i = 0; i < n; i++) x[i] += b[i]; return 0;
    case 3: unaverage(x, b, n, bpp); return 0;
    case 4: unpaeth(x, b, n, bpp); return 0;
  }
  char message[CODEC_MESSAGE_BYTES];
  snprintf(message, sizeof message, "png: filter type %d", row[0]);
  return fail(d, CODEC_DAMAGED, message);
}

/* The pass's next row, unfiltered (filter byte at [0]), or NULL on failure. */
static const uint8_t *next_row(struct decoder *d, int index) {
  struct pass *p = &d->passes[index];
  if (!p->started && start_stream(d, index)) return NULL;
  size_t stride = 1 + p->row_bytes;
  const uint8_t *prior;
  if (p->batch_left > 0) {
    prior = p->next - stride;
  } else {
    if (p->rows_read > 0) memcpy(p->prior, p->next - stride, stride);
    int left = p->height - p->rows_read;
    int rows = left < p->batch_rows ? left : p->batch_rows;
    if (inflate_into(d, index, p->batch, (size_t)rows * stride)) return NULL;
    p->next = p->batch;
    p->batch_left = rows;
    prior = p->prior;
  }
  uint8_t *row = p->next;
  if (unfilter(d, row, prior, p->row_bytes)) return NULL;
  p->next += stride;
  p->batch_left--;
  if (++p->rows_read == p->height) inflateEnd(&p->z), p->started = -1;
  return row;
}

#define WORD(r, g, b, a) ((uint32_t)(r) | (uint32_t)(g) << 8 | (uint32_t)(b) << 16 | (uint32_t)(a) << 24)

/*
 * Pixels first..first+count-1 of an unfiltered row as RGBA words at out[0], out[step], ...
 * Samples reduce to 8 bits as libpng's strip and expand do: 16-bit keeps the high byte, a pixel
 * equal to the tRNS key (compared at the file's bit depth) gets alpha 0, and a palette index past
 * the palette is opaque black (JavaScript fills the table so).
 */
static void expand(const struct decoder *d, const uint8_t *row, int first, int count, uint32_t *out, int step) {
  const uint8_t *s = row + 1;
  const int depth = d->bit_depth;
  int k0 = d->has_key ? d->key[0] : -1, k1 = d->has_key ? d->key[1] : -1, k2 = d->has_key ? d->key[2] : -1;
  switch (d->colour_type * 100 + depth) {
    case PALETTE * 100 + 8: case GREY * 100 + 8:
      for (int i = 0; i < count; i++) out[i * step] = d->table[s[first + i]];
      return;
    case PALETTE * 100 + 1: case PALETTE * 100 + 2: case PALETTE * 100 + 4:
    case GREY * 100 + 1: case GREY * 100 + 2: case GREY * 100 + 4: {
      int mask = (1 << depth) - 1;
      for (int i = 0, bit = first * depth; i < count; i++, bit += depth) out[i * step] = d->table[(s[bit >> 3] >> (8 - depth - (bit & 7))) & mask];
      return;
    }
    case GREY * 100 + 16:
      for (int i = 0; i < count; i++) {
        const uint8_t *at = s + 2 * (first + i);
        out[i * step] = WORD(at[0], at[0], at[0], (at[0] << 8 | at[1]) == k0 ? 0 : 255);
      }
      return;
    case RGB * 100 + 8:
      if (!d->has_key && step == 1) {
        const uint8_t *at = s + 3 * first;
        int i = 0;
        /* Four pixels a step: 12 bytes shuffled into four words, alpha or-ed in. */
        const v128_t alpha = wasm_i32x4_splat((int32_t)0xff000000);
        for (; i + 6 <= count; i += 4, at += 12) {
          v128_t rgb = wasm_v128_load(at);
          v128_t words = wasm_i8x16_shuffle(rgb, rgb, 0, 1, 2, 16, 3, 4, 5, 16, 6, 7, 8, 16, 9, 10, 11, 16);
          wasm_v128_store(out + i, wasm_v128_or(wasm_v128_and(words, wasm_i32x4_splat(0x00ffffff)), alpha));
        }
        for (; i < count; i++, at += 3) out[i] = WORD(at[0], at[1], at[2], 255);
        return;
      }
      for (int i = 0; i < count; i++) {
        const uint8_t *at = s + 3 * (first + i);
        out[i * step] = WORD(at[0], at[1], at[2], at[0] == k0 && at[1] == k1 && at[2] == k2 ? 0 : 255);
      }
      return;
    case RGB * 100 + 16:
      for (int i = 0; i < count; i++) {
        const uint8_t *at = s + 6 * (first + i);
        int transparent = (at[0] << 8 | at[1]) == k0 && (at[2] << 8 | at[3]) == k1 && (at[4] << 8 | at[5]) == k2;
        out[i * step] = WORD(at[0], at[2], at[4], transparent ? 0 : 255);
      }
      return;
    case GREY_ALPHA * 100 + 8:
      for (int i = 0; i < count; i++) {
        const uint8_t *at = s + 2 * (first + i);
        out[i * step] = WORD(at[0], at[0], at[0], at[1]);
      }
      return;
    case GREY_ALPHA * 100 + 16:
      for (int i = 0; i < count; i++) {
        const uint8_t *at = s + 4 * (first + i);
        out[i * step] = WORD(at[0], at[0], at[0], at[2]);
      }
      return;
    case RGBA * 100 + 8:
      if (step == 1) {
        memcpy(out, s + 4 * first, 4 * (size_t)count);
        return;
      }
      for (int i = 0; i < count; i++) {
        const uint8_t *at = s + 4 * (first + i);
        out[i * step] = WORD(at[0], at[1], at[2], at[3]);
      }
      return;
    case RGBA * 100 + 16:
      for (int i = 0; i < count; i++) {
        const uint8_t *at = s + 8 * (first + i);
        out[i * step] = WORD(at[0], at[2], at[4], at[6]);
      }
      return;
  }
}

/* Decodes image row d->y into band row `band_row` (-1: above the region, decoded for the filters only). */
static int decode_row(struct decoder *d, int band_row) {
  int y = d->y++;
  int x = d->region_x, width = d->region_width;
  for (int index = 0; index < d->pass_count; index++) {
    struct pass *p = &d->passes[index];
    if (y < p->y0 || (y - p->y0) % p->dy != 0) continue;
    const uint8_t *row = next_row(d, index);
    if (!row) return d->status;
    if (band_row < 0) continue;
    /* The pass's pixels inside columns [x, x + width). */
    int first = x > p->x0 ? (x - p->x0 + p->dx - 1) / p->dx : 0;
    int last = (x + width - 1 - p->x0) / p->dx;
    if (x + width - 1 < p->x0) continue;
    if (last > p->width - 1) last = p->width - 1;
    if (last < first) continue;
    expand(d, row, first, last - first + 1, d->band + (size_t)band_row * width + p->x0 + first * p->dx - x, p->dx);
  }
  return 0;
}

/* Decodes the next band of the region; returns its rows (0 after the last), or a status. */
EMSCRIPTEN_KEEPALIVE int decoder_read(struct decoder *d) {
  if (d->status) return d->status;
  int end = d->region_y + d->region_height;
  while (d->y < d->region_y) {
    int status = decode_row(d, -1);
    if (status) return status;
  }
  int rows = end - d->y < d->band_rows ? end - d->y : d->band_rows;
  for (int i = 0; i < rows; i++) {
    int status = decode_row(d, i);
    if (status) return status;
  }
  return rows;
}

EMSCRIPTEN_KEEPALIVE uint32_t *decoder_band(struct decoder *d) { return d->band; }
EMSCRIPTEN_KEEPALIVE const char *decoder_message(struct decoder *d) { return d->message; }

EMSCRIPTEN_KEEPALIVE void decoder_destroy(struct decoder *d) {
  if (!d) return;
  for (int i = 0; i < d->pass_count; i++) {
    struct pass *p = &d->passes[i];
    if (p->started == 1) inflateEnd(&p->z);
    free(p->batch);
    free(p->prior);
    free(p->input);
  }
  free(d->band);
  free(d);
}
