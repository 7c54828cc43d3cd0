// The command line as a contract (docs/architecture.md, "Command line"): exit codes, error messages,
// --help, and --json printing exactly one JSON object on stdout. Runs the built executable
// (TCSOLVE_EXE) through popen.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli_test_util.hpp"
#include "temp_dir.hpp"
#include "test_data.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"

namespace {

using namespace tcsolve::test;

/// Names listed under "Subcommands:" by `tcsolve --help`.
std::vector<std::string> listed_subcommands(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream in(help);
  std::string line;
  bool in_list = false;
  while (std::getline(in, line)) {
    if (line == "Subcommands:") {
      in_list = true;
      continue;
    }
    if (!in_list) continue;
    if (line.rfind("  ", 0) != 0) break;
    std::istringstream words(line);
    std::string name;
    words >> name;
    names.push_back(name);
  }
  return names;
}

/// `gemm-bench` on the cpu backend with small sizes and one repeat; each {option, value} of
/// `options` replaces that option's default or is appended (value "" for a flag or a bare word).
std::string small_bench(std::vector<std::pair<std::string, std::string>> options = {}) {
  std::vector<std::pair<std::string, std::string>> args = {
      {"--backend", "cpu"}, {"--m", "16"}, {"--n", "16"}, {"--k", "16"}, {"--repeats", "1"}};
  for (auto& option : options) {
    auto same = std::find_if(args.begin(), args.end(),
                             [&](const auto& a) { return a.first == option.first; });
    if (same != args.end())
      same->second = option.second;
    else
      args.push_back(option);
  }
  std::string command = "gemm-bench";
  for (const auto& [name, value] : args) {
    command += " " + name;
    if (!value.empty()) command += " '" + value + "'";
  }
  return command;
}

}  // namespace

TEST_CASE("gemm-bench rejects an unknown variant with exit 2, naming it and listing the valid ones",
          "[cli]") {
  const CommandResult r = run_tcsolve(small_bench({{"--variants", "fp32-simt,ootomo-fp17"}}));
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(count_lines(r.err) == 1);
  CHECK(contains(r.err, "ootomo-fp17"));
  CHECK(contains(r.err, "ootomo-fp16"));
  CHECK(contains(r.err, "legemm"));
  CHECK(contains(r.err, "ec-tf32"));
}

TEST_CASE("gemm-bench rejects a negative size with exit 2 and names the option and value",
          "[cli]") {
  for (const char* option : {"--m", "--n", "--k", "--repeats"}) {
    const CommandResult r = run_tcsolve(small_bench({{option, "-5"}}));
    INFO(r);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, option));
    CHECK(contains(r.err, "-5"));
    CHECK(count_lines(r.err) == 1);
  }
}

TEST_CASE("gemm-bench rejects a zero or non-numeric size with exit 2", "[cli]") {
  for (const char* option : {"--m", "--n", "--k", "--repeats"}) {
    for (const char* value : {"0", "abc", "1.5", "99999999999"}) {
      const CommandResult r = run_tcsolve(small_bench({{option, value}}));
      INFO(r);
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, option));
    }
  }
}

TEST_CASE("gemm-bench rejects a malformed distribution with exit 2", "[cli]") {
  for (const char* option : {"--dist", "--dist-b"}) {
    for (const char* dist : {"exp_rand:3", "urand:1:0", "gauss", "exp_rand:a:b", "urand:"}) {
      const CommandResult r = run_tcsolve(small_bench({{option, dist}}));
      INFO(r);
      CHECK(r.exit_code == 2);
      CHECK(count_lines(r.err) == 1);
      CHECK(r.out.empty());
    }
  }
}

TEST_CASE("gemm-bench rejects an unknown option or shape with exit 2", "[cli]") {
  CommandResult r = run_tcsolve(small_bench({{"--frobnicate", "3"}}));
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "frobnicate"));
  r = run_tcsolve(small_bench({{"--shape", "round"}}));
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "round"));
  r = run_tcsolve(small_bench({{"--backend", "gpu"}}));
  INFO(r);
  CHECK(r.exit_code == 2);
  r = run_tcsolve(small_bench({{"stray", ""}}));
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "stray"));
}

TEST_CASE("an unknown subcommand exits 2 with one line on stderr (and the error object with --json)",
          "[cli]") {
  CommandResult r = run_tcsolve("frobnicate");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(count_lines(r.err) == 1);
  CHECK(contains(r.err, "frobnicate"));
  r = run_tcsolve("frobnicate --json");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(count_lines(r.err) == 1);
  const Json doc = require_one_object(r);
  REQUIRE(doc.find("error") != nullptr);
  CHECK(contains(doc.find("error")->find("message")->string, "frobnicate"));
}

TEST_CASE("tcsolve --help and tcsolve help list the subcommands; tcsolve alone too, as an error",
          "[cli]") {
  for (const char* args : {"", "--help", "help"}) {
    const CommandResult r = run_tcsolve(args);
    INFO(r);
    const bool bare = std::string(args).empty();
    CHECK(r.exit_code == (bare ? 2 : 0));
    const std::vector<std::string> names = listed_subcommands(bare ? r.err : r.out);
    CHECK(std::find(names.begin(), names.end(), "variants") != names.end());
    CHECK(std::find(names.begin(), names.end(), "gemm-bench") != names.end());
  }
}

TEST_CASE("every subcommand's --help exits 0 with a usage on stdout", "[cli]") {
  const std::vector<std::string> names = listed_subcommands(run_tcsolve("--help").out);
  REQUIRE(names.size() >= 2);
  for (const std::string& name : names) {
    const CommandResult r = run_tcsolve(name + " --help");
    INFO(r);
    INFO(name);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "Usage"));
    CHECK(contains(r.out, "--json"));
  }
}

TEST_CASE("gemm-bench --variants all --json prints one object with a result per variant", "[cli]") {
  const CommandResult r =
      run_tcsolve("gemm-bench --backend cpu --m 16 --n 16 --k 64 --variants all --json");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const Json doc = require_one_object(r);
  CHECK(doc.find("command")->string == "gemm-bench");
  for (const char* key : {"m", "n", "k", "shape", "dist", "dist_b", "backend", "device", "repeats",
                          "seed", "results"})
    CHECK(doc.find(key) != nullptr);
  CHECK(doc.find("backend")->string == "cpu");
  CHECK(doc.find("k")->number == 64);
  const Json* results = doc.find("results");
  REQUIRE(results != nullptr);
  REQUIRE(results->items.size() == tcsolve::kVariants.size());
  bool saw_fp32 = false;
  for (std::size_t i = 0; i < results->items.size(); ++i) {
    const Json& res = results->items[i];
    INFO(tcsolve::kVariants[i].name);
    REQUIRE(res.find("variant") != nullptr);
    CHECK(res.find("variant")->string == tcsolve::kVariants[i].name);
    for (const char* key : {"resolved_variant", "available", "time_s", "tflops",
                            "relative_residual", "max_relative_error", "speedup_vs_fp32_simt",
                            "split_k", "note"})
      CHECK(res.find(key) != nullptr);
    CHECK(res.find("split_k")->number >= 1);  // the ec path's k ranges that ran (1: not split)
    const bool available = res.find("available")->boolean;
    CHECK(available == tcsolve::available(tcsolve::kVariants[i].variant, tcsolve::Backend::cpu));
    if (!available) CHECK(res.find("time_s")->type == Json::Type::null);
    if (tcsolve::kVariants[i].variant == tcsolve::Variant::fp32_simt) {
      saw_fp32 = true;
      REQUIRE(res.find("relative_residual")->type == Json::Type::number);
      // FP32 with k = 64: error of order sqrt(k) * 2^-24, far below 1e-6.
      CHECK(res.find("relative_residual")->number < 1e-6);
    }
  }
  CHECK(saw_fp32);
}

TEST_CASE("gemm-bench --shape lu sets n to m and needs --m and --k", "[cli]") {
  CommandResult r = run_tcsolve(
      "gemm-bench --backend cpu --shape lu --m 24 --k 8 --variants fp64 --repeats 1 --json");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const Json doc = require_one_object(r);
  CHECK(doc.find("n")->number == 24);
  CHECK(doc.find("shape")->string == "lu");
  // fp32-simt is timed as the baseline but not listed when not selected.
  CHECK(doc.find("results")->items.size() == 1);
  r = run_tcsolve("gemm-bench --backend cpu --shape lu --m 24 --json");
  INFO(r);
  CHECK(r.exit_code == 2);
  r = run_tcsolve("gemm-bench --backend cpu --shape lu --m 24 --n 16 --k 8 --json");
  INFO(r);
  CHECK(r.exit_code == 2);
}

TEST_CASE("gemm-bench --csv writes a header and one row per variant", "[cli]") {
  char dir[] = "/tmp/tcsolve_cli_csv_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/bench.csv";
  const CommandResult r = run_tcsolve(small_bench({{"--variants", "fp32-simt,fp64"}, {"--csv", path}}));
  INFO(r);
  CHECK(r.exit_code == 0);
  const std::string csv = read_file(path);
  CHECK(count_lines(csv) == 3);
  CHECK(csv.rfind("variant,", 0) == 0);
  std::remove(path.c_str());
  rmdir(dir);
}

TEST_CASE("gemm-bench exits 4 for a named variant the backend lacks", "[cli]") {
  for (const tcsolve::VariantInfo& v : tcsolve::kVariants) {
    if (tcsolve::available(v.variant, tcsolve::Backend::cpu)) continue;
    const CommandResult r = run_tcsolve(small_bench({{"--variants", std::string(v.name)}}));
    INFO(r);
    CHECK(r.exit_code == 4);
    CHECK(contains(r.err, v.name));
  }
}

TEST_CASE("variants --json lists every variant of the table", "[cli]") {
  const CommandResult r = run_tcsolve("variants --json");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const Json doc = require_one_object(r);
  CHECK(doc.find("command")->string == "variants");
  CHECK(doc.find("device") != nullptr);
  const Json* list = doc.find("variants");
  REQUIRE(list != nullptr);
  REQUIRE(list->items.size() == tcsolve::kVariants.size());
  CHECK(list->items.size() == 16);
  for (std::size_t i = 0; i < list->items.size(); ++i) {
    const Json& v = list->items[i];
    CHECK(v.find("name")->string == tcsolve::kVariants[i].name);
    for (const char* key :
         {"description", "input_format", "unit_roundoff", "available_cpu", "available_cuda"})
      CHECK(v.find(key) != nullptr);
  }
}

TEST_CASE("the guide's variant table is the output of variants --markdown (one table)", "[docs]") {
  const CommandResult r = run_tcsolve("variants --markdown");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  REQUIRE(count_lines(r.out) == tcsolve::kVariants.size() + 2);
  const std::string page = read_file(tcsolve::test::test_data_path("docs/guide/variants.md"));
  INFO("docs/guide/variants.md's table differs: paste `tcsolve variants --markdown` there, then rebuild");
  CHECK(contains(page, r.out));
}

TEST_CASE("an explicit --backend cuda without a usable GPU exits 4", "[cli]") {
  if (tcsolve::cuda::device_available()) {
    WARN("a CUDA device is present: the no-GPU exit code is not checked here");
    return;
  }
  const CommandResult r = run_tcsolve("gemm-bench --backend cuda --m 16 --n 16 --k 16 --json");
  INFO(r);
  CHECK(r.exit_code == 4);
  CHECK(count_lines(r.err) == 1);
  const Json doc = require_one_object(r);  // --json: the error object on stdout
  REQUIRE(doc.find("error") != nullptr);
  CHECK(doc.find("error")->find("exit_code")->number == 4);
}

TEST_CASE("--backend auto without a usable GPU runs on the cpu and says so once on stderr",
          "[cli]") {
  if (tcsolve::cuda::device_available()) {
    WARN("a CUDA device is present: the cpu fallback is not checked here");
    return;
  }
  const CommandResult r =
      run_tcsolve("gemm-bench --m 8 --n 8 --k 16 --variants fp32-simt --repeats 1 --json");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  CHECK(require_one_object(r).find("backend")->string == "cpu");
  const std::string note = "no usable CUDA device, using the cpu backend";
  REQUIRE(contains(r.err, note));
  CHECK(r.err.find(note) == r.err.rfind(note));
}

TEST_CASE("tcsolve solve --fp64-below: auto below N solves with an FP64 LU (fp64_lu in the JSON); compare "
          "keeps every variant's mixed path; a bad N exits 2", "[cli]") {
  const std::string sys = test_data_path("inputs/randsvd_n256_c1e4.h5");
  const CommandResult r = run_tcsolve("solve --input '" + sys + "' --backend cpu --fp64-below 300 --json");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const Json j = require_one_object(r);
  CHECK(j.find("fp64_lu")->boolean);
  CHECK(j.find("resolved_variant")->string == "fp64");
  CHECK(j.find("converged")->boolean);
  const CommandResult plain = run_tcsolve("solve --input '" + sys + "' --backend cpu --json --warmup");
  REQUIRE(plain.exit_code == 0);
  CHECK_FALSE(require_one_object(plain).find("fp64_lu")->boolean);
  CHECK_FALSE(require_one_object(plain).find("warmup")->boolean);  // a cuda option: the cpu path has no start-up
  CHECK_FALSE(j.find("warmup")->boolean);
  const CommandResult bad = run_tcsolve("solve --input '" + sys + "' --backend cpu --fp64-below -5");
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "--fp64-below"));
  const CommandResult text = run_tcsolve("solve --input '" + sys + "' --backend cpu --fp64-below 300");
  CHECK(contains(text.out, "FP64 (n below --fp64-below)"));
}

// --- issue 31: help texts, synopses, messages ---------------------------------------------------

namespace {

/// The CLI manual (docs/guide/cli.md, copied beside the test binary), which holds the synopses.
constexpr const char* kCliManual = "docs/guide/cli.md";

/// The block of a document between `<!-- synopsis: tcsolve help-synopsis -->` and
/// `<!-- /synopsis -->`, without its ``` fence lines; empty when the markers are missing.
std::string document_synopsis(const std::string& document) {
  const std::string begin = "<!-- synopsis: tcsolve help-synopsis -->\n", end = "<!-- /synopsis -->";
  const std::size_t b = document.find(begin);
  if (b == std::string::npos) return "";
  const std::size_t e = document.find(end, b);
  if (e == std::string::npos) return "";
  std::istringstream in(document.substr(b + begin.size(), e - b - begin.size()));
  std::string body;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("```", 0) != 0) body += line + "\n";
  return body;
}

/// The `--name` words of `text`.
std::vector<std::string> option_words(const std::string& text) {
  std::vector<std::string> names;
  for (std::size_t i = text.find("--"); i != std::string::npos; i = text.find("--", i + 2)) {
    if (i > 0 && !std::isspace(static_cast<unsigned char>(text[i - 1])) && text[i - 1] != '[' &&
        text[i - 1] != '(')
      continue;
    std::size_t j = i + 2;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '-')) ++j;
    if (j > i + 2) names.push_back(text.substr(i, j - i));
  }
  return names;
}

/// The whitespace-separated words of `text`.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

/// Each subcommand's entry of a synopsis block ("tcsolve NAME ..." and the indented lines that
/// continue it), as words, by NAME.
std::map<std::string, std::vector<std::string>> synopsis_entries(const std::string& block) {
  std::map<std::string, std::vector<std::string>> entries;
  std::istringstream in(block);
  std::string name;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("tcsolve ", 0) == 0) {
      const std::vector<std::string> w = words(line);
      name = w.size() > 1 ? w[1] : "";
      entries[name] = w;
    } else if (!name.empty() && !line.empty() && line[0] == ' ') {
      for (const std::string& w : words(line)) entries[name].push_back(w);
    }
  }
  return entries;
}

/// The usage that `tcsolve NAME --help` prints: the words of its "Usage: tcsolve NAME ..." lines,
/// up to the first blank line, without "Usage:".
std::vector<std::string> help_usage(const std::string& help) {
  std::istringstream in(help);
  std::string usage;
  std::string line;
  if (!std::getline(in, line) || line.rfind("Usage: ", 0) != 0) return {};
  usage = line.substr(std::string("Usage: ").size());
  while (std::getline(in, line) && !line.empty()) usage += " " + line;
  return words(usage);
}

std::string joined(const std::vector<std::string>& w) {
  std::string s;
  for (const std::string& x : w) s += (s.empty() ? "" : " ") + x;
  return s;
}

}  // namespace

TEST_CASE("the CLI manual's synopses are what tcsolve help-synopsis prints (generated from the option "
          "tables)",
          "[docs]") {
  const CommandResult r = run_tcsolve("help-synopsis");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const std::vector<std::string> names = listed_subcommands(run_tcsolve("--help").out);
  for (const std::string& name : names) CHECK(contains(r.out, "tcsolve " + name + " "));
  const std::string manual = read_file(tcsolve::test::test_data_path(kCliManual));
  INFO(kCliManual << "'s copy differs: run scripts/readme-examples (it rewrites the synopsis block), "
                    "then rebuild");
  CHECK(document_synopsis(manual) == r.out);
}

TEST_CASE("every subcommand's synopsis in the CLI manual equals the usage its --help prints", "[docs]") {
  const std::vector<std::string> names = listed_subcommands(run_tcsolve("--help").out);
  REQUIRE(names.size() >= 9);
  const std::string manual = read_file(tcsolve::test::test_data_path(kCliManual));
  const std::map<std::string, std::vector<std::string>> entries = synopsis_entries(document_synopsis(manual));
  CHECK(entries.size() == names.size() + 1);  // and `tcsolve --version`
  for (const std::string& name : names) {
    INFO("subcommand " << name << " (an intended change: run scripts/readme-examples, then rebuild)");
    const CommandResult r = run_tcsolve(name + " --help");
    REQUIRE(r.exit_code == 0);
    const std::vector<std::string> usage = help_usage(r.out);
    REQUIRE(usage.size() >= 2);
    REQUIRE(entries.count(name) == 1);
    CHECK(joined(entries.at(name)) == joined(usage));  // the same words; only the line breaks differ
  }
  REQUIRE(entries.count("--version") == 1);
  CHECK(joined(entries.at("--version")) == "tcsolve --version [--json]");
}

TEST_CASE("every subcommand's --help names its value placeholders and lists every option in its usage", "[cli]") {
  const std::vector<std::string> names = listed_subcommands(run_tcsolve("--help").out);
  REQUIRE(names.size() >= 9);
  for (const std::string& name : names) {
    const CommandResult r = run_tcsolve(name + " --help");
    INFO(r);
    REQUIRE(r.exit_code == 0);
    // Boost's placeholder for an unnamed value is "arg": "--backend arg (=auto)"
    CHECK(!contains(r.out, " arg "));
    CHECK(!contains(r.out, " arg\n"));
    const std::size_t options_at = r.out.find("\nOptions:");
    REQUIRE(options_at != std::string::npos);
    const std::string usage = r.out.substr(0, r.out.find("\n\n"));
    const std::vector<std::string> in_usage = option_words(usage);
    // each option of the table, bar --help, is in the usage
    std::istringstream table(r.out.substr(options_at));
    for (std::string line; std::getline(table, line);) {
      if (line.rfind("  --", 0) != 0) continue;
      const std::string option = option_words(line).front();
      if (option == "--help") continue;
      INFO(option);
      CHECK(std::find(in_usage.begin(), in_usage.end(), option) != in_usage.end());
    }
  }
  for (const char* sub : {"solve", "compare"}) {
    const CommandResult r = run_tcsolve(std::string(sub) + " --help");
    CHECK(!contains(r.out, "optional x (required)"));
    CHECK(contains(r.out, "--input SYS.h5|M.mtx"));
    CHECK(contains(r.out, "--backend auto|cpu|cuda"));
  }
  const CommandResult probe = run_tcsolve("probe --help");
  CHECK(contains(probe.out, "--backend auto|cpu|cuda"));
  CHECK(contains(probe.out, "--trials T"));
}

TEST_CASE("variants --json --markdown is refused, with the JSON error object", "[cli]") {
  const CommandResult r = run_tcsolve("variants --json --markdown");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(count_lines(r.err) == 1);
  CHECK(contains(r.err, "--json and --markdown"));
  const Json doc = require_one_object(r);
  CHECK(doc.find("command")->string == "variants");
  REQUIRE(doc.find("error") != nullptr);
  CHECK(doc.find("error")->find("exit_code")->number == 2);
  CHECK(contains(doc.find("error")->find("message")->string, "--markdown"));
}

TEST_CASE("tcsolve --json without a subcommand prints the error object", "[cli]") {
  for (const char* args : {"--json", "--json solve"}) {
    const CommandResult r = run_tcsolve(args);
    INFO(r);
    CHECK(r.exit_code == 2);
    CHECK(count_lines(r.err) == 1);
    const Json doc = require_one_object(r);
    REQUIRE(doc.find("command") != nullptr);
    CHECK(doc.find("command")->type == Json::Type::null);
    const Json* error = doc.find("error");
    REQUIRE(error != nullptr);
    CHECK(error->find("exit_code")->number == 2);
    CHECK(contains(error->find("message")->string, "subcommand"));
    REQUIRE(doc.find("versions") != nullptr);
  }
}

TEST_CASE("kmeans --seeding cuda without a usable GPU blames --seeding, not --backend", "[cli]") {
  if (tcsolve::cuda::device_available()) {
    WARN("a CUDA device is present: --seeding cuda runs; the message without one is not checked here");
    return;
  }
  const CommandResult r = run_tcsolve("kmeans --backend cpu --seeding cuda --synthetic 100:2 --k 3 --json");
  INFO(r);
  CHECK(r.exit_code == 4);
  CHECK(count_lines(r.err) == 1);
  CHECK(contains(r.err, "--seeding cuda"));
  CHECK(!contains(r.err, "--backend cuda"));
  const Json doc = require_one_object(r);
  CHECK(contains(doc.find("error")->find("message")->string, "--seeding"));
}

TEST_CASE("gemm-bench shows an FP32 overflow alike for every variant, and refuses bounds beyond FP32", "[cli]") {
  // |A|, |B| up to 1e38: products reach 1e76. fp32-simt's C holds inf and NaN (inf - inf),
  // ec-fp16's inf: both are an unbounded error, shown as inf, with a note.
  CommandResult r = run_tcsolve(small_bench({{"--variants", "fp32-simt,ec-fp16"}, {"--dist", "urand:-1e38:1e38"},
                                             {"--json", ""}}));
  INFO(r);
  REQUIRE(r.exit_code == 0);
  Json doc = require_one_object(r);
  REQUIRE(doc.find("overflow") != nullptr);
  CHECK(doc.find("overflow")->type == Json::Type::string);
  CHECK(contains(doc.find("overflow")->string, "FP32"));
  const Json* results = doc.find("results");
  REQUIRE(results != nullptr);
  REQUIRE(results->items.size() == 2);
  for (const Json& row : results->items) {
    INFO(row.find("variant")->string);
    CHECK(row.find("relative_residual")->string == "inf");
    CHECK(row.find("max_relative_error")->string == "inf");
    CHECK(contains(row.find("note")->string, "overflow"));
  }
  r = run_tcsolve(small_bench({{"--variants", "fp32-simt,ec-fp16"}, {"--dist", "urand:-1e38:1e38"}}));
  INFO(r);
  REQUIRE(r.exit_code == 0);
  CHECK(!contains(r.out, "n/a"));
  CHECK(contains(r.out, "overflow: with |A| <= 1e+38"));
  // Within range: no overflow member.
  r = run_tcsolve(small_bench({{"--variants", "fp32-simt"}, {"--json", ""}}));
  REQUIRE(r.exit_code == 0);
  CHECK(require_one_object(r).find("overflow")->type == Json::Type::null);
  // Bounds beyond FP32: refused, naming its range.
  for (const char* option : {"--dist", "--dist-b"}) {
    r = run_tcsolve(small_bench({{option, "urand:-1e39:1e39"}}));
    INFO(r);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, std::string(option) + " urand:-1e39:1e39"));
    CHECK(contains(r.err, "FP32's range"));
    CHECK(contains(r.err, "3.4028235e38"));
  }
}

TEST_CASE("launched as several MPI ranks, tcsolve refuses up front (exit 4), rank 0 alone says why", "[cli]") {
  // What `mpirun -np 2 tcsolve generate ...` gives each process (OpenMPI's variables; PMI_* for
  // MPICH): the command must not run twice and race on its output file.
  TempDir dir;
  const std::string out = dir.path("g.h5");
  const std::string args = "generate --backend cpu --n 16 --output '" + out + "'";
  const CommandResult r0 = run_shell("OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 " + tcsolve_exe() + " " + args,
                                     "(rank 0 of 2) " + args);
  INFO(r0);
  CHECK(r0.exit_code == 4);
  CHECK(contains(r0.err, "launched as 2 ranks (OMPI_COMM_WORLD_SIZE=2)"));
  const CommandResult r1 = run_shell("PMI_SIZE=3 PMI_RANK=2 " + tcsolve_exe() + " " + args + " --json",
                                     "(rank 2 of 3) " + args);
  INFO(r1);
  CHECK(r1.exit_code == 4);
  CHECK(r1.err.empty());  // one message: rank 0's
  CHECK(r1.out.empty());
  CHECK_FALSE(std::filesystem::exists(out));
  // One rank (mpirun -np 1) runs as usual.
  const CommandResult one =
      run_shell("OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_RANK=0 " + tcsolve_exe() + " " + args, "(1 rank) " + args);
  INFO(one);
  CHECK(one.exit_code == 0);
  CHECK(std::filesystem::exists(out));
}

TEST_CASE("solve with several right-hand sides says that one LU serves them all (shared_lu)", "[cli]") {
  TempDir dir;
  const std::string sys = dir.path("k3.h5");
  REQUIRE(run_tcsolve("generate --backend cpu --n 40 --nrhs 3 --seed 4 --output '" + sys + "'").exit_code == 0);
  const CommandResult j = run_tcsolve("solve --input '" + sys + "' --backend cpu --json");
  INFO(j);
  REQUIRE(j.exit_code == 0);
  const Json o = require_one_object(j);
  CHECK(o.find("nrhs")->number == 3);
  CHECK(o.find("shared_lu")->boolean);
  const CommandResult text = run_tcsolve("solve --input '" + sys + "' --backend cpu");
  CHECK(contains(text.out, "one LU shared by the 3 right-hand sides"));
  const std::string one = dir.path("k1.h5");
  REQUIRE(run_tcsolve("generate --backend cpu --n 40 --seed 4 --output '" + one + "'").exit_code == 0);
  const CommandResult single = run_tcsolve("solve --input '" + one + "' --backend cpu --json");
  REQUIRE(single.exit_code == 0);
  CHECK_FALSE(require_one_object(single).find("shared_lu")->boolean);
  CHECK_FALSE(contains(run_tcsolve("solve --input '" + one + "' --backend cpu").out, "one LU shared"));
}

TEST_CASE("solve --pivoting beam reports the pivoting that gave x and beam's modified pivots", "[cli][beam]") {
  TempDir dir;
  const std::string sys = dir.path("b.h5");
  REQUIRE(run_tcsolve("generate --backend cpu --n 200 --seed 6 --output '" + sys + "'").exit_code == 0);
  const CommandResult r = run_tcsolve("solve --input '" + sys + "' --backend cpu --pivoting beam --block-size 32 --json");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const Json j = require_one_object(r);
  CHECK(j.find("pivoting")->string == "beam");
  CHECK(j.find("modifications")->number >= 0);
  // the growth max|L U| / max|A_s| of a factorization that held: positive, within kBeamGrowth (2^20)
  CHECK(j.find("growth")->number > 0);
  CHECK(j.find("growth")->number <= 1048576.0);
  CHECK(contains(j.find("note")->string, "beam (in-block pivoting"));
  const CommandResult partial = run_tcsolve("solve --input '" + sys + "' --backend cpu --json");
  CHECK(require_one_object(partial).find("modifications")->type == Json::Type::null);
  CHECK(require_one_object(partial).find("growth")->type == Json::Type::null);
  CHECK(run_tcsolve("solve --input '" + sys + "' --backend cpu --pivoting beem").exit_code == 2);
  // another pivoting's option with a pivoting that never uses it: refused, named
  const CommandResult stray = run_tcsolve("solve --input '" + sys + "' --backend cpu --beam-correction woodbury");
  CHECK(stray.exit_code == 2);
  CHECK(contains(stray.err, "--beam-correction applies to --pivoting beam (or auto), not partial"));
  const CommandResult window = run_tcsolve("compare --input '" + sys + "' --backend cpu --pivoting beam --rbt-window 128");
  CHECK(window.exit_code == 2);
  CHECK(contains(window.err, "--rbt-window applies to --pivoting rbt (or auto), not beam"));
  CHECK(run_tcsolve("solve --input '" + sys + "' --backend cpu --pivoting auto --beam-correction gmres").exit_code == 0);
}
