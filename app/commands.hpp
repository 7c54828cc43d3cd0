// The subcommands of `tcsolve`. Each parses its own options (Boost.Program_options) from
// argv[1..argc), where argv[0] is the subcommand's name, writes its output and returns the exit
// code; errors are thrown and turned into exit codes by main.cpp (ARCHITECTURE.md, "Command
// line"). main.cpp holds the dispatch table: adding a subcommand is one declaration here, one
// file and one row there.
#pragma once

namespace tcsolve::app {

/// `tcsolve variants [--json]`
int run_variants(int argc, char** argv);
/// `tcsolve gemm-bench --m M --n N --k K ...`
int run_gemm_bench(int argc, char** argv);

}  // namespace tcsolve::app
