/*
 * A band decoder on libjpeg-turbo: the file is pulled from JavaScript in small chunks, decoded at
 * 1/1, 1/2, 1/4 or 1/8 scale, optionally only a window of it, and handed out a band of rows at a
 * time in one small buffer. Pixels are 4 bytes: RGBA for 1- and 3-component files (grey expands to
 * R = G = B, alpha 255), ink amounts C, M, Y, K for 4-component files (see decoder_start).
 *
 * Call order: decoder_create, decoder_read_header, decoder_start, decoder_read until it returns 0,
 * decoder_destroy (at any point, also after a failure). Every call returns a codec_status (< 0)
 * once the decoder failed, and the same status from then on; decoder_message says why.
 */
#define JPEG_INTERNALS /* cinfo->inputctl, for has_multiple_scans */
#include <emscripten.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "yield.h"
#include "jerror.h"

/* Bytes asked of JavaScript per fill_input_buffer call. */
#define INPUT_CHUNK 16384

/*
 * Copies the next bytes of the file into `buffer` (at most `size`) and returns how many; 0 at the
 * end of the file. Module.jpegReadInput gets a view of the wasm memory to fill.
 */
EM_JS(int, js_read_input, (JOCTET *buffer, int size), {
  return Module.jpegReadInput(HEAPU8.subarray(buffer, buffer + size));
});

/* Moves the JavaScript-side read position `count` bytes on without copying them. */
EM_JS(void, js_skip_input, (long count), {
  Module.jpegSkipInput(count);
});

/* Indices of decoder_header's fields. */
enum header_field {
  HEADER_WIDTH, HEADER_HEIGHT, HEADER_COMPONENTS,
  HEADER_COLOR_SPACE,          /* libjpeg's J_COLOR_SPACE of the file: 1 grey, 2 RGB, 3 YCbCr, 4 CMYK, 5 YCCK */
  HEADER_PROGRESSIVE,          /* 1 for a progressive (SOF2) file */
  HEADER_MULTI_SCAN,           /* 1 if decoding needs the whole-image coefficient buffer (progressive, or a first scan without every component) */
  HEADER_ADOBE_MARKER,         /* 1 if an Adobe APP14 marker was seen */
  HEADER_ADOBE_TRANSFORM,      /* its transform code (0 none/CMYK, 1 YCbCr, 2 YCCK) */
  HEADER_MAX_H, HEADER_MAX_V,  /* largest sampling factors */
  HEADER_H0, HEADER_V0 = HEADER_H0 + 4, /* sampling factors of components 0..3 */
  HEADER_OUTPUT_WIDTH = HEADER_V0 + 4, HEADER_OUTPUT_HEIGHT, /* after decoder_start: the window's size */
  HEADER_FIELDS
};

struct decoder {
  struct codec_guard guard; /* first: cinfo.client_data points here */
  struct jpeg_decompress_struct cinfo;
  struct jpeg_source_mgr source;
  struct jpeg_progress_mgr progress;
  JOCTET *input;
  int32_t header[HEADER_FIELDS];

  /* Work limit. */
  int max_scans;
  int scans_seen;
  uint64_t blocks_decoded;
  uint64_t max_blocks;

  /* The window handed out, within libjpeg's (wider) output rows. */
  int left;          /* first pixel of the window in libjpeg's row */
  int width, height; /* the window */
  int rows_done;
  int last_row;      /* 1 when the window reaches the bottom of the image */
  int band_rows;
  uint8_t *band;     /* band_rows * width * 4 */
  uint8_t *row;      /* one libjpeg row when the window is narrower than it, else NULL */
  int invert;        /* 4-component output: undo Adobe's inverted storage */
};

/* Enters libjpeg from an entry point: a failure in it comes back here as the status. */
#define GUARD(d)                                \
  if ((d)->guard.status) return (d)->guard.status; \
  if (setjmp((d)->guard.jump)) return (d)->guard.status

static void init_source(j_decompress_ptr cinfo) {
  (void)cinfo;
}

static boolean fill_input_buffer(j_decompress_ptr cinfo) {
  struct decoder *d = (struct decoder *)cinfo->client_data;
  int count = js_read_input(d->input, INPUT_CHUNK);
  if (count <= 0) {
    WARNMS(cinfo, JWRN_JPEG_EOF); /* damage: errors.c longjmps */
    d->input[0] = 0xFF;           /* not reached; libjpeg's own answer to a premature end */
    d->input[1] = JPEG_EOI;
    count = 2;
  }
  cinfo->src->next_input_byte = d->input;
  cinfo->src->bytes_in_buffer = (size_t)count;
  return TRUE;
}

static void skip_input_data(j_decompress_ptr cinfo, long count) {
  struct jpeg_source_mgr *source = cinfo->src;
  if (count <= 0) return;
  if ((size_t)count <= source->bytes_in_buffer) {
    source->next_input_byte += count;
    source->bytes_in_buffer -= (size_t)count;
    return;
  }
  js_skip_input(count - (long)source->bytes_in_buffer);
  source->bytes_in_buffer = 0; /* the next read fills from after the skipped bytes */
}

static void term_source(j_decompress_ptr cinfo) {
  (void)cinfo;
}

/*
 * Progress monitor, called by libjpeg before each row of input it consumes: at the start of each
 * scan it counts the scan and the 8x8 blocks the scan decodes, and fails the decode once either is
 * over the limit. A progressive file can repeat scans over the whole image at little cost in
 * bytes (10,000 scans in 200 KB took 14 s); encoders write at most a few dozen.
 */
static void watch_work(j_common_ptr common) {
  struct decoder *d = (struct decoder *)common->client_data;
  j_decompress_ptr cinfo = &d->cinfo;
  /* Called per row of 8x8 blocks while the scans of a multi-scan file are read (decoder_start). */
  codec_yield_point((int)cinfo->image_width * DCTSIZE * cinfo->max_v_samp_factor);
  if (cinfo->input_scan_number == d->scans_seen) return;
  d->scans_seen = cinfo->input_scan_number;
  if (d->scans_seen > d->max_scans) {
    snprintf(d->guard.message, sizeof d->guard.message, "more than %d scans", d->max_scans);
    codec_fail(&d->guard, CODEC_WORK_LIMIT, NULL);
  }
  for (int i = 0; i < cinfo->comps_in_scan; i++) {
    jpeg_component_info *component = cinfo->cur_comp_info[i];
    d->blocks_decoded += (uint64_t)component->width_in_blocks * component->height_in_blocks;
  }
  if (d->blocks_decoded > d->max_blocks) {
    snprintf(d->guard.message, sizeof d->guard.message, "scans decode more than %llu blocks",
             (unsigned long long)d->max_blocks);
    codec_fail(&d->guard, CODEC_WORK_LIMIT, NULL);
  }
}

/*
 * A decoder whose libjpeg allocations may total `memory_limit` bytes (0: no limit), that fails
 * with CODEC_WORK_LIMIT on a file with more than `max_scans` scans or whose scans decode more
 * than `max_block_passes` times the image's 8x8 blocks (a baseline file decodes each block once;
 * libjpeg's default progressive script about 5 times). NULL if there is no memory for it.
 */
EMSCRIPTEN_KEEPALIVE struct decoder *decoder_create(size_t memory_limit, int max_scans, int max_block_passes) {
  struct decoder *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->input = malloc(INPUT_CHUNK);
  if (!d->input) {
    free(d);
    return NULL;
  }
  d->max_scans = max_scans;
  d->max_blocks = (uint64_t)max_block_passes; /* times the image's blocks, once they are known */
  codec_guard_init(&d->guard, (j_common_ptr)&d->cinfo, memory_limit);
  if (setjmp(d->guard.jump)) {
    jpeg_destroy_decompress(&d->cinfo);
    free(d->input);
    free(d);
    return NULL;
  }
  jpeg_create_decompress(&d->cinfo);
  d->source.init_source = init_source;
  d->source.fill_input_buffer = fill_input_buffer;
  d->source.skip_input_data = skip_input_data;
  d->source.resync_to_restart = jpeg_resync_to_restart;
  d->source.term_source = term_source;
  d->cinfo.src = &d->source;
  d->progress.progress_monitor = watch_work;
  d->cinfo.progress = &d->progress;
  return d;
}

/* Reads the markers up to the first scan and fills the fields decoder_header points to. */
EMSCRIPTEN_KEEPALIVE int decoder_read_header(struct decoder *d) {
  GUARD(d);
  j_decompress_ptr cinfo = &d->cinfo;
  jpeg_read_header(cinfo, TRUE); /* a tables-only file stops with JERR_NO_IMAGE */
  int32_t *h = d->header;
  h[HEADER_WIDTH] = (int32_t)cinfo->image_width;
  h[HEADER_HEIGHT] = (int32_t)cinfo->image_height;
  h[HEADER_COMPONENTS] = cinfo->num_components;
  h[HEADER_COLOR_SPACE] = cinfo->jpeg_color_space;
  h[HEADER_PROGRESSIVE] = cinfo->progressive_mode;
  h[HEADER_MULTI_SCAN] = cinfo->inputctl->has_multiple_scans;
  h[HEADER_ADOBE_MARKER] = cinfo->saw_Adobe_marker;
  h[HEADER_ADOBE_TRANSFORM] = cinfo->Adobe_transform;
  h[HEADER_MAX_H] = cinfo->max_h_samp_factor;
  h[HEADER_MAX_V] = cinfo->max_v_samp_factor;
  uint64_t image_blocks = 0;
  for (int c = 0; c < cinfo->num_components && c < 4; c++) {
    jpeg_component_info *component = &cinfo->comp_info[c];
    h[HEADER_H0 + c] = component->h_samp_factor;
    h[HEADER_V0 + c] = component->v_samp_factor;
  }
  for (int c = 0; c < cinfo->num_components; c++) {
    image_blocks += (uint64_t)cinfo->comp_info[c].width_in_blocks * cinfo->comp_info[c].height_in_blocks;
  }
  d->max_blocks *= image_blocks;
  return CODEC_OK;
}

/* The header fields (enum header_field), valid after decoder_read_header. */
EMSCRIPTEN_KEEPALIVE const int32_t *decoder_header(struct decoder *d) {
  return d->header;
}

static int is_scale(int denominator) {
  return denominator == 1 || denominator == 2 || denominator == 4 || denominator == 8;
}

/*
 * Starts decoding at 1/scale_denom (1, 2, 4 or 8; output sides ceil(side / scale_denom), as libjpeg
 * rounds) the window of `width` x `height` output pixels at (x, y), handed out in bands of at most
 * `band_rows` rows. A progressive or multi-scan file is read whole here (into libjpeg's coefficient
 * buffer). The pixels of the window are exactly those of a whole decode:
 * - jpeg_crop_scanline starts rows at an iMCU column, and libjpeg's fancy upsampling replicates the
 *   edge chroma sample at both ends of the cropped row where a whole row has the neighbour. The
 *   window is widened by two chroma samples on each side before cropping and trimmed when handed
 *   out.
 * - after jpeg_skip_scanlines(y), libjpeg-turbo 2.1.5 returns the rows from y on exactly as a
 *   whole decode does, context rows of the upsampler included (src/image/codecs/libjpeg.test.ts
 *   checks every subsampling), so nothing is decoded above the window.
 * 4-component files (CMYK, YCCK) come out as libjpeg's CMYK, and the stored values are inverted:
 * the file is read as Adobe-inverted also without an Adobe marker, as libvips reads it.
 */
EMSCRIPTEN_KEEPALIVE int decoder_start(struct decoder *d, int scale_denom, int x, int y, int width, int height,
                                       int band_rows) {
  GUARD(d);
  j_decompress_ptr cinfo = &d->cinfo;
  if (!is_scale(scale_denom) || band_rows < 1 || width < 1 || height < 1 || x < 0 || y < 0 || d->band) {
    codec_fail(&d->guard, CODEC_MISUSE, "decoder_start: bad arguments");
  }
  d->invert = cinfo->num_components == 4;
  cinfo->out_color_space = d->invert ? JCS_CMYK : JCS_EXT_RGBA;
  cinfo->scale_num = 1;
  cinfo->scale_denom = (unsigned int)scale_denom;
  jpeg_start_decompress(cinfo);

  int output_width = (int)cinfo->output_width, output_height = (int)cinfo->output_height;
  if ((int64_t)x + width > output_width || (int64_t)y + height > output_height) {
    codec_fail(&d->guard, CODEC_MISUSE, "decoder_start: window outside the image");
  }
  int margin = 2 * cinfo->max_h_samp_factor;
  JDIMENSION crop_x = (JDIMENSION)(x > margin ? x - margin : 0);
  int right = x + width + margin < output_width ? x + width + margin : output_width;
  JDIMENSION crop_width = (JDIMENSION)right - crop_x;
  jpeg_crop_scanline(cinfo, &crop_x, &crop_width); /* moves crop_x left to an iMCU column */
  d->left = x - (int)crop_x;

  if (y > 0) jpeg_skip_scanlines(cinfo, (JDIMENSION)y);

  d->width = width;
  d->height = height;
  d->last_row = y + height == output_height;
  d->band_rows = band_rows;
  d->header[HEADER_OUTPUT_WIDTH] = width;
  d->header[HEADER_OUTPUT_HEIGHT] = height;
  d->band = malloc((size_t)band_rows * (size_t)width * 4);
  if ((int)crop_width != width) d->row = malloc((size_t)crop_width * 4);
  if (!d->band || ((int)crop_width != width && !d->row)) codec_fail(&d->guard, CODEC_OUT_OF_MEMORY, "band buffer");
  return CODEC_OK;
}

/*
 * Decodes the next rows of the window into the band buffer (decoder_band), at most `max_rows` and
 * at most band_rows; returns how many (0 once the window is done) or a codec_status. After the
 * window's last row, when the window reaches the bottom of the image, the rest of the file is read
 * up to its EOI marker, so a file cut short after its last scan data is still found damaged.
 */
EMSCRIPTEN_KEEPALIVE int decoder_read(struct decoder *d, int max_rows) {
  GUARD(d);
  j_decompress_ptr cinfo = &d->cinfo;
  if (!d->band) codec_fail(&d->guard, CODEC_MISUSE, "decoder_read before decoder_start");
  int rows = d->height - d->rows_done;
  if (rows > max_rows) rows = max_rows;
  if (rows > d->band_rows) rows = d->band_rows;
  size_t row_bytes = (size_t)d->width * 4;
  for (int r = 0; r < rows; r++) {
    uint8_t *out = d->band + (size_t)r * row_bytes;
    JSAMPROW row = d->row ? d->row : out;
    if (jpeg_read_scanlines(cinfo, &row, 1) != 1) codec_fail(&d->guard, CODEC_DAMAGED, "no more rows");
    if (d->row) memcpy(out, d->row + (size_t)d->left * 4, row_bytes);
  }
  if (d->invert) {
    uint8_t *end = d->band + (size_t)rows * row_bytes;
    for (uint8_t *p = d->band; p < end; p++) *p = (uint8_t)(255 - *p);
  }
  d->rows_done += rows;
  if (rows > 0 && d->rows_done == d->height && d->last_row) jpeg_finish_decompress(cinfo);
  return rows;
}

/* The band buffer: decoder_read's rows, `width` * 4 bytes each, valid until the next call. */
EMSCRIPTEN_KEEPALIVE uint8_t *decoder_band(struct decoder *d) {
  return d->band;
}

/* The error, or the last warning, as text (for logs). */
EMSCRIPTEN_KEEPALIVE const char *decoder_message(struct decoder *d) {
  return d->guard.message;
}

/* The most bytes libjpeg held at once so far (its allocations only, not the band buffers). */
EMSCRIPTEN_KEEPALIVE size_t decoder_memory_peak(struct decoder *d) {
  return d->guard.memory_peak;
}

/* Frees everything; safe in any state. */
EMSCRIPTEN_KEEPALIVE void decoder_destroy(struct decoder *d) {
  if (!d) return;
  jpeg_destroy_decompress(&d->cinfo);
  free(d->input);
  free(d->band);
  free(d->row);
  free(d);
}

CODEC_YIELDING_ENTRY(decoder_start)
