/*
 * libwebp's src/dec/vp8l_dec.c, compiled here in place of the library's own copy so that its
 * static decoding loop can be called with a row limit: VP8LDecodeImage always decodes to the
 * image's last row and writes every row to one output frame. DecodeImageData itself resumes where
 * it stopped (dec->last_pixel_) and is called row range by row range by libwebp's own alpha decoder
 * (VP8LDecodeAlphaImageStream); here it is called the same way for the RGBA output.
 *
 * The ARGB pixels it decodes into are a ring, not the whole image: a back-reference reaches at
 * most 2^20 - 120 pixels back (a distance code's largest value, VP8L spec 4.2.2) or 7 rows and 8
 * pixels (its 120 short codes), so only that much history and the rows not yet converted are kept.
 * When the ring fills, they move to its start and the loop's pointers are rebased
 * (codecs/webp/build.sh patches the loop to call CodecRingFull and CodecRingShift).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "src/dec/vp8li_dec.h"

/* Pixels a back-reference can reach back at most, for rows of `width` (see above). */
#define RING_HISTORY(width) ((1 << 20) + 7 * (ptrdiff_t)(width) + 8)
/* Pixels one step of the loop writes at most: a back-reference's largest length. */
#define RING_MAX_COPY 4096

/*
 * The ring of the one image being decoded in rows (an instance decodes one file): pixel i of the
 * image is at buffer[i - base], and the decoder's pixel pointer is buffer - base, in unsigned
 * pointer arithmetic (wasm32 wraps it; every access adds an index of at least `base` back).
 */
static struct {
  const VP8LDecoder* dec;
  uint32_t* buffer;
  const uint32_t* limit; /* a step starting at or past it could write past the buffer */
  ptrdiff_t size;
  ptrdiff_t base;
} ring;

static int CodecRingFull(const VP8LDecoder* const dec, const uint32_t* const src) {
  return src >= ring.limit && dec == ring.dec;
}

/*
 * Moves the pixels still needed (the history a back-reference can reach from pixel `at`, and the
 * rows ProcessRows has not converted) to the buffer's start; returns the rebased pixel pointer.
 * The ring holds twice the history and 40 rows besides, so each move frees at least the history.
 */
static uint32_t* CodecRingShift(VP8LDecoder* const dec, ptrdiff_t at, int width) {
  ptrdiff_t keep = at - RING_HISTORY(width);
  const ptrdiff_t unconverted = (ptrdiff_t)dec->last_row_ * width;
  if (keep > unconverted) keep = unconverted;
  if (keep < ring.base) keep = ring.base;
  memmove(ring.buffer, ring.buffer + (keep - ring.base), (size_t)(at - keep) * sizeof(uint32_t));
  ring.base = keep;
  dec->pixels_ = (uint32_t*)((uintptr_t)ring.buffer - (uintptr_t)keep * sizeof(uint32_t));
  return dec->pixels_;
}

#include "src/dec/vp8l_dec.c"

#include "lossless_rows.h"

/*
 * AllocateInternalBuffers32b with a ring of pixels in place of the whole image where the image is
 * larger than the ring; the transforms' top row and ARGB cache follow it, as there.
 */
static int AllocateRing(VP8LDecoder* const dec, int final_width) {
  const uint64_t num_pixels = (uint64_t)dec->width_ * dec->height_;
  const uint64_t size = 2 * (uint64_t)RING_HISTORY(dec->width_) + 40 * (uint64_t)dec->width_ + 4 * RING_MAX_COPY;
  if (size >= num_pixels) return AllocateInternalBuffers32b(dec, final_width);
  const uint64_t cache_top_pixels = (uint16_t)final_width;
  const uint64_t cache_pixels = (uint64_t)final_width * NUM_ARGB_CACHE_ROWS;
  uint32_t* const buffer = (uint32_t*)WebPSafeMalloc(size + cache_top_pixels + cache_pixels, sizeof(uint32_t));
  if (buffer == NULL) {
    dec->argb_cache_ = NULL;
    dec->status_ = VP8_STATUS_OUT_OF_MEMORY;
    return 0;
  }
  dec->pixels_ = buffer;
  dec->argb_cache_ = buffer + size + cache_top_pixels;
  ring.dec = dec;
  ring.buffer = buffer;
  ring.size = (ptrdiff_t)size;
  ring.base = 0;
  ring.limit = buffer + size - RING_MAX_COPY;
  return 1;
}

/*
 * ProcessRows converts at most NUM_ARGB_CACHE_ROWS rows at a time (its cache's height). Decoding
 * the whole image, DecodeImageData calls it at every multiple of that; with a row limit it skips
 * the multiples past the limit that a long back-reference crosses, so the next call may have more
 * rows to convert, which are converted here in steps.
 */
static void ProcessRowsInSteps(VP8LDecoder* const dec, int row) {
  while (row - dec->last_row_ > NUM_ARGB_CACHE_ROWS) {
    ProcessRows(dec, dec->last_row_ + NUM_ARGB_CACHE_ROWS);
  }
  ProcessRows(dec, row);
}

int VP8LStartRows(VP8LDecoder* dec) {
  VP8Io* const io = dec->io_;
  WebPDecParams* const params = (WebPDecParams*)io->opaque;
  /* The initialisation of VP8LDecodeImage for RGBA output without scaling. */
  dec->output_ = params->output;
  if (!WebPIsRGBMode(dec->output_->colorspace) || WebPIsPremultipliedMode(dec->output_->colorspace)) {
    dec->status_ = VP8_STATUS_INVALID_PARAM;
    return 0;
  }
  if (!WebPIoInitFromOptions(params->options, io, MODE_BGRA) || io->use_scaling) {
    dec->status_ = VP8_STATUS_INVALID_PARAM;
    return 0;
  }
  if (!AllocateRing(dec, io->width)) return 0;
  dec->state_ = READ_DATA;
  return 1;
}

int VP8LDecodeRows(VP8LDecoder* dec, int last_row) {
  if (dec->state_ != READ_DATA || last_row <= dec->last_row_ || last_row > dec->io_->crop_bottom) {
    dec->status_ = VP8_STATUS_INVALID_PARAM;
    return 0;
  }
  return DecodeImageData(dec, dec->pixels_, dec->width_, dec->height_, last_row, ProcessRowsInSteps);
}

void VP8LDeleteRows(VP8LDecoder* dec) {
  if (dec != NULL && dec == ring.dec) {
    dec->pixels_ = ring.buffer; /* VP8LClear frees the allocation */
    ring.dec = NULL;
    ring.limit = NULL;
  }
  VP8LDelete(dec);
}
