// The one table of GEMM variants. Parsing, --help, `tcsolve variants`, docs/guide/variants.md's table and
// the test loops all read kVariants; adding a variant starts with one row here.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace tcsolve {

enum class Variant {
  fp64,
  fp32_simt,
  fp16_simt,
  fp16_tc,
  tf32_tc,
  fp16_fp16acc,
  fp16_twostage,
  markidis,
  ootomo_fp16,
  ootomo_tf32,
  legemm,
  ec_fp16,
  ec_tf32,
  auto_,  ///< CLI name "auto"
  cublas_tf32,
  cublas_fp16,
};

enum class Backend { automatic, cpu, cuda };

struct VariantInfo {
  Variant variant;
  std::string_view name;         ///< CLI / JSON name (a contract)
  std::string_view description;  ///< one line
  std::string_view input_format; ///< what the tensor cores (or CUDA cores) are fed
  double unit_roundoff;          ///< expected unit roundoff of the result, for test bounds
  bool on_cpu;                   ///< the cpu backend implements it
};

// clang-format off
inline constexpr std::array<VariantInfo, 16> kVariants{{
  {Variant::fp64,          "fp64",          "FP64 reference (DGEMM / Eigen double) of the FP32 inputs",                          "fp64",    0x1p-53, true},
  {Variant::fp32_simt,     "fp32-simt",     "plain FP32 on CUDA cores (SGEMM / Eigen float): the baseline",                      "fp32",    0x1p-24, true},
  {Variant::fp16_simt,     "fp16-simt",     "RFC 0007 scalar kernel: saturating FP16 operands, FP32 accumulation, no tensor cores", "fp16",  0x1p-11, true},
  {Variant::fp16_tc,       "fp16-tc",       "inputs rounded to FP16 (RN), one tensor-core product, FP32 accumulation inside",   "fp16",    0x1p-11, true},
  {Variant::tf32_tc,       "tf32-tc",       "inputs rounded to TF32 (RNA), one tensor-core product, FP32 accumulation inside",  "tf32",    0x1p-11, true},
  {Variant::fp16_fp16acc,  "fp16-fp16acc",  "FP16 inputs, FP16 accumulation inside the tensor core (two-stage blog baseline)",  "fp16",    0x1p-11, true},
  {Variant::fp16_twostage, "fp16-twostage", "FP16-accumulating mma per k-step, added to FP32 registers outside (two-stage blog)", "fp16", 0x1p-11, true},
  {Variant::markidis,      "markidis",      "Markidis: FP16 hi + FP16 residual, 4 products accumulated inside the tensor core",  "fp16x2",  0x1p-22, true},
  {Variant::ootomo_fp16,   "ootomo-fp16",   "Ootomo halfhalf: residual x 2^11, 3 products, hi*hi accumulated outside in FP32",   "fp16x2",  0x1p-24, true},
  {Variant::ootomo_tf32,   "ootomo-tf32",   "Ootomo tf32tf32: the same with TF32 (RNA) operands",                                "tf32x2",  0x1p-24, true},
  {Variant::legemm,        "legemm",        "LE-GEMM: bit-cut hi, RZ residual x 2^10, 3 products in two accumulators",           "fp16x2",  0x1p-22, true},
  {Variant::ec_fp16,       "ec-fp16",       "production path on FP16 tensor cores: power-of-two row/column scaling, hi + lo, 32-k chunks added in FP32",  "fp16x2",  0x1p-24, true},
  {Variant::ec_tf32,       "ec-tf32",       "production path on TF32 tensor cores: power-of-two scaling + tf32tf32",             "tf32x2",  0x1p-24, true},
  {Variant::auto_,         "auto",          "ec-fp16 when the scaled inputs' exponent range fits FP16, else ec-tf32",            "auto",    0x1p-24, true},
  {Variant::cublas_tf32,   "cublas-tf32",   "vendor baseline: cuBLAS SGEMM with CUBLAS_COMPUTE_32F_FAST_TF32",                   "tf32",    0x1p-11, false},
  {Variant::cublas_fp16,   "cublas-fp16",   "vendor baseline: cuBLAS SGEMM with CUBLAS_COMPUTE_32F_FAST_16F",                    "fp16",    0x1p-11, false},
}};
// clang-format on

/// Row of the table for v.
const VariantInfo& info(Variant v);
/// CLI name of v ("ootomo-fp16").
std::string_view to_string(Variant v);
/// Variant named `name`; throws InvalidInput listing the valid names otherwise.
Variant parse_variant(std::string_view name);
/// "all" -> every variant; otherwise a comma-separated list of names (duplicates kept once).
std::vector<Variant> parse_variant_list(std::string_view list);
/// "v1, v2, ..." of every name, for help texts and error messages.
std::string variant_names();

std::string_view to_string(Backend b);
/// "auto" | "cpu" | "cuda"; throws InvalidInput otherwise.
Backend parse_backend(std::string_view name);

}  // namespace tcsolve
