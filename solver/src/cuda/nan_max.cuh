// nan_max: the maximum that keeps a NaN from either side (fmax would drop it), for the device
// kernels' column and vector maxima (refine_kernels.cu, lu_apply.cu), whose NaN must reach the
// host's assessment.
#pragma once

namespace tcsolve::cuda::kernels {

__device__ __forceinline__ double nan_max(double a, double b) { return (a != a || a > b) ? a : b; }

}  // namespace tcsolve::cuda::kernels
