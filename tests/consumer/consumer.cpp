// The installed C++ package in use: `consumer_cpp SYSTEM.h5 X_CLI.h5 OUT_DIR`
//   1. a CPU GEMM (ec-fp16) against the FP64 product of the same inputs, within (k + 2) u32
//      |A| |B| element by element (the classical dot-product bound, u32 = 2^-24);
//   2. the system read with tcsolve::io, solved on the cpu with the default options (those of
//      `tcsolve solve --backend cpu`), x compared bit for bit with the CLI's solution file;
//   3. OUT_DIR/system.bin (int64 n, int64 nrhs, A and b column-major float64) and
//      OUT_DIR/x.bin (x, column-major float64), host byte order, for the C consumer, which reads
//      no HDF5.
// Exit status 0 when everything holds, 1 otherwise (a line on stderr says what).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/solver/solver.hpp"
#include "tcsolve/version.h"

namespace {

bool gemm_check() {
  const int m = 40, n = 30, k = 70;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> A(m * k), B(k * n), C(m * n, 0.0f);
  for (float& a : A) a = u(rng);
  for (float& b : B) b = u(rng);
  tcsolve::gemm(tcsolve::Backend::cpu, tcsolve::Variant::ec_fp16, tcsolve::Op::n, tcsolve::Op::n, m, n, k, 1.0f,
                A.data(), m, B.data(), k, 0.0f, C.data(), m);
  const double u32 = std::ldexp(1.0, -24);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double exact = 0, magnitude = 0;
      for (int l = 0; l < k; ++l) {
        exact += double(A[i + l * m]) * B[l + j * k];
        magnitude += std::fabs(double(A[i + l * m]) * B[l + j * k]);
      }
      if (std::fabs(C[i + j * m] - exact) > (k + 2) * u32 * magnitude) {
        std::fprintf(stderr, "consumer_cpp: gemm: C(%d, %d) = %.9g, FP64 %.9g\n", i, j, C[i + j * m], exact);
        return false;
      }
    }
  return true;
}

void write_raw(const std::string& path, const std::vector<const Eigen::MatrixXd*>& blocks, bool header) {
  std::ofstream out(path, std::ios::binary);
  if (header) {
    const std::int64_t dims[2] = {blocks[0]->rows(), blocks[1]->cols()};
    out.write(reinterpret_cast<const char*>(dims), sizeof dims);
  }
  for (const Eigen::MatrixXd* m : blocks)
    out.write(reinterpret_cast<const char*>(m->data()), static_cast<std::streamsize>(m->size() * sizeof(double)));
  if (!out) throw std::runtime_error(path + ": cannot write");
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 4) {
    std::fprintf(stderr, "usage: consumer_cpp SYSTEM.h5 X_CLI.h5 OUT_DIR\n");
    return 2;
  }
  std::printf("consumer_cpp: tcsolve %s\n", TCSOLVE_VERSION_STRING);
  if (!gemm_check()) return 1;

  const tcsolve::LinearSystem sys = tcsolve::read_system(argv[1]);
  tcsolve::SolveOptions options;
  options.backend = tcsolve::Backend::cpu;
  const tcsolve::SolveResult r = tcsolve::solve(sys, options);
  const tcsolve::Solution cli = tcsolve::read_solution(argv[2]);
  if (!r.converged || r.x.rows() != cli.x.rows() || r.x.cols() != cli.x.cols() ||
      std::memcmp(r.x.data(), cli.x.data(), sizeof(double) * static_cast<std::size_t>(r.x.size())) != 0) {
    std::fprintf(stderr, "consumer_cpp: x differs from the CLI's (converged %d, max difference %.3g)\n",
                 int(r.converged), r.x.rows() == cli.x.rows() ? (r.x - cli.x).cwiseAbs().maxCoeff() : -1.0);
    return 1;
  }
  const std::string dir = argv[3];
  write_raw(dir + "/system.bin", {&sys.A, &sys.b}, true);
  write_raw(dir + "/x.bin", {&cli.x}, false);
  std::printf("consumer_cpp: gemm within its bound; n = %d solve bitwise the CLI's (%d iterations)\n", sys.n(),
              r.iterations);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "consumer_cpp: %s\n", e.what());
  return 1;
}
