# Sourced by codecs/build.sh: libjpeg-turbo (Debian 12's source package) as one WebAssembly module,
# src/image/codecs/wasm/libjpeg.{wasm,js}, holding the band decoder and the band encoder of
# codecs/jpeg/*.c. Static library only: no TurboJPEG, no tools, no arithmetic coding (the header
# reader refuses arithmetic-coded frames before decoding). libjpeg-turbo's SIMD code is its Arm Neon
# intrinsics (simd/arm/*.c), compiled to WebAssembly SIMD through SIMDe (codecs/jpeg/arm_neon.h),
# with the DCTs, quantisation and colour conversion replaced by our own (codecs/jpeg/simd-wasm.c).

JPEG_PACKAGE=libjpeg-turbo
JPEG_VERSION=1:2.1.5-2
JPEG_ORIG_SHA256=254f3642b04e309fee775123133c6464181addc150499561020312ec61c1bf7c
JPEG_DEBIAN_SHA256=cdb2433c2f7101345c1ffa14efb943787c675b86354691a32490845fe4bc9237

# SIMDe (headers only) from Debian 12's binary package: the mirror no longer has the source
# package's tarballs. apt checks the package against the signed Release file; the .deb is checked
# again against this SHA-256 before it is unpacked.
SIMDE_PACKAGE=libsimde-dev
SIMDE_VERSION=0.7.4~rc2-2
SIMDE_DEB_SHA256=471b66fdc79e0a479c4d11dc85c2b6313df1704b737ea2f7266753335c5d062b

# Chosen by measurement (12 MP photo, Node 24, CPU ms, medians of 9 interleaved runs on a loaded
# 2-core machine): decode / encode q80 / encode q80 with optimised tables, wasm bytes:
#   -O2 213/393/467 417 KB; -O2 -msimd128 211/350/427 452 KB; -O3 206/374/487 414 KB;
#   -O3 -msimd128 205/343/441 458 KB; -Os 217/419/482 349 KB; -Os -msimd128 218/359/447 355 KB.
# -msimd128 lets LLVM vectorise the encoder's loops (~10%). -O2 and -O3 are alike in speed; an -O3
# link minifies the glue further (16 KB instead of 22 KB).
# -sSUPPORT_LONGJMP=wasm: libjpeg's error exits longjmp back to the entry points. Emscripten's
# default setjmp calls through JavaScript (invoke_* wrappers), and a JSPI suspension cannot cross
# JavaScript frames, so the yield points (codecs/common/yield.h) need WebAssembly's own.
JPEG_CFLAGS=(-O3 -msimd128 -sSUPPORT_LONGJMP=wasm)

# libjpeg-turbo's Neon kernels through SIMDe (codecs/jpeg/arm_neon.h), each switched on alone against
# the C code (12 MP photo, Node 24, CPU ms, medians of 5 interleaved runs on a loaded 2-core
# machine, two rounds; decode / encode q80 with optimised tables; outputs identical in every case):
#   C only 156/504 and 118/364; all kernels 475/1361 and 324/1062;
#   decode: ycc_rgb 318, 220; idct_islow 301, 232; h2v1_fancy_upsample 165, 119;
#     h2v2_merged_upsample 158, 114; h2v2_fancy_upsample 139, 106;
#   encode: convsamp 590, 449; fdct_islow 803, 621; quantize 672, 502; huff_encode_one_block 787, 588;
#     h2v2_downsample 499, 387; rgb_ycc 462, 354.
# SIMDe writes most of Neon's lane-wise, interleaving and table operations (vst4, vld4, vtrn, vtbl,
# ...) as scalar loops over lanes, stored and reloaded through memory; LLVM does not turn them back
# into wasm shuffles, so the DCTs, quantisation, Huffman encoding and colour conversion to RGBA run
# two to three times slower than libjpeg-turbo's C code compiled with -msimd128. So the kernels that
# matter most are written with wasm_simd128.h in codecs/jpeg/simd-wasm.c (same outputs as the C
# code, bit for bit, on every corpus JPEG at scales 1 and 1/2, and on 2,160 encodes: 12 images and
# crops down to 1x1, quality 1-100, standard and optimised tables, colour and grey). They take the
# Neon names (the Neon files for the DCTs, quantisation and Huffman coding are left out; the Neon colour
# converters of RGBX are renamed), and the Huffman encoder and the optimised tables' statistics
# visit only the non-zero coefficients. 12 MP photo, Node 24, CPU ms, two interleaved rounds,
# decode / encode q80 / with optimised tables: before 111/158/316 and 104/138/323; DCTs,
# quantisation and colour 78/84/267 and 66/87/248; with the Huffman coding too 77/72/218 and
# 65/78/201 (the optimised encode's rest is mostly the first touch of its 36 MB coefficient
# buffer: 88-96 ms into memory touched beforehand). Switched on (the others stay linked, the
# dispatcher never picks them):
JPEG_SIMD_KERNELS=(h2v2_fancy_upsample rgb_ycc convsamp fdct_islow quantize idct_islow ycc_rgb huff_encode_one_block)

JPEG_ENTRY_POINTS=(codecs/common/yield.h codecs/common/yield.c codecs/jpeg/codec.h codecs/jpeg/errors.c codecs/jpeg/memory.c codecs/jpeg/decoder.c codecs/jpeg/encoder.c
  codecs/jpeg/arm_neon.h codecs/jpeg/simd-wasm.c)

JPEG_EXPORTS=(
  _malloc _free _codec_set_yielding _decoder_start_entry _encoder_finish_entry
  _decoder_create _decoder_read_header _decoder_header _decoder_start _decoder_read _decoder_band
  _decoder_message _decoder_memory_peak _decoder_destroy
  _encoder_create _encoder_start _encoder_start_placed _encoder_band _encoder_write _encoder_place _encoder_finish _encoder_message _encoder_memory_peak _encoder_destroy
)

# fetch_simde: leaves SIMDe's headers in $work/src/$SIMDE_PACKAGE-$SIMDE_VERSION/usr/include.
fetch_simde() {
  local tree="$work/src/$SIMDE_PACKAGE-$SIMDE_VERSION"
  [ -f "$tree/.unpacked" ] && return 0
  mkdir -p "$work/src" && rm -rf "$tree"
  local deb="$work/src/${SIMDE_PACKAGE}_${SIMDE_VERSION}_all.deb"
  [ -f "$deb" ] || (cd "$work/src" && apt-get download "$SIMDE_PACKAGE=$SIMDE_VERSION" >/dev/null 2>&1)
  echo "$SIMDE_DEB_SHA256  $deb" | sha256sum -c --quiet -
  dpkg-deb -x "$deb" "$tree"
  touch "$tree/.unpacked"
}

build_jpeg() {
  fetch_source "$JPEG_PACKAGE" "$JPEG_VERSION" "$JPEG_ORIG_SHA256" "$JPEG_DEBIAN_SHA256"
  fetch_simde
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

  # The packed backing store (codecs/jpeg/memory.c) needs the row size of the block array it holds:
  # the backing store's struct gets that field and a pointer for the store, and jmemmgr.c sets the
  # row size before it opens a store (0 for sample arrays, which have none).
  perl -0pi -e 's{(  char temp_name\[TEMP_NAME_LENGTH\]; /\* name of temp file \*/\n)}{$1  long row_bytes;                /* a row of a block array, 0 for samples (codecs/jpeg/build.sh) */\n  void *rows;                    /* the packed rows (codecs/jpeg/memory.c) */\n}' "$patched/jmemsys.h"
  perl -0pi -e 's{(        jpeg_open_backing_store\(cinfo, &sptr->b_s_info,)}{        sptr->b_s_info.row_bytes = 0;\n$1}; s{(        jpeg_open_backing_store\(cinfo, &bptr->b_s_info,)}{        bptr->b_s_info.row_bytes = (long)bptr->blocksperrow * (long)sizeof(JBLOCK);\n$1}' "$patched/jmemmgr.c"
  [ "$(grep -c 'row_bytes\|void \*rows;' "$patched/jmemsys.h")" = 2 ] && [ "$(grep -c 'b_s_info.row_bytes' "$patched/jmemmgr.c")" = 2 ] \
    || { echo "jpeg: the backing-store patch did not apply" >&2; return 1; }

  # SIMD, in the same copy: libjpeg-turbo's build knows x86 (NASM), Arm, MIPS and PowerPC; for
  # Emscripten, simd/CMakeLists.txt is given a first section that builds the Arm Neon intrinsics
  # implementation (every kernel in C intrinsics, no GAS) with arm_neon.h from codecs/jpeg (SIMDe),
  # and the AArch64 dispatcher (simd/arm/aarch64/jsimd.c), which makes each jsimd_can_* answer.
  # - The AArch64 code paths: wasm has 64-bit integers, so the Huffman encoder's 64-bit bit buffer
  #   (simd/arm/jchuff.h), which jchuff.c on wasm32 already uses with the speed patches above; its
  #   put_buffer is size_t only because size_t is 64 bits on AArch64.
  # - No run-time detection: SIMD is always on (wasm SIMD is part of the module; a runtime without
  #   it cannot compile the module), so the dispatcher reads no environment variables.
  {
    cat <<'CMAKE'
# Emscripten (codecs/jpeg/build.sh): the Arm Neon intrinsics through SIMDe, as WebAssembly SIMD.
if(EMSCRIPTEN)
  set(HAVE_VLD1_S16_X3 1)
  set(HAVE_VLD1_U16_X2 1)
  set(HAVE_VLD1Q_U8_X4 1)
  configure_file(arm/neon-compat.h.in arm/neon-compat.h @ONLY)
  include_directories(${CMAKE_CURRENT_BINARY_DIR}/arm ${WASM_NEON_INCLUDE})
  add_definitions(-DNEON_INTRINSICS)
  set(NEON_INTRINSICS 1 PARENT_SCOPE)
  add_library(simd OBJECT arm/jccolor-neon.c arm/jcgray-neon.c arm/jcphuff-neon.c
    arm/jcsample-neon.c arm/jdcolor-neon.c arm/jdmerge-neon.c arm/jdsample-neon.c
    arm/jfdctfst-neon.c arm/jidctfst-neon.c arm/jidctred-neon.c arm/aarch64/jsimd.c
    ${WASM_SIMD_KERNELS})
  # codecs/jpeg/simd-wasm.c has its own RGBX to YCbCr and YCbCr to RGBX under these names.
  set_source_files_properties(arm/jccolor-neon.c PROPERTIES COMPILE_DEFINITIONS
    jsimd_extrgbx_ycc_convert_neon=jsimd_extrgbx_ycc_convert_simde)
  set_source_files_properties(arm/jdcolor-neon.c PROPERTIES COMPILE_DEFINITIONS
    jsimd_ycc_extrgbx_convert_neon=jsimd_ycc_extrgbx_convert_simde)
  return()
endif()

CMAKE
    cat "$patched/simd/CMakeLists.txt"
  } > "$build/simd-CMakeLists.txt"
  mv "$build/simd-CMakeLists.txt" "$patched/simd/CMakeLists.txt"
  sed -i 's/defined(__aarch64__) || defined(_M_ARM64)/defined(__aarch64__) || defined(_M_ARM64) || defined(__wasm__)/' \
    "$patched"/simd/arm/*.c "$patched/simd/arm/jchuff.h"
  sed -i 's/^  size_t put_buffer;/  uint64_t put_buffer;/' "$patched/simd/arm/jchuff.h"
  sed -i 's/^  size_t put_buffer = state_ptr->cur.put_buffer;/  uint64_t put_buffer = state_ptr->cur.put_buffer;/' "$patched/simd/arm/aarch64/jchuff-neon.c"
  sed -i 's/^#ifndef NO_GETENV$/#if !defined(NO_GETENV) \&\& !defined(__wasm__)/' "$patched/simd/arm/aarch64/jsimd.c"
  # Only the kernels that measured faster than libjpeg-turbo's C code answer yes (see JPEG_SIMD_KERNELS);
  # every other jsimd_can_* answers no, and the C code runs as before.
  JPEG_SIMD_KERNELS="${JPEG_SIMD_KERNELS[*]}" perl -0pi -e 'my %keep = map { $_ => 1 } split / /, $ENV{JPEG_SIMD_KERNELS};
    s{(jsimd_can_(\w+)\(void\)\n\{.*?\n\})}{my ($body, $name) = ($1, $2); $body =~ s/simd_support & JSIMD_NEON/0 \/* slower than C through SIMDe *\/ \&\& (simd_support \& JSIMD_NEON)/ unless $keep{$name}; $body}gse' \
    "$patched/simd/arm/aarch64/jsimd.c"
  # The optimised tables' statistics have no SIMD hook: htest_one_block()'s AC loop becomes a call
  # to codecs/jpeg/simd-wasm.c, which counts the same symbols visiting only non-zero coefficients.
  perl -0pi -e 's{(LOCAL\(void\)\nhtest_one_block\(.*?\n)  r = 0;\s+/\* r = run length of zeros \*/\n.*?  if \(r > 0\)\n    ac_counts\[0\]\+\+;\n\}}{EXTERN(int) jsimd_wasm_huff_count_ac(JCOEFPTR block, long ac_counts[]);\n\n$1  if (jsimd_wasm_huff_count_ac(block, ac_counts) > MAX_COEF_BITS)\n    ERREXIT(cinfo, JERR_BAD_DCT_COEF);\n\}}s' "$patched/jchuff.c"
  [ "$(grep -c '^if(EMSCRIPTEN)' "$patched/simd/CMakeLists.txt")" = 1 ] \
    && [ "$(cat "$patched"/simd/arm/*.c "$patched/simd/arm/jchuff.h" | grep -c 'defined(__wasm__)')" = 16 ] \
    && [ "$(grep -c '^  uint64_t put_buffer' "$patched/simd/arm/jchuff.h" "$patched/simd/arm/aarch64/jchuff-neon.c" | grep -c ':1$')" = 2 ] \
    && [ "$(grep -c 'defined(__wasm__)' "$patched/simd/arm/aarch64/jsimd.c")" = 2 ] \
    && [ "$(grep -c 'slower than C through SIMDe' "$patched/simd/arm/aarch64/jsimd.c")" = $((24 - ${#JPEG_SIMD_KERNELS[@]})) ] \
    && [ "$(grep -c 'jsimd_wasm_huff_count_ac' "$patched/jchuff.c")" = 2 ] \
    || { echo "jpeg: the SIMD patches did not apply" >&2; return 1; }
  tree=$patched

  # emcmake's try-run checks cannot run under Node 20, so the type sizes are given (wasm32).
  SOURCE_DATE_EPOCH=$source_date emcmake cmake -S "$tree" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="${JPEG_CFLAGS[*]} -DNDEBUG" \
    -DENABLE_SHARED=0 -DENABLE_STATIC=1 -DWITH_SIMD=1 -DREQUIRE_SIMD=1 -DWITH_TURBOJPEG=0 \
    -DWITH_ARITH_DEC=0 -DWITH_ARITH_ENC=0 \
    -DWASM_NEON_INCLUDE="$here/jpeg;$work/src/$SIMDE_PACKAGE-$SIMDE_VERSION/usr/include" \
    -DWASM_SIMD_KERNELS="$here/jpeg/simd-wasm.c" \
    -DHAVE_SIZE_T=TRUE -DSIZE_T=4 -DHAVE_UNSIGNED_LONG=TRUE -DUNSIGNED_LONG=4 >/dev/null
  ninja -C "$build" jpeg-static >/dev/null

  # The entry points replace jmemnobs.c's memory functions (memory.c defines them all, so the
  # linker never takes jmemnobs.o from the archive).
  local exports
  exports=$(IFS=,; echo "${JPEG_EXPORTS[*]},${EM_COMMON_EXPORTS[*]}")
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
  record jpeg simde "$SIMDE_PACKAGE $SIMDE_VERSION sha256:$SIMDE_DEB_SHA256"
  record jpeg cmake "-DWITH_SIMD=1 -DREQUIRE_SIMD=1 -DWITH_TURBOJPEG=0 -DWITH_ARITH_DEC=0 -DWITH_ARITH_ENC=0 -DENABLE_SHARED=0"
  record jpeg link_flags "${EM_LINK_FLAGS[*]} -sABORTING_MALLOC=0"
  record jpeg exports "$exports"
  for file in libjpeg.wasm libjpeg.js licenses/libjpeg-turbo/LICENSE.md licenses/libjpeg-turbo/README.ijg; do
    record jpeg output "$file"
  done
  for file in "${JPEG_ENTRY_POINTS[@]}" codecs/jpeg/build.sh; do
    record jpeg entry "$file"
  done
}
