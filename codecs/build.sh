#!/usr/bin/env bash
# Builds the WebAssembly codecs in src/image/codecs/wasm/ from pinned Debian source packages of
# the upstream libraries plus the small C entry points beside this script (and the pipeline's own
# kernels, codecs/kernels, and the quality metric, codecs/metric, which have no upstream), then writes
# codecs/manifest.json (versions, source and output hashes), which a test checks against the
# committed files. CI does not run this; run it after changing an entry point or a version:
#
#   sudo apt-get install -y emscripten cmake ninja-build meson dpkg-dev   # Debian 12
#   (a deb-src line for the same Debian mirror, then apt-get update)
#   bash codecs/build.sh [library ...]     # all libraries by default
#
# Sources come from `apt-get source` (apt checks the .dsc signatures); each tarball is checked
# again against the SHA-256 pinned below before anything is unpacked.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out="$root/src/image/codecs/wasm"
work=${CODEC_BUILD_DIR:-${TMPDIR:-/tmp}/edge-image-codecs}
mkdir -p "$work" "$out"

# Emscripten 3.1.6 (Debian 12). Its optimiser (-O2 and above) needs the npm package acorn.
if [ ! -d "$work/tools/node_modules/acorn" ]; then
  npm install --silent --no-audit --no-fund --prefix "$work/tools" acorn@8.14.0 >/dev/null
fi
export NODE_PATH="$work/tools/node_modules"
# Debian's emscripten is configured with FROZEN_CACHE: it uses the system libraries prebuilt in
# /usr/share/emscripten/cache and refuses to build any, so a fresh cache directory fails.
export EM_CACHE=/usr/share/emscripten/cache
# (Captured, not piped: with pipefail, `emcc --version | head` fails when emcc writes to the closed pipe.)
[[ "$(emcc --version)" == *' 3.1.6 '* ]] || { echo "emscripten 3.1.6 is required" >&2; exit 1; }

# Flags every module is linked with: an ES module factory for the Worker (the compiled .wasm is
# passed in through instantiateWasm), no file system, no eval, memory that starts at 1 MB and
# grows only by what is asked for (a fresh instance per job; wasm memory never shrinks).
# The memory is imported (`wasmMemory`), so that a fresh instance can be given a zeroed memory
# whose pages an earlier job already touched (src/image/codecs/memory-pool.ts); every module
# exports `sbrk` (add EM_COMMON_EXPORTS to its list) so that what it uses of a larger memory
# can be counted.
EM_LINK_FLAGS=(
  -sENVIRONMENT=web -sMODULARIZE=1 -sEXPORT_ES6=1 -sFILESYSTEM=0 -sDYNAMIC_EXECUTION=0
  -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=1MB -sTOTAL_STACK=256KB -sMEMORY_GROWTH_GEOMETRIC_STEP=0
  -sIMPORTED_MEMORY=1
  -sEXPORTED_RUNTIME_METHODS=HEAPU8 -sINCOMING_MODULE_JS_API=instantiateWasm,noInitialRun,wasmMemory
  --no-entry
)
EM_COMMON_EXPORTS=(_sbrk)

# fetch_source <source package> <debian version> <orig tarball sha256> <debian tarball sha256>
# Leaves the patched source tree in $work/src/<package>-<upstream version>.
fetch_source() {
  local package=$1 version=$2 orig_sha=$3 debian_sha=$4
  local upstream=${version#*:}
  upstream=${upstream%-*}
  local tree="$work/src/$package-$upstream"
  [ -f "$tree/.patched-$version" ] && return 0
  mkdir -p "$work/src" && rm -rf "$tree"
  (cd "$work/src" && apt-get source --download-only "$package=${version}" >/dev/null)
  local orig debian
  orig=$(ls "$work/src/${package}_${upstream}".orig.tar.*[!c] | head -n 1)
  debian=$(ls "$work/src/${package}_${version#*:}".debian.tar.*)
  echo "$orig_sha  $orig" | sha256sum -c --quiet -
  echo "$debian_sha  $debian" | sha256sum -c --quiet -
  (cd "$work/src" && dpkg-source --no-check -x "${package}_${version#*:}.dsc" "$tree" >/dev/null)
  touch "$tree/.patched-$version"
}

# record <name> <key> <value>: one manifest field, collected in $work/manifest/<name>.
record() {
  mkdir -p "$work/manifest"
  printf '%s\t%s\n' "$2" "$3" >> "$work/manifest/$1"
}

libraries=("$@")
[ ${#libraries[@]} -gt 0 ] || libraries=(jpeg webp dav1d png kernels metric)
rm -rf "$work/manifest"
for library in "${libraries[@]}"; do
  # shellcheck source=/dev/null
  source "$here/$library/build.sh"
  "build_$library"
done

node "$here/write-manifest.mjs" "$work/manifest" "$out" "$here/manifest.json"
