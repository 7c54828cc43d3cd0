#!/usr/bin/env bash
# ctest without_mpi_nccl: the group code builds without MPI and NCCL (and without CUDA) and
# refuses clearly. Configures a second build of the source tree with -DTCSOLVE_CUDA=OFF
# -DTCSOLVE_MPI=OFF -DTCSOLVE_NCCL=OFF, builds the tcsolve executable, and checks:
#   - `tcsolve kmeans --gpus 2` exits 4 with one message;
#   - `mpirun -np 2 tcsolve kmeans` (when mpirun exists) exits 4 on every rank, says "without
#     MPI" once, and writes nothing;
#   - a plain one-process `tcsolve kmeans` still runs (exit 0).
#   tests/tools/without_mpi_nccl.sh SOURCE_DIR WORK_DIR
set -uo pipefail
src=${1:?SOURCE_DIR}
work=${2:?WORK_DIR}
fail() { echo "without_mpi_nccl: FAILED: $*"; exit 1; }
mkdir -p "$work"
cmake -S "$src" -B "$work" -DCMAKE_BUILD_TYPE=Release -DTCSOLVE_CUDA=OFF -DTCSOLVE_MPI=OFF \
  -DTCSOLVE_NCCL=OFF -DBUILD_TESTING=OFF >"$work/configure.log" 2>&1 || fail "configure: $(tail -20 "$work/configure.log")"
grep -q "MPI OFF, NCCL OFF" "$work/configure.log" || fail "the configure did not turn MPI and NCCL off"
cmake --build "$work" -j2 --target tcsolve >"$work/build.log" 2>&1 || fail "build: $(tail -30 "$work/build.log")"
exe=$work/app/tcsolve
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$exe" kmeans --synthetic 600:4 --k 3 --gpus 2 >"$out/o" 2>"$out/e"
rc=$?
[[ $rc == 4 ]] || fail "--gpus 2 exited $rc, expected 4: $(cat "$out/e")"
[[ $(grep -c "error" "$out/e") == 1 ]] || fail "--gpus 2: expected one error line: $(cat "$out/e")"

if command -v mpirun >/dev/null; then
  timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 "$exe" kmeans --synthetic 600:4 --k 3 \
    --backend cpu --output "$out/k.h5" >"$out/o" 2>"$out/e"
  rc=$?
  [[ $rc == 4 ]] || fail "mpirun -np 2 exited $rc, expected 4: $(cat "$out/e")"
  [[ $(grep -c "without MPI" "$out/e") == 1 ]] || fail "mpirun -np 2: 'without MPI' not said once: $(cat "$out/e")"
  [[ ! -e $out/k.h5 ]] || fail "mpirun -np 2 wrote the output"
fi

"$exe" kmeans --synthetic 600:4 --k 3 --backend cpu >"$out/o" 2>"$out/e" || fail "one process: exit $?: $(cat "$out/e")"
echo "without_mpi_nccl: built without MPI, NCCL and CUDA; --gpus 2 and mpirun -np 2 refused with exit 4 and one message; one process runs"
