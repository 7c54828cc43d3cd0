// `tcsolve variants [--json | --markdown]`: every row of tcsolve::kVariants with its input format and
// whether it runs on the cpu and cuda backends of this build on this machine.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <string_view>

#include "cli_util.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/runtime/error.hpp"
#include "versions.hpp"

namespace tcsolve::app {

int run_variants(int argc, char** argv) {
  po::options_description options("Options");
  options.add_options()
      ("json", "print one JSON object on stdout")
      ("markdown",
       "print the variant table of docs/guide/variants.md (name, input, unit roundoff, description)")
      ("help", "print this help");
  add_progress_option(options);
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout, Synopsis{"variants", {}, {{{"json", "markdown"}, false}}},
                "Lists every GEMM variant, the format its tensor cores (or CUDA cores) are fed,\n"
                "and whether it is available on the cpu and cuda backends here.",
                options);
    return 0;
  }

  if (vm.count("json") && vm.count("markdown"))  // as every command refuses contradictory options
    throw InvalidInput("--json and --markdown exclude each other: give one of them");
  if (vm.count("markdown")) {  // machine-independent: docs/guide/variants.md embeds it verbatim
    std::cout << "| variant | input | unit roundoff | what it computes |\n| --- | --- | --- | --- |\n";
    for (const VariantInfo& v : kVariants) {
      std::cout << "| `" << v.name << "` | " << v.input_format << " | 2^" << std::ilogb(v.unit_roundoff) << " | "
                << v.description << " |\n";
    }
    return 0;
  }

  const bool has_gpu = cuda::device_available();
  const std::string device = cuda::device_name();

  if (vm.count("json")) {
    JsonWriter w(std::cout);
    w.begin_object().field("command", "variants").field("device", device);
    w.key("variants").begin_array();
    for (const VariantInfo& v : kVariants) {
      w.begin_object()
          .field("name", v.name)
          .field("description", v.description)
          .field("input_format", v.input_format)
          .field("unit_roundoff", v.unit_roundoff)
          .field("available_cpu", available(v.variant, Backend::cpu))
          .field("available_cuda", has_gpu && available(v.variant, Backend::cuda))
          .end_object();
    }
    w.end_array();
    finish_command_json(w);
    return 0;
  }

  // Left-aligned column of at least `width` characters and one space.
  const auto col = [](std::string_view text, std::size_t width) {
    std::string s(text);
    s.resize(std::max(width, s.size()), ' ');
    return s + ' ';
  };
  std::cout << "CUDA device: " << device << "\n\n"
            << col("variant", 14) << col("input", 7) << col("cpu", 4) << col("cuda", 4) << ' '
            << "description\n";
  for (const VariantInfo& v : kVariants) {
    const bool on_cpu = available(v.variant, Backend::cpu);
    const bool on_cuda = has_gpu && available(v.variant, Backend::cuda);
    std::cout << col(v.name, 14) << col(v.input_format, 7) << col(on_cpu ? "yes" : "no", 4)
              << col(on_cuda ? "yes" : "no", 4) << ' ' << v.description << '\n';
  }
  return 0;
}

}  // namespace tcsolve::app
