#!/usr/bin/env bash
# kernel_spills.sh NVCC SOURCE BUDGETS [NVCC FLAGS...]: compiles SOURCE for sm_90a with ptxas -v
# and fails when a kernel spills more registers than its budget: a static property of the build,
# checked without a GPU (ctest spills_*, tests/CMakeLists.txt).
#   BUDGETS  comma-separated PATTERN=BYTES (an awk regular expression on the mangled kernel name;
#            the first that matches gives the kernel's budget of spill-store bytes), or - for none;
#            every other kernel's budget is 0. Items stack:PATTERN=BYTES bound the stack frame of
#            the kernels they match instead (the others' frames are not checked): a kernel that
#            picked one of two by-value parameters through a reference copied both to every
#            thread's stack, 192 bytes, and ran 5x slower without a byte of spills (session 30).
#
# Why: the hot kernels keep large register arrays (the wgmma consumers 128-192 accumulators of
# the 232 registers setmaxnreg gives them, the panel's leaf a 32-column block of rows per
# thread). One more live value (a device scalar, a second epilogue in the same instance) made
# ptxas spill 120-152 bytes in the wgmma kernels, and ec-tf32 ran 9%, ec-fp16 4% and
# ootomo-fp16 26% slower from session 9 to 15 before a benchmark against an old build showed it
# (docs/benchmark-history.md, session 16). The budgets are the spills measured when they were set.
set -euo pipefail
nvcc=${1:?NVCC}; src=${2:?SOURCE}; budgets=${3:?BUDGETS (PATTERN=BYTES,... or -)}; shift 3
log=$(mktemp); trap 'rm -f "$log"' EXIT
"$nvcc" -arch=sm_90a -cubin -o /dev/null -Xptxas -v "$@" "$src" > "$log" 2>&1 ||
  { cat "$log"; echo "kernel_spills: $src did not compile" >&2; exit 1; }
demangle() { if command -v c++filt > /dev/null; then c++filt; else cat; fi; }
awk -v budgets="$budgets" -v src="$(basename "$src")" '
  BEGIN {
    np = 0
    if (budgets != "-") {
      n = split(budgets, items, ",")
      for (i = 1; i <= n; i++) {
        k = index(items[i], "=")
        if (substr(items[i], 1, 6) == "stack:") { ns++; spat[ns] = substr(items[i], 7, k - 7); slim[ns] = substr(items[i], k + 1) + 0 }
        else { np++; pat[np] = substr(items[i], 1, k - 1); lim[np] = substr(items[i], k + 1) + 0 }
      }
    }
  }
  /Compiling entry function/ { name = $0; sub(/.*function ./, "", name); sub(/. for .sm_.*/, "", name) }
  /bytes spill stores/ && name != "" {
    bytes = $0; sub(/.*stack frame, /, "", bytes); sub(/ bytes spill stores.*/, "", bytes)
    frame = $0; sub(/ bytes stack frame.*/, "", frame); sub(/.*[^0-9]/, "", frame)
    for (i = 1; i <= ns; i++)
      if (name ~ spat[i]) {
        if (frame + 0 > slim[i]) { printf "%s: a stack frame of %d bytes, budget %d\n", name, frame, slim[i]; bad++ }
        break
      }
    budget = 0
    for (i = 1; i <= np; i++) if (name ~ pat[i]) { budget = lim[i]; break }
    kernels++
    if (bytes + 0 > budget) { printf "%s: %d bytes of spill stores, budget %d\n", name, bytes, budget; bad++ }
    name = ""
  }
  END {
    if (kernels == 0) { printf "kernel_spills: %s: no kernel in the ptxas output\n", src; exit 1 }
    printf "kernel_spills: %s: %d kernels, %d over budget\n", src, kernels, bad + 0
    exit bad > 0
  }' "$log" | demangle
exit "${PIPESTATUS[0]}"
