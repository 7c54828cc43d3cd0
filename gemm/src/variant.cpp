// Lookups over the one variant table (variant.hpp).
#include "tcsolve/gemm/variant.hpp"

#include <algorithm>

#include "tcsolve/runtime/error.hpp"

namespace tcsolve {

const VariantInfo& info(Variant v) {
  for (const auto& row : kVariants)
    if (row.variant == v) return row;
  throw Error("variant missing from kVariants");  // unreachable while the table is complete
}

std::string_view to_string(Variant v) { return info(v).name; }

std::string variant_names() {
  std::string out;
  for (const auto& row : kVariants) {
    if (!out.empty()) out += ", ";
    out += row.name;
  }
  return out;
}

Variant parse_variant(std::string_view name) {
  for (const auto& row : kVariants)
    if (row.name == name) return row.variant;
  throw InvalidInput("unknown variant '" + std::string(name) + "' (valid: " + variant_names() + ")");
}

std::vector<Variant> parse_variant_list(std::string_view list) {
  std::vector<Variant> out;
  if (list == "all") {
    for (const auto& row : kVariants) out.push_back(row.variant);
    return out;
  }
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    std::string_view item = list.substr(start, comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) throw InvalidInput("empty name in variant list '" + std::string(list) + "'");
    const Variant v = parse_variant(item);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    start = comma + 1;
  }
  return out;
}

std::string_view to_string(Backend b) {
  switch (b) {
    case Backend::cpu: return "cpu";
    case Backend::cuda: return "cuda";
    case Backend::automatic:
    default: return "auto";
  }
}

Backend parse_backend(std::string_view name) {
  if (name == "auto") return Backend::automatic;
  if (name == "cpu") return Backend::cpu;
  if (name == "cuda") return Backend::cuda;
  throw InvalidInput("unknown backend '" + std::string(name) + "' (valid: auto, cpu, cuda)");
}

}  // namespace tcsolve
