// `tcsolve kmeans`: Lloyd's algorithm with the distance step on a GEMM variant (the algorithm,
// its precision choices and the data layout are documented in tcsolve/cluster/kmeans.hpp), on a
// data file (X, optional init) or on synthetic blobs; optionally writes labels and centroids
// (docs/architecture.md, "HDF5 files", "JSON": kmeans). It runs on the host, one GPU, several GPUs of
// this process (--gpus) or as P ranks under mpirun -np P (kmeans_place.hpp says where the points
// live in each case; ranks.hpp how the ranks fail together). Under mpirun only rank 0 prints and
// writes the output file.
//
// agreement_vs_fp64: the same run (same start, same place, same stopping rules) with the fp64
// variant; the fraction of points whose labels are equal. The start is the file's init, or
// k-means++ (seed) computed once and shared by both runs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "commands.hpp"
#include "input.hpp"
#include "json.hpp"
#include "kmeans_place.hpp"
#include "progress.hpp"
#include "ranks.hpp"
#include "versions.hpp"
#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/cluster/synthetic.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/io/kmeans_file.hpp"
#include "tcsolve/runtime/communicator.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::app {
namespace {

constexpr int kDefaultMaxIter = 300;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct KmeansCli {
  std::string input;  ///< empty for --synthetic
  int synthetic_points = 0, synthetic_dim = 0, clusters_true = 0;
  std::optional<int> k;
  std::uint64_t seed = 1;
  bool seed_given = false;
  Variant variant = Variant::auto_;
  std::string variant_name = "auto";
  Backend backend = Backend::automatic;
  Backend seeding_backend = Backend::automatic;  ///< automatic: the run's backend
  cluster::KmeansOptions options;
  std::string gpus;  ///< --gpus (empty: not given)
  std::string output;
  bool force = false, agreement = true, json = false;
  ProgressMode progress = ProgressMode::automatic;
};

/// "N:D" of --synthetic as two positive integers.
void parse_synthetic(const std::string& text, int& points, int& dim) {
  const std::size_t colon = text.find(':');
  long long n = 0, d = 0;
  std::size_t used_n = 0, used_d = 0;
  try {
    if (colon == std::string::npos) throw std::invalid_argument("");
    n = std::stoll(text.substr(0, colon), &used_n);
    d = std::stoll(text.substr(colon + 1), &used_d);
  } catch (const std::exception&) {
    used_n = 0;
  }
  if (colon == std::string::npos || used_n != colon || used_d != text.size() - colon - 1 || used_n == 0)
    throw InvalidInput("--synthetic expects N:D (points:dimension), got '" + text + "'");
  points = positive_int("synthetic N", n);
  dim = positive_int("synthetic D", d);
}

std::optional<KmeansCli> parse(int argc, char** argv) {
  std::string synthetic, variant, backend, assign, seeding;
  long long k = 0, clusters_true = 0, seed = 1, max_iter = kDefaultMaxIter;
  double tol = 0;
  KmeansCli c;
  po::options_description options("Options", 100, 50);
  // clang-format off
  options.add_options()
      ("input", po::value(&c.input)->value_name("DATA.h5"),
       "data file: dataset X (points x dim), optional init (k x dim) starting centroids")
      ("synthetic", po::value(&synthetic)->value_name("N:D"),
       "instead of --input: N points in D dimensions around blobs (centres uniform in [-10,10)^D, unit "
       "noise), from a counter-based generator, the same on cpu and GPU: made where they are clustered "
       "(on the GPUs with the cuda backend, each rank its rows under mpirun)")
      ("clusters-true", po::value(&clusters_true)->value_name("K0"), "--synthetic: number of blobs (default: k)")
      ("seed", po::value(&seed)->default_value(1)->value_name("S"), "seed of the blobs and of k-means++")
      ("k", po::value(&k)->value_name("K"), "clusters (required unless the file has init, whose rows it must equal)")
      ("variant", po::value(&variant)->default_value("auto")->value_name("VARIANT"),
       ("GEMM variant of the distance step: " + variant_names()).c_str())
      ("backend", po::value(&backend)->default_value("auto")->value_name("auto|cpu|cuda"),
       "where the run goes (auto: cuda when a usable GPU is present, else cpu)")
      ("gpus", po::value(&c.gpus)->value_name("N|all|0,1"),
       "run on several GPUs of this machine (NCCL): the first N, all, or those listed; under mpirun each "
       "rank takes one GPU")
      ("assign", po::value(&assign)->default_value("auto")->value_name("auto|fused|unfused"),
       "auto | fused | unfused: fused computes each point's nearest centroid in the GEMM's epilogue and "
       "never stores the points x k distances (cuda: fp32-simt, and ec-fp16/ec-tf32/auto on sm_90; cpu: "
       "the same tiles, emulated); auto: fused on cuda where it runs, else unfused")
      ("resident-points", "fused ec on sm_90: keep each row block's points in shared memory across its tiles "
       "(GemmOptions::nearest_resident_points; the same labels; off until measured)")
      ("split-points-each-iteration", "fused ec-fp16 and auto on cuda: split the points in every assignment instead of "
       "once before the iterations (the same labels; to compare)")
      ("seeding", po::value(&seeding)->default_value("auto")->value_name("auto|cpu|cuda"),
       "where k-means++ runs: auto (the run's backend), cpu, or cuda (needs a usable GPU); both give "
       "bitwise the same centroids")
      ("max-iter", po::value(&max_iter)->default_value(kDefaultMaxIter)->value_name("I"), "at most I iterations")
      ("tol", po::value(&tol)->default_value(0.0, "0")->value_name("T"),
       "also stop when sum_j ||c_j moved||^2 <= T * mean per-coordinate variance of X (0: off)")
      ("output", po::value(&c.output)->value_name("F.h5"),
       "write labels (int32), centroids (k x dim, float32) and the attribute inertia")
      ("force", "overwrite an existing --output file")
      ("no-agreement", "skip the fp64 run from the same start (agreement_vs_fp64 becomes null): on "
       "large data it takes as long as the run itself, or longer (wall_time_s.agreement)")
      ("json", "print one JSON object on stdout")
      ("help", "print this help");
  // clang-format on
  add_progress_option(options);
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout, Synopsis{"kmeans", {"k"}, {{{"input", "synthetic"}, true}}},
                "Lloyd's K-means whose distance step ||x||^2 - 2 x.c + ||c||^2 computes the cross\n"
                "term x.c as one GEMM through the variant (||c||^2 and the combination in FP64;\n"
                "||x||^2 does not change the argmin). Starts from the file's init or k-means++\n"
                "(seed); stops when no label changes, on --tol, or after --max-iter iterations;\n"
                "an empty cluster keeps its centroid. Also runs fp64 from the same start and\n"
                "reports the fraction of equal labels (agreement_vs_fp64; --no-agreement skips\n"
                "it). Reports the wall time of the whole command and of its parts: input,\n"
                "seeding, run, fp64 agreement, output (JSON wall_time_s). The inertia is\n"
                "sum ||x - c||^2 in FP64. On the cpu backend the tensor-core variants are emulated\n"
                "(10-40 ns per product per term): keep N k dim small there.\n\n"
                "Under mpirun -np P it runs as P ranks (cuda: one GPU a rank; cpu: cpu ranks): each\n"
                "rank reads (or makes) its share of the points, the ranks sum the clusters' sums,\n"
                "and rank 0 alone prints and writes --output; an error on any rank ends every rank\n"
                "with one message and the same exit code.",
                options);
    return std::nullopt;
  }
  const bool has_input = vm.count("input") > 0, has_synthetic = vm.count("synthetic") > 0;
  if (has_input == has_synthetic)
    throw InvalidInput("give exactly one of --input DATA.h5 and --synthetic N:D");
  if (has_input && c.input.empty()) throw InvalidInput("--input needs a file name");
  if (has_synthetic) parse_synthetic(synthetic, c.synthetic_points, c.synthetic_dim);
  if (vm.count("clusters-true")) {
    if (!has_synthetic) throw InvalidInput("--clusters-true goes with --synthetic");
    c.clusters_true = positive_int("clusters-true", clusters_true);
  }
  if (vm.count("k")) c.k = positive_int("k", k);
  if (has_synthetic) {  // cheap contradictions before any work (make_blobs with k = 1e9 ran 32 s before)
    if (!c.k) throw InvalidInput("--k is required with --synthetic");
    if (*c.k > c.synthetic_points)
      throw InvalidInput("--k " + std::to_string(*c.k) + " exceeds the " + std::to_string(c.synthetic_points) +
                         " points of --synthetic");
    if (c.clusters_true > c.synthetic_points)
      throw InvalidInput("--clusters-true " + std::to_string(c.clusters_true) + " exceeds the " +
                         std::to_string(c.synthetic_points) + " points of --synthetic");
  }
  if (vm.count("gpus") && c.gpus.empty()) throw InvalidInput("--gpus needs N, all or a list such as 0,1");
  if (seed < 0) throw InvalidInput("--seed must be a non-negative integer, got " + std::to_string(seed));
  c.seed = static_cast<std::uint64_t>(seed);
  c.seed_given = !vm["seed"].defaulted();
  c.variant = parse_variant(variant);
  c.variant_name = variant;
  c.backend = parse_backend(backend);
  c.options.assign = cluster::parse_kmeans_assign(assign);
  c.seeding_backend = parse_backend(seeding);
  c.options.prepare_points = vm.count("split-points-each-iteration") == 0;
  c.options.gemm.nearest_resident_points = vm.count("resident-points") > 0;
  c.options.max_iterations = positive_int("max-iter", max_iter);
  if (!(tol >= 0) || !std::isfinite(tol)) throw InvalidInput("--tol must be a finite number >= 0");
  c.options.tol = tol;
  if (vm.count("output") && c.output.empty()) throw InvalidInput("--output needs a file name");
  c.force = vm.count("force") > 0;
  c.agreement = vm.count("no-agreement") == 0;
  c.json = vm.count("json") > 0;
  c.progress = progress_mode(vm);
  return c;
}

/// Host bytes of one Lloyd run beyond X (dim x N, FP32, held by the caller), at its peak: the
/// labels (the engine's and the result's), the centroids (the start, the engine's, its FP64 sums
/// and the result's: 24 bytes a value of k x dim); on the cpu the distance block G (N x k, in
/// chunks of at most kDistanceChunkBytes; none when fused) and what a GEMM call on one chunk
/// copies (its operands split, or converted to FP64 for the fp64 variant, and an FP64 product:
/// 16 bytes a value of the chunk and of the centroids, 8 of the chunk's G). On cuda the device
/// holds these (the library checks the device memory itself).
double lloyd_host_bytes(double points, double dim, double k, Backend backend, bool fused) {
  double bytes = 8 * points + 24 * k * dim;
  if (backend == Backend::cpu) {
    const double chunk = std::floor(static_cast<double>(cluster::kDistanceChunkBytes) / (4 * k));
    const double rows = std::min(points, std::max(1.0, chunk));
    bytes += (fused ? 0 : 4 * rows * k) + 16 * (rows * dim + k * dim) + 8 * rows * k + 12 * rows;
  }
  return bytes;
}

/// Host bytes of the command beyond X, at its peak: k-means++ (an FP64 distance and an index a
/// point), the run, or the fp64 agreement run (unfused) beside the first run's result (labels
/// and centroids), whichever is largest, and 64 MiB for the program itself. (Measured, cpu,
/// 200000 x 64, k = 256, fp32-simt: 867 MB resident with the agreement run, 566 without;
/// counted: 943 MB, the X of 51 MB included.)
double kmeans_host_bytes(const KmeansCli& c, double points, double dim, double k, Backend backend) {
  const bool fused = c.options.assign == cluster::KmeansAssign::fused ||
                     (c.options.assign == cluster::KmeansAssign::automatic && backend == Backend::cuda);
  const double result = 4 * points + 4 * k * dim;
  double peak = lloyd_host_bytes(points, dim, k, backend, fused);
  if (c.agreement && c.variant != Variant::fp64)
    peak = std::max(peak, result + lloyd_host_bytes(points, dim, k, backend, false));
  const Backend seeding = c.seeding_backend == Backend::automatic ? backend : c.seeding_backend;
  if (seeding == Backend::cpu) peak = std::max(peak, 12 * points + 16 * k * dim);  // k-means++ on the host
  return peak + 64.0 * 1024 * 1024;
}

/// "X: 1000000 x 2000, k = 500000 (cpu, with the fp64 agreement run)": what the memory check names.
std::string kmeans_sizes(const KmeansCli& c, std::int64_t points, std::int64_t dim, std::optional<int> k,
                         Backend backend) {
  std::string s = "X: " + std::to_string(points) + " x " + std::to_string(dim);
  if (k) s += ", k = " + std::to_string(*k);
  s += std::string(" (") + std::string(to_string(backend));
  if (k && c.agreement && c.variant != Variant::fp64) s += ", with the fp64 agreement run";
  return s + ")";
}

/// Progress (progress.hpp), one step per iteration.
std::function<void(const cluster::KmeansIteration&)> progress_printer(Progress& progress, const std::string& what) {
  return [&progress, what](const cluster::KmeansIteration& s) {
    char line[160];
    std::snprintf(line, sizeof line, "%s: iteration %d: %lld labels changed, centroid movement %.3e", what.c_str(),
                  s.iteration, s.changed, s.shift);
    progress.step(line);
  };
}

struct Run {
  std::string input_text;  ///< the file, or "synthetic:N:D"
  std::int64_t points = 0;
  int dim = 0, k = 0;
  std::string init;  ///< "file" | "k-means++"
  double seeding_time_s = 0;
  Backend seeding_backend = Backend::cpu;  ///< where k-means++ ran
  /// Host wall seconds of the whole command and its parts: making the group of GPUs or ranks
  /// (0 alone), reading (or making) the data, the k-means++ seeding, the run, the fp64 agreement
  /// run, writing --output (under mpirun rank 0's clock, gathering the labels included).
  struct Wall {
    double total = 0, group = 0, input = 0, seeding = 0, run = 0, agreement = 0, output = 0;
  } wall;
  cluster::KmeansResult result;
  std::optional<cluster::KmeansResult> reference;  ///< fp64 from the same start
  double agreement = kNaN;
};

void write_json(const KmeansCli& c, const Run& run, const KmeansPlace& place, const std::string& device) {
  const cluster::KmeansResult& r = run.result;
  JsonWriter w(std::cout);
  w.begin_object()
      .field("command", "kmeans")
      .field("input", run.input_text)
      .field("variant", c.variant_name)
      .field("resolved_variant", r.resolved_name)
      .field("backend", to_string(r.backend))
      .field("assign", cluster::to_string(r.assign))
      .field("points_prepared", r.points_prepared)
      .field("device", device);
  w.key("gpus");
  if (place.devices.empty()) {
    w.null();
  } else {
    w.begin_array();
    for (int d : place.devices) w.value(d);
    w.end_array();
  }
  w.field("ranks", place.ranks);
  w.field_or_null("group", place.group != nullptr, place.group_text());
  w.field("points", run.points).field("dim", run.dim).field("k", run.k).field("init", run.init);
  w.field_or_null("seed", run.init != "file", c.seed);
  w.field("iterations", r.iterations)
      .field("stop", cluster::to_string(r.stop))
      .field("inertia", r.inertia)
      .field("time_s", r.time_s)
      .field("time_per_iteration_s", r.time_per_iteration_s)
      .field("assign_time_s", r.assign_time_s)
      .field("update_time_s", r.update_time_s)
      .field("setup_time_s", r.setup_time_s)
      .field("seeding_time_s", run.seeding_time_s)
      .field("seeding_backend", run.init != "file" ? std::string(to_string(run.seeding_backend)) : std::string("none"))
      .field("agreement_vs_fp64", run.agreement);
  w.key("wall_time_s")
      .begin_object()
      .field("total", run.wall.total)
      .field("group", run.wall.group)
      .field("input", run.wall.input)
      .field("seeding", run.wall.seeding)
      .field("run", run.wall.run)
      .field("agreement", run.wall.agreement)
      .field("output", run.wall.output)
      .end_object();
  const bool ref = run.reference.has_value();
  w.field_or_null("inertia_fp64", ref, ref ? run.reference->inertia : 0.0);
  w.field_or_null("iterations_fp64", ref, ref ? run.reference->iterations : 0);
  w.field("empty_clusters", r.empty_clusters).field("scale_exponent", r.scale_exponent).field("note", r.note);
  finish_command_json(w);
}

void print_summary(const KmeansCli& c, const Run& run, const KmeansPlace& place, const std::string& device) {
  const cluster::KmeansResult& r = run.result;
  std::printf("kmeans %s: %lld points x %d, k = %d, start: %s", run.input_text.c_str(),
              static_cast<long long>(run.points), run.dim, run.k, run.init.c_str());
  if (run.init != "file")
    std::printf(" (seed %llu, on %s, %.3f s)", static_cast<unsigned long long>(c.seed),
                std::string(to_string(run.seeding_backend)).c_str(), run.seeding_time_s);
  std::printf("\n  variant    %s", c.variant_name.c_str());
  if (r.resolved_name != c.variant_name) std::printf(" -> %s", r.resolved_name.c_str());
  std::printf(" on %s (%s), %s assignment\n", std::string(to_string(r.backend)).c_str(), device.c_str(),
              cluster::to_string(r.assign).c_str());
  if (place.group) std::printf("  group      %s\n", place.group_text().c_str());
  std::printf("  stopped    %s after %d iteration(s)\n", cluster::to_string(r.stop).c_str(), r.iterations);
  std::printf("  inertia    %.17g\n", r.inertia);
  std::printf("  time       %.6f s, %.6f s per iteration (assignment %.6f s, update %.6f s; setup before %.3f s)\n",
              r.time_s, r.time_per_iteration_s, r.assign_time_s / r.iterations, r.update_time_s / r.iterations,
              r.setup_time_s);
  std::printf("  wall time  %.3f s (", run.wall.total);
  if (place.group) std::printf("group %.3f s, ", run.wall.group);
  std::printf("input %.3f s, seeding %.3f s, run %.3f s, fp64 agreement %.3f s, output %.3f s)\n", run.wall.input,
              run.wall.seeding, run.wall.run, run.wall.agreement, run.wall.output);
  if (run.reference)
    std::printf("  vs fp64    %.6f of the labels equal (fp64: inertia %.17g, %d iteration(s))\n",
                run.agreement, run.reference->inertia, run.reference->iterations);
  else
    std::printf("  vs fp64    not run (--no-agreement)\n");
  if (r.empty_clusters > 0)
    std::printf("  empty      %d cluster(s) without points kept their centroid\n", r.empty_clusters);
  if (r.scale_exponent != 0)
    std::printf("  scaled     the points were clustered as X 2^%d (exact: their magnitudes lie outside\n"
                "             [2^-40, 2^41), where FP32 distances lose precision or overflow)\n",
                r.scale_exponent);
  if (!r.note.empty()) std::printf("  note       %s\n", r.note.c_str());
  if (!c.output.empty()) std::printf("  wrote      %s\n", c.output.c_str());
  std::fflush(stdout);
}

/// The options, with Boost's errors as InvalidInput (the same line main() prints for them), so
/// that under mpirun they are agreed like every other error; nullopt after --help.
std::optional<KmeansCli> parse_arguments(int argc, char** argv) {
  try {
    return parse(argc, argv);
  } catch (const po::error& e) {
    throw InvalidInput(std::string(e.what()) + " (see --help)");
  }
}

/// The data file's shape, checked against the request before any value is read: k (from --k or
/// the file's init), one process' limit of 2^31 - 1 points, and the host memory this process
/// needs for its rows and the run (`mine` of the points).
int check_file(const KmeansCli& c, const KmeansShape& shape, const KmeansPlace& place) {
  if (c.k && *c.k > shape.points)
    throw InvalidInput(c.input + ": X: " + std::to_string(shape.points) + " points, fewer than --k " +
                       std::to_string(*c.k));
  if (shape.has_init && c.k && *c.k != shape.init_k)
    throw InvalidInput(c.input + ": init: " + std::to_string(shape.init_k) + " x " + std::to_string(shape.dim) +
                       ", expected k = " + std::to_string(*c.k) + " rows (--k " + std::to_string(*c.k) + ")");
  if (!shape.has_init && !c.k) throw InvalidInput("--k is required (" + c.input + " has no init dataset)");
  const int k = shape.has_init ? shape.init_k : *c.k;
  if (k > shape.points)
    throw InvalidInput(c.input + ": X: " + std::to_string(shape.points) + " points, fewer than k = " +
                       std::to_string(k));
  if (place.kind != KmeansPlace::Kind::ranks && shape.points > std::numeric_limits<int>::max())
    throw InvalidInput(c.input + ": X: " + std::to_string(shape.points) +
                       " points, more than one process takes (2^31 - 1): run it as several ranks under mpirun");
  const double mine = place.rows(shape.points).count, d = shape.dim;
  require_host_memory(c.input + ": " + kmeans_sizes(c, shape.points, shape.dim, k, place.backend),
                      4 * mine * d + kmeans_host_bytes(c, mine, d, k, place.backend) +
                          (place.kind == KmeansPlace::Kind::ranks && !c.output.empty() ? 8.0 * shape.points : 0));
  return k;
}

/// The host memory this process needs for --synthetic: its rows where they are made on the host
/// (the cpu backend; on GPUs, for k-means++ with --seeding cpu) and the run.
void check_synthetic(const KmeansCli& c, const KmeansPlace& place, Backend seeding) {
  const double points = c.synthetic_points, mine = place.rows(c.synthetic_points).count, dim = c.synthetic_dim;
  const bool rows_on_host = place.backend == Backend::cpu || seeding == Backend::cpu;
  require_host_memory("--synthetic " + std::to_string(c.synthetic_points) + ":" + std::to_string(c.synthetic_dim) +
                          " with k = " + std::to_string(*c.k) + " (" + std::string(to_string(place.backend)) +
                          (c.agreement && c.variant != Variant::fp64 ? ", with the fp64 agreement run" : "") + ")",
                      (rows_on_host ? 4 * mine * dim : 0) + kmeans_host_bytes(c, mine, dim, *c.k, place.backend) +
                          (place.kind == KmeansPlace::Kind::ranks && !c.output.empty() ? 8 * points : 0));
}

}  // namespace

int run_kmeans(int argc, char** argv) {
  const JobRanks job = job_ranks();
  runtime::Communicator* const world = job.world.get();  // null alone
  std::optional<KmeansCli> parsed;
  runtime::agreed(world, [&] { parsed = parse_arguments(argc, argv); });
  if (!parsed) return 0;
  KmeansCli c = *parsed;
  const bool speaks = job.speaks();  // rank 0, or alone: prints and writes
  Progress progress("kmeans", speaks ? c.progress : ProgressMode::never);
  const OutputOptions output_rule = output_options(c.force, {c.input});  // never the --input
  const auto t_command = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  runtime::agreed(world, [&] {
    if (speaks && !c.output.empty()) prepare_output(c.output, output_rule);
    // --seeding cuda is its own request for the GPU: without one, it is the option to blame (not
    // --backend, which may well say cpu).
    if (c.seeding_backend == Backend::cuda && !cuda::device_available())
      throw Unavailable("--seeding cuda: k-means++ on the GPU needs a usable CUDA device, and there is none "
                        "here; use --seeding cpu or auto");
  });

  // Where the run goes: the host, one GPU, --gpus, or this rank of the mpirun job.
  Run run;
  KmeansPlace place = make_place(c.backend, c.gpus, job);
  run.wall.group = place.group ? since(t_command) : 0.0;
  runtime::Communicator* const comm = place.comm();  // the ranks' (null alone)
  c.options.backend = place.backend;
  c.options.variant = c.variant;
  const Backend seeding = c.seeding_backend == Backend::automatic ? place.backend : c.seeding_backend;
  runtime::agreed(comm, [&] {
    if (place.kind == KmeansPlace::Kind::ranks && c.seeding_backend != Backend::automatic &&
        c.seeding_backend != place.backend)
      throw Unavailable("--seeding " + std::string(to_string(c.seeding_backend)) +
                        ": under mpirun k-means++ runs where the ranks' points are (the " +
                        std::string(to_string(place.backend)) + " backend); use --seeding auto");
    if (!available(c.variant, place.backend))
      throw Unavailable("variant " + c.variant_name + " is not available on the " +
                        std::string(to_string(place.backend)) + " backend");
  });

  // Data and start: this process' rows, read or made where they are clustered.
  auto t0 = std::chrono::steady_clock::now();
  KmeansPoints points;
  std::vector<float> start;
  runtime::agreed(comm, [&] {
    if (!c.input.empty()) {
      const KmeansShape shape = read_kmeans_shape(c.input);
      run.k = check_file(c, shape, place);
      progress.step("reading " + c.input);
      points = read_points(place, c.input, shape.points, shape.dim);
      if (shape.has_init) start = *read_kmeans_init(c.input);
      run.input_text = c.input;
    } else {
      check_synthetic(c, place, seeding);
      const cluster::BlobsSpec spec{c.synthetic_points, c.synthetic_dim,
                                    c.clusters_true > 0 ? c.clusters_true : *c.k, c.seed};
      points = make_points(place, spec);
      run.k = *c.k;
      run.input_text = "synthetic:" + std::to_string(c.synthetic_points) + ":" + std::to_string(c.synthetic_dim);
    }
  });
  run.points = points.total;
  run.dim = points.dim;
  run.init = start.empty() ? "k-means++" : "file";
  run.wall.input = since(t0);
  if (start.empty()) {
    t0 = std::chrono::steady_clock::now();
    progress.step("k-means++ (seed " + std::to_string(c.seed) + ")");
    run.seeding_backend = seeding;
    start = seed_points(place, points, run.k, c.seed, seeding);
    run.seeding_time_s = since(t0);
    run.wall.seeding = run.seeding_time_s;
  }

  // The run, then fp64 from the same start, on the same place and points.
  c.options.progress = progress_printer(progress, c.variant_name);
  t0 = std::chrono::steady_clock::now();
  run.result = run_points(place, points, start, c.options);
  run.wall.run = since(t0);
  t0 = std::chrono::steady_clock::now();
  if (c.variant == Variant::fp64) {
    run.reference = run.result;
    run.agreement = 1.0;
  } else if (c.agreement) {
    cluster::KmeansOptions reference = c.options;
    reference.variant = Variant::fp64;
    reference.assign = cluster::KmeansAssign::automatic;  // fp64 has no fused path
    reference.progress = progress_printer(progress, "fp64 (reference)");
    run.reference = run_points(place, points, start, reference);
    run.agreement = label_agreement(place, points, run.result.labels, run.reference->labels);
  }
  run.wall.agreement = since(t0);

  // The output file: every label (gathered from the ranks), written by rank 0; a failure there
  // ends every rank.
  t0 = std::chrono::steady_clock::now();
  if (!c.output.empty()) {
    const std::vector<int> labels = all_labels(place, points, run.result.labels);
    runtime::agreed(comm, [&] {
      if (!speaks) return;
      KmeansOutputAttributes attributes;
      attributes.inertia = run.result.inertia;
      attributes.variant = c.variant_name;
      attributes.backend = to_string(run.result.backend);
      attributes.iterations = run.result.iterations;
      write_kmeans_output(c.output, labels, run.result.centroids, run.k, run.dim, attributes, output_rule);
    });
  }
  run.wall.output = since(t0);
  run.wall.total = since(t_command);
  if (!speaks) return 0;
  const std::string device = place.device_text();
  if (c.json)
    write_json(c, run, place, device);
  else
    print_summary(c, run, place, device);
  return 0;
}

}  // namespace tcsolve::app
