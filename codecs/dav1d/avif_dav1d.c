/*
 * Entry points of the project's dav1d build (src/image/codecs/wasm/dav1d.wasm), called from
 * src/image/avif/dav1d.ts. One decoder decodes the AV1 items of one AVIF file one after another
 * (a still image, its alpha item, or the tiles of a grid); each decoded picture stays in wasm
 * memory, where TypeScript reads its planes, until it is released.
 *
 * Nothing here may trap: every failure is a return code (dav1d itself reports errors as negative
 * errno values, and Emscripten's malloc returns NULL when memory cannot grow).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dav1d/dav1d.h>

#include "yield.h"

#define EXPORT __attribute__((used, visibility("default")))

/* Return codes, mirrored in src/image/avif/dav1d.ts. */
enum {
  AVIF_DAV1D_OK = 0,
  AVIF_DAV1D_DAMAGED = 1,     /* not a decodable AV1 frame, or larger than the caller allows */
  AVIF_DAV1D_UNSUPPORTED = 2, /* valid AV1 this build cannot decode */
  AVIF_DAV1D_NO_MEMORY = 3,   /* wasm memory could not grow */
  AVIF_DAV1D_NO_PICTURE = 4,  /* the data held no shown frame */
};

/* Fields of PictureInfo.fields, in this order (read as Int32 by TypeScript). */
enum {
  INFO_WIDTH, INFO_HEIGHT, INFO_BIT_DEPTH, INFO_LAYOUT,
  INFO_Y, INFO_U, INFO_V, INFO_Y_STRIDE, INFO_UV_STRIDE,
  INFO_MATRIX, INFO_FULL_RANGE, INFO_PRIMARIES, INFO_TRANSFER, INFO_CHROMA_POSITION,
  INFO_FIELDS
};

typedef struct Decoder {
  Dav1dContext *context;
  /* The item data being decoded: allocated by avif_dav1d_input, consumed by avif_dav1d_decode. */
  Dav1dData data;
} Decoder;

typedef struct Picture {
  int32_t fields[INFO_FIELDS];
  Dav1dPicture picture;
  int live;
} Picture;

static int from_dav1d_error(int result) {
  if (result == DAV1D_ERR(ENOMEM)) return AVIF_DAV1D_NO_MEMORY;
  if (result == DAV1D_ERR(ENOPROTOOPT)) return AVIF_DAV1D_UNSUPPORTED;
  return AVIF_DAV1D_DAMAGED;
}

/*
 * A decoder on the calling thread (Workers have no threads) that outputs each frame as soon as it
 * is decoded, and refuses any frame of more than max_pixels pixels before allocating for it, so a
 * file cannot make dav1d allocate more than the size its container declared. NULL without memory.
 */
EXPORT Decoder *avif_dav1d_open(uint32_t max_pixels) {
  Decoder *decoder = calloc(1, sizeof(Decoder));
  if (!decoder) return NULL;
  Dav1dSettings settings;
  dav1d_default_settings(&settings);
  settings.n_threads = 1;
  settings.max_frame_delay = 1;
  settings.frame_size_limit = max_pixels;
  /* An image item is one frame; only its highest spatial layer is shown (as libavif does). */
  settings.all_layers = 0;
  settings.logger.callback = NULL;
  if (dav1d_open(&decoder->context, &settings) != 0) {
    free(decoder);
    return NULL;
  }
  return decoder;
}

/*
 * A buffer of `size` bytes for the next item's data, which the caller fills before
 * avif_dav1d_decode. dav1d keeps its own reference until the frame is decoded, so the item's bytes
 * live in wasm memory once and only while they are needed. NULL without memory.
 */
EXPORT uint8_t *avif_dav1d_input(Decoder *decoder, uint32_t size) {
  dav1d_data_unref(&decoder->data);
  if (size == 0) return NULL;
  return dav1d_data_create(&decoder->data, size);
}

EXPORT Picture *avif_dav1d_picture_create(void) {
  return calloc(1, sizeof(Picture));
}

/* Lets dav1d reuse the picture's buffer; the Picture itself can be decoded into again. */
EXPORT void avif_dav1d_picture_release(Picture *picture) {
  if (!picture || !picture->live) return;
  dav1d_picture_unref(&picture->picture);
  picture->live = 0;
}

EXPORT void avif_dav1d_picture_destroy(Picture *picture) {
  avif_dav1d_picture_release(picture);
  free(picture);
}

static void describe(Picture *out) {
  const Dav1dPicture *p = &out->picture;
  int32_t *f = out->fields;
  f[INFO_WIDTH] = p->p.w;
  f[INFO_HEIGHT] = p->p.h;
  f[INFO_BIT_DEPTH] = p->p.bpc;
  f[INFO_LAYOUT] = p->p.layout;
  f[INFO_Y] = (int32_t)(uintptr_t)p->data[0];
  f[INFO_U] = (int32_t)(uintptr_t)p->data[1];
  f[INFO_V] = (int32_t)(uintptr_t)p->data[2];
  f[INFO_Y_STRIDE] = (int32_t)p->stride[0];
  f[INFO_UV_STRIDE] = (int32_t)p->stride[1];
  f[INFO_MATRIX] = p->seq_hdr->mtrx;
  f[INFO_FULL_RANGE] = p->seq_hdr->color_range;
  f[INFO_PRIMARIES] = p->seq_hdr->pri;
  f[INFO_TRANSFER] = p->seq_hdr->trc;
  f[INFO_CHROMA_POSITION] = p->seq_hdr->chr;
}

/*
 * Decodes the data given through avif_dav1d_input into `out` (released first if it held a
 * picture): sends the data until dav1d has consumed it and takes the first shown frame, as libavif
 * does for an image item. On success out->fields describe the planes, which stay valid until the
 * picture is released.
 */
EXPORT int avif_dav1d_decode(Decoder *decoder, Picture *out) {
  avif_dav1d_picture_release(out);
  if (!decoder->data.sz) return AVIF_DAV1D_NO_PICTURE;
  /* Each item is decoded on its own: no frame of an earlier item may serve as a reference. */
  dav1d_flush(decoder->context);
  for (;;) {
    if (decoder->data.sz) {
      int sent = dav1d_send_data(decoder->context, &decoder->data);
      if (sent < 0 && sent != DAV1D_ERR(EAGAIN)) {
        dav1d_data_unref(&decoder->data);
        return from_dav1d_error(sent);
      }
    }
    int got = dav1d_get_picture(decoder->context, &out->picture);
    if (got == 0) break;
    if (got != DAV1D_ERR(EAGAIN)) {
      dav1d_data_unref(&decoder->data);
      return from_dav1d_error(got);
    }
    if (!decoder->data.sz) return AVIF_DAV1D_NO_PICTURE;
  }
  /* A still item is one frame: data after it (another frame) is never decoded. */
  dav1d_data_unref(&decoder->data);
  out->live = 1;
  describe(out);
  return AVIF_DAV1D_OK;
}

EXPORT void avif_dav1d_close(Decoder *decoder) {
  if (!decoder) return;
  dav1d_data_unref(&decoder->data);
  dav1d_close(&decoder->context);
  free(decoder);
}

/* Called by dav1d's frame loop (patched in by codecs/dav1d/build.sh) after each row of superblocks. */
void avif_dav1d_sbrow_done(int pixels) {
  codec_yield_point(pixels);
}

CODEC_YIELDING_ENTRY(avif_dav1d_decode)
