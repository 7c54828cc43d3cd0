// K-means' cuda part (tcsolve::cluster) in a build without CUDA: links, and throws tcsolve::Unavailable.
#include "kmeans_cuda.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cluster::detail {
namespace {
[[noreturn]] void not_built() { throw Unavailable("tcsolve was built without CUDA"); }
}  // namespace

void kmeans_assign(const float*, int, int, int, const double*, int*, unsigned long long*, CUstream_st*) {
  not_built();
}
std::size_t kmeans_order_bytes(int, int) { not_built(); }
void kmeans_order_init(int*, int, CUstream_st*) { not_built(); }
void kmeans_accumulate_ordered(const float*, const int*, int, int, int, double*, int*, const OrderScratch&,
                               CUstream_st*, const double*, double*) {
  not_built();
}
std::vector<float> kmeans_plus_plus_device(const float*, int, int, int, std::uint64_t, int, int, CUstream_st*) {
  not_built();
}
void kmeans_finalize(const double*, const int*, float*, double*, double*, int, int, CUstream_st*, const double*) {
  not_built();
}
void kmeans_centroid_norms(const float*, int, int, double*, CUstream_st*) { not_built(); }
double kmeans_inertia(const float*, const int*, const float*, int, int, CUstream_st*, const double*) { not_built(); }
PointScan kmeans_scan(const float*, std::size_t, CUstream_st*) { not_built(); }
std::vector<double> kmeans_coordinate_sums(const float*, int, int, const std::vector<double>*, CUstream_st*) {
  not_built();
}
void kmeans_scale(const float*, float*, std::size_t, int, CUstream_st*) { not_built(); }

}  // namespace tcsolve::cluster::detail
