// The cuBLASLt entry points the drop-in exports (exports.map): cublasLtMatmul for the common
// FP32 case, and cublasLtDestroy (frees the handle's state, then forwards).
//
// cublasLtMatmul computes D = epilogue(alpha op(A) op(B) + beta C). The
// hook takes it when A, B, C and D are FP32 with compute type 32F (or pedantic) and scale type
// FP32, every layout is column-major with one batch count and strided batches, C and D have the
// same shape, op(C) is C, alpha and beta are host or device scalars, the epilogue is DEFAULT,
// BIAS, RELU, RELU_BIAS, GELU or GELU_BIAS (FP32 bias, no FP8 scale pointers; the bias and the
// activation applied after the product, product.hpp's apply_epilogue); anything else (the AUX
// outputs, DRELU/DGELU, BGRADA/BGRADB, ...) passes through with the first unsupported attribute
// as the reason ("epilogue 130"). The caller's algo and workspace are not used.
#include <cublasLt.h>

#include <cstdint>
#include <string>
#include <tuple>

#include "compute_type.hpp"
#include "real_cublas.hpp"
#include "serve.hpp"
#include "state.hpp"

namespace tcsolve::hook {
namespace {

RealFunction real_matmul{Library::cublaslt, "cublasLtMatmul"};
RealFunction real_destroy{Library::cublaslt, "cublasLtDestroy"};
RealFunction real_desc_get{Library::cublaslt, "cublasLtMatmulDescGetAttribute"};
RealFunction real_layout_get{Library::cublaslt, "cublasLtMatrixLayoutGetAttribute"};

/// An attribute of type T of a descriptor or layout, read by `getter` (the caller's
/// cublasLtMatmulDescGetAttribute or cublasLtMatrixLayoutGetAttribute, of type F); false when
/// the library cannot read it.
template <typename F, typename Object, typename Attribute, typename T>
bool attribute(RealFunction& getter, Object object, Attribute attr, T& value) {
  auto get = getter.get<F>();
  std::size_t written = 0;
  return get != nullptr && get(object, attr, &value, sizeof value, &written) == CUBLAS_STATUS_SUCCESS &&
         written == sizeof value;
}

template <typename T>
bool desc_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, T& value) {
  return attribute<decltype(&cublasLtMatmulDescGetAttribute)>(real_desc_get, desc, attr, value);
}

template <typename T>
bool layout_attribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, T& value) {
  return attribute<decltype(&cublasLtMatrixLayoutGetAttribute)>(real_layout_get, layout, attr, value);
}

struct Layout {
  std::uint32_t type = ~0u;  ///< unread: no data type (CUDA_R_32F is 0)
  std::int32_t order = 0, batch = 1;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0, stride = 0;
};

/// The layout's attributes, or an unsupported reason ("layout A order").
std::string read_layout(cublasLtMatrixLayout_t layout, const char* name, Layout& l) {
  if (!layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_TYPE, l.type) ||
      !layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_ORDER, l.order) ||
      !layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_ROWS, l.rows) ||
      !layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_COLS, l.cols) ||
      !layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_LD, l.ld) ||
      !layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, l.batch) ||
      !layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, l.stride))
    return std::string("layout ") + name + " unreadable";
  if (l.order != CUBLASLT_ORDER_COL)
    return std::string("layout ") + name + " order " + std::to_string(l.order);
  std::int64_t plane = 0;
  if (layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, plane) && plane != 0)
    return std::string("layout ") + name + " plane offset";
  return {};
}

/// The first descriptor attribute the hook does not serve, or empty; fills the request's and
/// the operands' fields from the descriptor.
std::string read_desc(cublasLtMatmulDesc_t desc, Request& r, Operands& o) {
  std::int32_t compute = 0, scale = 0, pointer_mode = 0, ta = 0, tb = 0, tc = 0;
  std::uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  if (!desc_attribute(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, compute) ||
      !desc_attribute(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, scale) ||
      !desc_attribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, pointer_mode) ||
      !desc_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, ta) ||
      !desc_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, tb) ||
      !desc_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSC, tc) ||
      !desc_attribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue))
    return "descriptor unreadable";
  r.compute = compute_of(compute);
  // CUBLAS_OP_C is T for real data; any other value cuBLASLt rejects: '?', passed through
  auto letter = [](std::int32_t op) {
    return op == CUBLAS_OP_N ? 'N' : op == CUBLAS_OP_T || op == CUBLAS_OP_C ? 'T' : '?';
  };
  r.ta = letter(ta);
  r.tb = letter(tb);
  r.pointers = pointer_mode == CUBLASLT_POINTER_MODE_HOST     ? Pointers::host
               : pointer_mode == CUBLASLT_POINTER_MODE_DEVICE ? Pointers::device
                                                              : Pointers::vector;
  if (scale != CUDA_R_32F) return "scale type " + std::to_string(scale);
  if (tc != CUBLAS_OP_N) return "transc";
  bool bias = false;
  switch (epilogue) {
    case CUBLASLT_EPILOGUE_DEFAULT:
      break;
    case CUBLASLT_EPILOGUE_BIAS:
      bias = true;
      break;
    case CUBLASLT_EPILOGUE_RELU:
      o.activation = Activation::relu;
      break;
    case CUBLASLT_EPILOGUE_RELU_BIAS:
      o.activation = Activation::relu, bias = true;
      break;
    case CUBLASLT_EPILOGUE_GELU:
      o.activation = Activation::gelu;
      break;
    case CUBLASLT_EPILOGUE_GELU_BIAS:
      o.activation = Activation::gelu, bias = true;
      break;
    default:
      return "epilogue " + std::to_string(epilogue);  // AUX outputs, gradients, ...
  }
  for (auto attr : {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                    CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
                    CUBLASLT_MATMUL_DESC_AMAX_D_POINTER}) {
    const void* p = nullptr;
    if (desc_attribute(desc, attr, p) && p != nullptr) return "scale pointer " + std::to_string(attr);
  }
  if (bias) {
    const void* pointer = nullptr;
    std::int32_t bias_type = -1;
    std::int64_t bias_stride = 0;
    if (!desc_attribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, pointer) || pointer == nullptr)
      return "bias pointer";
    if (desc_attribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type) && bias_type != -1 &&
        bias_type != CUDA_R_32F)
      return "bias type " + std::to_string(bias_type);
    desc_attribute(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, bias_stride);
    o.bias = static_cast<const float*>(pointer);
    o.stride_bias = bias_stride;
  }
  return {};
}

/// Request and operands of a cublasLtMatmul call; `unsupported` set when the hook cannot serve it.
Call describe(cublasLtMatmulDesc_t desc, const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
              const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
              cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc) {
  Call call;
  Request& r = call.request;
  Operands& o = call.operands;
  r.entry = Entry::lt_matmul;
  std::string why = read_desc(desc, r, o);
  Layout a, b, c, d;  // read even when the descriptor is unsupported: the log gives the sizes
  for (auto [layout, name, l] : {std::tuple{Adesc, "A", &a}, std::tuple{Bdesc, "B", &b},
                                 std::tuple{Cdesc, "C", &c}, std::tuple{Ddesc, "D", &d}}) {
    const std::string w = read_layout(layout, name, *l);
    if (why.empty()) why = w;
  }
  r.fp32_types = a.type == CUDA_R_32F && b.type == CUDA_R_32F && c.type == CUDA_R_32F && d.type == CUDA_R_32F;
  r.m = static_cast<std::int64_t>(d.rows), r.n = static_cast<std::int64_t>(d.cols);
  r.k = static_cast<std::int64_t>(r.ta == 'N' ? a.cols : a.rows);
  r.batch = d.batch;
  r.lda = a.ld, r.ldb = b.ld, r.ldc = d.ld;
  if (why.empty()) {
    const std::uint64_t k = static_cast<std::uint64_t>(r.k);
    const bool shapes = (r.ta == 'N' ? a.rows : a.cols) == d.rows &&
                        (r.tb == 'N' ? b.rows == k && b.cols == d.cols : b.cols == k && b.rows == d.cols) &&
                        c.rows == d.rows && c.cols == d.cols;
    if (!shapes)
      why = "layout shapes";
    else if (a.batch != d.batch || b.batch != d.batch || c.batch != d.batch)
      why = "batch counts";
  }
  r.unsupported = why;
  r.null_scalars = alpha == nullptr || beta == nullptr;
  if (r.pointers == Pointers::host && r.fp32_types && why.empty() && !r.null_scalars) {
    r.alpha = *static_cast<const float*>(alpha);
    o.alpha = r.alpha, o.beta = *static_cast<const float*>(beta);
  }
  o.device_scalars = r.pointers == Pointers::device;
  o.d_alpha = static_cast<const float*>(alpha), o.d_beta = static_cast<const float*>(beta);
  o.ta = r.ta, o.tb = r.tb;
  o.m = static_cast<int>(r.m), o.n = static_cast<int>(r.n), o.k = static_cast<int>(r.k), o.batch = d.batch;
  o.A = static_cast<const float*>(A), o.lda = static_cast<int>(a.ld), o.stride_a = a.stride;
  o.B = static_cast<const float*>(B), o.ldb = static_cast<int>(b.ld), o.stride_b = b.stride;
  o.C = static_cast<float*>(D), o.ldc = static_cast<int>(d.ld), o.stride_c = d.stride;
  if (C != D) {
    o.c_in = static_cast<const float*>(C), o.ldc_in = static_cast<int>(c.ld), o.stride_c_in = c.stride;
    if (c.ld < static_cast<std::int64_t>(c.rows) || c.ld > 2147483647) r.unsupported = "layout C ld";
  } else if (c.ld != d.ld || c.stride != d.stride) {
    r.unsupported = "C and D share memory with different layouts";
  }
  return call;
}

}  // namespace
}  // namespace tcsolve::hook

using namespace tcsolve::hook;

extern "C" {

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                              const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc, const void* B,
                              cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
                              cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspaceSizeInBytes,
                              cudaStream_t stream) {
  return guarded([&] {
    auto original = [&]() -> cublasStatus_t {
      auto f = real_matmul.get<decltype(&cublasLtMatmul)>();
      if (f == nullptr) return missing(real_matmul.name());
      return f(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace,
               workspaceSizeInBytes, stream);
    };
    if (InsideHook::active()) return original();
    const Call call = describe(computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc);
    return serve(lightHandle, stream, call, original);
  });
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle) {
  return guarded([&]() -> cublasStatus_t {
    forget_handle(lightHandle);
    auto f = real_destroy.get<decltype(&cublasLtDestroy)>();
    if (f == nullptr) return missing(real_destroy.name());
    return f(lightHandle);
  });
}

}  // extern "C"
