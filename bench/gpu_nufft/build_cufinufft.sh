#!/usr/bin/env bash
# Builds cuFINUFFT, the anchor of run_matrix.py, from the source distribution of the `cufinufft`
# package on PyPI, for one CUDA architecture and against the CUDA toolkit installed here, and
# assembles an importable package directory OUTDIR/cufinufft (the Python modules and
# libcufinufft.so). For machines where the PyPI wheel cannot be used: it links CUDA 12's
# libcudart.so.12 and libcufft.so.11, and at 114 MB it is too large to carry to the GPU machine;
# built for sm_90 against CUDA 13 the library is ~17 MB and links libcudart.so.13 and
# libcufft.so.12.
#
# Usage: bench/gpu_nufft/build_cufinufft.sh OUTDIR [ARCH] [VERSION]
#   ARCH: CUDA architecture (default 90); VERSION: cufinufft version (default 2.5.1).
# Needs: network access to PyPI (the source distribution only), nvcc, CMake >= 3.19, Ninja.
# The build is offline otherwise: cuFINUFFT's CMake fetches its one CUDA dependency, CCCL, with
# CPM.cmake from GitHub; a stand-in for CPM given here takes CCCL from the toolkit instead
# (CUDA 12.x and 13.x ship it). Then, on the GPU machine:
#   PYTHONPATH=OUTDIR python3 bench/gpu_nufft/run_matrix.py ...
set -euo pipefail

out=${1:?usage: build_cufinufft.sh OUTDIR [ARCH] [VERSION]}
arch=${2:-90}
version=${3:-2.5.1}
cuda_root=$(dirname "$(dirname "$(command -v nvcc)")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The source distribution, located through PyPI's simple index and checked against its sha256.
python3 - "$version" "$work/src.tar.gz" <<'PY'
import hashlib, re, sys, urllib.request
version, dest = sys.argv[1], sys.argv[2]
index = urllib.request.urlopen("https://pypi.org/simple/cufinufft/", timeout=60).read().decode()
m = re.search(r'href="([^"#]*cufinufft-' + re.escape(version) + r'\.tar\.gz)#sha256=([0-9a-f]+)"', index)
if not m:
    sys.exit(f"cufinufft {version}: no source distribution on PyPI")
data = urllib.request.urlopen(m.group(1), timeout=120).read()
if hashlib.sha256(data).hexdigest() != m.group(2):
    sys.exit("cufinufft source distribution: sha256 mismatch")
open(dest, "wb").write(data)
print(f"cufinufft {version}: {len(data)} bytes from {m.group(1)}")
PY
tar -xzf "$work/src.tar.gz" -C "$work"
src="$work/cufinufft-$version"

mkdir -p "$work/cpm/cpm"
for v in $(grep -o 'CPM_DOWNLOAD_VERSION "[0-9.]*"' "$src/CMakeLists.txt" | grep -o '[0-9][0-9.]*'); do
  cat > "$work/cpm/cpm/CPM_$v.cmake" <<EOF
# Stand-in for CPM.cmake (build_cufinufft.sh): CCCL from the CUDA toolkit, nothing else.
function(CPMAddPackage)
  cmake_parse_arguments(A "" "NAME" "" \${ARGN})
  if(A_NAME STREQUAL "CCCL")
    find_package(CCCL CONFIG REQUIRED PATHS "$cuda_root/lib64/cmake/cccl" "$cuda_root/lib/cmake/cccl")
  else()
    message(FATAL_ERROR "build_cufinufft.sh: no offline source for \${A_NAME}")
  endif()
endfunction()
EOF
done

cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFINUFFT_USE_CUDA=ON -DFINUFFT_USE_CPU=OFF \
  -DFINUFFT_BUILD_PYTHON=OFF -DFINUFFT_ARCH_FLAGS= -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCPM_SOURCE_CACHE="$work/cpm" -DFINUFFT_STATIC_LINKING=OFF \
  > "$work/cmake.log" || { tail -30 "$work/cmake.log"; exit 1; }
cmake --build "$work/build" --target cufinufft

mkdir -p "$out"
rm -rf "$out/cufinufft"
cp -r "$src/python/cufinufft/cufinufft" "$out/cufinufft"
cp "$work/build/libcufinufft.so" "$out/cufinufft/"
echo "cuFINUFFT $version for sm_$arch in $out/cufinufft ($(du -sh "$out/cufinufft" | cut -f1)); links:"
ldd "$out/cufinufft/libcufinufft.so" | grep -E "cudart|cufft" || true
