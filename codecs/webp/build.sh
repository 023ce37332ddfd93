# Sourced by codecs/build.sh: libwebp (Debian 12's source package, with Debian's security patches
# for CVE-2023-1999 and CVE-2023-4863) as one WebAssembly module, src/image/codecs/wasm/libwebp.{wasm,js},
# holding the band decoder and the picture encoder of codecs/webp/*.c. The library's files are
# compiled directly (no cmake): src/dec, src/dsp, src/enc, src/utils and sharpyuv (the encoder
# links it; it only runs with use_sharp_yuv, which is never set). Not built: src/demux and src/mux
# (the first frame of an animation is extracted in TypeScript, webp-first-frame.ts).

WEBP_PACKAGE=libwebp
WEBP_VERSION=1.2.4-0.2+deb12u1
WEBP_ORIG_SHA256=7bf5a8a28cc69bcfa8cb214f2c3095703c6b73ac5fba4d5480c205331d9494df
WEBP_DEBIAN_SHA256=69cdba4dfe2e1b34d55fa80c1b29c31cacd40dd183812d6bcca7e508a2f7afcd

# -msse2 -msse4.1 make libwebp's SSE2/SSE4.1 code paths compile to wasm SIMD through Emscripten's
# intrinsics headers (src/dsp/cpu.c enables them for EMSCRIPTEN from these flags, no runtime check).
# Measured on the 12 MP photo (codecs/webp/README of this commit's message): see WEBP_CFLAGS' commit.
WEBP_CFLAGS=(-O3 -msimd128 -msse2 -msse4.1 -DNDEBUG)

WEBP_ENTRY_POINTS=(codecs/common/yield.h codecs/common/yield.c codecs/webp/codec.h codecs/webp/memory.c codecs/webp/lossless_rows.h codecs/webp/lossless_rows.c
  codecs/webp/alpha.h codecs/webp/alpha.c codecs/webp/decoder.c codecs/webp/encoder.c)

WEBP_EXPORTS=(
  _codec_memory_set_limit _codec_memory_used _codec_memory_peak _codec_set_yielding _encoder_encode_entry
  _decoder_create _decoder_input _decoder_read_header _decoder_info _decoder_start _decoder_read _decoder_rows
  _decoder_decode_whole _decoder_free_whole _decoder_destroy
  _encoder_create _encoder_status _encoder_rows _encoder_import _encoder_encode _encoder_destroy
)

build_webp() {
  fetch_source "$WEBP_PACKAGE" "$WEBP_VERSION" "$WEBP_ORIG_SHA256" "$WEBP_DEBIAN_SHA256"
  local upstream=${WEBP_VERSION%-*}
  local tree="$work/src/$WEBP_PACKAGE-$upstream"
  local build="$work/build/webp"
  # The Debian patches must be in the tree that is built (dpkg-source applied them).
  grep -q 'VP8LHuffmanTablesAllocate' "$tree/src/utils/huffman_utils.h" || { echo "libwebp: CVE-2023-4863 patch missing" >&2; return 1; }
  grep -q 'memset(&result->bw, 0, sizeof(result->bw))' "$tree/src/enc/alpha_enc.c" || { echo "libwebp: CVE-2023-1999 patch missing" >&2; return 1; }
  rm -rf "$build" && mkdir -p "$build"

  # Yield points at every macroblock the encoder's passes step through (analysis, statistics,
  # tokens, the final pass), in a copy of the tree: libwebp's progress hook only reports whole
  # percents, and some passes not at all (a 24 MP encode went 250 ms without one).
  local patched="$build/source"
  cp -a "$tree" "$patched"
  perl -0pi -e 's/int VP8IteratorNext\(VP8EncIterator\* const it\) \{\n/void codec_macroblock_done(void);\n\nint VP8IteratorNext(VP8EncIterator* const it) {\n  codec_macroblock_done();\n/' "$patched/src/enc/iterator_enc.c"
  [ "$(grep -c 'codec_macroblock_done' "$patched/src/enc/iterator_enc.c")" = 2 ] || { echo "libwebp: the macroblock yield patch did not apply" >&2; return 1; }
  # The lossless decoding loop keeps its pixels in a ring (codecs/webp/lossless_rows.c, which
  # compiles this file): at each step it asks whether the ring is full and, if so, has the pixels
  # still needed moved to the ring's start and rebases its pointers on the returned one.
  perl -0pi -e 's/static int DecodeImageData\(VP8LDecoder\* const dec, uint32_t\* const data,/static int DecodeImageData(VP8LDecoder* const dec, uint32_t* data,/; s/  uint32_t\* const src_end = data \+ width \* height; /  uint32_t* src_end = data + width * height;       /; s/  uint32_t\* const src_last = data \+ width \* last_row;/  uint32_t* src_last = data + width * last_row;      /; s/(  while \(src < src_last\) \{\n    int code;\n)(    if \(row >= next_sync_row\) \{\n      SaveState\(dec, \(int\)\(src - data\)\);)/$1    if (CodecRingFull(dec, src)) {\n      const ptrdiff_t at = src - data, cached = last_cached - data;\n      uint32_t* const moved = CodecRingShift(dec, at, width);\n      src_end = moved + (src_end - data);\n      src_last = moved + (src_last - data);\n      data = moved;\n      src = data + at;\n      last_cached = data + cached;\n    }\n$2/' "$patched/src/dec/vp8l_dec.c"
  [ "$(grep -c 'CodecRing' "$patched/src/dec/vp8l_dec.c")" = 2 ] && grep -q 'uint32_t\* src_last = data' "$patched/src/dec/vp8l_dec.c" \
    || { echo "libwebp: the lossless ring patch did not apply" >&2; return 1; }
  tree=$patched

  # utils.c and vp8l_dec.c are compiled inside memory.c and lossless_rows.c (see those files).
  local sources=()
  local file
  for file in "$tree"/src/dec/*.c "$tree"/src/dsp/*.c "$tree"/src/enc/*.c "$tree"/src/utils/*.c "$tree"/sharpyuv/*.c; do
    case "$file" in
      */src/utils/utils.c | */src/dec/vp8l_dec.c) ;;
      *) sources+=("$file") ;;
    esac
  done
  sources+=("$here/common/yield.c" "$here/webp/memory.c" "$here/webp/lossless_rows.c" "$here/webp/alpha.c" "$here/webp/decoder.c" "$here/webp/encoder.c")

  # One object per file (named after its folder too: dec/ and enc/ have no common names, but the
  # objects stay unique whatever the folders hold), two compilers at a time.
  local objects=() index
  for file in "${sources[@]}"; do
    objects+=("$build/$(basename "$(dirname "$file")")-$(basename "$file" .c).o")
  done
  export WEBP_CC_FLAGS="${WEBP_CFLAGS[*]} -I$tree -I$here/webp -I$here/common"
  for index in "${!sources[@]}"; do
    printf '%s\0%s\0' "${sources[$index]}" "${objects[$index]}"
  done | xargs -0 -n 2 -P 2 sh -c 'emcc $WEBP_CC_FLAGS -c "$0" -o "$1"'

  local exports
  exports=$(IFS=,; echo "${WEBP_EXPORTS[*]},${EM_COMMON_EXPORTS[*]}")
  emcc "${WEBP_CFLAGS[@]}" "${objects[@]}" \
    "${EM_LINK_FLAGS[@]}" -sABORTING_MALLOC=0 -sEXPORTED_FUNCTIONS="$exports" \
    -o "$out/libwebp.js"

  mkdir -p "$out/licenses/libwebp"
  cp "$tree/COPYING" "$tree/PATENTS" "$out/licenses/libwebp/"

  record webp package "$WEBP_PACKAGE"
  record webp version "$WEBP_VERSION"
  record webp orig_sha256 "$WEBP_ORIG_SHA256"
  record webp debian_sha256 "$WEBP_DEBIAN_SHA256"
  record webp debian_patches "$(tr '\n' ' ' < "$tree/debian/patches/series" | sed 's/ $//')"
  record webp cflags "${WEBP_CFLAGS[*]}"
  record webp sources "src/dec src/dsp src/enc src/utils sharpyuv (*.c; utils.c and vp8l_dec.c through memory.c and lossless_rows.c)"
  record webp link_flags "${EM_LINK_FLAGS[*]} -sABORTING_MALLOC=0"
  record webp exports "$exports"
  for file in libwebp.wasm libwebp.js licenses/libwebp/COPYING licenses/libwebp/PATENTS; do
    record webp output "$file"
  done
  for file in "${WEBP_ENTRY_POINTS[@]}" codecs/webp/build.sh; do
    record webp entry "$file"
  done
}
