// The subcommands of `tcsolve`. Each parses its own options (Boost.Program_options) from
// argv[1..argc), where argv[0] is the subcommand's name, writes its output and returns the exit
// code; errors are thrown and turned into exit codes by main.cpp (docs/architecture.md, "Command
// line"). main.cpp holds the dispatch table: adding a subcommand is one declaration here, one
// file and one row there.
#pragma once

namespace tcsolve::app {

/// `tcsolve solve --input SYS.h5 [--variant V] ...`
int run_solve(int argc, char** argv);
/// `tcsolve compare --input SYS.h5 [--variants all|v1,v2] ...`
int run_compare(int argc, char** argv);
/// `tcsolve variants [--json]`
int run_variants(int argc, char** argv);
/// `tcsolve gemm-bench --m M --n N --k K ...`
int run_gemm_bench(int argc, char** argv);
/// `tcsolve generate --n N [--cond C] [--mode M] [--seed S] [--nrhs K] --output F.h5`
int run_generate(int argc, char** argv);
/// `tcsolve import --mtx M.mtx [--rhs ones|random] [--seed S] --output SYS.h5`
int run_import(int argc, char** argv);
/// `tcsolve probe`: accumulator precision of each tensor-core path (cmd_probe.cpp).
int run_probe(int argc, char** argv);
/// `tcsolve kmeans (--input DATA.h5 | --synthetic N:D) --k K [--variant V] ...` (cmd_kmeans.cpp)
int run_kmeans(int argc, char** argv);
/// `tcsolve ffn [--tokens T] [--d-model D] [--d-ff F] [--variants all|v1,v2] ...` (cmd_ffn.cpp)
int run_ffn(int argc, char** argv);

}  // namespace tcsolve::app
