/*
 * A band encoder on libjpeg-turbo: RGBA rows go in a band at a time, the JPEG goes out to
 * JavaScript in chunks as libjpeg writes it. Baseline only, with the settings libvips uses for
 * sharp's default jpeg({ quality }): libjpeg's defaults (Annex K tables scaled by
 * jpeg_set_quality, 4:2:0 chroma, JDCT_ISLOW, not progressive), no JFIF marker and, by choice,
 * optimised Huffman tables. With them the file is byte for byte sharp's. Optimised tables need a second pass over the whole image's coefficients, which libjpeg
 * keeps in a buffer of about 2 bytes per sample (3 bytes a pixel for 4:2:0); without them the
 * encoder holds a few rows.
 *
 * Call order: encoder_create, encoder_start, (fill encoder_band, encoder_write)..., encoder_finish,
 * encoder_destroy (at any point, also after a failure). Every call returns a codec_status (< 0)
 * once the encoder failed, and the same status from then on; encoder_message says why.
 */
#include <emscripten.h>
#include <stdint.h>
#include <stdlib.h>

#include "codec.h"
#include "yield.h"

/* Bytes handed to JavaScript per empty_output_buffer call. */
#define OUTPUT_CHUNK 32768

/* Hands JavaScript the next `size` bytes of the file (a copy: the buffer is reused). */
EM_JS(void, js_write_output, (const JOCTET *buffer, int size), {
  Module.jpegWriteOutput(HEAPU8.slice(buffer, buffer + size));
});

struct encoder {
  struct codec_guard guard; /* first: cinfo.client_data points here */
  struct jpeg_compress_struct cinfo;
  struct jpeg_destination_mgr destination;
  struct jpeg_progress_mgr progress;
  JOCTET *output;
  int width;
  int band_rows;
  uint8_t *band;  /* band_rows * width * 4 */
  JSAMPROW *rows; /* band_rows pointers into band */
};

/* Enters libjpeg from an entry point: a failure in it comes back here as the status. */
#define GUARD(e)                                \
  if ((e)->guard.status) return (e)->guard.status; \
  if (setjmp((e)->guard.jump)) return (e)->guard.status

static struct encoder *encoder_of(j_compress_ptr cinfo) {
  return (struct encoder *)cinfo->client_data;
}

static void init_destination(j_compress_ptr cinfo) {
  cinfo->dest->next_output_byte = encoder_of(cinfo)->output;
  cinfo->dest->free_in_buffer = OUTPUT_CHUNK;
}

static boolean empty_output_buffer(j_compress_ptr cinfo) {
  js_write_output(encoder_of(cinfo)->output, OUTPUT_CHUNK); /* the whole buffer, whatever free_in_buffer says */
  init_destination(cinfo);
  return TRUE;
}

/* Called per row of 8x8 blocks in the passes of jpeg_finish_compress (optimised Huffman tables). */
static void report_progress(j_common_ptr common) {
  j_compress_ptr cinfo = (j_compress_ptr)common;
  codec_yield_point((int)cinfo->image_width * DCTSIZE * cinfo->max_v_samp_factor);
}

static void term_destination(j_compress_ptr cinfo) {
  size_t used = OUTPUT_CHUNK - cinfo->dest->free_in_buffer;
  if (used > 0) js_write_output(encoder_of(cinfo)->output, (int)used);
}

/* An encoder whose libjpeg allocations may total `memory_limit` bytes (0: no limit); NULL if there is no memory for it. */
EMSCRIPTEN_KEEPALIVE struct encoder *encoder_create(size_t memory_limit) {
  struct encoder *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->output = malloc(OUTPUT_CHUNK);
  if (!e->output) {
    free(e);
    return NULL;
  }
  codec_guard_init(&e->guard, (j_common_ptr)&e->cinfo, memory_limit);
  if (setjmp(e->guard.jump)) {
    jpeg_destroy_compress(&e->cinfo);
    free(e->output);
    free(e);
    return NULL;
  }
  jpeg_create_compress(&e->cinfo);
  e->destination.init_destination = init_destination;
  e->destination.empty_output_buffer = empty_output_buffer;
  e->destination.term_destination = term_destination;
  e->cinfo.dest = &e->destination;
  e->progress.progress_monitor = report_progress;
  e->cinfo.progress = &e->progress;
  return e;
}

/*
 * Starts a `width` x `height` baseline JPEG at `quality` (1..100) with `components` 3 (YCbCr
 * 4:2:0) or 1 (grey, from the R, G, B of each pixel by libjpeg's luma weights), optimised Huffman
 * tables if `optimize`, fed bands of at most `band_rows` rows. Writes the headers.
 */
EMSCRIPTEN_KEEPALIVE int encoder_start(struct encoder *e, int width, int height, int quality, int components,
                                       int optimize, int band_rows) {
  GUARD(e);
  j_compress_ptr cinfo = &e->cinfo;
  if (width < 1 || height < 1 || quality < 1 || quality > 100 || (components != 1 && components != 3) ||
      band_rows < 1 || e->band) {
    codec_fail(&e->guard, CODEC_MISUSE, "encoder_start: bad arguments");
  }
  cinfo->image_width = (JDIMENSION)width;
  cinfo->image_height = (JDIMENSION)height;
  cinfo->input_components = 4;
  cinfo->in_color_space = JCS_EXT_RGBA; /* alpha is ignored */
  jpeg_set_defaults(cinfo);
  if (components == 1) jpeg_set_colorspace(cinfo, JCS_GRAYSCALE);
  jpeg_set_quality(cinfo, quality, TRUE);
  cinfo->optimize_coding = optimize ? TRUE : FALSE;
  cinfo->write_JFIF_header = FALSE; /* as libvips when it strips metadata (sharp's default): the file starts with DQT */

  e->width = width;
  e->band_rows = band_rows;
  e->band = malloc((size_t)band_rows * (size_t)width * 4);
  e->rows = malloc((size_t)band_rows * sizeof *e->rows);
  if (!e->band || !e->rows) codec_fail(&e->guard, CODEC_OUT_OF_MEMORY, "band buffer");
  for (int r = 0; r < band_rows; r++) e->rows[r] = e->band + (size_t)r * (size_t)width * 4;
  jpeg_start_compress(cinfo, TRUE);
  return CODEC_OK;
}

/* The band buffer to fill before encoder_write: band_rows rows of width * 4 bytes (RGBA). */
EMSCRIPTEN_KEEPALIVE uint8_t *encoder_band(struct encoder *e) {
  return e->band;
}

/* Encodes the first `rows` rows of the band buffer (the next rows of the image). */
EMSCRIPTEN_KEEPALIVE int encoder_write(struct encoder *e, int rows) {
  GUARD(e);
  j_compress_ptr cinfo = &e->cinfo;
  if (!e->band || rows < 0 || rows > e->band_rows || cinfo->next_scanline + (JDIMENSION)rows > cinfo->image_height) {
    codec_fail(&e->guard, CODEC_MISUSE, "encoder_write: bad row count");
  }
  for (int done = 0; done < rows;) done += (int)jpeg_write_scanlines(cinfo, e->rows + done, (JDIMENSION)(rows - done));
  return CODEC_OK;
}

/* Finishes the file after its last row: with optimised tables, the whole entropy-coded data is written now. */
EMSCRIPTEN_KEEPALIVE int encoder_finish(struct encoder *e) {
  GUARD(e);
  if (!e->band || e->cinfo.next_scanline != e->cinfo.image_height) {
    codec_fail(&e->guard, CODEC_MISUSE, "encoder_finish before the last row");
  }
  jpeg_finish_compress(&e->cinfo);
  return CODEC_OK;
}

/* The error as text (for logs). */
EMSCRIPTEN_KEEPALIVE const char *encoder_message(struct encoder *e) {
  return e->guard.message;
}

/* The most bytes libjpeg held at once so far (its allocations only, not the band buffers). */
EMSCRIPTEN_KEEPALIVE size_t encoder_memory_peak(struct encoder *e) {
  return e->guard.memory_peak;
}

/* Frees everything; safe in any state. */
EMSCRIPTEN_KEEPALIVE void encoder_destroy(struct encoder *e) {
  if (!e) return;
  jpeg_destroy_compress(&e->cinfo);
  free(e->output);
  free(e->band);
  free(e->rows);
  free(e);
}

CODEC_YIELDING_ENTRY(encoder_finish)
