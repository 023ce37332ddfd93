# Sourced by codecs/build.sh: zlib (Debian 12's source package) as one WebAssembly module,
# src/image/codecs/wasm/png-zlib.{wasm,js}, holding the PNG band decoder and band encoder of
# codecs/png/*.c: inflate, unfilter and expansion to RGBA in one pass; packing, filter choice,
# deflate and IDAT framing in the other direction.

ZLIB_PACKAGE=zlib
ZLIB_VERSION=1:1.2.13.dfsg-1
ZLIB_ORIG_SHA256=71feb7947e3c00ef125f83b79a4e529bde31171e5babe48b391f06758d1ab0a1
ZLIB_DEBIAN_SHA256=f66cf3d4f2d7defcd4d1fd1fb0a11ee39f1e01b42ec7d059c9dc5c1695133c44

# zlib's own C (no assembly); -msimd128 lets LLVM vectorise the filter loops and the entry points
# use wasm_simd128.h for unfiltering and expanding 3- and 4-byte pixels.
ZLIB_CFLAGS=(-O3 -msimd128 -DNDEBUG)
ZLIB_SOURCES=(adler32.c crc32.c deflate.c inffast.c inflate.c inftrees.c trees.c zutil.c)

# The codec needs little memory of its own (a 4 KiB buffer on the stack at most), so the module starts
# small and grows by what zlib and the rows take (memory.ts counts it).
PNG_LINK_FLAGS=(-sTOTAL_STACK=64KB -sINITIAL_MEMORY=256KB -sABORTING_MALLOC=0)

PNG_ENTRY_POINTS=(codecs/png/codec.h codecs/png/decoder.c codecs/png/encoder.c)

PNG_EXPORTS=(
  _decoder_create _decoder_palette _decoder_set_key _decoder_read _decoder_band _decoder_message _decoder_destroy
  _encoder_create _encoder_band _encoder_write _encoder_finish _encoder_message _encoder_destroy
)

build_png() {
  fetch_source "$ZLIB_PACKAGE" "$ZLIB_VERSION" "$ZLIB_ORIG_SHA256" "$ZLIB_DEBIAN_SHA256"
  local upstream=${ZLIB_VERSION#*:}
  upstream=${upstream%-*}
  local tree="$work/src/$ZLIB_PACKAGE-$upstream"
  local sources=()
  for file in "${ZLIB_SOURCES[@]}"; do sources+=("$tree/$file"); done

  local exports
  exports=$(IFS=,; echo "${PNG_EXPORTS[*]},${EM_COMMON_EXPORTS[*]}")
  emcc "${ZLIB_CFLAGS[@]}" -I"$tree" \
    "${sources[@]}" "$here/png/decoder.c" "$here/png/encoder.c" \
    "${EM_LINK_FLAGS[@]}" "${PNG_LINK_FLAGS[@]}" -sEXPORTED_FUNCTIONS="$exports" \
    -o "$out/png-zlib.js"

  mkdir -p "$out/licenses/zlib"
  cp "$tree/LICENSE" "$out/licenses/zlib/"

  record png package "$ZLIB_PACKAGE"
  record png version "$ZLIB_VERSION"
  record png orig_sha256 "$ZLIB_ORIG_SHA256"
  record png debian_sha256 "$ZLIB_DEBIAN_SHA256"
  record png cflags "${ZLIB_CFLAGS[*]}"
  record png sources "${ZLIB_SOURCES[*]}"
  record png link_flags "${EM_LINK_FLAGS[*]} ${PNG_LINK_FLAGS[*]}"
  record png exports "$exports"
  for file in png-zlib.wasm png-zlib.js licenses/zlib/LICENSE; do
    record png output "$file"
  done
  for file in "${PNG_ENTRY_POINTS[@]}" codecs/png/build.sh; do
    record png entry "$file"
  done
}
