/*
 * libwebp's src/dec/vp8l_dec.c, compiled here in place of the library's own copy so that its
 * static decoding loop can be called with a row limit: VP8LDecodeImage always decodes to the
 * image's last row and writes every row to one output frame. DecodeImageData itself resumes where
 * it stopped (dec->last_pixel_) and is called row range by row range by libwebp's own alpha decoder
 * (VP8LDecodeAlphaImageStream); here it is called the same way for the RGBA output.
 */
#include "src/dec/vp8l_dec.c"

#include "lossless_rows.h"

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
  if (!AllocateInternalBuffers32b(dec, io->width)) return 0;
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
