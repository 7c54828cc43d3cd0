// K-means through the library API: Fisher's iris data, one k-means++ start, clustered with the
// FP64 reference and with an error-corrected tensor-core variant; the labels agree.
//   example_kmeans [DATA.h5] [variant]     (defaults: inputs/iris.h5, ec-fp16; the cpu backend
//                                          unless a GPU is present)
#include <cstdio>
#include <exception>
#include <string>

#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/io/kmeans_file.hpp"

int main(int argc, char** argv) try {
  namespace cluster = tcsolve::cluster;
  const std::string path = argc > 1 ? argv[1] : TCSOLVE_SOURCE_DIR "/inputs/iris.h5";
  const tcsolve::Variant variant = tcsolve::parse_variant(argc > 2 ? argv[2] : "ec-fp16");
  const int k = 3;

  // X is points x dim in the file, dim x points (one point per column) in memory: same bytes.
  const tcsolve::KmeansData data = tcsolve::read_kmeans_data(path);
  const std::vector<float> start =
      cluster::kmeans_plus_plus(data.X.data(), data.points, data.dim, k, /*seed=*/1);

  cluster::KmeansOptions options;
  options.variant = tcsolve::Variant::fp64;
  const cluster::KmeansResult reference = cluster::kmeans(data.X.data(), data.points, data.dim, start, options);
  options.variant = variant;
  const cluster::KmeansResult result = cluster::kmeans(data.X.data(), data.points, data.dim, start, options);

  std::printf("%s: %d points x %d, k = %d, %s backend\n", path.c_str(), data.points, data.dim, k,
              std::string(tcsolve::to_string(result.backend)).c_str());
  for (const cluster::KmeansResult* r : {&reference, &result})
    std::printf("  %-12s %2d iterations, inertia %.10g\n", r->resolved_name.c_str(), r->iterations,
                r->inertia);
  std::printf("  labels equal to fp64's: %.4f\n", cluster::label_agreement(result.labels, reference.labels));
  for (int j = 0; j < k; ++j) {
    std::printf("  centroid %d:", j);
    for (int d = 0; d < data.dim; ++d) std::printf(" %7.4f", result.centroids[j * data.dim + d]);
    std::printf("\n");
  }
  return 0;
} catch (const std::exception& e) {  // bad file or variant name: tcsolve::InvalidInput
  std::fprintf(stderr, "example_kmeans: %s\n", e.what());
  return 1;
}
