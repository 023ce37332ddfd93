/*
 * Resumable lossless (VP8L) decoding into RGBA rows: see lossless_rows.c.
 */
#ifndef WEBP_LOSSLESS_ROWS_H
#define WEBP_LOSSLESS_ROWS_H

#include "src/dec/vp8li_dec.h"

/* After VP8LDecodeHeader: what VP8LDecodeImage sets up before decoding (its ARGB pixels, a ring for a large image). */
int VP8LStartRows(VP8LDecoder *dec);

/* Decodes on to row `last_row` (exclusive) and writes rows up to it to the output buffer; 0 on error (dec->status_). */
int VP8LDecodeRows(VP8LDecoder *dec, int last_row);

/* VP8LDelete for a decoder started with VP8LStartRows. */
void VP8LDeleteRows(VP8LDecoder *dec);

#endif
