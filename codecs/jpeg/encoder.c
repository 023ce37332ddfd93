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
 *
 * Placed mode (encoder_start_placed, then encoder_place instead of encoder_write) takes the rows as
 * stored with an EXIF orientation to apply that reverses or transposes them (3-8), which a band
 * encoder cannot take top to bottom. Each stored row is converted to YCbCr as it comes and written
 * where a viewer sees it, into whole-image planes at the sampling the file has: luma at full size,
 * chroma already averaged over 2x2 (1.5 bytes a pixel, where an RGB frame would take 3). The planes
 * hold exactly what libjpeg's own colour conversion, edge expansion and downsampling would give for
 * the oriented image (jccolor.c, jcprepct.c, jcsample.c h2v2_downsample), so encoder_finish hands
 * them to jpeg_write_raw_data and the file is the one encoder_write would make of the oriented rows.
 */
#include <emscripten.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
  struct placed *placed; /* placed mode only */
};

/*
 * Placed mode's state. Stored (x, y) shows at displayed (d, e) along the stored rows' and columns'
 * axes: d = y or height - 1 - y, e = x or width - 1 - x, and displayed (x, y) is (d, e) where the
 * orientation transposes (5-8), (e, d) otherwise. Chroma averages 2x2 displayed pixels, so stored
 * rows are placed in pairs (displayed d even and odd); a row at an odd displayed extent's last d
 * pairs with itself, as libjpeg's edge expansion repeats the last row and column.
 */
struct placed {
  int orientation;
  int transposed, rows_reversed, columns_reversed;
  int stored_width, stored_height;
  int next_row;         /* the next stored row encoder_place expects */
  int pending;          /* a stored row waiting in pending_row for its pair's other row, or -1 */
  uint8_t *pending_row; /* stored_width * 4 */
  JSAMPLE *plane[MAX_COMPONENTS];
  int stride[MAX_COMPONENTS]; /* width_in_blocks * DCTSIZE */
  int plane_rows[MAX_COMPONENTS]; /* whole iMCU rows */
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
 * Sets up a `width` x `height` baseline JPEG at `quality` (1..100) with `components` 3 (YCbCr
 * 4:2:0) or 1 (grey, from the R, G, B of each pixel by libjpeg's luma weights), optimised Huffman
 * tables if `optimize`, and a band buffer of `band_rows` rows of `band_width` pixels.
 */
static void configure(struct encoder *e, int width, int height, int quality, int components, int optimize,
                      int band_rows, int band_width) {
  j_compress_ptr cinfo = &e->cinfo;
  if (width < 1 || height < 1 || quality < 1 || quality > 100 || (components != 1 && components != 3) ||
      band_rows < 1 || band_width < 1 || e->band) {
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

  e->width = band_width;
  e->band_rows = band_rows;
  e->band = malloc((size_t)band_rows * (size_t)band_width * 4);
  e->rows = malloc((size_t)band_rows * sizeof *e->rows);
  if (!e->band || !e->rows) codec_fail(&e->guard, CODEC_OUT_OF_MEMORY, "band buffer");
  for (int r = 0; r < band_rows; r++) e->rows[r] = e->band + (size_t)r * (size_t)band_width * 4;
}

/* Starts the JPEG of configure, fed bands of at most `band_rows` rows. Writes the headers. */
EMSCRIPTEN_KEEPALIVE int encoder_start(struct encoder *e, int width, int height, int quality, int components,
                                       int optimize, int band_rows) {
  GUARD(e);
  configure(e, width, height, quality, components, optimize, band_rows, width);
  jpeg_start_compress(&e->cinfo, TRUE);
  return CODEC_OK;
}

/*
 * Starts a placed-mode JPEG (see the top of the file) of a `width` x `height` stored image shown
 * with EXIF `orientation` (2-8): the file is the displayed image (height x width for 5-8), with the
 * settings of encoder_start. Allocates the planes: 1.5 bytes a displayed pixel (1 for grey), rounded
 * up to whole iMCU rows.
 */
EMSCRIPTEN_KEEPALIVE int encoder_start_placed(struct encoder *e, int width, int height, int quality, int components,
                                              int optimize, int band_rows, int orientation) {
  GUARD(e);
  if (orientation < 2 || orientation > 8 || e->placed) codec_fail(&e->guard, CODEC_MISUSE, "encoder_start_placed: bad orientation");
  struct placed *p = calloc(1, sizeof *p);
  if (!p) codec_fail(&e->guard, CODEC_OUT_OF_MEMORY, "placed state");
  e->placed = p;
  p->orientation = orientation;
  p->transposed = orientation >= 5;
  p->rows_reversed = orientation == 3 || orientation == 4 || orientation == 6 || orientation == 7;
  p->columns_reversed = orientation == 2 || orientation == 3 || orientation == 7 || orientation == 8;
  p->stored_width = width;
  p->stored_height = height;
  p->pending = -1;
  p->pending_row = malloc((size_t)width * 4);
  if (!p->pending_row) codec_fail(&e->guard, CODEC_OUT_OF_MEMORY, "placed pending row");

  /* The band buffer holds stored rows; libjpeg is given the displayed size, and YCbCr planes. */
  j_compress_ptr cinfo = &e->cinfo;
  configure(e, p->transposed ? height : width, p->transposed ? width : height, quality, components, optimize, band_rows, width);
  cinfo->raw_data_in = TRUE;
  jpeg_start_compress(cinfo, TRUE);
  int imcu_rows = (int)((cinfo->image_height + cinfo->max_v_samp_factor * DCTSIZE - 1) / (cinfo->max_v_samp_factor * DCTSIZE));
  for (int c = 0; c < cinfo->num_components; c++) {
    jpeg_component_info *component = &cinfo->comp_info[c];
    p->stride[c] = (int)component->width_in_blocks * DCTSIZE;
    p->plane_rows[c] = imcu_rows * component->v_samp_factor * DCTSIZE;
    p->plane[c] = malloc((size_t)p->stride[c] * (size_t)p->plane_rows[c]);
    if (!p->plane[c]) codec_fail(&e->guard, CODEC_OUT_OF_MEMORY, "placed planes");
  }
  return CODEC_OK;
}

/* libjpeg's RGB to YCbCr (jccolor.c rgb_ycc_start, rgb_ycc_convert), by the same integer arithmetic. */
#define SCALEBITS 16
#define ONE_HALF ((int32_t)1 << (SCALEBITS - 1))
#define CBCR_OFFSET ((int32_t)CENTERJSAMPLE << SCALEBITS)
#define FIX(x) ((int32_t)((x) * (1L << SCALEBITS) + 0.5))

static inline int luma(const uint8_t *px) {
  return (int)((FIX(0.29900) * px[0] + FIX(0.58700) * px[1] + FIX(0.11400) * px[2] + ONE_HALF) >> SCALEBITS);
}
static inline int chroma_b(const uint8_t *px) {
  return (int)(((-FIX(0.16874)) * px[0] + (-FIX(0.33126)) * px[1] + FIX(0.50000) * px[2] + CBCR_OFFSET + ONE_HALF - 1) >> SCALEBITS);
}
static inline int chroma_r(const uint8_t *px) {
  return (int)((FIX(0.50000) * px[0] + (-FIX(0.41869)) * px[1] + (-FIX(0.08131)) * px[2] + CBCR_OFFSET + ONE_HALF - 1) >> SCALEBITS);
}

/* h2v2_downsample's rounding: bias 1, 2, 1, 2, ... along each chroma row. */
static inline JSAMPLE average4(int sum, int chroma_x) {
  return (JSAMPLE)((sum + ((chroma_x & 1) ? 2 : 1)) >> 2);
}

/*
 * Places the 2x2 displayed blocks of two stored rows: row0 shows at displayed d0 (even), row1 at
 * d0 + 1 (row1 == row0 where d0 is the last). Stored columns pair up the same way along e.
 */
static void place_pair(struct encoder *e, const uint8_t *row0, const uint8_t *row1, int d0) {
  struct placed *p = e->placed;
  j_compress_ptr cinfo = &e->cinfo;
  const int width = (int)cinfo->image_width, height = (int)cinfo->image_height;
  const int colour = cinfo->num_components == 3;
  const int extent = p->stored_width;
  JSAMPLE *y_plane = p->plane[0];
  const int y_stride = p->stride[0], c_stride = colour ? p->stride[1] : 0;
  for (int e0 = 0; e0 < extent; e0 += 2) {
    const int x0 = p->columns_reversed ? extent - 1 - e0 : e0;
    const int x1 = e0 + 1 < extent ? (p->columns_reversed ? x0 - 1 : x0 + 1) : x0;
    /* at[i][j]: the stored pixel shown at displayed (bx + i, by + j). */
    const uint8_t *at[2][2];
    int bx, by;
    if (p->transposed) {
      bx = d0, by = e0;
      at[0][0] = row0 + x0 * 4, at[0][1] = row0 + x1 * 4, at[1][0] = row1 + x0 * 4, at[1][1] = row1 + x1 * 4;
    } else {
      bx = e0, by = d0;
      at[0][0] = row0 + x0 * 4, at[1][0] = row0 + x1 * 4, at[0][1] = row1 + x0 * 4, at[1][1] = row1 + x1 * 4;
    }
    for (int j = 0; j < 2 && by + j < height; j++)
      for (int i = 0; i < 2 && bx + i < width; i++) y_plane[(size_t)(by + j) * y_stride + bx + i] = (JSAMPLE)luma(at[i][j]);
    if (!colour) continue;
    const size_t chroma_row = (size_t)(by >> 1) * c_stride;
    int cb = 0, cr = 0;
    for (int k = 0; k < 4; k++) {
      cb += chroma_b(at[k & 1][k >> 1]);
      cr += chroma_r(at[k & 1][k >> 1]);
    }
    p->plane[1][chroma_row + (bx >> 1)] = average4(cb, bx >> 1);
    p->plane[2][chroma_row + (bx >> 1)] = average4(cr, bx >> 1);
    if (bx + 2 < width) continue;
    /* The block holds the last displayed column: the chroma past it averages that column repeated. */
    const int last = width - 1 - bx;
    const int edge_cb = 2 * (chroma_b(at[last][0]) + chroma_b(at[last][1]));
    const int edge_cr = 2 * (chroma_r(at[last][0]) + chroma_r(at[last][1]));
    for (int cx = (bx >> 1) + 1; cx < c_stride; cx++) {
      p->plane[1][chroma_row + cx] = average4(edge_cb, cx);
      p->plane[2][chroma_row + cx] = average4(edge_cr, cx);
    }
  }
}

/*
 * Placed mode: places the first `rows` rows of the band buffer (the next stored rows). A row whose
 * pair's other row comes later waits in the pending row.
 */
EMSCRIPTEN_KEEPALIVE int encoder_place(struct encoder *e, int rows) {
  GUARD(e);
  struct placed *p = e->placed;
  if (!p || rows < 0 || rows > e->band_rows || p->next_row + rows > p->stored_height) {
    codec_fail(&e->guard, CODEC_MISUSE, "encoder_place: bad row count");
  }
  const int extent = p->stored_height;
  for (int r = 0; r < rows; r++, p->next_row++) {
    const int y = p->next_row;
    const uint8_t *row = e->band + (size_t)r * (size_t)p->stored_width * 4;
    const int d = p->rows_reversed ? extent - 1 - y : y;
    const int d0 = d & ~1;
    const int partner_d = d ^ 1;
    if (partner_d >= extent) {
      place_pair(e, row, row, d0);
      continue;
    }
    const int partner = p->rows_reversed ? extent - 1 - partner_d : partner_d;
    if (partner > y) {
      memcpy(p->pending_row, row, (size_t)p->stored_width * 4);
      p->pending = y;
      continue;
    }
    if (p->pending != partner) codec_fail(&e->guard, CODEC_MISUSE, "encoder_place: a row's pair is missing");
    const uint8_t *first = d == d0 ? row : p->pending_row;
    const uint8_t *second = d == d0 ? p->pending_row : row;
    place_pair(e, first, second, d0);
    p->pending = -1;
  }
  return CODEC_OK;
}

/* Repeats the last displayed row of each plane down to its whole iMCU rows, and luma's last column to its stride (jcprepct.c, jcsample.c). */
static void pad_planes(struct encoder *e) {
  struct placed *p = e->placed;
  j_compress_ptr cinfo = &e->cinfo;
  const int width = (int)cinfo->image_width, height = (int)cinfo->image_height;
  JSAMPLE *y_plane = p->plane[0];
  for (int y = 0; y < height; y++) {
    JSAMPLE *row = y_plane + (size_t)y * p->stride[0];
    memset(row + width, row[width - 1], (size_t)(p->stride[0] - width));
  }
  for (int c = 0; c < cinfo->num_components; c++) {
    const int rows = c == 0 ? height : (height + 1) / 2;
    const size_t stride = (size_t)p->stride[c];
    for (int y = rows; y < p->plane_rows[c]; y++) memcpy(p->plane[c] + y * stride, p->plane[c] + (size_t)(rows - 1) * stride, stride);
  }
}

/* Placed mode's encoding: every iMCU row of the planes through jpeg_write_raw_data, then the file's end. */
static void finish_placed(struct encoder *e) {
  struct placed *p = e->placed;
  j_compress_ptr cinfo = &e->cinfo;
  if (p->next_row != p->stored_height || p->pending >= 0) codec_fail(&e->guard, CODEC_MISUSE, "encoder_finish before the last row");
  pad_planes(e);
  JSAMPROW pointers[MAX_COMPONENTS][2 * DCTSIZE];
  JSAMPARRAY arrays[MAX_COMPONENTS];
  const int lines = cinfo->max_v_samp_factor * DCTSIZE;
  for (int imcu = 0; cinfo->next_scanline < cinfo->image_height; imcu++) {
    for (int c = 0; c < cinfo->num_components; c++) {
      const int rows = cinfo->comp_info[c].v_samp_factor * DCTSIZE;
      for (int r = 0; r < rows; r++) pointers[c][r] = p->plane[c] + (size_t)(imcu * rows + r) * p->stride[c];
      arrays[c] = pointers[c];
    }
    jpeg_write_raw_data(cinfo, arrays, (JDIMENSION)lines);
    /* The forward DCT and, with the standard tables, the entropy coding: about three times what
       the optimised tables' passes do per pixel, which report_progress counts. */
    codec_yield_point((int)cinfo->image_width * lines * 2);
  }
  jpeg_finish_compress(cinfo);
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
  if (e->placed) {
    finish_placed(e);
    return CODEC_OK;
  }
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
  if (e->placed) {
    for (int c = 0; c < MAX_COMPONENTS; c++) free(e->placed->plane[c]);
    free(e->placed->pending_row);
    free(e->placed);
  }
  free(e);
}

CODEC_YIELDING_ENTRY(encoder_finish)
