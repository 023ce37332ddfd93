# Sourced by codecs/build.sh: Chromium's zlib and libdeflate (Debian 12's source packages) as one
# WebAssembly module, src/image/codecs/wasm/png-zlib.{wasm,js}, holding the PNG band decoder and
# band encoder of codecs/png/*.c: Chromium's inflate, unfilter and expansion to RGBA in one pass;
# packing, filter choice, libdeflate's deflate and IDAT framing in the other direction.

# Chromium's fork of zlib (1.3.0.1), as Node.js 18 bundles it in deps/zlib: Debian 12's nodejs
# source package keeps it whole (Debian's chromium source drops most of it, and is 941 MB). Its
# inflate (contrib/optimizations) is the decoder's: a 64-bit bit buffer refilled by one 8-byte
# load, up to three literals per refill, a 10-bit root table for literals and lengths, and matches
# copied 16 bytes at a time (SSE2, which Emscripten maps onto WebAssembly SIMD). The 12 MP photo
# inflates in 117 ms where zlib 1.2.13 took 150 and zlib 1.2.13 with a 64-bit bit buffer 136
# (docs/performance.md, PNG). Only deps/zlib of the tree is built; it lies in the orig tarball,
# which every 18.20.4+dfsg-1~deb12uN revision shares: when the mirror moves to a newer revision,
# pin it and its debian tarball's hash here.
ZLIB_PACKAGE=nodejs
ZLIB_VERSION=18.20.4+dfsg-1~deb12u2
ZLIB_ORIG_SHA256=6ce58062c71eae37d9c5ac31eeaeff9c2d48561d21c2849179d056c9c1bd9ebc
ZLIB_DEBIAN_SHA256=9740da86ce7f8c554b7e71308df9903834c2aaadca01c76ac49d0b895f2afa52
ZLIB_DIR=deps/zlib

# libdeflate compresses whole buffers only: the encoder gives it 256 KiB of filtered rows at a time
# and joins the pieces into one zlib stream. Patched in a copy of the tree (see build_png): a piece
# that is not the last leaves BFINAL clear and ends with an empty stored block, byte-aligned, as
# zlib's Z_SYNC_FLUSH does. On the 12 MP photo its level 1 is 1.8 times as fast as zlib's level 1
# for 3% fewer bytes (docs/performance.md, PNG).
DEFLATE_PACKAGE=libdeflate
DEFLATE_VERSION=1.14-1
DEFLATE_ORIG_SHA256=89e7df898c37c3427b0f39aadcf733731321a278771d20fc553f92da8d4808ac
DEFLATE_DEBIAN_SHA256=4794c379cc4e77eaeb283620bd80a7ce57b858af508f80ba6d5efbc4bcb10434
DEFLATE_SOURCES=(lib/deflate_compress.c lib/utils.c)

# Chromium's inflate with its SSE2 chunk copies and 64-bit reads; no run-time CPU detection
# (CPU_NO_SIMD: its SIMD CRC-32 and Adler-32 stay off; the decoder checks neither, the encoder's
# checksums run the portable code). -msimd128 lets LLVM vectorise loops, and the entry points use
# wasm_simd128.h for unfiltering and expanding pixels.
ZLIB_CFLAGS=(-O3 -msimd128 -msse2 -DNDEBUG -DINFLATE_CHUNK_SIMD_SSE2 -DINFLATE_CHUNK_READ_64LE -DCPU_NO_SIMD)
ZLIB_SOURCES=(adler32.c crc32.c cpu_features.c inftrees.c zutil.c contrib/optimizations/inflate.c contrib/optimizations/inffast_chunk.c)

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
  local zlib="$work/src/$ZLIB_PACKAGE-$upstream/$ZLIB_DIR"
  local sources=()
  for file in "${ZLIB_SOURCES[@]}"; do sources+=("$zlib/$file"); done

  fetch_source "$DEFLATE_PACKAGE" "$DEFLATE_VERSION" "$DEFLATE_ORIG_SHA256" "$DEFLATE_DEBIAN_SHA256"
  local deflate_tree="$work/src/$DEFLATE_PACKAGE-${DEFLATE_VERSION%-*}"
  local patched="$work/build/png/libdeflate"
  rm -rf "$patched" && mkdir -p "$(dirname "$patched")" && cp -a "$deflate_tree" "$patched"
  local compress="$patched/lib/deflate_compress.c"
  # libdeflate_chunk_continues set: every BFINAL bit written is 0 (the dynamic/static block header
  # twice, stored blocks twice), and the output ends with an empty stored block on a byte boundary.
  perl -0pi -e 's/(#include "deflate_compress.h"\n)/$1\n\/\* Set by codecs\/png\/encoder.c: this piece is not the end of the stream. \*\/\nint libdeflate_chunk_continues = 0;\n/' "$compress"
  perl -0pi -e 's/ADD_BITS\(is_final_block, 1\);/ADD_BITS(is_final_block \&\& !libdeflate_chunk_continues, 1);/g' "$compress"
  perl -0pi -e 's/bfinal = is_final_block;/bfinal = is_final_block \&\& !libdeflate_chunk_continues;/' "$compress"
  perl -0pi -e 's/(if \(in_end - in_next <= UINT16_MAX\) \{\n\t\t\tbfinal = )1;/$1!libdeflate_chunk_continues;/' "$compress"
  perl -0pi -e 's/(\tASSERT\(os.bitcount <= 7\);\n)(\tif \(os.bitcount\)\n\t\t\*os.next\+\+ = os.bitbuf;\n)/$1\tif (libdeflate_chunk_continues) {\n\t\tos.bitcount += 3; \/\* BFINAL 0, BTYPE 00 (stored), all zero bits \*\/\n\t\twhile (os.bitcount > 0) {\n\t\t\t*os.next++ = (u8)os.bitbuf;\n\t\t\tos.bitbuf >>= 8;\n\t\t\tos.bitcount = os.bitcount > 8 ? os.bitcount - 8 : 0;\n\t\t}\n\t\tput_unaligned_le32(0xFFFF0000, os.next); \/\* LEN 0, NLEN 0xFFFF \*\/\n\t\tos.next += 4;\n\t\treturn os.next - (u8 *)out;\n\t}\n$2/' "$compress"
  [ "$(grep -c 'libdeflate_chunk_continues' "$compress")" = 6 ] || { echo "libdeflate: the chunk patch did not apply" >&2; return 1; }
  for file in "${DEFLATE_SOURCES[@]}"; do sources+=("$patched/$file"); done

  local exports
  exports=$(IFS=,; echo "${PNG_EXPORTS[*]},${EM_COMMON_EXPORTS[*]}")
  emcc "${ZLIB_CFLAGS[@]}" -I"$zlib" -I"$patched" \
    "${sources[@]}" "$here/png/decoder.c" "$here/png/encoder.c" \
    "${EM_LINK_FLAGS[@]}" "${PNG_LINK_FLAGS[@]}" -sEXPORTED_FUNCTIONS="$exports" \
    -o "$out/png-zlib.js"

  mkdir -p "$out/licenses/zlib"
  cp "$zlib/LICENSE" "$out/licenses/zlib/"
  mkdir -p "$out/licenses/libdeflate"
  cp "$deflate_tree/COPYING" "$out/licenses/libdeflate/"

  record png package "$ZLIB_PACKAGE"
  record png version "$ZLIB_VERSION"
  record png orig_sha256 "$ZLIB_ORIG_SHA256"
  record png debian_sha256 "$ZLIB_DEBIAN_SHA256"
  record png cflags "${ZLIB_CFLAGS[*]}"
  record png sources "$ZLIB_DIR: ${ZLIB_SOURCES[*]}"
  record png deflate_package "$DEFLATE_PACKAGE"
  record png deflate_version "$DEFLATE_VERSION"
  record png deflate_orig_sha256 "$DEFLATE_ORIG_SHA256"
  record png deflate_debian_sha256 "$DEFLATE_DEBIAN_SHA256"
  record png deflate_sources "${DEFLATE_SOURCES[*]}"
  record png link_flags "${EM_LINK_FLAGS[*]} ${PNG_LINK_FLAGS[*]}"
  record png exports "$exports"
  for file in png-zlib.wasm png-zlib.js licenses/zlib/LICENSE licenses/libdeflate/COPYING; do
    record png output "$file"
  done
  for file in "${PNG_ENTRY_POINTS[@]}" codecs/png/build.sh; do
    record png entry "$file"
  done
}
