// The command line as a contract (ARCHITECTURE.md, "Command line"): exit codes, error messages,
// --help, and --json printing exactly one JSON object on stdout. Runs the built executable
// (TCSOLVE_EXE) through popen.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"

namespace {

struct CommandResult {
  std::string args;
  int exit_code = -1;  ///< -1 when the process did not exit normally
  std::string out, err;
};

/// For INFO(r): the command and what it printed, shown when a check fails.
std::ostream& operator<<(std::ostream& os, const CommandResult& r) {
  return os << "tcsolve " << r.args << "\nexit code " << r.exit_code << "\nstdout:\n"
            << r.out << "\nstderr:\n" << r.err;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Runs `tcsolve <args>` (args are passed through the shell as written), stderr into a temp file.
CommandResult run_tcsolve(const std::string& args) {
  char err_path[] = "/tmp/tcsolve_cli_stderr_XXXXXX";
  const int fd = mkstemp(err_path);
  REQUIRE(fd >= 0);
  close(fd);
  const std::string command = std::string("'") + TCSOLVE_EXE + "' " + args + " 2>'" + err_path + "'";
  CommandResult r;
  r.args = args;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, got);
  const int status = pclose(pipe);
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.err = read_file(err_path);
  std::remove(err_path);
  return r;
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

std::size_t count_lines(std::string_view s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n + (!s.empty() && s.back() != '\n');
}

// --- a strict, minimal JSON reader (RFC 8259 grammar), enough to check the --json output ------

struct Json {
  enum class Type { null, boolean, number, string, array, object } type = Type::null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<std::string> keys;  ///< object member names, parallel to items
  std::vector<Json> items;        ///< array elements or object member values

  const Json* find(std::string_view key) const {
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return &items[i];
    return nullptr;
  }
};

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : s_(text) {}

  /// The one value that makes up the whole text (surrounding whitespace allowed), or nullopt.
  std::optional<Json> parse_document() {
    Json v;
    skip_ws();
    if (!parse_value(v, 0)) return std::nullopt;
    skip_ws();
    if (i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool digits() {
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    return i_ > start;
  }
  bool parse_number(Json& v) {
    const std::size_t start = i_;
    eat('-');
    if (eat('0')) {
    } else if (!digits()) {
      return false;
    }
    if (eat('.') && !digits()) return false;
    if (eat('e') || eat('E')) {
      if (!eat('+')) eat('-');
      if (!digits()) return false;
    }
    v.type = Json::Type::number;
    v.number = std::strtod(std::string(s_.substr(start, i_ - start)).c_str(), nullptr);
    return true;
  }
  bool parse_string(std::string& out) {
    if (!eat('"')) return false;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) return false;
      const char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u':
          for (int h = 0; h < 4; ++h, ++i_)
            if (i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) return false;
          out += '?';  // code points are not needed by these tests
          break;
        default: return false;
      }
    }
    return false;
  }
  bool parse_value(Json& v, int depth) {
    if (depth > 64 || i_ >= s_.size()) return false;
    switch (s_[i_]) {
      case '{': {
        ++i_;
        v.type = Json::Type::object;
        skip_ws();
        if (eat('}')) return true;
        do {
          skip_ws();
          std::string key;
          if (!parse_string(key)) return false;
          skip_ws();
          if (!eat(':')) return false;
          skip_ws();
          Json item;
          if (!parse_value(item, depth + 1)) return false;
          v.keys.push_back(std::move(key));
          v.items.push_back(std::move(item));
          skip_ws();
        } while (eat(','));
        return eat('}');
      }
      case '[': {
        ++i_;
        v.type = Json::Type::array;
        skip_ws();
        if (eat(']')) return true;
        do {
          skip_ws();
          Json item;
          if (!parse_value(item, depth + 1)) return false;
          v.items.push_back(std::move(item));
          skip_ws();
        } while (eat(','));
        return eat(']');
      }
      case '"': v.type = Json::Type::string; return parse_string(v.string);
      case 't': v.type = Json::Type::boolean; v.boolean = true; return literal("true");
      case 'f': v.type = Json::Type::boolean; return literal("false");
      case 'n': v.type = Json::Type::null; return literal("null");
      default: return parse_number(v);
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

/// stdout parsed as exactly one JSON object; fails the test otherwise.
Json require_one_object(const CommandResult& r) {
  INFO("stdout:\n" << r.out);
  const std::optional<Json> doc = JsonReader(r.out).parse_document();
  REQUIRE(doc.has_value());
  REQUIRE(doc->type == Json::Type::object);
  return *doc;
}

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

TEST_CASE("an unknown subcommand exits 2 with one line on stderr", "[cli]") {
  const CommandResult r = run_tcsolve("frobnicate --json");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(count_lines(r.err) == 1);
  CHECK(contains(r.err, "frobnicate"));
}

TEST_CASE("tcsolve, tcsolve --help and tcsolve help list the subcommands", "[cli]") {
  for (const char* args : {"", "--help", "help"}) {
    const CommandResult r = run_tcsolve(args);
    INFO(r);
    CHECK(r.exit_code == 0);
    const std::vector<std::string> names = listed_subcommands(r.out);
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
                            "note"})
      CHECK(res.find(key) != nullptr);
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

TEST_CASE("README's variant table is the output of variants --markdown (one table)", "[cli]") {
  const CommandResult r = run_tcsolve("variants --markdown");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  REQUIRE(count_lines(r.out) == tcsolve::kVariants.size() + 2);
  const std::string readme = read_file(std::string(TCSOLVE_SOURCE_DIR) + "/README.md");
  CHECK(contains(readme, r.out));
}

TEST_CASE("an explicit --backend cuda without a usable GPU exits 4", "[cli]") {
  if (tcsolve::cuda::device_available()) {
    WARN("a CUDA device is present: the no-GPU exit code is not checked here");
    return;
  }
  const CommandResult r = run_tcsolve("gemm-bench --backend cuda --m 16 --n 16 --k 16 --json");
  INFO(r);
  CHECK(r.exit_code == 4);
  CHECK(r.out.empty());
  CHECK(count_lines(r.err) == 1);
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
