/*
 * A WebP encoder on libwebp that takes its picture in pieces: the caller imports rectangles of RGBA
 * pixels (a band of rows, or a column strip for a transposed orientation) wherever they belong in a
 * YUV 4:2:0 picture held whole, then encodes it; the file goes out to JavaScript in chunks through
 * the picture's writer, so no second copy of it grows inside the instance.
 *
 * Each rectangle goes through libwebp's own RGBA import (WebPPictureImportRGBA: its default
 * conversion, no sharp YUV, no dithering) as a small picture of its own, whose planes are copied in
 * place. That conversion works on 2x2 blocks, computing each block from its four pixels alone
 * (alpha-weighted when a block is partly transparent), so a picture filled from rectangles at even
 * positions, even-sized except at the right and bottom edges, holds exactly the planes of one import
 * of the whole image. A rectangle covering the whole picture is imported by libwebp directly.
 *
 * Call order: encoder_create, (fill encoder_rows, encoder_import)..., encoder_encode,
 * encoder_destroy (at any point). A failed call returns a codec_status (< 0), every later call too.
 */
#include <emscripten.h>
#include <stdint.h>
#include <string.h>

#include "alpha.h"
#include "codec.h"
#include "src/utils/utils.h"
#include "yield.h"

/* Hands JavaScript the next `size` bytes of the file; JavaScript copies them before returning. */
EM_JS(int, js_write_output, (const uint8_t *data, size_t size), {
  return Module.webpWriteOutput(data, size);
});

struct encoder {
  WebPPicture picture;
  uint8_t *rows; /* the rectangle to import, RGBA, rows of its own width */
  size_t rows_size;
  int status;
};

static int fail(struct encoder *e, int status) {
  if (e->status == CODEC_OK) e->status = status;
  return e->status;
}

static int status_of_encoding(WebPEncodingError error) {
  if (codec_memory_failed()) return codec_memory_failed();
  switch (error) {
    case VP8_ENC_OK:
      return CODEC_OK;
    case VP8_ENC_ERROR_OUT_OF_MEMORY:
    case VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY:
      return CODEC_OUT_OF_MEMORY;
    case VP8_ENC_ERROR_PARTITION0_OVERFLOW:
    case VP8_ENC_ERROR_PARTITION_OVERFLOW:
    case VP8_ENC_ERROR_FILE_TOO_BIG:
      return CODEC_TOO_BIG;
    default:
      return CODEC_MISUSE;
  }
}

/* A width x height picture, YUV 4:2:0, with an alpha plane if `alpha`; NULL if out of memory. */
struct encoder *encoder_create(int width, int height, int alpha) {
  struct encoder *e = (struct encoder *)WebPSafeCalloc(1, sizeof(*e));
  if (e == NULL) return NULL;
  if (!WebPPictureInit(&e->picture)) {
    WebPSafeFree(e);
    return NULL;
  }
  e->picture.width = width;
  e->picture.height = height;
  e->picture.use_argb = 0;
  e->picture.colorspace = alpha ? WEBP_YUV420A : WEBP_YUV420;
  if (!WebPPictureAlloc(&e->picture)) fail(e, status_of_encoding(e->picture.error_code));
  return e;
}

int encoder_status(struct encoder *e) { return e->status; }

/* Room for `bytes` of RGBA rows to import; NULL if out of memory. */
uint8_t *encoder_rows(struct encoder *e, size_t bytes) {
  if (e->status) return NULL;
  if (bytes > e->rows_size) {
    WebPSafeFree(e->rows);
    e->rows_size = 0;
    e->rows = (uint8_t *)WebPSafeMalloc(1, bytes);
    if (e->rows == NULL) {
      fail(e, codec_memory_failed());
      return NULL;
    }
    e->rows_size = bytes;
  }
  return e->rows;
}

static void copy_plane(const uint8_t *from, int from_stride, uint8_t *to, int to_stride, int width, int height) {
  for (int row = 0; row < height; row++) memcpy(to + (size_t)row * to_stride, from + (size_t)row * from_stride, width);
}

/*
 * Converts the width x height RGBA rectangle in encoder_rows and places it at (x, y). x and y are
 * even; width and height are even unless the rectangle reaches the right or bottom edge.
 */
int encoder_import(struct encoder *e, int x, int y, int width, int height) {
  WebPPicture *const picture = &e->picture;
  if (e->status) return e->status;
  if (x < 0 || y < 0 || width < 1 || height < 1 || x > picture->width - width || y > picture->height - height ||
      (x & 1) || (y & 1) || ((width & 1) && x + width != picture->width) || ((height & 1) && y + height != picture->height) ||
      (size_t)width * height * 4 > e->rows_size) {
    return fail(e, CODEC_MISUSE);
  }
  codec_memory_clear_failure();
  if (width == picture->width && height == picture->height) {
    if (!WebPPictureImportRGBA(picture, e->rows, width * 4)) return fail(e, status_of_encoding(picture->error_code));
    return CODEC_OK;
  }

  WebPPicture piece;
  if (!WebPPictureInit(&piece)) return fail(e, CODEC_MISUSE);
  piece.width = width;
  piece.height = height;
  piece.use_argb = 0;
  if (!WebPPictureImportRGBA(&piece, e->rows, width * 4)) {
    WebPPictureFree(&piece);
    return fail(e, status_of_encoding(piece.error_code));
  }
  const int uv_x = x >> 1, uv_y = y >> 1, uv_width = (width + 1) >> 1, uv_height = (height + 1) >> 1;
  copy_plane(piece.y, piece.y_stride, picture->y + (size_t)y * picture->y_stride + x, picture->y_stride, width, height);
  copy_plane(piece.u, piece.uv_stride, picture->u + (size_t)uv_y * picture->uv_stride + uv_x, picture->uv_stride, uv_width, uv_height);
  copy_plane(piece.v, piece.uv_stride, picture->v + (size_t)uv_y * picture->uv_stride + uv_x, picture->uv_stride, uv_width, uv_height);
  if (picture->a != NULL) {
    uint8_t *const a = picture->a + (size_t)y * picture->a_stride + x;
    if (piece.a != NULL) {
      copy_plane(piece.a, piece.a_stride, a, picture->a_stride, width, height);
    } else {
      for (int row = 0; row < height; row++) memset(a + (size_t)row * picture->a_stride, 0xff, width);
    }
  }
  WebPPictureFree(&piece);
  return CODEC_OK;
}

/* Macroblocks between yield points: about 1 ms of work (src/image/formats/webp/libwebp.ts counts the time). */
#define MACROBLOCKS_PER_YIELD 64

static int macroblocks_done;

/*
 * Called by libwebp for every macroblock each pass of the encoder steps through (a patch the
 * build script applies to VP8IteratorNext): a yield point every MACROBLOCKS_PER_YIELD of them.
 */
void codec_macroblock_done(void) {
  if (++macroblocks_done < MACROBLOCKS_PER_YIELD) return;
  codec_yield_point(macroblocks_done);
  macroblocks_done = 0;
}

static int write_output(const uint8_t *data, size_t size, const WebPPicture *picture) {
  (void)picture;
  return size == 0 || js_write_output(data, size);
}

/* The compact alpha mode's ALPH data, written by write_with_alpha in front of libwebp's VP8 chunk. */
static uint8_t *compact_alpha;
static size_t compact_alpha_size;
static int riff_rewritten;

static void put_le(uint8_t *at, uint32_t value, int bytes) {
  for (int i = 0; i < bytes; i++) at[i] = (uint8_t)(value >> (8 * i));
}

/*
 * libwebp writes an opaque picture as RIFF, then its VP8 chunk. The RIFF header (its first write,
 * 12 bytes) becomes the extended format's: RIFF with the added size, VP8X with the alpha flag, and
 * the ALPH chunk; the VP8 chunk follows as libwebp writes it (the container layout libwebp's own
 * alpha path gives).
 */
static int write_with_alpha(const uint8_t *data, size_t size, const WebPPicture *picture) {
  if (riff_rewritten || size == 0) return write_output(data, size, picture);
  if (size != 12 || memcmp(data, "RIFF", 4) != 0 || memcmp(data + 8, "WEBP", 4) != 0) return 0;
  riff_rewritten = 1;
  const uint32_t riff_size = (uint32_t)data[4] | (uint32_t)data[5] << 8 | (uint32_t)data[6] << 16 | (uint32_t)data[7] << 24;
  const size_t alph_chunk = 8 + compact_alpha_size + (compact_alpha_size & 1);
  uint8_t header[12 + 18 + 8];
  memcpy(header, "RIFF", 4);
  put_le(header + 4, (uint32_t)(riff_size + 18 + alph_chunk), 4);
  memcpy(header + 8, "WEBPVP8X", 8);
  put_le(header + 16, 10, 4);
  header[20] = 0x10; /* alpha */
  put_le(header + 21, 0, 3);
  put_le(header + 24, (uint32_t)(picture->width - 1), 3);
  put_le(header + 27, (uint32_t)(picture->height - 1), 3);
  memcpy(header + 30, "ALPH", 4);
  put_le(header + 34, (uint32_t)compact_alpha_size, 4);
  static const uint8_t pad = 0;
  return js_write_output(header, sizeof header) && js_write_output(compact_alpha, compact_alpha_size) &&
         (!(compact_alpha_size & 1) || js_write_output(&pad, 1));
}

/*
 * The compact alpha mode: the picture's VP8 data from libwebp as an opaque picture (after libwebp's
 * clean-up of fully transparent blocks, which it would make for a picture with alpha), and an ALPH
 * chunk from alpha.c. The picture is left as it was.
 */
static int encode_with_compact_alpha(WebPConfig *config, WebPPicture *picture) {
  if (!config->exact) WebPCleanupTransparentArea(picture);
  if (!alpha_encode_compact(picture->a, picture->a_stride, picture->width, picture->height, &compact_alpha, &compact_alpha_size)) {
    picture->error_code = VP8_ENC_ERROR_OUT_OF_MEMORY;
    return 0;
  }
  uint8_t *const a = picture->a;
  const int a_stride = picture->a_stride;
  picture->a = NULL;
  picture->a_stride = 0;
  picture->colorspace = WEBP_YUV420;
  picture->writer = write_with_alpha;
  riff_rewritten = 0;
  const int ok = WebPEncode(config, picture);
  picture->a = a;
  picture->a_stride = a_stride;
  picture->colorspace = WEBP_YUV420A;
  WebPSafeFree(compact_alpha);
  compact_alpha = NULL;
  return ok;
}

/*
 * Encodes the picture with WebPConfigInit's settings, `quality` (1-100), `method` (0-6),
 * `low_memory` and `alpha_compression` (1: lossless, WebPConfigInit's; 2: compact, alpha.c; 0: the
 * plane as it is), as cwebp, sharp and jSquash do with the same values. An alpha plane that came
 * out fully opaque is left out, as a whole import would have done. The picture stays as it was
 * imported (libwebp's clean-up of fully transparent blocks is idempotent), so after
 * CODEC_OUT_OF_MEMORY it can be encoded again with settings that need less memory.
 */
int encoder_encode(struct encoder *e, int quality, int method, int low_memory, int alpha_compression) {
  WebPPicture *const picture = &e->picture;
  WebPConfig config;
  if (e->status) return e->status;
  if (!WebPConfigInit(&config)) return fail(e, CODEC_MISUSE);
  config.quality = (float)quality;
  config.method = method;
  config.low_memory = low_memory;
  config.alpha_compression = alpha_compression == 1;
  if (!WebPValidateConfig(&config)) return fail(e, CODEC_MISUSE);
  if (picture->a != NULL && !WebPPictureHasTransparency(picture)) {
    picture->a = NULL;
    picture->a_stride = 0;
    picture->colorspace = WEBP_YUV420;
  }
  /* The rectangle buffer is not needed any more: its memory goes back to the encoder. */
  WebPSafeFree(e->rows);
  e->rows = NULL;
  e->rows_size = 0;
  picture->writer = write_output;
  picture->custom_ptr = e;
  macroblocks_done = 0;
  codec_memory_clear_failure();
  const int compact = alpha_compression == 2 && picture->a != NULL;
  if (compact ? encode_with_compact_alpha(&config, picture) : WebPEncode(&config, picture)) return CODEC_OK;
  const int status = status_of_encoding(picture->error_code);
  /* Running out of memory leaves the picture usable: the caller may try again with less demanding settings. */
  return status == CODEC_OUT_OF_MEMORY || status == CODEC_OVER_LIMIT ? status : fail(e, status);
}

CODEC_YIELDING_ENTRY(encoder_encode)

void encoder_destroy(struct encoder *e) {
  if (e == NULL) return;
  WebPPictureFree(&e->picture);
  WebPSafeFree(e->rows);
  WebPSafeFree(e);
}
