# Sourced by codecs/build.sh: dav1d (Debian 12's source package, with Debian's security patch for
# CVE-2024-1580) as one WebAssembly module, src/image/codecs/wasm/dav1d.{wasm,js}, holding the AV1
# decoder behind the AVIF band decoder (src/image/avif/) and the entry points of
# codecs/dav1d/avif_dav1d.c. Built with meson as a static library: C only (dav1d's SIMD is x86/ARM
# assembly), 8- and 16-bit pixel paths (8, 10 and 12-bit AVIF), no threads, no tools or tests.

DAV1D_PACKAGE=dav1d
DAV1D_VERSION=1.0.0-2+deb12u1
DAV1D_ORIG_SHA256=51737db7e4897e599684f873a4725176dd3c779e639411d7c4fce134bb5ebb82
DAV1D_DEBIAN_SHA256=ae53e2bda2a18275cc66570194fced9b9681df2b3b8e041586a26a59d69a727e

DAV1D_CFLAGS=(-O3 -DNDEBUG)
DAV1D_MESON_OPTIONS=(
  --buildtype=release -Ddefault_library=static -Db_ndebug=true
  -Denable_asm=false -Dbitdepths=8,16 -Denable_tools=false -Denable_tests=false
  -Denable_examples=false -Denable_docs=false -Dlogging=false
)
# dav1d decodes on the caller's stack and keeps up to ~200 KB of block buffers there at 16 bits
# (its own threads get 1 MB, src/lib.c); the wasm stack is sized the same, and the initial memory
# must hold it.
DAV1D_LINK_FLAGS=(-sTOTAL_STACK=1MB -sINITIAL_MEMORY=2MB -sABORTING_MALLOC=0)

DAV1D_ENTRY_POINTS=(codecs/common/yield.h codecs/common/yield.c codecs/dav1d/avif_dav1d.c)

DAV1D_EXPORTS=(
  _codec_set_yielding _avif_dav1d_decode_entry _avif_dav1d_decode_windowed_entry _avif_dav1d_open _avif_dav1d_input
  _avif_dav1d_decode _avif_dav1d_decode_windowed _avif_dav1d_window _avif_dav1d_close
  _avif_dav1d_picture_create _avif_dav1d_picture_release _avif_dav1d_picture_destroy
)

build_dav1d() {
  fetch_source "$DAV1D_PACKAGE" "$DAV1D_VERSION" "$DAV1D_ORIG_SHA256" "$DAV1D_DEBIAN_SHA256"
  local upstream=${DAV1D_VERSION%-*}
  local tree="$work/src/$DAV1D_PACKAGE-$upstream"
  local build="$work/build/dav1d"
  # The Debian patch must be in the tree that is built (dpkg-source applied it).
  grep -qx 'CVE-2024-1580.patch' "$tree/debian/patches/series" || { echo "dav1d: CVE-2024-1580 not in the series" >&2; return 1; }
  grep -q 'unsigned \*tile_start_off;' "$tree/src/internal.h" || { echo "dav1d: CVE-2024-1580 patch missing" >&2; return 1; }
  rm -rf "$build" && mkdir -p "$build"

  # Meson's `threads` dependency makes Emscripten compile with -pthread (shared memory, which a
  # Worker cannot use); without threads dav1d only needs the pthread functions Emscripten stubs.
  # The build copies meson.build with that one dependency emptied, leaving the source tree as is.
  local meson_tree="$build/source"
  cp -a "$tree" "$meson_tree"
  sed -i "s/thread_dependency = dependency('threads')/thread_dependency = declare_dependency()/" "$meson_tree/meson.build"
  grep -q "thread_dependency = declare_dependency()" "$meson_tree/meson.build" || { echo "dav1d: threads dependency not found" >&2; return 1; }
  # A yield point after each row of superblocks (codecs/common/yield.h): dav1d decodes a frame in one
  # call, 1 s for a 12 MP photo, and other requests in the isolate can go on in between. The copy's
  # decode.c calls avif_dav1d_sbrow_done (codecs/dav1d/avif_dav1d.c) with the pixels of the row, the
  # row's place, and dav1d's pointers to the frame's planes, which a windowed decode moves as rows
  # move up its buffer (every access to the frame goes through them, src/recon_tmpl.c).
  sed -i 's|^int dav1d_decode_frame_main(Dav1dFrameContext \*const f) {$|void avif_dav1d_sbrow_done(int pixels, int row, int rows, int superblock, void **picture, void **sr_picture, void **filtered, void **sr_filtered);\n&|' "$meson_tree/src/decode.c"
  sed -i 's|^            f->bd_fn.filter_sbrow(f, sby);$|&\n            avif_dav1d_sbrow_done(f->bw * f->sb_step * 16, sby, f->sbh, f->sb_step * 4, f->cur.data, f->sr_cur.p.data, f->lf.p, f->lf.sr_p);|' "$meson_tree/src/decode.c"
  [ "$(grep -c 'avif_dav1d_sbrow_done' "$meson_tree/src/decode.c")" = 2 ] || { echo "dav1d: the yield point did not go into decode.c" >&2; return 1; }

  cat > "$build/emscripten.cross" <<CROSS
[binaries]
c = 'emcc'
ar = 'emar'
ranlib = 'emranlib'

[built-in options]
c_args = [$(printf "'%s', " "${DAV1D_CFLAGS[@]}")]

[host_machine]
system = 'emscripten'
cpu_family = 'wasm32'
cpu = 'wasm32'
endian = 'little'
CROSS
  meson setup "$build/out" "$meson_tree" --cross-file "$build/emscripten.cross" "${DAV1D_MESON_OPTIONS[@]}" >"$build/meson-setup.log" || { cat "$build/meson-setup.log" >&2; return 1; }
  ninja -C "$build/out" src/libdav1d.a >/dev/null

  local exports
  exports=$(IFS=,; echo "${DAV1D_EXPORTS[*]},${EM_COMMON_EXPORTS[*]}")
  emcc "${DAV1D_CFLAGS[@]}" -I"$meson_tree/include" -I"$build/out/include" -I"$build/out/include/dav1d" -I"$here/common" \
    "$here/common/yield.c" "$here/dav1d/avif_dav1d.c" "$build/out/src/libdav1d.a" \
    "${EM_LINK_FLAGS[@]}" "${DAV1D_LINK_FLAGS[@]}" -sEXPORTED_FUNCTIONS="$exports" \
    -o "$out/dav1d.js"

  mkdir -p "$out/licenses/dav1d"
  cp "$tree/COPYING" "$out/licenses/dav1d/COPYING"

  record dav1d package "$DAV1D_PACKAGE"
  record dav1d version "$DAV1D_VERSION"
  record dav1d orig_sha256 "$DAV1D_ORIG_SHA256"
  record dav1d debian_sha256 "$DAV1D_DEBIAN_SHA256"
  record dav1d debian_patches "$(tr '\n' ' ' < "$tree/debian/patches/series" | sed 's/ $//')"
  record dav1d cflags "${DAV1D_CFLAGS[*]}"
  record dav1d meson "${DAV1D_MESON_OPTIONS[*]}"
  record dav1d link_flags "${EM_LINK_FLAGS[*]} ${DAV1D_LINK_FLAGS[*]}"
  record dav1d exports "$exports"
  for file in dav1d.wasm dav1d.js licenses/dav1d/COPYING; do
    record dav1d output "$file"
  done
  for file in "${DAV1D_ENTRY_POINTS[@]}" codecs/dav1d/build.sh; do
    record dav1d entry "$file"
  done
}
