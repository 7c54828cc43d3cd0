// A linear system A x = b held in FP64: the solver's input, whatever it was read from (the files
// are tcsolve::io's, tcsolve/io/system_file.hpp).
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <string>

namespace tcsolve {

/// A x = b held in FP64 (column-major in memory whatever the file's layout).
struct LinearSystem {
  Eigen::MatrixXd A;                     ///< n x n
  Eigen::MatrixXd b;                     ///< n x nrhs
  std::optional<Eigen::MatrixXd> x_true; ///< n x nrhs when known
  bool b_is_vector = true;               ///< b was a 1-D dataset (solutions are written 1-D too)
  std::string description;               ///< provenance, stored as the file attribute "description"
  int n() const { return static_cast<int>(A.rows()); }
  int nrhs() const { return static_cast<int>(b.cols()); }
};

}  // namespace tcsolve
