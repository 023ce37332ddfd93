/*
 * A PNG band encoder on libdeflate: RGBA rows from JavaScript are packed to the output's channels,
 * each row's filter is chosen and applied, and the filtered rows gather in a piece of PIECE_BYTES
 * that libdeflate compresses whole; the pieces join into one zlib stream (header, deflate data,
 * Adler-32), which leaves as whole IDAT chunks (length, type, data, CRC-32) through
 * Module.pngWriteOutput. It holds libdeflate's two compressors, a few rows, the band JavaScript writes
 * into, one piece and its compressed form, and one chunk.
 *
 * Call order: encoder_create, then per band encoder_band (the buffer to fill with `rows` RGBA
 * rows) and encoder_write, then encoder_finish, encoder_destroy (at any point). Negative returns
 * are codec_status values; encoder_message says why.
 */
#include <emscripten.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "libdeflate.h"
#include "zlib.h"

/* Largest IDAT chunk data: 12 bytes of framing per 64 KiB is 0.02%; readers take any size. */
#define IDAT_BYTES 65536

/*
 * Filtered bytes compressed at once. Each piece starts without the window of the one before: on
 * the 12 MP photo 256 KiB pieces cost 0.2% against 1 MiB ones, and hold a quarter of the memory.
 */
#define PIECE_BYTES (256 * 1024)



/* codecs/png/build.sh patches libdeflate: while set, a compressed piece is not the stream's end. */
extern int libdeflate_chunk_continues;

/* Hands JavaScript one complete chunk, data[0..size); it copies it into the file. */
EM_JS(void, js_write_output, (const uint8_t *data, int size), {
  Module.pngWriteOutput(HEAPU8.subarray(data, data + size));
});

/*
 * How each row's filter is chosen (PNG spec, 9.2): libpng's heuristic, the filter whose output has
 * the smallest sum of absolute values (bytes read as signed), over all five filters or over None,
 * Sub and Up; or one filter for every row.
 */
enum filter_choice { CHOOSE_ALL = -1, CHOOSE_CHEAP = -2 /* 0..4: that filter */ };

struct encoder {
  int width, channels, choice;
  size_t row_bytes;
  uint8_t *cur, *prior;
  /* One filtered row per filter type, filter byte first. */
  uint8_t *filtered[5];
  uint8_t *band;
  size_t band_bytes;
  struct libdeflate_compressor *compressor;
  /*
   * For pieces that follow one that compressed to at most a quarter of its size (flat areas,
   * text, repeats: a screenshot, not a photo), at `graphic_level`; NULL when that is 0.
   */
  struct libdeflate_compressor *graphic_compressor;
  int level;
  int last_piece_graphic;
  /* Filtered rows waiting to be compressed, and the compressed piece. */
  uint8_t *piece;
  size_t piece_fill;
  uint8_t *packed;
  size_t packed_capacity;
  uint32_t adler;
  /* The IDAT chunk being filled: 8 bytes of length and type, the data, 4 of CRC. */
  uint8_t *chunk;
  size_t chunk_fill;
  int status;
  char message[CODEC_MESSAGE_BYTES];
};

static int fail(struct encoder *e, int status, const char *message) {
  if (e->status == 0) {
    e->status = status;
    snprintf(e->message, sizeof e->message, "%s", message);
  }
  return e->status;
}

static void put_zlib_header(struct encoder *e);

EMSCRIPTEN_KEEPALIVE
struct encoder *encoder_create(int width, int channels, int level, int choice, int graphic_level) {
  struct encoder *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->width = width;
  e->channels = channels;
  e->choice = choice;
  e->row_bytes = (size_t)width * channels;
  e->cur = calloc(1, e->row_bytes);
  e->prior = calloc(1, e->row_bytes);
  e->chunk = malloc(8 + IDAT_BYTES + 4);
  e->level = level;
  e->compressor = libdeflate_alloc_compressor(level);
  if (graphic_level > 0) e->graphic_compressor = libdeflate_alloc_compressor(graphic_level);
  e->piece = malloc(PIECE_BYTES);
  e->packed_capacity = libdeflate_deflate_compress_bound(e->compressor, PIECE_BYTES) + 8;
  e->packed = malloc(e->packed_capacity);
  e->adler = adler32(0, NULL, 0);
  int ok = e->cur && e->prior && e->chunk && e->compressor && (graphic_level <= 0 || e->graphic_compressor) && e->piece && e->packed;
  for (int f = 0; f < 5; f++) ok = ok && (e->filtered[f] = malloc(1 + e->row_bytes));
  if (!ok) fail(e, CODEC_OUT_OF_MEMORY, "png: no memory for the encoder");
  else put_zlib_header(e);
  return e;
}

/* A buffer for `rows` RGBA rows of the image, to be filled before encoder_write; NULL without memory. */
EMSCRIPTEN_KEEPALIVE uint8_t *encoder_band(struct encoder *e, int rows) {
  size_t bytes = (size_t)rows * e->width * 4;
  if (bytes > e->band_bytes) {
    free(e->band);
    e->band = malloc(bytes);
    e->band_bytes = e->band ? bytes : 0;
  }
  return e->band;
}

static void put32(uint8_t *at, uint32_t v) {
  at[0] = v >> 24, at[1] = v >> 16, at[2] = v >> 8, at[3] = v;
}

static void emit_chunk(struct encoder *e) {
  size_t length = e->chunk_fill;
  if (length == 0) return;
  put32(e->chunk, length);
  memcpy(e->chunk + 4, "IDAT", 4);
  put32(e->chunk + 8 + length, crc32(0, e->chunk + 4, 4 + length));
  js_write_output(e->chunk, 12 + length);
  e->chunk_fill = 0;
}

/* Appends zlib stream bytes to the IDAT chunks, handing out each chunk that fills. */
static void put_stream_bytes(struct encoder *e, const uint8_t *bytes, size_t size) {
  while (size > 0) {
    size_t take = IDAT_BYTES - e->chunk_fill;
    if (take > size) take = size;
    memcpy(e->chunk + 8 + e->chunk_fill, bytes, take);
    e->chunk_fill += take;
    bytes += take;
    size -= take;
    if (e->chunk_fill == IDAT_BYTES) emit_chunk(e);
  }
}

/* The zlib header (RFC 1950): deflate with a 32 KiB window, FLEVEL from the level as zlib sets it. */
static void put_zlib_header(struct encoder *e) {
  int flevel = e->level < 2 ? 0 : e->level < 6 ? 1 : e->level == 6 ? 2 : 3;
  uint8_t header[2] = {0x78, (uint8_t)(flevel << 6)};
  header[1] |= 31 - (header[0] * 256 + header[1]) % 31;
  put_stream_bytes(e, header, 2);
}

/* Compresses the filtered bytes gathered so far; `last` ends the deflate stream. */
static int compress_piece(struct encoder *e, int last) {
  e->adler = adler32(e->adler, e->piece, e->piece_fill);
  libdeflate_chunk_continues = !last;
  struct libdeflate_compressor *c = e->last_piece_graphic && e->graphic_compressor ? e->graphic_compressor : e->compressor;
  size_t size = libdeflate_deflate_compress(c, e->piece, e->piece_fill, e->packed, e->packed_capacity);
  e->last_piece_graphic = size <= e->piece_fill / 4;
  libdeflate_chunk_continues = 0;
  if (size == 0) return fail(e, CODEC_MISUSE, "png: deflate output larger than its bound");
  put_stream_bytes(e, e->packed, size);
  e->piece_fill = 0;
  return 0;
}

/* Adds one filtered row to the stream, compressing each piece as it fills. */
static int deflate_bytes(struct encoder *e, const uint8_t *bytes, size_t size) {
  while (size > 0) {
    size_t take = PIECE_BYTES - e->piece_fill;
    if (take > size) take = size;
    memcpy(e->piece + e->piece_fill, bytes, take);
    e->piece_fill += take;
    bytes += take;
    size -= take;
    if (e->piece_fill == PIECE_BYTES && compress_piece(e, 0)) return e->status;
  }
  return 0;
}

static inline int paeth(int a, int b, int c) {
  int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - c - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Writes row `x` filtered with `filter` to out[1..], the filter byte at out[0]. */
static void filter_row(int filter, const uint8_t *restrict x, const uint8_t *restrict b, size_t n, int bpp, uint8_t *restrict out) {
  out[0] = filter;
  uint8_t *o = out + 1;
  size_t first = n < (size_t)bpp ? n : bpp;
  switch (filter) {
    case 0: memcpy(o, x, n); return;
    case 1:
      memcpy(o, x, first);
      for (size_t i = first; i < n; i++) o[i] = x[i] - x[i - bpp];
      return;
    case 2: for (size_t i = 0; i < n; i++) o[i] = x[i] - b[i]; return;
    case 3:
      for (size_t i = 0; i < first; i++) o[i] = x[i] - (b[i] >> 1);
      for (size_t i = first; i < n; i++) o[i] = x[i] - ((x[i - bpp] + b[i]) >> 1);
      return;
    case 4:
      for (size_t i = 0; i < first; i++) o[i] = x[i] - b[i];
      for (size_t i = first; i < n; i++) o[i] = x[i] - paeth(x[i - bpp], b[i], b[i - bpp]);
      return;
  }
}

static uint32_t signed_sum(const uint8_t *bytes, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i < n; i++) sum += abs((int8_t)bytes[i]);
  return sum;
}

/* Filters the current row as the encoder's choice says; returns the filtered row (filter byte first). */
static const uint8_t *filter_current(struct encoder *e) {
  size_t n = e->row_bytes;
  int bpp = e->channels;
  if (e->choice >= 0) {
    filter_row(e->choice, e->cur, e->prior, n, bpp, e->filtered[0]);
    return e->filtered[0];
  }
  int filters = e->choice == CHOOSE_ALL ? 5 : 3;
  int best = 0;
  uint32_t best_sum = UINT32_MAX;
  /* Ties go to the earlier filter, as in libpng. */
  for (int f = 0; f < filters; f++) {
    filter_row(f, e->cur, e->prior, n, bpp, e->filtered[f]);
    uint32_t sum = signed_sum(e->filtered[f] + 1, n);
    if (sum < best_sum) best = f, best_sum = sum;
  }
  return e->filtered[best];
}

/* Packs one RGBA row to the output's channels: grey takes R (R = G = B), alpha stays last. */
static void pack_row(const uint8_t *restrict rgba, int width, int channels, uint8_t *restrict out) {
  switch (channels) {
    case 4: memcpy(out, rgba, (size_t)width * 4); return;
    case 3: for (int x = 0; x < width; x++) out[3 * x] = rgba[4 * x], out[3 * x + 1] = rgba[4 * x + 1], out[3 * x + 2] = rgba[4 * x + 2]; return;
    case 2: for (int x = 0; x < width; x++) out[2 * x] = rgba[4 * x], out[2 * x + 1] = rgba[4 * x + 3]; return;
    case 1: for (int x = 0; x < width; x++) out[x] = rgba[4 * x]; return;
  }
}

/* Encodes the `rows` rows JavaScript wrote into encoder_band's buffer. */
EMSCRIPTEN_KEEPALIVE int encoder_write(struct encoder *e, int rows) {
  if (e->status) return e->status;
  if ((size_t)rows * e->width * 4 > e->band_bytes) return fail(e, CODEC_MISUSE, "png: more rows than the band holds");
  for (int r = 0; r < rows; r++) {
    pack_row(e->band + (size_t)r * e->width * 4, e->width, e->channels, e->cur);
    const uint8_t *filtered = filter_current(e);
    if (deflate_bytes(e, filtered, 1 + e->row_bytes)) return e->status;
    uint8_t *swap = e->prior;
    e->prior = e->cur;
    e->cur = swap;
  }
  return 0;
}

/* Ends the zlib stream and hands out the last IDAT chunk. */
EMSCRIPTEN_KEEPALIVE int encoder_finish(struct encoder *e) {
  if (e->status) return e->status;
  if (compress_piece(e, 1)) return e->status;
  uint8_t trailer[4];
  put32(trailer, e->adler);
  put_stream_bytes(e, trailer, 4);
  emit_chunk(e);
  return 0;
}

EMSCRIPTEN_KEEPALIVE const char *encoder_message(struct encoder *e) { return e->message; }

EMSCRIPTEN_KEEPALIVE void encoder_destroy(struct encoder *e) {
  if (!e) return;
  libdeflate_free_compressor(e->compressor);
  if (e->graphic_compressor) libdeflate_free_compressor(e->graphic_compressor);
  free(e->piece);
  free(e->packed);
  free(e->cur);
  free(e->prior);
  for (int f = 0; f < 5; f++) free(e->filtered[f]);
  free(e->band);
  free(e->chunk);
  free(e);
}
