// The project's exception hierarchy. Libraries throw; only app/main.cpp prints and exits.
#pragma once

#include <atomic>
#include <stdexcept>
#include <string>

namespace tcsolve {

/// Base of every error the libraries throw.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad arguments or invalid input data (exit code 2).
class InvalidInput : public Error {
 public:
  using Error::Error;
};

/// The requested variant or backend cannot run here (exit code 4).
class Unavailable : public Error {
 public:
  using Error::Error;
};

/// The caller asked the running call to stop (SolveOptions::interrupt, GemmOptions::interrupt);
/// its outputs are unspecified. The C API returns TCSOLVE_STATUS_INTERRUPTED for it.
class Interrupted : public Error {
 public:
  using Error::Error;
};

/// Throws Interrupted ("interrupted: <what> was stopped at the caller's request") when the
/// caller's flag is set; nullptr: never. The one check behind every interrupt option.
inline void check_interrupt(const std::atomic<bool>* interrupt, const char* what) {
  if (interrupt && interrupt->load(std::memory_order_relaxed))
    throw Interrupted(std::string("interrupted: ") + what + " was stopped at the caller's request");
}

/// A CUDA runtime or library call failed; the message names the call, file and line.
class CudaError : public Error {
 public:
  using Error::Error;
};

}  // namespace tcsolve
