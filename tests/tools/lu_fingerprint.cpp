// lu_fingerprint N LABEL [PLAN] [GEMM_KERNELS]: FNV-1a 64 fingerprints of the cuda LU factors
// (packed L\U, the permutation, R and C) and of a solve's x, for auto, ec-fp16, ec-tf32 and
// fp32-simt on one U(-1,1) matrix of order N (a fixed LCG, nb = 512), under the CudaLuPlan
// PLAN ("field=value,...", set_plan_field's names) and the GEMM kernel family. The same
// program built against the commit before the plans existed (with the TCSOLVE_* variables in
// place of PLAN) prints the fingerprints the redesign must reproduce bit for bit
// (docs/benchmark-history.md, session 8: issue 15). Not a test: a tool for the GPU runs.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/solver/solver.hpp"

using namespace tcsolve;

namespace {

std::uint64_t fnv(const void* p, std::size_t n, std::uint64_t h = 1469598103934665603ull) {
  const unsigned char* c = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= c[i];
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 4096;
  const char* label = argc > 2 ? argv[2] : "default";
  CudaLuPlan plan;
  const std::string text = argc > 3 ? argv[3] : "";
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, end - start);
    const std::size_t eq = part.find('=');
    set_plan_field(plan, part.substr(0, eq), part.substr(eq + 1));
    start = end + 1;
  }
  GemmOptions gemm;
  if (argc > 4) gemm.cuda_kernels = parse_cuda_kernels(argv[4]);
  Eigen::MatrixXd A(n, n);
  std::uint64_t s = 12345;
  for (Eigen::Index j = 0; j < A.cols(); ++j)
    for (Eigen::Index i = 0; i < A.rows(); ++i) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      A(i, j) = static_cast<double>(static_cast<std::int64_t>(s >> 11) - (1ll << 52)) /
                static_cast<double>(1ll << 52);
    }
  for (const char* v : {"auto", "ec-fp16", "ec-tf32", "fp32-simt"}) {
    const Variant var = parse_variant(v);
    const LuFactorization f = lu_factorize(Backend::cuda, A, var, 512, gemm, plan);
    std::uint64_t h = fnv(f.lu.data(), sizeof(float) * static_cast<std::size_t>(f.lu.size()));
    h = fnv(f.perm.data(), sizeof(int) * f.perm.size(), h);
    h = fnv(f.row_scale.data(), sizeof(double) * static_cast<std::size_t>(n), h);
    h = fnv(f.col_scale.data(), sizeof(double) * static_cast<std::size_t>(n), h);
    LinearSystem sys;
    sys.A = A;
    sys.b = A * Eigen::VectorXd::Ones(n);
    SolveOptions o;
    o.variant = var;
    o.backend = Backend::cuda;
    o.block_size = 512;
    o.cuda_plan = plan;
    o.gemm = gemm;
    const SolveResult r = solve(sys, o);
    std::printf("%s n=%d %s lu=%016llx resolved=%s x=%016llx it=%d\n", label, n, v,
                static_cast<unsigned long long>(h), std::string(to_string(f.resolved_variant)).c_str(),
                static_cast<unsigned long long>(fnv(r.x.data(), sizeof(double) * static_cast<std::size_t>(r.x.size()))),
                r.iterations);
  }
  return 0;
}
