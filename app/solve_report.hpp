// What `solve` and `compare` share: the solver options on the command line, and one solve
// result as JSON members, a summary line and CSV (docs/architecture.md, "JSON": solve, compare).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli_util.hpp"
#include "json.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::app {

/// Adds --backend, --block-size, --refine, --max-iter, --no-fallback, --condition-estimate (and
/// its older spelling --no-condition-estimate),
/// --cuda-plan and --gemm-kernels to `options`.
void add_solver_options(po::options_description& options);

/// SolveOptions from those options and the TCSOLVE_SOLVER_* / TCSOLVE_GEMM_KERNEL variables
/// (env_options.hpp; the options win), variant left at its default and the backend as given
/// (the caller resolves them). Throws InvalidInput naming a bad value.
SolveOptions solver_options(const po::variables_map& vm);

/// tcsolve::solve, with an InvalidInput from the solver (an exactly singular matrix) naming the
/// file: "<path>: A: matrix is exactly singular: ...".
SolveResult solve_system(const std::string& path, const LinearSystem& sys, const SolveOptions& options);
/// tcsolve::solve_baseline, likewise.
SolveResult solve_baseline_system(const std::string& path, const LinearSystem& sys, std::string_view method,
                                  cuda::Context* ctx = nullptr);

/// One solve (or baseline) as the commands report it.
struct SolveReport {
  std::string name;       ///< the variant's name, or the baseline method's ("fp64-lu")
  bool baseline = false;  ///< a baseline method: JSON "method" instead of "variant"
  SolveOptions options;   ///< what it ran with (backend resolved)
  SolveResult result;
};

/// The members of a solve object after command/input/n/nrhs: variant (or method),
/// resolved_variant (null for a baseline), backend, device, refinement, block_size, converged,
/// iterations, fallback, backward_error, forward_error (null without x), condition_estimate
/// (null when not computed), condition_estimate_equilibrated (cond_1 of R A C; null unless
/// cond_1(A) reached the warning on a non-uniformly scaled A: SolveResult's field),
/// condition_estimate_mode ("auto", "always", "never"; null for a baseline),
/// condition_estimate_reason (why it ran or not; null for a baseline), history: [{iteration,
/// backward_error}], time_s: {factorization, refinement, total, phases: {the backend's finer phases,
/// snake_case (SolveTimes.phases: cuda "transfer", "panel", "trsm", "update", ...); empty on the cpu}},
/// warnings: [...], note.
void write_solve_members(JsonWriter& w, const SolveReport& r, const std::string& device);

/// "input_warnings": [...], what reading the input said (a Matrix Market file's repeated or
/// mirrored entries, an all-zero matrix: tcsolve::io's warnings), in solve's and compare's JSON.
void write_input_warnings(JsonWriter& w, const std::vector<std::string>& warnings);

/// "1.23e-16"; "inf" or "nan" for a value that overflowed; "-" for an absent one.
std::string format_error(double value);
std::string format_error(const std::optional<double>& value);
/// Seconds to 3 significant digits ("0.0957").
std::string format_seconds(double s);

/// solve's text summary of one result: the LU, the refinement, the errors, the history, the
/// times, the condition estimate, the note, and the file written (`output`, when not empty);
/// `where` follows the first line's sizes (", on a 2x2 grid of 4 ranks").
void print_solve_summary(const std::string& input, std::int64_t n, std::int64_t nrhs, const SolveReport& r,
                         const std::string& device, const std::string& output, const std::string& where = "");

/// CSV header and one row per report (compare --csv).
/// What `solve` does with its result before printing it: the warnings on stderr; a non-finite x
/// reported and never written; else x written to `output` (when not empty) with the attributes
/// variant, backend, iterations, backward_error, converged under the output rule. Returns the
/// file written, or empty.
std::string write_solve_output(const SolveResult& s, const std::string& variant, const std::string& output,
                               bool as_vector, const OutputOptions& rule);

/// The options of an untimed warm-up solve (--warmup, compare on cuda): one correction, no
/// fallback, the rest as given.
SolveOptions warmup_options(const SolveOptions& o);

/// max_j ||x_j - t_j||_inf / ||t_j||_inf (SolveResult::forward_error's definition; 0/0 = 0, e/0
/// = inf), for solves whose true solution the command knows (a rank's file, a synthetic system).
double forward_error(const Eigen::MatrixXd& x, const Eigen::MatrixXd& t);

std::string csv_header();
std::string csv_row(const SolveReport& r, const std::string& device, int n, int nrhs);

}  // namespace tcsolve::app
