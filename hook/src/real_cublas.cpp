// The caller's cuBLAS and cuBLASLt (real_cublas.hpp): RTLD_NEXT, then the loaded library.
#include "real_cublas.hpp"

#include <dlfcn.h>

namespace tcsolve::hook {
namespace {

/// Sonames of the libraries this build's headers describe (13) and the previous major release.
constexpr const char* kCublas[] = {"libcublas.so.13", "libcublas.so.12"};
constexpr const char* kCublasLt[] = {"libcublasLt.so.13", "libcublasLt.so.12"};

void* in_loaded_library(Library library, const char* name) {
  const auto& sonames = library == Library::cublas ? kCublas : kCublasLt;
  for (const char* soname : sonames) {
    void* handle = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);  // only if already loaded
    if (handle == nullptr) continue;
    void* f = dlsym(handle, name);
    dlclose(handle);  // drops the reference NOLOAD took; the library stays loaded
    if (f != nullptr) return f;
  }
  return nullptr;
}

}  // namespace

void* RealFunction::address() {
  void* f = address_.load(std::memory_order_acquire);
  if (f != nullptr) return f;
  f = dlsym(RTLD_NEXT, name_);
  if (f == nullptr) f = in_loaded_library(library_, name_);
  if (f != nullptr) address_.store(f, std::memory_order_release);
  return f;
}

}  // namespace tcsolve::hook
