// The caller's own cuBLAS and cuBLASLt: the functions the drop-in forwards to and queries.
// Found through dlsym(RTLD_NEXT, name) (the next definition after this library in the global
// scope: CuPy's libcublas), and where that finds nothing, in the already-loaded library through
// dlopen(soname, RTLD_NOLOAD) (PyTorch loads its libcublas with local scope, where RTLD_NEXT does
// not look). Never loads a second copy: a handle from one copy is invalid in another. A function
// found is cached; one not found returns nullptr (the caller fails the call with a cuBLAS status
// and a log line, never calls through a null pointer) and is looked for again next time.
#pragma once

#include <atomic>

namespace tcsolve::hook {

enum class Library { cublas, cublaslt };

/// A function of the caller's library, looked up on first use.
class RealFunction {
 public:
  constexpr RealFunction(Library library, const char* name) : library_(library), name_(name) {}
  /// The address, or nullptr when neither lookup finds it.
  void* address();
  const char* name() const { return name_; }
  template <typename F>
  F get() {
    return reinterpret_cast<F>(address());
  }

 private:
  Library library_;
  const char* name_;
  std::atomic<void*> address_{nullptr};
};

}  // namespace tcsolve::hook
