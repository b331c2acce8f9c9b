#!/bin/bash
# Builds the reference (ik_llama.cpp 8337e4cd) the way the speed figures in the README were
# measured on one machine: its quantization library with GCC -O3 and the golden data's flags
# (Zen 3 tuning plus Zen 4's AVX-512 subsets), a second copy of the quantization objects for an
# AVX2 machine (Haswell: AVX2, FMA, F16C), refbench (refbench.c) linked against each, and
# llama-quantize. The llama sources other than src/llama-quantize.cpp are not on the quantization
# path and are built at -O1 (graph builders at -O0) to save time; common/ is replaced by the three
# functions examples/quantize needs (no --override-kv).
#
#   docs/reference-speed/build.sh REF OUT     # REF: a checkout of ik_llama.cpp at 8337e4cd
#   ARCH=-march=native docs/reference-speed/build.sh REF OUT
#
# About 25 minutes of two cores. OUT gets refbench512, refbench256 and llama-quantize.
set -euo pipefail
REF=$(cd "$1" && pwd); OUT=$(mkdir -p "$2" && cd "$2" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
G=$REF/ggml
ZEN4="-march=znver3 -mtune=znver3 -mavx512f -mavx512cd -mavx512vl -mavx512dq -mavx512bw -mavx512ifma -mavx512vbmi -mavx512vbmi2 -mavx512vnni -mavx512bitalg -mavx512vpopcntdq -mavx512bf16"
# ARCH=-march=native builds for the machine at hand instead, as ../shared/bench's Intel table was
# measured; such a build's bytes differ from the golden build's in a few kernels (see the stress
# README), so its whole runs compare speed, not bytes.
ZEN4=${ARCH:-$ZEN4}
HSW="-march=haswell -mtune=haswell"
# ggml as a default CMake build compiles it: a shared library, position-independent. The golden
# data was made so: these flags reproduce all 737 golden kernel and stress cases, and without
# -fPIC they miss iq1_s with the imatrix in two stress sets (GCC inlines and fuses otherwise;
# quantize/testdata/f32rows/README.md). The speed figures measured before 2026-11-27 used builds
# without it. PIC= builds without it.
PIC=${PIC--fPIC -DGGML_SHARED -DGGML_BUILD}
DEFS="-DNDEBUG -D_GNU_SOURCE -D_XOPEN_SOURCE=600 -DGGML_USE_IQK_MULMAT=1 -DGGML_USE_LLAMAFILE $PIC"
INC="-I$G/include -I$G/src -I$G/src/iqk -I$REF/include -I$REF/src -I$REF/common"
cd "$OUT"
mkdir -p ggml avx2 llama graphs

# ggml, as the golden data was made.
for f in ggml.c ggml-quants.c ggml-aarch64.c ggml-alloc.c; do
  gcc -O3 $ZEN4 $DEFS $INC -std=gnu11 -c "$G/src/$f" -o "ggml/${f%.c}.o"
done
for f in ggml-backend.cpp ggml-moe-prefetch.cpp llamafile/sgemm.cpp $(cd "$G/src" && ls iqk/*.cpp iqk/fa/*.cpp); do
  b=$(basename "$f" .cpp)
  g++ -O3 $ZEN4 $DEFS $INC -std=c++20 -c "$G/src/$f" -o "ggml/$b.o"
done
# Two flash-attention entry points the objects refer to are not built in this configuration;
# quantization never calls them.
cat > fa-stubs.c <<'STUBS'
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
size_t iqk_fa_work_buffer_size(const void *dst, int nthread) { (void)dst; (void)nthread; return 0; }
bool iqk_flash_attn_noalibi() { abort(); }
STUBS
gcc -O2 -c fa-stubs.c -o ggml/fa-stubs.o
# The objects on the quantization path again, for AVX2 only.
gcc -O3 $HSW $DEFS $INC -std=gnu11 -c "$G/src/ggml.c" -o avx2/ggml.o
gcc -O3 $HSW $DEFS $INC -std=gnu11 -c "$G/src/ggml-quants.c" -o avx2/ggml-quants.o
g++ -O3 $HSW $DEFS $INC -std=c++20 -c "$G/src/iqk/iqk_quantize.cpp" -o avx2/iqk_quantize.o
REST=$(ls ggml/*.o | grep -v '/\(ggml\|ggml-quants\|iqk_quantize\)\.o$')

gcc -O2 $DEFS $INC -std=gnu11 -c "$HERE/refbench.c" -o refbench.o
g++ -o refbench512 refbench.o ggml/*.o -lpthread -lm -fopenmp
g++ -o refbench256 refbench.o avx2/*.o $REST -lpthread -lm -fopenmp

# llama-quantize.
for f in "$REF"/src/*.cpp; do
  b=$(basename "$f" .cpp); opt=-O1; [ "$b" = llama-quantize ] && opt=-O3
  g++ $opt $ZEN4 $DEFS $INC -std=c++20 -c "$f" -o "llama/$b.o"
done
for f in "$REF"/src/graphs/*.cpp; do
  g++ -O0 $DEFS $INC -I"$REF/src/graphs" -std=c++20 -c "$f" -o "graphs/$(basename "$f" .cpp).o"
done
cat > stubs.cpp <<'STUBS'
#include "common.h"
#include <sstream>
bool string_parse_kv_override(const char *, std::vector<llama_model_kv_override> &) { return false; }
std::vector<std::string> string_split(const std::string & str, char delim) {
    std::vector<std::string> out;
    std::istringstream s(str);
    for (std::string tok; std::getline(s, tok, delim);) { std::string v; std::istringstream(tok) >> v; out.push_back(v); }
    return out;
}
int LLAMA_BUILD_NUMBER = 0;
char const * LLAMA_COMMIT = "8337e4cd";
char const * LLAMA_COMPILER = "gcc";
char const * LLAMA_BUILD_TARGET = "x86_64-linux";
STUBS
g++ -O1 $DEFS $INC -std=c++20 -c stubs.cpp -o stubs.o
g++ -O3 $ZEN4 $DEFS $INC -std=c++20 -c "$REF/examples/quantize/quantize.cpp" -o quantize-main.o
g++ -o llama-quantize quantize-main.o stubs.o llama/*.o graphs/*.o ggml/*.o -lpthread -lm -fopenmp
echo "built: $OUT/refbench512 $OUT/refbench256 $OUT/llama-quantize"
