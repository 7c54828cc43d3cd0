#!/usr/bin/env bash
# wgmma_spills.sh NVCC SOURCE [NVCC FLAGS...]: compiles SOURCE (gemm/src/cuda/wgmma_gemm.cu) for
# sm_90a with ptxas -v and fails when an instance of wgmma_kernel spills more registers than its
# budget below. A static property of the build, checked without a GPU (ctest wgmma_spills).
#
# Why: the consumers of these kernels hold 128-192 accumulator registers of 232; one more live
# value (a device scalar, a second epilogue in the same instance) made ptxas spill 120-152 bytes,
# and ec-tf32 ran 9%, ec-fp16 4% and ootomo-fp16 26% slower from session 9 to 15 before a
# benchmark against an old build showed it (docs/BENCHMARKS.md session 16).
#
# Budgets (bytes of spill stores): 0 for every instance, except halfhalf_tiles (ec-tf32), scheme
# 3 in the mangled names, whose stores keep 32 loads of C in flight (kStoreBatch): 28 in pairs,
# 84 element by element (the rare path: C not 8-byte aligned), as measured when they were set.
set -euo pipefail
nvcc=${1:?NVCC}; src=${2:?SOURCE}; shift 2
log=$(mktemp); trap 'rm -f "$log"' EXIT
"$nvcc" -arch=sm_90a -cubin -o /dev/null -Xptxas -v "$@" "$src" > "$log" 2>&1 ||
  { cat "$log"; echo "wgmma_spills: $src did not compile" >&2; exit 1; }
awk '
  /Compiling entry function/ {
    name = ""; scheme = ""; epi = ""
    if (match($0, /wgmma_kernelILNS[0-9_A-Za-z]*WgmmaSchemeE[0-9]+E/)) {
      s = substr($0, RSTART, RLENGTH); sub(/.*WgmmaSchemeE/, "", s); sub(/E$/, "", s); scheme = s
      if (match($0, /EpilogueE[0-9]+E/)) { e = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", e); epi = e }
      tf = match($0, /WgmmaSchemeE[0-9]+ELb1E/) ? "tf32" : "fp16"
      name = "wgmma_kernel<scheme " scheme ", " tf ", epilogue " epi ">"
    }
  }
  /bytes spill stores/ && name != "" {
    n = $0; sub(/.*stack frame, /, "", n); sub(/ bytes spill stores.*/, "", n)
    budget = 0
    if (scheme == "3" && epi == "1") budget = 28
    if (scheme == "3" && epi == "0") budget = 84
    kernels++
    if (n + 0 > budget) { printf "%s: %d bytes of spill stores, budget %d\n", name, n, budget; bad++ }
    name = ""
  }
  END {
    if (kernels == 0) { print "wgmma_spills: no wgmma_kernel instance in the ptxas output"; exit 1 }
    printf "wgmma_spills: %d wgmma_kernel instances, %d over budget\n", kernels, bad + 0
    exit bad > 0
  }' "$log"
