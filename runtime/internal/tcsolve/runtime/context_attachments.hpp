// The attachments of a tcsolve::cuda::Context (context.hpp): state other libraries keep per
// context, under a key each owner defines. Shared by the cuda and the stub Context (internal to
// the build tree: runtime/internal/ is not installed).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "tcsolve/runtime/context.hpp"

namespace tcsolve::cuda::detail {

class Attachments {
 public:
  ~Attachments() { clear(); }

  Context::Attachment* find(const void* key) const {
    for (const auto& [k, v] : items_)
      if (k == key) return v.get();
    return nullptr;
  }

  Context::Attachment& put(const void* key, std::unique_ptr<Context::Attachment> value) {
    for (auto& [k, v] : items_)
      if (k == key) {
        v = std::move(value);
        return *v;
      }
    items_.emplace_back(key, std::move(value));
    return *items_.back().second;
  }

  /// Destroys the attachments, the last made first.
  void clear() {
    while (!items_.empty()) items_.pop_back();
  }

 private:
  std::vector<std::pair<const void*, std::unique_ptr<Context::Attachment>>> items_;
};

}  // namespace tcsolve::cuda::detail
