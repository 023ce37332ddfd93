# Sourced by codecs/build.sh: libjpeg-turbo (Debian 12's source package) as one WebAssembly module,
# src/image/codecs/wasm/libjpeg.{wasm,js}, holding the band decoder and the band encoder of
# codecs/jpeg/*.c. Static library only: no SIMD assembly (there is none for wasm), no TurboJPEG, no
# tools, no arithmetic coding (the header reader refuses arithmetic-coded frames before decoding).

JPEG_PACKAGE=libjpeg-turbo
JPEG_VERSION=1:2.1.5-2
JPEG_ORIG_SHA256=254f3642b04e309fee775123133c6464181addc150499561020312ec61c1bf7c
JPEG_DEBIAN_SHA256=cdb2433c2f7101345c1ffa14efb943787c675b86354691a32490845fe4bc9237

# Chosen by measurement (12 MP photo, Node 24, CPU ms, medians of 9 interleaved runs on a loaded
# 2-core machine): decode / encode q80 / encode q80 with optimised tables, wasm bytes:
#   -O2 213/393/467 417 KB; -O2 -msimd128 211/350/427 452 KB; -O3 206/374/487 414 KB;
#   -O3 -msimd128 205/343/441 458 KB; -Os 217/419/482 349 KB; -Os -msimd128 218/359/447 355 KB.
# -msimd128 lets LLVM vectorise the encoder's loops (~10%). -O2 and -O3 are alike in speed; an -O3
# link minifies the glue further (16 KB instead of 22 KB).
# (libjpeg-turbo's own SIMD code is x86/ARM assembly and is not built.)
# -sSUPPORT_LONGJMP=wasm: libjpeg's error exits longjmp back to the entry points. Emscripten's
# default setjmp calls through JavaScript (invoke_* wrappers), and a JSPI suspension cannot cross
# JavaScript frames, so the yield points (codecs/common/yield.h) need WebAssembly's own.
JPEG_CFLAGS=(-O3 -msimd128 -sSUPPORT_LONGJMP=wasm)

JPEG_ENTRY_POINTS=(codecs/common/yield.h codecs/common/yield.c codecs/jpeg/codec.h codecs/jpeg/errors.c codecs/jpeg/memory.c codecs/jpeg/decoder.c codecs/jpeg/encoder.c)

JPEG_EXPORTS=(
  _malloc _free _codec_set_yielding _decoder_start_entry _encoder_finish_entry
  _decoder_create _decoder_read_header _decoder_header _decoder_start _decoder_read _decoder_band
  _decoder_message _decoder_memory_peak _decoder_destroy
  _encoder_create _encoder_start _encoder_band _encoder_write _encoder_finish _encoder_message _encoder_memory_peak _encoder_destroy
)

build_jpeg() {
  fetch_source "$JPEG_PACKAGE" "$JPEG_VERSION" "$JPEG_ORIG_SHA256" "$JPEG_DEBIAN_SHA256"
  local upstream=${JPEG_VERSION#*:}
  upstream=${upstream%-*}
  local tree="$work/src/$JPEG_PACKAGE-$upstream"
  local build="$work/build/jpeg"
  # libjpeg-turbo stores its build date in the library (jcmaster.c): the Debian changelog's date
  # keeps the output the same from one day to the next.
  local source_date
  source_date=$(dpkg-parsechangelog -l "$tree/debian/changelog" -STimestamp)
  rm -rf "$build" && mkdir -p "$build"

  # Speed for a 32-bit target that has 64-bit integers and a clz instruction, in a copy of the tree
  # (the output is the same, bit for bit): libjpeg-turbo gives the Huffman coders 64-bit bit buffers
  # only on 64-bit targets and x32, and counts bits with clz only on Arm. The pass that gathers
  # statistics for optimised tables counts them one bit at a time; it takes JPEG_NBITS too.
  local patched="$build/source"
  cp -a "$tree" "$patched"
  sed -i 's/defined(__x86_64__) && defined(__ILP32__)/(defined(__x86_64__) || defined(__wasm__)) \&\& defined(__ILP32__)/' \
    "$patched/jchuff.c" "$patched/jdhuff.c" "$patched/jdhuff.h"
  sed -i 's/^#if (defined(__GNUC__) && (defined(__arm__) || defined(__aarch64__))) || \\$/#if (defined(__GNUC__) \&\& (defined(__arm__) || defined(__aarch64__) || defined(__wasm__))) || \\/' "$patched/jchuff.c"
  perl -0pi -e 's/  nbits = 0;\n  while \(temp\) \{\n    nbits\+\+;\n    temp >>= 1;\n  \}\n  \/\* Check for out-of-range coefficient values\.\n   \* Since we/  nbits = JPEG_NBITS(temp);\n  \/* Check for out-of-range coefficient values.\n   * Since we/; s/      nbits = 1;                \/\* there must be at least one 1 bit \*\/\n      while \(\(temp >>= 1\)\)\n        nbits\+\+;/      nbits = JPEG_NBITS_NONZERO(temp);/' "$patched/jchuff.c"
  [ "$(grep -c 'defined(__wasm__)' "$patched/jchuff.c")" = 3 ] && [ "$(grep -c 'JPEG_NBITS(temp)\|JPEG_NBITS_NONZERO(temp)' "$patched/jchuff.c")" = 2 ] \
    && grep -q 'defined(__wasm__)' "$patched/jdhuff.h" && grep -q 'defined(__wasm__)' "$patched/jdhuff.c" \
    || { echo "jpeg: the speed patches did not apply" >&2; return 1; }
  tree=$patched

  # emcmake's try-run checks cannot run under Node 20, so the type sizes are given (wasm32).
  SOURCE_DATE_EPOCH=$source_date emcmake cmake -S "$tree" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="${JPEG_CFLAGS[*]} -DNDEBUG" \
    -DENABLE_SHARED=0 -DENABLE_STATIC=1 -DWITH_SIMD=0 -DWITH_TURBOJPEG=0 \
    -DWITH_ARITH_DEC=0 -DWITH_ARITH_ENC=0 \
    -DHAVE_SIZE_T=TRUE -DSIZE_T=4 -DHAVE_UNSIGNED_LONG=TRUE -DUNSIGNED_LONG=4 >/dev/null
  ninja -C "$build" jpeg-static >/dev/null

  # The entry points replace jmemnobs.c's memory functions (memory.c defines them all, so the
  # linker never takes jmemnobs.o from the archive).
  local exports
  exports=$(IFS=,; echo "${JPEG_EXPORTS[*]}")
  emcc "${JPEG_CFLAGS[@]}" -I"$tree" -I"$build" -I"$here/common" \
    "$here/common/yield.c" "$here/jpeg/errors.c" "$here/jpeg/memory.c" "$here/jpeg/decoder.c" "$here/jpeg/encoder.c" \
    "$build/libjpeg.a" \
    "${EM_LINK_FLAGS[@]}" -sABORTING_MALLOC=0 -sEXPORTED_FUNCTIONS="$exports" \
    -o "$out/libjpeg.js"

  mkdir -p "$out/licenses/libjpeg-turbo"
  cp "$tree/LICENSE.md" "$tree/README.ijg" "$out/licenses/libjpeg-turbo/"

  record jpeg package "$JPEG_PACKAGE"
  record jpeg version "$JPEG_VERSION"
  record jpeg orig_sha256 "$JPEG_ORIG_SHA256"
  record jpeg debian_sha256 "$JPEG_DEBIAN_SHA256"
  record jpeg cflags "${JPEG_CFLAGS[*]}"
  record jpeg cmake "-DWITH_SIMD=0 -DWITH_TURBOJPEG=0 -DWITH_ARITH_DEC=0 -DWITH_ARITH_ENC=0 -DENABLE_SHARED=0"
  record jpeg link_flags "${EM_LINK_FLAGS[*]} -sABORTING_MALLOC=0"
  record jpeg exports "$exports"
  for file in libjpeg.wasm libjpeg.js licenses/libjpeg-turbo/LICENSE.md licenses/libjpeg-turbo/README.ijg; do
    record jpeg output "$file"
  done
  for file in "${JPEG_ENTRY_POINTS[@]}" codecs/jpeg/build.sh; do
    record jpeg entry "$file"
  done
}
