#include "solve_report.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "env_options.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::app {

namespace {
constexpr int kDefaultMaxIterations = 30;
}  // namespace

void add_solver_options(po::options_description& options) {
  // clang-format off
  options.add_options()
      ("backend", po::value<std::string>()->default_value("auto")->value_name("auto|cpu|cuda"),
       "auto | cpu | cuda (auto: cuda when a usable GPU is present, else cpu)")
      ("block-size", po::value<long long>()->default_value(kDefaultBlockSizeCpu, "128 on cpu; 512 on cuda, 1024 from n = 24576")->value_name("NB"),
       "block size nb of the LU (panel width, k of the trailing-update GEMMs)")
      ("refine", po::value<std::string>()->default_value("classical")->value_name("classical|gmres|auto"),
       "classical: x += LU^-1 r; gmres: GMRES-IR (FP64 GMRES preconditioned by the LU, for "
       "ill-conditioned systems); auto: classical, then GMRES-IR from the best iterate once a "
       "step reduces the backward error by less than 10x (before any fallback)")
      ("pivoting", po::value<std::string>()->default_value("partial")->value_name("partial|rbt|auto|beam"),
       "partial: a pivot search per column; rbt: a random butterfly transform U^T A V and an LU "
       "that searches each pivot in a window of rows only (--rbt-window), refined against A, "
       "partial pivoting again when it breaks down or does not converge (the time of a failed "
       "attempt is counted); auto: the faster of the two by what was measured (partial for now: "
       "rbt was slower on the H100; the JSON's pivoting says what ran); beam: each pivot searched in "
       "its diagonal block only, tiny pivots modified (counted: the JSON's modifications), refined "
       "against A (--beam-correction), partial pivoting again when that fails (the JSON's growth: "
       "max|LU| / max|A_s|; on cuda with a block size of at most 512, the default capped there)")
      ("beam-correction", po::value<std::string>()->default_value("auto")->value_name("auto|gmres|woodbury"),
       "beam, where it modified pivots: gmres: GMRES-IR against A; woodbury: the refinement's "
       "corrections solve with the unmodified matrix through the Woodbury formula (one FP64 "
       "system of the modifications' rank); auto: gmres (it took fewer LU solves where measured; "
       "the JSON's beam_correction says which ran)")
      ("rbt-window", po::value<long long>()->default_value(kRbtWindow)->value_name("W"),
       "rbt: a column's pivot is the largest of the W rows from its 32-column leaf's first row "
       "(64..256); 0: no pivoting at all")
      ("max-iter", po::value<long long>()->default_value(kDefaultMaxIterations)->value_name("N"),
       "at most N refinement steps (gmres: outer steps, each at most 100 GMRES iterations); "
       "0: the LU solve alone")
      ("no-fallback", "report a refinement that fails instead of solving again with an FP64 LU")
      ("condition-estimate", po::value<std::string>()->default_value("auto")->value_name("auto|always|never"),
       "the 1-norm condition estimate from the LU (a few triangular solves: 10.7 ms of the 77 of "
       "a cuda solve at n = 16384) and the warning that rests on it (cond_1(A) eps64 >= 1e-3: the "
       "forward error cannot be trusted). auto: only where the solve's own figures leave the "
       "conditioning in doubt (no convergence, the FP64 fallback, GMRES-IR, a refinement step "
       "that contracted less than 10x; on the FP64 LU path a correction needed or U's diagonal "
       "spanning more than 2^26); the JSON's condition_estimate_reason says which. A classical "
       "refinement converges only for cond_1(A) up to about 1.7e7, far below the warning's "
       "4.5e12. always: every solve; never: none")
      ("no-condition-estimate", "the same as --condition-estimate never")
      ("cuda-plan", po::value<std::string>()->value_name("FIELD=VALUE,..."),
       "cuda: the LU's code path, to compare (the default is the production path): leaf=cluster|"
       "cusolver|tournament, leaf_chunk=2|8|4|1, leaf_ahead=on|off, leaf_width=block|order, leaf_copies=automatic|bulk|threads, lookahead=on|off, panel_sms=auto|16|24|32|40|48|64, member_share=0|10|20|30|40|50, panel_products=automatic|budget|tiles, "
       "trsm=mixed|kernel|cublas, joins=automatic|sgemm|variant, trsm_products=automatic|sgemm|variant, trsm_leaves=automatic|kernel|cublas, trsv=lu_solve|inverse|cublas, member_sweeps=fan_in|broadcast, fp64_solves=automatic|kernel|dgetrs|trsm, residuals=automatic|kernel|cublas, equilibration=automatic|cluster|cooperative|kernels, auto_paths=fp16_first|both|retry, "
       "phases=blocks|detail|off, host_times=off|on; after the TCSOLVE_SOLVER_* variables")
      ("gemm-kernels", po::value<std::string>()->value_name("automatic|wgmma|mma"),
       "cuda: automatic (default: wgmma on sm_90, else mma.sync) | wgmma | mma: the kernels of "
       "the trailing updates; after TCSOLVE_GEMM_KERNEL");
  // clang-format on
}

SolveOptions solver_options(const po::variables_map& vm) {
  SolveOptions o;
  o.backend = parse_backend(vm["backend"].as<std::string>());
  // Defaulted: 0, the library's default for the backend (SolveOptions::block_size).
  o.block_size = vm["block-size"].defaulted() ? 0 : positive_int("block-size", vm["block-size"].as<long long>());
  o.refinement = parse_refinement(vm["refine"].as<std::string>());
  o.pivoting = parse_pivoting(vm["pivoting"].as<std::string>());
  const long long window = vm["rbt-window"].as<long long>();
  if (window != 0 && (window < 64 || window > 256))
    throw InvalidInput("--rbt-window must be 0 or an integer in [64, 256], got " + std::to_string(window));
  o.rbt_window = static_cast<int>(window);
  o.beam_correction = parse_beam_correction(vm["beam-correction"].as<std::string>());
  // an option of one pivoting given with another that never uses it is a mistake to report, not
  // to ignore (auto may choose either)
  const auto only_for = [&](const char* option, Pivoting wanted) {
    if (!vm[option].defaulted() && o.pivoting != wanted && o.pivoting != Pivoting::auto_)
      throw InvalidInput(std::string("--") + option + " applies to --pivoting " + std::string(to_string(wanted)) +
                         " (or auto), not " + std::string(to_string(o.pivoting)));
  };
  only_for("beam-correction", Pivoting::beam);
  only_for("rbt-window", Pivoting::rbt);
  const long long max_iter = vm["max-iter"].as<long long>();
  if (max_iter < 0 || max_iter > 1000000)
    throw InvalidInput("--max-iter must be an integer in [0, 1000000], got " + std::to_string(max_iter));
  o.max_iterations = static_cast<int>(max_iter);
  o.fallback = vm.count("no-fallback") == 0;
  o.condition_estimate = parse_condition_estimate(vm["condition-estimate"].as<std::string>());
  if (vm.count("no-condition-estimate")) {
    if (!vm["condition-estimate"].defaulted() && o.condition_estimate != ConditionEstimate::never)
      throw InvalidInput("--no-condition-estimate contradicts --condition-estimate " +
                         vm["condition-estimate"].as<std::string>());
    o.condition_estimate = ConditionEstimate::never;
  }
  apply_plan_environment(o.cuda_plan);
  apply_gemm_environment(o.gemm);
  if (vm.count("cuda-plan")) apply_plan_text(o.cuda_plan, vm["cuda-plan"].as<std::string>());
  if (vm.count("gemm-kernels")) o.gemm.cuda_kernels = parse_cuda_kernels(vm["gemm-kernels"].as<std::string>());
  return o;
}

SolveResult solve_system(const std::string& path, const LinearSystem& sys, const SolveOptions& options) {
  try {
    return solve(sys, options);
  } catch (const InvalidInput& e) {
    throw InvalidInput(path + ": A: " + e.what());
  }
}

SolveResult solve_baseline_system(const std::string& path, const LinearSystem& sys, std::string_view method,
                                  cuda::Context* ctx) {
  try {
    return solve_baseline(sys, method, ctx);
  } catch (const InvalidInput& e) {
    throw InvalidInput(path + ": A: " + e.what());
  }
}

void write_solve_members(JsonWriter& w, const SolveReport& r, const std::string& device) {
  const SolveResult& s = r.result;
  w.field(r.baseline ? "method" : "variant", r.name);
  w.field_or_null("resolved_variant", !r.baseline, to_string(s.resolved_variant));
  w.field_or_null("fp64_lu", !r.baseline, s.fp64_lu);
  w.field("backend", to_string(s.backend)).field("device", device);
  w.field_or_null("refinement", !r.baseline, to_string(r.options.refinement));
  w.field_or_null("block_size", !r.baseline, r.result.block_size);
  if (s.cuda_plan) {
    w.key("cuda_plan").begin_object();
    for (const auto& [field, value] : plan_fields(*s.cuda_plan)) w.field(field, value);
    w.end_object();
  } else {
    w.key("cuda_plan").null();
  }
  w.field_or_null("gemm_kernels", s.gemm_kernels.has_value(),
                  s.gemm_kernels ? to_string(*s.gemm_kernels) : std::string_view());
  w.field("converged", s.converged)
      .field("iterations", s.iterations)
      .field("fallback", s.fallback_used)
      .field("backward_error", s.backward_error);
  w.field_or_null("forward_error", s.forward_error.has_value(), s.forward_error.value_or(0.0));
  w.field_or_null("condition_estimate", s.condition_estimate.has_value(), s.condition_estimate.value_or(0.0));
  w.field_or_null("condition_estimate_equilibrated", s.condition_estimate_equilibrated.has_value(),
                  s.condition_estimate_equilibrated.value_or(0.0));
  // whether the estimate ran, and why (SolveOptions::condition_estimate)
  w.field_or_null("condition_estimate_mode", !r.baseline, to_string(r.options.condition_estimate));
  w.field_or_null("condition_estimate_reason", !r.baseline, s.condition_estimate_reason);
  w.field_or_null("gmres_from", s.gmres_from >= 0, s.gmres_from);
  w.field_or_null("pivoting", !r.baseline, to_string(s.pivoting));
  w.field_or_null("rbt_window", !r.baseline && s.pivoting == Pivoting::rbt, r.options.rbt_window);
  // beam: the pivots its LU modified (also when it fell back to partial pivoting)
  w.field_or_null("modifications", !r.baseline && r.options.pivoting == Pivoting::beam, s.modifications);
  // beam: the correction of its modifications that ran (none without them or after a fallback)
  w.field_or_null("beam_correction", !r.baseline && r.options.pivoting == Pivoting::beam, to_string(s.beam_correction));
  // beam: max|L U| / max|A_s| of its factors (null where it broke down before the test)
  w.field_or_null("growth", !r.baseline && r.options.pivoting == Pivoting::beam && s.growth > 0, s.growth);
  w.key("history").begin_array();
  for (std::size_t i = 0; i < s.history.size(); ++i)
    w.begin_object().field("iteration", i).field("backward_error", s.history[i]).end_object();
  w.end_array();
  w.key("time_s")
      .begin_object()
      .field("factorization", s.time_s.factorization)
      .field("refinement", s.time_s.refinement)
      .field("total", s.time_s.total);
  w.key("phases").begin_object();
  for (const auto& [phase, seconds] : s.time_s.phases) w.field(phase, seconds);
  w.end_object().end_object();
  w.key("warnings").begin_array();
  for (const std::string& warning : s.warnings) w.value(warning);
  w.end_array();
  w.field("note", s.note);
}

void write_input_warnings(JsonWriter& w, const std::vector<std::string>& warnings) {
  w.key("input_warnings").begin_array();
  for (const std::string& warning : warnings) w.value(warning);
  w.end_array();
}

std::string format_error(double value) {
  if (std::isnan(value)) return "nan";  // computed, not a number: told apart from "-", not run
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", value);
  return buf;
}

std::string format_error(const std::optional<double>& value) { return value ? format_error(*value) : "-"; }

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", s);
  return buf;
}

std::string csv_header() {
  return "method,resolved_variant,backend,device,n,nrhs,refinement,block_size,converged,"
         "iterations,fallback,backward_error,forward_error,condition_estimate,time_factorization_s,"
         "time_refinement_s,time_total_s,note\n";
}

std::string csv_row(const SolveReport& r, const std::string& device, int n, int nrhs) {
  const SolveResult& s = r.result;
  std::ostringstream out;
  out << csv_field(r.name) << ',' << (r.baseline ? "" : std::string(to_string(s.resolved_variant))) << ','
      << to_string(s.backend) << ',' << csv_field(device) << ',' << n << ',' << nrhs << ','
      << (r.baseline ? "" : std::string(to_string(r.options.refinement))) << ','
      << (r.baseline ? "" : std::to_string(r.result.block_size)) << ',' << (s.converged ? "true" : "false")
      << ',' << s.iterations << ',' << (s.fallback_used ? "true" : "false") << ','
      << csv_number(s.backward_error) << ',' << (s.forward_error ? csv_number(*s.forward_error) : "") << ','
      << (s.condition_estimate ? csv_number(*s.condition_estimate) : "") << ','
      << csv_number(s.time_s.factorization) << ',' << csv_number(s.time_s.refinement) << ','
      << csv_number(s.time_s.total) << ',' << csv_field(s.note) << '\n';
  return out.str();
}

void print_solve_summary(const std::string& input, std::int64_t n, std::int64_t nrhs, const SolveReport& r,
                         const std::string& device, const std::string& output, const std::string& where) {
  const SolveResult& s = r.result;
  std::cout << "solve " << input << ": n = " << n << ", nrhs = " << nrhs << where << '\n';
  if (nrhs > 1)
    std::cout << "  one LU shared by the " << nrhs << " right-hand sides (each column refined on its own)\n";
  std::cout << "  LU        ";
  if (s.fp64_lu)
    std::cout << "FP64 (n below --fp64-below), variant " << r.name << " -> fp64";
  else
    std::cout << "FP32, block size " << s.block_size << ", trailing updates " << r.name;
  if (!s.fp64_lu && to_string(s.resolved_variant) != r.name) std::cout << " -> " << to_string(s.resolved_variant);
  std::cout << " on " << to_string(s.backend) << " (" << device << ")";
  if (s.pivoting != Pivoting::partial || r.options.pivoting != Pivoting::partial)
    std::cout << ", pivoting " << to_string(s.pivoting);
  std::cout << "\n"
            << "  refinement " << (s.fp64_lu ? std::string_view("classical (FP64 LU)") : to_string(r.options.refinement))
            << ": "
            << (s.converged ? "converged" : "NOT CONVERGED") << " after " << s.iterations << " iteration(s)"
            << (s.fallback_used ? ", FP64 LU fallback used" : "") << '\n'
            << "  backward error " << format_error(s.backward_error) << ", forward error "
            << (s.forward_error ? format_error(*s.forward_error) : "- (no x in the file)") << '\n'
            << "  history  ";
  for (double e : s.history) std::cout << ' ' << format_error(e);
  std::cout << "\n  time      factorization " << format_seconds(s.time_s.factorization) << " s, refinement "
            << format_seconds(s.time_s.refinement) << " s, total " << format_seconds(s.time_s.total)
            << " s\n";
  if (!s.time_s.phases.empty()) {
    std::cout << "  phases   ";
    for (const auto& [phase, seconds] : s.time_s.phases)
      std::cout << ' ' << phase << ' ' << format_seconds(seconds);
    std::cout << " (s)\n";
  }
  if (s.condition_estimate)
    std::cout << "  condition " << format_error(*s.condition_estimate) << " (1-norm estimate from the LU; "
              << s.condition_estimate_reason << ")\n";
  else
    std::cout << "  condition - (not estimated: " << s.condition_estimate_reason << ")\n";
  std::cout << "  note      " << s.note << '\n';
  if (!output.empty()) std::cout << "  wrote     " << output << '\n';
}


std::string write_solve_output(const SolveResult& s, const std::string& variant, const std::string& output,
                               bool as_vector, const OutputOptions& rule) {
  for (const std::string& warning : s.warnings) std::cerr << "solve: warning: " << warning << std::endl;
  if (!s.x.allFinite()) {
    std::cerr << "solve: error: the solution is not finite (" << s.note << ")"
              << (output.empty() ? "" : "; nothing written to " + output) << std::endl;
    return "";
  }
  if (output.empty()) return "";
  SolutionAttributes attributes;
  attributes.variant = variant;
  attributes.backend = to_string(s.backend);
  attributes.iterations = s.iterations;
  attributes.backward_error = s.backward_error;
  attributes.converged = s.converged;
  write_solution(output, s.x, as_vector, attributes, rule);
  return output;
}

SolveOptions warmup_options(const SolveOptions& o) {
  SolveOptions warm = o;
  warm.max_iterations = 1;
  warm.fallback = false;
  return warm;
}

double forward_error(const Eigen::MatrixXd& x, const Eigen::MatrixXd& t) {
  double worst = 0;
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    const double tn = t.col(j).lpNorm<Eigen::Infinity>(), en = (x.col(j) - t.col(j)).lpNorm<Eigen::Infinity>();
    double e = tn > 0 ? en / tn : en > 0 ? std::numeric_limits<double>::infinity() : 0.0;
    if (!std::isfinite(e)) e = std::numeric_limits<double>::infinity();
    worst = std::max(worst, e);
  }
  return worst;
}

}  // namespace tcsolve::app
