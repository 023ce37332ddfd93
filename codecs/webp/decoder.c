/*
 * A band decoder on libwebp: the file is copied into the instance once (VP8 reads its partitions
 * from several places at a time), and RGBA rows come out a few at a time, as WebPDecodeRGBA would
 * write them (fancy upsampling, alpha not premultiplied), without an output frame.
 *
 * Lossy (VP8, with or without ALPH): libwebp's ParseFrame (src/dec/vp8_dec.c) is run one macroblock
 * row per call. VP8ProcessRow hands finished rows to io_dec.c's put hook, which writes them to the
 * output buffer at their row index; the buffer's base is aimed before each step so that the rows of
 * that step land in `rows`. A step emits at most 16 + 8 + 1 rows (a macroblock row, the rows the
 * complex loop filter holds back from the previous one, and the fancy upsampler's one-row delay).
 * libwebp keeps the macroblock row caches and, with ALPH, the whole alpha plane (1 byte a pixel).
 *
 * Lossless (VP8L): back-references reach up to 2^20 pixels back, so libwebp decodes into ARGB
 * pixels of which a ring of about 2^21 is kept (lossless_rows.c); its decoding loop can be resumed
 * row by row, so RGBA rows are converted as asked for instead of into a second frame.
 *
 * Call order: decoder_create, fill decoder_input, decoder_read_header, decoder_info,
 * (codec_memory_set_limit), decoder_start, decoder_read + decoder_rows until it returns 0,
 * decoder_destroy (at any point, also after a failure). A failed call returns a codec_status (< 0),
 * and every later call the same.
 */
#include <stdint.h>
#include <string.h>

#include "codec.h"
#include "lossless_rows.h"
#include "src/dec/vp8_dec.h"
#include "src/dec/vp8i_dec.h"
#include "src/dec/vp8li_dec.h"
#include "src/dec/webpi_dec.h"
#include "src/utils/utils.h"

/* The most rows one VP8 step emits: a macroblock row, kFilterExtraRows' largest value (frame_dec.c), one delayed row. */
#define LOSSY_ROWS_PER_STEP (16 + 8 + 1)

enum info_field { INFO_WIDTH, INFO_HEIGHT, INFO_HAS_ALPHA, INFO_LOSSLESS, INFO_ANIMATION, INFO_FIELDS };

struct decoder {
  uint8_t *input;
  size_t input_size;
  int32_t info[INFO_FIELDS];
  WebPHeaderStructure headers;
  VP8Io io;
  WebPDecParams params;
  WebPDecBuffer output;
  VP8Decoder *lossy;
  int lossy_in_frame; /* between VP8EnterCritical and VP8ExitCritical */
  VP8LDecoder *lossless;
  uint8_t *rows;      /* the rows of the last decoder_read */
  int rows_capacity;
  int next_row;       /* index of the next row to emit */
  int status;
};

struct decoder *decoder_create(size_t input_size) {
  struct decoder *d = (struct decoder *)WebPSafeCalloc(1, sizeof(*d));
  if (d == NULL) return NULL;
  d->input = (uint8_t *)WebPSafeMalloc(1, input_size > 0 ? input_size : 1);
  if (d->input == NULL) {
    WebPSafeFree(d);
    return NULL;
  }
  d->input_size = input_size;
  return d;
}

uint8_t *decoder_input(struct decoder *d) { return d->input; }

const int32_t *decoder_info(struct decoder *d) { return d->info; }

uint8_t *decoder_rows(struct decoder *d) { return d->rows; }

static int fail(struct decoder *d, int status) {
  if (d->status == CODEC_OK) d->status = status;
  return d->status;
}

/* Width, height, alpha, lossless and animation, as WebPGetFeatures reads them. */
int decoder_read_header(struct decoder *d) {
  WebPBitstreamFeatures features;
  if (d->status) return d->status;
  VP8StatusCode status = WebPGetFeatures(d->input, d->input_size, &features);
  if (status != VP8_STATUS_OK) return fail(d, codec_status_of_decoding(status));
  d->info[INFO_WIDTH] = features.width;
  d->info[INFO_HEIGHT] = features.height;
  d->info[INFO_HAS_ALPHA] = features.has_alpha;
  d->info[INFO_LOSSLESS] = features.format == 2;
  d->info[INFO_ANIMATION] = features.has_animation;
  return CODEC_OK;
}

/*
 * Points the output buffer so that row `first_row` of the image is written at `rows`. The put
 * hooks address rows as rgba + y * stride; the base lies before the block, which is plain integer
 * arithmetic on wasm32 (the rows written are always inside the block).
 */
static void aim_output(struct decoder *d, int first_row) {
  d->output.u.RGBA.rgba = (uint8_t *)((uintptr_t)d->rows - (uintptr_t)first_row * (uintptr_t)d->output.u.RGBA.stride);
}

static int start_lossy(struct decoder *d) {
  VP8Decoder *dec = d->lossy = VP8New();
  if (dec == NULL) return CODEC_OUT_OF_MEMORY;
  dec->alpha_data_ = d->headers.alpha_data;
  dec->alpha_data_size_ = d->headers.alpha_data_size;
  if (!VP8GetHeaders(dec, &d->io)) return codec_status_of_decoding(dec->status_);
  dec->mt_method_ = 0; /* no threads: rows are produced by the caller's loop */
  d->lossy_in_frame = 1; /* VP8ExitCritical must follow VP8EnterCritical whatever it returns */
  if (VP8EnterCritical(dec, &d->io) != VP8_STATUS_OK) return codec_status_of_decoding(dec->status_);
  /*
   * VP8InitFrame reserves an alpha plane (width x height) in its block when alpha_data_ is set,
   * but the alpha decoder allocates and uses a plane of its own (alpha_dec.c, AllocateAlphaPlane)
   * and never touches that one: hiding the ALPH chunk from VP8InitFrame saves 1 byte a pixel.
   */
  dec->alpha_data_ = NULL;
  const int ok = VP8InitFrame(dec, &d->io);
  dec->alpha_data_ = d->headers.alpha_data;
  if (!ok) return codec_status_of_decoding(dec->status_);
  return CODEC_OK;
}

static int start_lossless(struct decoder *d) {
  VP8LDecoder *dec = d->lossless = VP8LNew();
  if (dec == NULL) return CODEC_OUT_OF_MEMORY;
  if (!VP8LDecodeHeader(dec, &d->io)) return codec_status_of_decoding(dec->status_);
  if (!VP8LStartRows(dec)) return codec_status_of_decoding(dec->status_);
  return CODEC_OK;
}

/* Parses the bitstream headers and allocates libwebp's decoder; `band_rows` is the most a lossless read emits. */
int decoder_start(struct decoder *d, int band_rows) {
  if (d->status) return d->status;
  if (d->info[INFO_WIDTH] == 0 || d->lossy || d->lossless || band_rows < 1) return fail(d, CODEC_MISUSE);
  if (d->info[INFO_ANIMATION]) return fail(d, CODEC_UNSUPPORTED);
  const int width = d->info[INFO_WIDTH];
  const int height = d->info[INFO_HEIGHT];

  codec_memory_clear_failure();
  d->headers.data = d->input;
  d->headers.data_size = d->input_size;
  d->headers.have_all_data = 1;
  VP8StatusCode status = WebPParseHeaders(&d->headers);
  if (status != VP8_STATUS_OK) return fail(d, codec_status_of_decoding(status));

  /* The rest of WebPDecodeRGBA's DecodeInto (src/dec/webp_dec.c), with the output buffer ours. */
  VP8InitIo(&d->io);
  d->io.data = d->headers.data + d->headers.offset;
  d->io.data_size = d->headers.data_size - d->headers.offset;
  WebPResetDecParams(&d->params);
  WebPInitDecBuffer(&d->output);
  d->params.output = &d->output;
  WebPInitCustomIo(&d->params, &d->io);
  d->output.colorspace = MODE_RGBA;
  d->output.width = width;
  d->output.height = height;
  d->output.is_external_memory = 1;
  d->output.u.RGBA.stride = width * 4;

  d->rows_capacity = d->headers.is_lossless ? band_rows : LOSSY_ROWS_PER_STEP;
  if (d->rows_capacity > height) d->rows_capacity = height;
  d->rows = (uint8_t *)WebPSafeMalloc((uint64_t)d->rows_capacity * width, 4);
  if (d->rows == NULL) return fail(d, codec_memory_failed());
  d->output.u.RGBA.size = (size_t)d->rows_capacity * width * 4;

  int started = d->headers.is_lossless ? start_lossless(d) : start_lossy(d);
  if (started != CODEC_OK) return fail(d, codec_memory_failed() ? codec_memory_failed() : started);
  if (d->io.width != width || d->io.height != height) return fail(d, CODEC_DAMAGED);
  return CODEC_OK;
}

/* One macroblock row of ParseFrame (src/dec/vp8_dec.c); returns the rows it emitted. */
static int read_lossy(struct decoder *d) {
  VP8Decoder *dec = d->lossy;
  if (dec->mb_y_ >= dec->br_mb_y_) return 0;
  aim_output(d, d->next_row);
  VP8BitReader *const token_br = &dec->parts_[dec->mb_y_ & dec->num_parts_minus_one_];
  if (!VP8ParseIntraModeRow(&dec->br_, dec)) return CODEC_DAMAGED;
  for (; dec->mb_x_ < dec->mb_w_; ++dec->mb_x_) {
    if (!VP8DecodeMB(dec, token_br)) return CODEC_DAMAGED;
  }
  VP8InitScanline(dec);
  if (!VP8ProcessRow(dec, &d->io)) return codec_status_of_decoding(dec->status_ != VP8_STATUS_OK ? dec->status_ : VP8_STATUS_USER_ABORT);
  ++dec->mb_y_;
  if (dec->mb_y_ >= dec->br_mb_y_) {
    d->lossy_in_frame = 0;
    VP8ExitCritical(dec, &d->io);
  }
  const int emitted = d->params.last_y - d->next_row;
  d->next_row = d->params.last_y;
  return emitted;
}

static int read_lossless(struct decoder *d, int max_rows) {
  VP8LDecoder *dec = d->lossless;
  const int height = d->info[INFO_HEIGHT];
  if (d->next_row >= height) return 0;
  int last_row = d->next_row + (max_rows < d->rows_capacity ? max_rows : d->rows_capacity);
  if (last_row > height) last_row = height;
  aim_output(d, d->next_row);
  if (!VP8LDecodeRows(dec, last_row)) return codec_status_of_decoding(dec->status_);
  const int emitted = dec->last_out_row_ - d->next_row;
  d->next_row = dec->last_out_row_;
  return emitted;
}

/*
 * Decodes the next rows into decoder_rows: at most `max_rows` for a lossless file, one macroblock
 * row's worth (up to LOSSY_ROWS_PER_STEP) for a lossy one. Returns how many (0 once all were), or a
 * codec_status.
 */
int decoder_read(struct decoder *d, int max_rows) {
  if (d->status) return d->status;
  if ((!d->lossy && !d->lossless) || max_rows < 1) return fail(d, CODEC_MISUSE);
  codec_memory_clear_failure();
  int emitted = 0;
  while (emitted == 0 && d->next_row < d->info[INFO_HEIGHT]) {
    emitted = d->lossy ? read_lossy(d) : read_lossless(d, max_rows);
    if (emitted < 0) return fail(d, codec_memory_failed() ? codec_memory_failed() : emitted);
    if (emitted == 0 && d->lossy && d->lossy->mb_y_ >= d->lossy->br_mb_y_) break;
  }
  /* Every row must have come out once the last macroblock row was read. */
  if (d->lossy && d->lossy->mb_y_ >= d->lossy->br_mb_y_ && d->next_row != d->info[INFO_HEIGHT]) return fail(d, CODEC_DAMAGED);
  return emitted;
}

/*
 * libwebp's own one-call decode of the whole file (WebPDecodeRGBA), the reference the bands are
 * checked against in tests; NULL if it failed. Release with decoder_free_whole.
 */
uint8_t *decoder_decode_whole(struct decoder *d) {
  int width, height;
  return WebPDecodeRGBA(d->input, d->input_size, &width, &height);
}

void decoder_free_whole(uint8_t *pixels) { WebPFree(pixels); }

void decoder_destroy(struct decoder *d) {
  if (d == NULL) return;
  if (d->lossy) {
    if (d->lossy_in_frame) VP8ExitCritical(d->lossy, &d->io);
    VP8Delete(d->lossy);
  }
  if (d->lossless) VP8LDeleteRows(d->lossless);
  WebPSafeFree(d->rows);
  WebPSafeFree(d->input);
  WebPSafeFree(d);
}
