// The state inside a tcsolve::cuda::Context (context.hpp) in a build without CUDA: its settings
// and attachments, nothing on a device (runtime/internal/tcsolve/runtime/context_impl.hpp is the
// CUDA build's).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/context_attachments.hpp"

namespace tcsolve::cuda {

struct Context::Impl {
  CUstream_st* stream = nullptr;
  int device = 0;
  int max_blocks = 0;
  bool tile_blocks = false;
  bool time_phases = false;
  Context::Workspaces workspaces = Context::Workspaces::cached;
  CUmemPoolHandle_st* pool = nullptr;
  detail::Attachments attachments;
};

}  // namespace tcsolve::cuda
