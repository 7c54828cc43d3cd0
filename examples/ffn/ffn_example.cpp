// The FFN demo through the library API: a BERT-base feed-forward block Y = GELU(X W1 + b1) W2 + b2
// (d_model 768, d_ff 3072) with both GEMMs through a chosen variant, against fp32-simt, each
// compared with the block computed in FP64.
//   example_ffn [variant] [tokens]   (default ec-fp16; 16 tokens on the cpu, 4096 on a GPU)
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "tcsolve/demos/ffn.hpp"

int main(int argc, char** argv) try {
  using namespace tcsolve;
  const Variant variant = parse_variant(argc > 1 ? argv[1] : "ec-fp16");
  const Backend backend = resolve_backend(Backend::automatic);  // cuda with a GPU, else cpu
  const bool gpu = backend == Backend::cuda;

  demos::FfnShape shape;  // BERT-base sizes
  shape.tokens = argc > 2 ? std::atoi(argv[2]) : (gpu ? 4096 : 16);
  const demos::FfnProblem problem = demos::make_problem(shape, /*seed=*/42);

  // Places the data (uploads it on a GPU) and computes the FP64 reference once.
  demos::FfnBench bench(backend, problem);
  std::printf("FFN %d tokens x %d -> %d -> %d on %s\n", shape.tokens, shape.d_model, shape.d_ff,
              shape.d_model, std::string(to_string(backend)).c_str());
  for (const Variant v : {Variant::fp32_simt, variant}) {
    // GPU: one warm-up and the median of 5 runs; the cpu emulation is slow, one run.
    const demos::FfnResult r = bench.run(v, gpu ? 5 : 1, gpu ? 1 : 0);
    std::printf("%-12s (ran as %s): ||Y - Y64|| / ||Y64|| = %.3e, %.3f ms, %.3f TFLOP/s\n",
                std::string(to_string(v)).c_str(), demos::resolved_name(r.info).c_str(), r.relative_error,
                r.time_s * 1e3, r.tflops);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "example_ffn: %s\n", e.what());
  return 1;
}
