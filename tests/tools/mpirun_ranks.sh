#!/usr/bin/env bash
# ctest mpirun_ranks: `mpirun -np 2 tcsolve generate ...` (cpu ranks, OpenMPI as root in CI:
# --allow-run-as-root --oversubscribe) must end every rank with exit 4, say why once (rank 0),
# and write nothing; `mpirun -np 1` runs as usual. Every subcommand but compare, kmeans and solve
# runs as one process (app/launcher.hpp; they run as ranks: tests/test_cli_compare_ranks.cpp,
# tests/test_cli_kmeans_ranks.cpp, tests/test_cli_solve_ranks.cpp). Skips (77) where mpirun is
# missing.
#   tests/tools/mpirun_ranks.sh TCSOLVE
set -uo pipefail
tcsolve=${1:?TCSOLVE}
command -v mpirun >/dev/null || { echo "mpirun_ranks: no mpirun here: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
flags=(--allow-run-as-root --oversubscribe)
fail() { echo "mpirun_ranks: FAILED: $*"; exit 1; }

timeout 120 mpirun "${flags[@]}" -np 2 "$tcsolve" generate --backend cpu --n 16 --output "$dir/g.h5" \
  >"$dir/out" 2>"$dir/err"
rc=$?
[[ $rc == 4 ]] || fail "-np 2 exited $rc, expected 4: $(cat "$dir/err")"
count=$(grep -c "launched as 2 ranks .* one process except compare, kmeans and solve" "$dir/err")
[[ $count == 1 ]] || fail "the reason was said $count times, expected once: $(cat "$dir/err")"
[[ ! -e $dir/g.h5 ]] || fail "-np 2 wrote the output"
[[ -z $(ls "$dir" | grep -v '^out$\|^err$') ]] || fail "-np 2 left files behind: $(ls "$dir")"

timeout 120 mpirun "${flags[@]}" -np 1 "$tcsolve" generate --backend cpu --n 16 --output "$dir/g.h5" \
  >"$dir/out" 2>"$dir/err" || fail "-np 1 exited $?: $(cat "$dir/err")"
[[ -s $dir/g.h5 ]] || fail "-np 1 wrote no output"
echo "mpirun_ranks: -np 2 refused with exit 4 and one message, nothing written; -np 1 ran"
