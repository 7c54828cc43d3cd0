// `tcsolve generate`: writes a randsvd (or U(-1,1)) test system to an HDF5 file
// (docs/architecture.md, "Test inputs"; definitions in tcsolve/solver/generate.hpp). --backend picks
// where randsvd's U diag(sigma) V^T is formed (cpu: Eigen; cuda: cuSOLVER/cuBLAS on the GPU).
// Random mode above kWholeMatrixRandomOrder (or with --block-rows) is made and written by blocks
// of rows (generate_random_blocks, SystemWriter): host memory for one block, never the whole A.
#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include "cli_util.hpp"
#include "commands.hpp"
#include "input.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/io/system_writer.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/generate.hpp"
#include "versions.hpp"

namespace tcsolve::app {
namespace {

constexpr double kDefaultCond = 1e4;

/// Host memory of one block of rows, at most: a larger block gains nothing (the disk is the
/// bound) and makes the progress coarser. Below it, a quarter of MemAvailable.
constexpr double kMaxBlockBytes = 1024.0 * 1024 * 1024;
/// What the block path holds besides the blocks: the program, HDF5, the threads' stacks.
constexpr double kBlockPathMargin = 64.0 * 1024 * 1024;

std::string format_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

/// Share of a file system that the block path leaves free: a system file can be most of a disk,
/// and a disk filled to the last block fails every other writer on it.
constexpr double kDiskKeptFree = 0.05;

/// The file system of the directory `path` would be written in: bytes free to an unprivileged
/// writer and its size; negative numbers when unknown.
struct DiskSpace {
  std::string dir;
  double available = -1, size = -1;
};
DiskSpace disk_space(const std::string& path) {
  const std::string::size_type slash = path.rfind('/');
  DiskSpace d;
  d.dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct statvfs st {};
  if (::statvfs(d.dir.c_str(), &st) != 0) return d;
  d.available = static_cast<double>(st.f_bavail) * static_cast<double>(st.f_frsize);
  d.size = static_cast<double>(st.f_blocks) * static_cast<double>(st.f_frsize);
  return d;
}

/// Rows of A per block: `requested` when given (at most n), else as many as min(MemAvailable /
/// 4, kMaxBlockBytes) holds (an unknown MemAvailable counts as kMaxBlockBytes), at least 1.
int block_rows_for(int n, int nrhs, long long requested) {
  if (requested > 0) return static_cast<int>(std::min<long long>(requested, n));
  const double available = static_cast<double>(host_memory_available());
  const double budget = available > 0 ? std::min(available / 4, kMaxBlockBytes) : kMaxBlockBytes;
  const double row_bytes = 8.0 * (static_cast<double>(n) + nrhs);
  return static_cast<int>(std::clamp(budget / row_bytes, 1.0, static_cast<double>(n)));
}

/// Random mode by blocks: the memory and disk checks, then each block of rows made and written
/// (SystemWriter: the temporary beside `output`, published at the end, removed on failure).
/// Returns the seconds spent making and writing the blocks.
struct BlockTimes {
  double generate_s = 0, write_s = 0;
};
BlockTimes generate_by_blocks(int n, std::uint64_t seed, int nrhs, int rows_per_block, const std::string& output,
                              const OutputOptions& output_rule, Progress& progress) {
  using Clock = std::chrono::steady_clock;
  const double block_bytes = 8.0 * rows_per_block * (static_cast<double>(n) + nrhs);
  const double x_bytes = 8.0 * n * static_cast<double>(nrhs);
  const std::string what = "generate --n " + std::to_string(n) + " by blocks of " + std::to_string(rows_per_block) +
                           " rows";
  // One block of A and b, x_true whole (n x nrhs, and its draw), and the margin.
  require_host_memory(what, block_bytes + 2 * x_bytes + kBlockPathMargin);
  SystemWriter::Shape shape;
  shape.n = n;
  shape.nrhs = nrhs;
  shape.b_is_vector = nrhs == 1;
  shape.has_x = true;
  const double file_bytes = SystemWriter::file_bytes(shape);
  if (const DiskSpace disk = disk_space(output); disk.available >= 0) {
    const double kept = kDiskKeptFree * disk.size;
    if (file_bytes > disk.available - kept)
      throw InvalidInput(what + " needs " + format_bytes(file_bytes) + " on disk for " + output + "; " +
                         format_bytes(disk.available) + " available in '" + disk.dir + "', less " +
                         format_bytes(kept) + " kept free (" + fmt("%.0f", 100 * kDiskKeptFree) +
                         "% of the file system)");
  }

  const auto t0 = Clock::now();
  const Eigen::MatrixXd x = random_x_true(n, nrhs, seed);
  SystemWriter writer(output, shape, random_description(n, seed), output_rule);
  double write_s = 0;
  const int blocks = (n + rows_per_block - 1) / rows_per_block;
  int done = 0;
  generate_random_blocks(n, seed, x, rows_per_block, [&](std::int64_t row0, int rows, const double* a, const double* b) {
    const auto w0 = Clock::now();
    writer.write_a_rows(row0, rows, a);
    writer.write_b_rows(row0, rows, b);
    write_s += std::chrono::duration<double>(Clock::now() - w0).count();
    ++done;
    progress.detail("block " + std::to_string(done) + " of " + std::to_string(blocks) + ", rows " +
                    std::to_string(row0 + rows) + " of " + std::to_string(n) + " written");
  });
  const auto w0 = Clock::now();
  // x_true's rows in the file's order (row-major n x nrhs).
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> x_rows = x;
  writer.write_x_rows(0, n, x_rows.data());
  progress.step("syncing and publishing " + output);
  writer.commit();
  write_s += std::chrono::duration<double>(Clock::now() - w0).count();
  const double total_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return {total_s - write_s, write_s};
}

}  // namespace

int run_generate(int argc, char** argv) {
  long long n = 0, seed = 1, nrhs = 1, block_rows = 0;
  double cond = kDefaultCond;
  std::string mode_name, output, backend_name;
  po::options_description options("Options", 100, 50);
  // clang-format off
  options.add_options()
      ("n", po::value(&n)->value_name("N"),
       ("order of A (required, 1.." + std::to_string(kMaxGeneratedOrder) + ")").c_str())
      ("cond", po::value(&cond)->default_value(kDefaultCond, "1e4")->value_name("C"),
       "2-norm condition number of A (>= 1; ignored by --mode random)")
      ("mode", po::value(&mode_name)->default_value("geometric")->value_name("geometric|arithmetic|clustered|random"),
       "singular values from 1 to 1/C: geometric | arithmetic | clustered (all 1 but the last); "
       "random: A ~ U(-1,1)")
      ("seed", po::value(&seed)->default_value(1)->value_name("S"), "seed of U, V (or A) and x")
      ("nrhs", po::value(&nrhs)->default_value(1)->value_name("K"), "right-hand sides (b is n x K; 1: a vector)")
      ("backend", po::value(&backend_name)->default_value("auto")->value_name("auto|cpu|cuda"),
       "auto | cpu | cuda: where randsvd's A is formed (auto: cuda when a usable GPU is present, "
       "else cpu). The random streams differ: one seed gives different U, V on cpu and cuda")
      ("block-rows", po::value(&block_rows)->value_name("R"),
       ("random mode: make and write A by blocks of R rows (the block stream; the default above n = " +
        std::to_string(kWholeMatrixRandomOrder) + ", with R from the available memory)").c_str())
      ("output", po::value(&output)->value_name("F.h5"), "system file to write (required)")
      ("force", "overwrite an existing output file")
      ("json", "print one JSON object on stdout")
      ("help", "print this help");
  // clang-format on
  add_progress_option(options);
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout, Synopsis{"generate", {"n", "output"}, {}},
                "Writes a test system A x = b to an HDF5 file (datasets A, b and the true solution x,\n"
                "float64, row-major). randsvd: A = U diag(sigma) V^T with Haar-random orthogonal U, V\n"
                "and singular values sigma from 1 down to 1/C (LAPACK xLATMS modes); random: A ~\n"
                "U(-1,1). x ~ U(-1,1), b = A x in FP64.\n"
                "\n"
                "randsvd is made whole, in memory (its QR factorizations are O(n^3)). random mode has\n"
                "two streams: up to n = " + std::to_string(kWholeMatrixRandomOrder) + " one std::mt19937_64 draws A column by column in\n"
                "memory (the stream of inputs/random_n512.h5); above it, or with --block-rows, A is\n"
                "made and written by blocks of rows, each row from Philox4x32-10 keyed by the seed\n"
                "and b's rows from it in FP64 (host memory for one block: the file may be larger\n"
                "than the memory; the same file for every block size). The file's 8 n^2 bytes must\n"
                "fit on its disk leaving 5% of the file system free; memory and disk are checked\n"
                "before anything is written.\n"
                "\n"
                "Backends (randsvd; random mode is generated on the host either way, the same file):\n"
                "  cpu   std::mt19937_64 Gaussians, Eigen Householder QR (U and V on two threads), the\n"
                "        product on several threads; O(n^3) on the host: 30 s at n = 4096 on 2 cores.\n"
                "        The reference: the systems of inputs/ were made with it.\n"
                "  cuda  Philox4x32-10 Gaussians, cuSOLVER dgeqrf + dorgqr, cuBLAS dgemm, in FP64 on the\n"
                "        GPU, copied back (3 n^2 doubles of device memory: 6 GiB at n = 16384).\n"
                "The two backends draw different random streams: the same seed gives a different A\n"
                "(with the same singular values) and x on cpu and on cuda. On one backend the same\n"
                "seed gives the same file (cuda: on the same GPU model and CUDA version). The file's\n"
                "description attribute and the output name the backend that generated it.",
                options);
    return 0;
  }

  if (!vm.count("n")) throw InvalidInput("--n is required (the order of the matrix)");
  const int order = positive_int("n", n);
  if (order > kMaxGeneratedOrder)
    throw InvalidInput("--n must be at most " + std::to_string(kMaxGeneratedOrder) + ", got " +
                       std::to_string(n));
  if (!std::isfinite(cond) || cond < 1)
    throw InvalidInput("--cond must be a finite number >= 1, got " + format_number(cond));
  if (mode_name != "geometric" && mode_name != "arithmetic" && mode_name != "clustered" &&
      mode_name != "random")
    throw InvalidInput("--mode must be geometric, arithmetic, clustered or random, got '" + mode_name + "'");
  const SpectrumMode mode = parse_spectrum_mode(mode_name);
  if (seed < 0) throw InvalidInput("--seed must be a non-negative integer, got " + std::to_string(seed));
  const int rhs_count = positive_int("nrhs", nrhs);
  if (vm.count("block-rows")) {
    positive_int("block-rows", block_rows);
    if (mode != SpectrumMode::random)
      throw InvalidInput("--block-rows is for --mode random (randsvd systems are made whole, in memory)");
  }
  if (!vm.count("output") || output.empty())
    throw InvalidInput("--output is required (the system file to write)");
  const OutputOptions output_rule = output_options(vm.count("force") > 0, {});
  const Backend requested = parse_backend(backend_name);
  prepare_output(output, output_rule);  // refuse before the (long, for large n) generation
  const Backend backend = choose_backend(requested);

  const bool randsvd = mode != SpectrumMode::random;
  const bool by_blocks = !randsvd && (order > kWholeMatrixRandomOrder || vm.count("block-rows") > 0);
  int rows_per_block = 0;
  double generate_s = 0, write_s = 0;
  if (by_blocks) {
    rows_per_block = block_rows_for(order, rhs_count, block_rows);
    Progress progress("generate", progress_mode(vm));
    progress.step("n = " + std::to_string(order) + ", A ~ U(-1,1) by blocks of " + std::to_string(rows_per_block) +
                  " rows (Philox4x32-10), written to " + output);
    const BlockTimes times = generate_by_blocks(order, static_cast<std::uint64_t>(seed), rhs_count, rows_per_block,
                                                output, output_rule, progress);
    generate_s = times.generate_s;
    write_s = times.write_s;
  } else {
    {
      // Host: A, U and V with their QR workspaces (cpu randsvd: about 40 n^2 bytes at the peak,
      // freed before x and b are drawn); then A (random, or cuda randsvd's copied back), x and
      // b = A x (n x nrhs each), and the write: the HDF5 file built in memory (hdf5_file.hpp: all
      // disk I/O is ours, from HDF5's own buffer) with A, b and x in it, and the C-order copies
      // 32 MiB at a time (system_file.cpp): 18 n^2 + 32 n nrhs bytes and a margin (measured: 17.7
      // n^2 resident at n = 12000 with one right-hand side; with a copy of the image and
      // whole-matrix C-order copies it was 97.8 GB, 23.5 n^2, at n = 64512). b and x count: --n
      // 1000 --nrhs 2000000 (16 GB each) passed a check without them and was OOM-killed.
      // Device (cuda randsvd): 3 n^2 doubles.
      const double n2 = static_cast<double>(order) * order;
      const double rhs = static_cast<double>(order) * static_cast<double>(rhs_count);
      const double written = 18 * n2 + 32 * rhs + 512.0 * 1024 * 1024;
      const std::string what = "generate --n " + std::to_string(order) +
                               (rhs_count > 1 ? " --nrhs " + std::to_string(rhs_count) + " (b and x: " +
                                                    format_bytes(8 * rhs) + " each)"
                                              : std::string());
      require_host_memory(what, randsvd && backend == Backend::cpu ? std::max(40 * n2, written) : written);
      if (randsvd && backend == Backend::cuda) require_device_memory(what, 24 * n2 + 64.0 * 1024 * 1024);
    }
    Progress progress("generate", progress_mode(vm));
    progress.step("n = " + std::to_string(order) +
                  (randsvd ? ", forming A on " + std::string(to_string(backend)) + " (two " + std::to_string(order) +
                                 " x " + std::to_string(order) + " QR factorizations)"
                           : ", forming A ~ U(-1,1) on the host (random mode: the same on every backend)"));
    using Clock = std::chrono::steady_clock;
    const auto t_start = Clock::now();
    const LinearSystem sys =
        generate_system(order, cond, mode, static_cast<std::uint64_t>(seed), rhs_count, backend);
    const auto t_generated = Clock::now();
    progress.step("writing " + output);
    write_system(output, sys, output_rule);
    const auto t_written = Clock::now();
    generate_s = std::chrono::duration<double>(t_generated - t_start).count();
    write_s = std::chrono::duration<double>(t_written - t_generated).count();
  }

  if (vm.count("json")) {
    JsonWriter w(std::cout);
    w.begin_object().field("command", "generate").field("output", output).field("n", order);
    w.field_or_null("cond", randsvd, cond);
    w.field("mode", to_string(mode)).field("seed", seed).field("nrhs", rhs_count);
    w.field("backend", to_string(backend)).field("device", device_description(backend));
    w.field_or_null("by_blocks", by_blocks, rows_per_block);
    w.key("time_s").begin_object().field("generate", generate_s).field("write", write_s).end_object();
    finish_command_json(w);
  } else {
    std::cout << "generate: wrote " << output << ": "
              << (randsvd ? "randsvd, n " + std::to_string(order) + ", cond " + format_number(cond) + ", " +
                                std::string(to_string(mode)) + " spectrum"
                          : "A ~ U(-1,1), n " + std::to_string(order) +
                                (by_blocks ? " (by blocks of " + std::to_string(rows_per_block) + " rows)" : ""))
              << ", seed " << seed << ", nrhs " << rhs_count << "; backend " << to_string(backend) << " ("
              << device_description(backend) << "), generated in " << fmt("%.3g", generate_s)
              << " s, written in " << fmt("%.3g", write_s) << " s\n";
  }
  return 0;
}

}  // namespace tcsolve::app
