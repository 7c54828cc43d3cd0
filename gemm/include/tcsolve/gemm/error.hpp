// The project's exception hierarchy. Libraries throw; only app/main.cpp prints and exits.
#pragma once

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

/// A CUDA runtime or library call failed; the message names the call, file and line.
class CudaError : public Error {
 public:
  using Error::Error;
};

}  // namespace tcsolve
