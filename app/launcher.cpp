// MPI launcher detection from the environment (launcher.hpp).
#include "launcher.hpp"

#include <cstdlib>
#include <string>

namespace tcsolve::app {

namespace {

/// The environment variable `name` as an integer >= `least`, or -1 when unset or not one.
long read_count(const char* name, long least) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return -1;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return (*end == '\0' && v >= least && v <= 1 << 24) ? v : -1;
}

}  // namespace

LaunchRanks launcher_ranks() {
  LaunchRanks out;
  const char* const pairs[][2] = {
      {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"}, {"PMIX_SIZE", "PMIX_RANK"}, {"PMI_SIZE", "PMI_RANK"}};
  for (const auto& [size_name, rank_name] : pairs) {
    const long size = read_count(size_name, 1);
    if (size < 1) continue;
    const long rank = read_count(rank_name, 0);
    out.size = static_cast<int>(size);
    out.rank = rank >= 0 && rank < size ? static_cast<int>(rank) : 0;
    out.variable = size_name;
    return out;
  }
  return out;
}

}  // namespace tcsolve::app
