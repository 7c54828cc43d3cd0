// `tcsolve probe [--backend auto|cpu|cuda] [--acc-bits B --acc-rounding rz|rn] [--trials T]
// [--json]`: the effective accumulator precision of each tensor-core path (probe.hpp). On the
// cpu backend the paths run on the emulation's tensor-core model, so the probe is testable
// anywhere; on cuda they run on the device's mma.sync and (sm_90) wgmma instructions; paths the
// device cannot run are listed as unavailable, with the reason.
#include <cstdio>
#include <iostream>
#include <string>

#include "cli_util.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/probe.hpp"
#include "tcsolve/runtime/error.hpp"
#include "versions.hpp"

namespace tcsolve::app {

int run_probe(int argc, char** argv) {
  po::options_description options("Options");
  options.add_options()
      ("backend", po::value<std::string>()->default_value("auto")->value_name("auto|cpu|cuda"),
       "where the paths run (auto: cuda when a usable GPU is present, else the cpu's model)")
      ("acc-bits", po::value<int>()->default_value(TcModel{}.acc_bits)->value_name("BITS"),
       "cpu: significand bits of the modelled accumulator (mantissa + 1)")
      ("acc-rounding", po::value<std::string>()->default_value("rz")->value_name("rz|rn"),
       "cpu: the modelled accumulator's rounding")
      ("trials", po::value<int>()->value_name("T"),
       "random 16 x 8 tiles per path and distribution (cpu 200, cuda 2000)")
      ("json", "print one JSON object on stdout")
      ("help", "print this help");
  add_progress_option(options);
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout, Synopsis{"probe", {}, {}},
                "Measures how many mantissa bits each tensor-core path's accumulator really keeps: the\n"
                "low Ntrun bits of every mma result are truncated and the largest Ntrun that changes\n"
                "no result over many random inputs gives 23 - Ntrun bits (10 - Ntrun for FP16\n"
                "outputs). Also says whether positive sums are ever rounded up (not RZ).\n"
                "Paths: mma.sync FP16/BF16/TF32/E4M3 (E4M3 from sm_89) and wgmma FP16/E4M3 (sm_90),\n"
                "with K-chains inside the tensor core; the cpu backend runs them all on its model.",
                options);
    return 0;
  }
  const Backend backend = resolve_backend(parse_backend(vm["backend"].as<std::string>()));
  TcModel model;
  model.acc_bits = vm["acc-bits"].as<int>();
  if (model.acc_bits < 2 || model.acc_bits > 53)
    throw InvalidInput("--acc-bits must lie in 2..53, got " + std::to_string(model.acc_bits));
  const std::string rounding = vm["acc-rounding"].as<std::string>();
  if (rounding != "rz" && rounding != "rn") throw InvalidInput("--acc-rounding must be rz or rn, got '" + rounding + "'");
  model.rounding = rounding == "rz" ? Rounding::rz : Rounding::rn;
  const int trials = vm.count("trials") ? positive_int("trials", vm["trials"].as<int>()) : (backend == Backend::cuda ? 2000 : 200);

  const std::vector<ProbeResult> results = backend == Backend::cuda ? cuda::probe(trials) : probe_cpu(model, trials);
  const std::string device = backend == Backend::cuda
                                 ? device_description(backend)
                                 : "cpu tensor-core model (" + std::to_string(model.acc_bits) + "-bit significand, " + rounding + ")";
  if (vm.count("json")) {
    JsonWriter w(std::cout);
    w.begin_object().field("command", "probe").field("backend", to_string(backend)).field("device", device);
    w.key("results").begin_array();
    for (const ProbeResult& r : results) {
      w.begin_object()
          .field("path", r.path.name)
          .field("instruction", r.path.instruction)
          .field("expected_sass", r.path.sass)
          .field("available", r.available);
      if (!r.available) {
        w.field("note", r.note).key("effective_accumulator_bits").null();
        w.field("output_mantissa_bits", r.output_bits).end_object();
        continue;
      }
      w.field("effective_accumulator_bits", r.effective_bits)
          .field("output_mantissa_bits", r.output_bits)
          .field("consistent_with_rz", r.consistent_with_rz)
          .field("max_error_vs_exact", r.max_error)
          .field("samples", static_cast<long long>(r.samples))
          .end_object();
    }
    w.end_array();
    finish_command_json(w);
    return 0;
  }
  std::printf("probe on %s\n\n%-23s %-40s %-6s %9s %3s  %s\n", device.c_str(), "path", "instruction (PTX)", "SASS",
              "acc bits", "of", "rounding");
  for (const ProbeResult& r : results) {
    if (!r.available) {
      std::printf("%-23s %-40s %-6s %9s %3d  unavailable: %s\n", r.path.name.c_str(), r.path.instruction.c_str(),
                  r.path.sass.c_str(), "-", r.output_bits, r.note.c_str());
      continue;
    }
    std::printf("%-23s %-40s %-6s %9d %3d  %s\n", r.path.name.c_str(), r.path.instruction.c_str(), r.path.sass.c_str(),
                r.effective_bits, r.output_bits, r.consistent_with_rz ? "consistent with RZ" : "rounds up (RN-like)");
  }
  return 0;
}

}  // namespace tcsolve::app
