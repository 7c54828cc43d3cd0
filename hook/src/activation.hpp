// cuBLASLt's point-wise epilogue transforms, written once for the drop-in's kernel (epilogue.cu)
// and its CPU tests (tests/test_hook_policy.cpp), in FP32 as the epilogue computes them:
//   ReLU  max(x, 0), with fmaxf: a NaN gives 0, as cuBLASLt's CUBLASLT_EPILOGUE_RELU answers it
//         (reported on NVIDIA's forum, "Incorrect result of cublasLtMatmul with
//         CUBLASLT_EPILOGUE_RELU when input is NaN",
//         https://forums.developer.nvidia.com/t/incorrect-result-of-cublasltmatmul-with-cublaslt-epilogue-relu-when-input-is-nan/329783);
//   GELU  0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the tanh approximation.
// cuBLAS's documentation (cublasLt.h, CUDA 13, cublasLtEpilogue_t) defines the epilogues only as
// "apply GELU point-wise transform to the results (x:=GELU(x))" and "apply Bias and then GELU
// transform", without the formula; that it is the tanh approximation is PyTorch's reading, which
// serves torch._addmm_activation(use_gelu=True) with it as gelu(approximate='tanh')
// (pytorch/pytorch#104061: "cuBLASLt-based fused GELU epilogue ... uses tanh approximation").
// The hook's results are FP32 evaluations of these formulas, not bitwise cuBLASLt's.
#pragma once

#include <math.h>

#include "tcsolve/gemm/config.hpp"

namespace tcsolve::hook {

/// cuBLASLt's point-wise transform after the product (and the bias).
enum class Activation { none, relu, gelu };

/// The tanh approximation of GELU in FP32.
TCSOLVE_HOST_DEVICE inline float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;  // sqrt(2 / pi)
  constexpr float kCubic = 0.044715f;
  return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + kCubic * x * x * x)));
}

/// `a` applied to x.
TCSOLVE_HOST_DEVICE inline float activate(Activation a, float x) {
  switch (a) {
    case Activation::relu:
      return fmaxf(x, 0.0f);
    case Activation::gelu:
      return gelu_tanh(x);
    case Activation::none:
      break;
  }
  return x;
}

}  // namespace tcsolve::hook
