/*
 * Entry points of the project's dav1d build (src/image/codecs/wasm/dav1d.wasm), called from
 * src/image/avif/dav1d.ts. One decoder decodes the AV1 items of one AVIF file one after another
 * (a still image, its alpha item, or the tiles of a grid); each decoded picture stays in wasm
 * memory, where TypeScript reads its planes, until it is released.
 *
 * A large single frame can instead be decoded into a window of rows (avif_dav1d_decode_windowed):
 * the picture's buffer holds a few rows of superblocks, JavaScript takes the rows that dav1d will
 * not touch again at each row of superblocks, and the rows still needed move to the buffer's top.
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
  AVIF_DAV1D_WHOLE_FRAME = 5, /* a window was asked for, but the frame can only be decoded whole */
};

/* Fields of PictureInfo.fields, in this order (read as Int32 by TypeScript). */
enum {
  INFO_WIDTH, INFO_HEIGHT, INFO_BIT_DEPTH, INFO_LAYOUT,
  INFO_Y, INFO_U, INFO_V, INFO_Y_STRIDE, INFO_UV_STRIDE,
  INFO_MATRIX, INFO_FULL_RANGE, INFO_PRIMARIES, INFO_TRANSFER, INFO_CHROMA_POSITION,
  INFO_FIELDS
};

/* Fields of Window.fields: PictureInfo's, then the window's rows (read as Int32 by TypeScript). */
enum {
  /* INFO_Y, INFO_U and INFO_V are the planes' rows at WINDOW_TOP in the buffer. */
  WINDOW_TOP = INFO_FIELDS, /* the frame's first row (luma) the buffer holds */
  WINDOW_READY,             /* rows above this one (luma) are final: JavaScript may read them */
  WINDOW_FIELDS
};

/*
 * Rows (luma) at the bottom of a decoded row of superblocks that later rows still change: the
 * deblocking filter of the next row's top edge changes 6 rows above it, CDEF and loop restoration
 * work 8 rows behind the decoding (src/recon_tmpl.c, dav1d_filter_sbrow_*).
 */
#define WINDOW_LAG 16
/* Rows (luma) kept above the ready line when rows move up: what the filters read above the next
 * row of superblocks (7 rows) and the chroma row above the one JavaScript converts. */
#define WINDOW_KEEP 32

typedef struct Window {
  int32_t fields[WINDOW_FIELDS];
  int requested; /* the next frame may be decoded into a window */
  int active;    /* the frame being decoded is */
  int refused;   /* a window was asked for and the frame needs the whole picture */
  uint8_t *buffer;
  uint8_t *planes[3];
  ptrdiff_t strides[2];
  int rows;      /* luma rows the buffer holds */
  int ss_ver;
  int has_chroma;
  void *current; /* dav1d's luma pointer as last set, which identifies the windowed frame */
} Window;

typedef struct Dav1dMemPool Dav1dMemPool;
/* dav1d's own picture allocator and pool (src/picture.c, src/mem.c), for every other picture. */
int dav1d_mem_pool_init(Dav1dMemPool **pool);
void dav1d_mem_pool_end(Dav1dMemPool *pool);
int dav1d_default_picture_alloc(Dav1dPicture *p, void *cookie);
void dav1d_default_picture_release(Dav1dPicture *p, void *cookie);

typedef struct Decoder {
  Dav1dContext *context;
  /* The item data being decoded: allocated by avif_dav1d_input, consumed by avif_dav1d_decode. */
  Dav1dData data;
  Dav1dMemPool *pool;
  Window window;
} Decoder;

/* The decoder whose frame is being decoded (Workers have no threads), for the row hook. */
static Decoder *decoding;

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
static int alloc_picture(Dav1dPicture *picture, void *cookie);
static void release_picture(Dav1dPicture *picture, void *cookie);

EXPORT Decoder *avif_dav1d_open(uint32_t max_pixels) {
  Decoder *decoder = calloc(1, sizeof(Decoder));
  if (!decoder) return NULL;
  if (dav1d_mem_pool_init(&decoder->pool) != 0) {
    free(decoder);
    return NULL;
  }
  Dav1dSettings settings;
  dav1d_default_settings(&settings);
  settings.n_threads = 1;
  settings.max_frame_delay = 1;
  settings.frame_size_limit = max_pixels;
  /* An image item is one frame; only its highest spatial layer is shown (as libavif does). */
  settings.all_layers = 0;
  settings.logger.callback = NULL;
  settings.allocator.cookie = decoder;
  settings.allocator.alloc_picture_callback = alloc_picture;
  settings.allocator.release_picture_callback = release_picture;
  if (dav1d_open(&decoder->context, &settings) != 0) {
    dav1d_mem_pool_end(decoder->pool);
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

/* A picture's PictureInfo fields (a Picture's, or the first of a Window's). */
static void describe(int32_t *f, const Dav1dPicture *p) {
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
static int decode(Decoder *decoder, Picture *out);

EXPORT int avif_dav1d_decode(Decoder *decoder, Picture *out) {
  decoder->window.requested = 0;
  return decode(decoder, out);
}

/*
 * avif_dav1d_decode into a window of rows, whose fields the returned pointer's Window gives
 * (NULL before the first call): at each row of superblocks the hook sets WINDOW_READY and reaches
 * a yield point, where JavaScript takes the rows up to it before they can move. A frame that
 * needs the whole picture (intra block copy, film grain, superres, or not a shown intra frame)
 * gives AVIF_DAV1D_WHOLE_FRAME before anything is decoded.
 */
EXPORT int avif_dav1d_decode_windowed(Decoder *decoder, Picture *out) {
  decoder->window.requested = 1;
  decoder->window.refused = 0;
  int status = decode(decoder, out);
  decoder->window.requested = 0;
  if (status != AVIF_DAV1D_OK && decoder->window.refused) return AVIF_DAV1D_WHOLE_FRAME;
  return status;
}

EXPORT int32_t *avif_dav1d_window(Decoder *decoder) {
  return decoder->window.fields;
}

static int decode(Decoder *decoder, Picture *out) {
  avif_dav1d_picture_release(out);
  if (!decoder->data.sz) return AVIF_DAV1D_NO_PICTURE;
  decoding = decoder;
  /* Each item is decoded on its own: no frame of an earlier item may serve as a reference. */
  dav1d_flush(decoder->context);
  for (;;) {
    if (decoder->data.sz) {
      int sent = dav1d_send_data(decoder->context, &decoder->data);
      if (sent < 0 && sent != DAV1D_ERR(EAGAIN)) {
        dav1d_data_unref(&decoder->data);
        decoding = NULL;
        return from_dav1d_error(sent);
      }
    }
    int got = dav1d_get_picture(decoder->context, &out->picture);
    if (got == 0) break;
    if (got != DAV1D_ERR(EAGAIN)) {
      dav1d_data_unref(&decoder->data);
      decoding = NULL;
      return from_dav1d_error(got);
    }
    if (!decoder->data.sz) {
      decoding = NULL;
      return AVIF_DAV1D_NO_PICTURE;
    }
  }
  decoding = NULL;
  /* A still item is one frame: data after it (another frame) is never decoded. */
  dav1d_data_unref(&decoder->data);
  out->live = 1;
  describe(out->fields, &out->picture);
  return AVIF_DAV1D_OK;
}

EXPORT void avif_dav1d_close(Decoder *decoder) {
  if (!decoder) return;
  dav1d_data_unref(&decoder->data);
  dav1d_close(&decoder->context);
  dav1d_mem_pool_end(decoder->pool);
  free(decoder);
}

static int windowable(const Dav1dPicture *picture) {
  const Dav1dFrameHeader *frame = picture->frame_hdr;
  const int intra = frame->frame_type == DAV1D_FRAME_TYPE_KEY || frame->frame_type == DAV1D_FRAME_TYPE_INTRA;
  /* Intra block copy reads any decoded row above; film grain and superres write a second picture. */
  return intra && frame->show_frame && !frame->allow_intrabc && !frame->film_grain.present && frame->width[0] == frame->width[1];
}

/*
 * The window's buffer: rows for one row of superblocks being decoded, the rows above it that the
 * filters still change or read, and room to move rows up only every other row of superblocks.
 * Strides as dav1d's own allocator gives them.
 */
static int alloc_window(Window *window, Dav1dPicture *picture) {
  const int high_bit_depth = picture->p.bpc > 8;
  const int has_chroma = picture->p.layout != DAV1D_PIXEL_LAYOUT_I400;
  const int ss_ver = picture->p.layout == DAV1D_PIXEL_LAYOUT_I420;
  const int ss_hor = picture->p.layout != DAV1D_PIXEL_LAYOUT_I444;
  const int aligned_width = (picture->p.w + 127) & ~127;
  const int aligned_height = (picture->p.h + 127) & ~127;
  const int superblock = picture->seq_hdr->sb128 ? 128 : 64;
  int rows = 2 * superblock + 64;
  if (rows > aligned_height) rows = aligned_height;
  ptrdiff_t y_stride = (ptrdiff_t)aligned_width << high_bit_depth;
  ptrdiff_t uv_stride = has_chroma ? y_stride >> ss_hor : 0;
  if (!(y_stride & 1023)) y_stride += DAV1D_PICTURE_ALIGNMENT;
  if (has_chroma && !(uv_stride & 1023)) uv_stride += DAV1D_PICTURE_ALIGNMENT;
  const size_t y_size = (size_t)y_stride * rows;
  const size_t uv_size = (size_t)uv_stride * (rows >> ss_ver);
  uint8_t *buffer = aligned_alloc(DAV1D_PICTURE_ALIGNMENT, y_size + 2 * uv_size + DAV1D_PICTURE_ALIGNMENT);
  if (!buffer) return DAV1D_ERR(ENOMEM);

  window->buffer = buffer;
  window->planes[0] = buffer;
  window->planes[1] = has_chroma ? buffer + y_size : NULL;
  window->planes[2] = has_chroma ? buffer + y_size + uv_size : NULL;
  window->strides[0] = y_stride;
  window->strides[1] = uv_stride;
  window->rows = rows;
  window->ss_ver = ss_ver;
  window->has_chroma = has_chroma;
  window->active = 1;
  window->current = buffer;

  picture->data[0] = window->planes[0];
  picture->data[1] = window->planes[1];
  picture->data[2] = window->planes[2];
  picture->stride[0] = y_stride;
  picture->stride[1] = uv_stride;
  describe(window->fields, picture);
  window->fields[WINDOW_TOP] = 0;
  window->fields[WINDOW_READY] = 0;
  picture->allocator_data = window;
  return 0;
}

static int alloc_picture(Dav1dPicture *picture, void *cookie) {
  Decoder *decoder = cookie;
  Window *window = &decoder->window;
  if (!window->requested || window->active) return dav1d_default_picture_alloc(picture, decoder->pool);
  window->requested = 0; /* one frame: the first this data shows */
  if (!windowable(picture)) {
    window->refused = 1;
    return DAV1D_ERR(ENOMEM);
  }
  return alloc_window(window, picture);
}

static void release_picture(Dav1dPicture *picture, void *cookie) {
  Decoder *decoder = cookie;
  if (picture->allocator_data == &decoder->window) {
    free(decoder->window.buffer);
    decoder->window.buffer = NULL;
    decoder->window.active = 0;
    return;
  }
  dav1d_default_picture_release(picture, decoder->pool);
}

/* Plane pointers such that row y of the frame is at row y - top of the buffer. Pointer arithmetic
 * in unsigned integers: the pointer for row 0 may lie before the buffer (wasm32 wraps it back). */
static void *rebased(const Window *window, int plane, int top) {
  const int rows = plane ? top >> window->ss_ver : top;
  return (void *)((uintptr_t)window->planes[plane] - (uintptr_t)(rows * window->strides[plane ? 1 : 0]));
}

/*
 * Called by dav1d's frame loop (patched in by codecs/dav1d/build.sh) after each row of superblocks
 * `row` of `rows` (each `superblock` luma rows), with dav1d's pointers to the frame's planes (the
 * picture's, the loop filters', and their superres twins, the same without superres).
 */
void avif_dav1d_sbrow_done(int pixels, int row, int rows, int superblock, void **picture, void **sr_picture, void **filtered, void **sr_filtered) {
  Window *window = decoding ? &decoding->window : NULL;
  if (!window || !window->active || picture[0] != window->current) {
    codec_yield_point(pixels);
    return;
  }
  int32_t *f = window->fields;
  const int height = f[INFO_HEIGHT];
  const int last = row + 1 == rows;
  int ready = last ? height : (row + 1) * superblock - WINDOW_LAG;
  if (ready > height) ready = height;
  f[WINDOW_READY] = ready;
  /* JavaScript takes the rows up to `ready` here; they move or are overwritten after it returns. */
  codec_yield_point(pixels);

  int top = f[WINDOW_TOP];
  const int decoded = (row + 1) * superblock;
  if (!last && decoded + superblock > top + window->rows) {
    const int new_top = (ready - WINDOW_KEEP) & ~7;
    for (int plane = 0; plane < (window->has_chroma ? 3 : 1); plane++) {
      const int shift = plane ? window->ss_ver : 0;
      const ptrdiff_t stride = window->strides[plane ? 1 : 0];
      const int from = (new_top - top) >> shift;
      const int count = (decoded >> shift) - (new_top >> shift);
      memmove(window->planes[plane], window->planes[plane] + from * stride, (size_t)count * stride);
    }
    top = new_top;
    f[WINDOW_TOP] = top;
  }
  /* After the last row dav1d's pointers go back to the buffer's own (a reference picture's). */
  const int base = last ? 0 : top;
  for (int plane = 0; plane < 3; plane++) {
    const int source = window->has_chroma ? plane : 0;
    void *pointer = rebased(window, source, base);
    filtered[plane] = pointer;
    sr_filtered[plane] = pointer;
    if (plane == 0 || window->has_chroma) {
      picture[plane] = pointer;
      sr_picture[plane] = pointer;
    }
  }
  window->current = picture[0];
}

CODEC_YIELDING_ENTRY(avif_dav1d_decode)
CODEC_YIELDING_ENTRY(avif_dav1d_decode_windowed)
