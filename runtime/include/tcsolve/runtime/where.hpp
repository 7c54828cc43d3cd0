// Where an algorithm runs: the one argument every tcsolve entry point takes for it.
//
//   Where()              the host (the cpu backend)
//   Where(context)       one GPU: the caller's cuda::Context (its device, stream, handles)
//   Where(group)         a DeviceGroup: several GPUs of this process, or this process' rank of
//                        an MPI job (group.hpp)
//
// A Where refers to the caller's context or group; they must outlive the call.
#pragma once

namespace tcsolve::cuda {
class Context;
}

namespace tcsolve::runtime {

class DeviceGroup;

class Where {
 public:
  enum class Kind { host, context, group };

  Where() = default;
  Where(cuda::Context& context) : kind_(Kind::context), context_(&context) {}  // NOLINT: implicit by design
  Where(DeviceGroup& group) : kind_(Kind::group), group_(&group) {}              // NOLINT: implicit by design

  Kind kind() const { return kind_; }
  /// The context (Kind::context), else nullptr.
  cuda::Context* context() const { return context_; }
  /// The group (Kind::group), else nullptr.
  DeviceGroup* group() const { return group_; }

 private:
  Kind kind_ = Kind::host;
  cuda::Context* context_ = nullptr;
  DeviceGroup* group_ = nullptr;
};

}  // namespace tcsolve::runtime
