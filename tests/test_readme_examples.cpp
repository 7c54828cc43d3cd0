// The example outputs of README.md and of the CLI manual, docs/guide/cli.md, are what the
// executable prints today. scripts/readme-examples writes every block between
// `<!-- example: NAME -->` and `<!-- /example -->` of both documents from real runs; this test reads
// those blocks back (from the copies beside the test binary, see test_data.hpp), runs their
// `$ tcsolve ...` lines again the same way (in document order, in one empty working folder per
// document in which `inputs` leads to the bundled inputs/, through the shell), and checks that
// each command's stdout equals the document's lines below it, up to what depends on the machine
// or on time. The masking rules, applied alike to both sides, line by line:
//   - device names: `cpu (NAME)` / `cuda (NAME)` (NAME may hold parentheses one deep: "Intel(R)
//     Xeon(R) Processor") and `backend cpu on NAME` (up to a comma or a semicolon) become
//     `<device>`: compare, solve, generate, kmeans, gemm-bench, ffn;
//   - durations: a number followed by ` s` or ` ms` becomes `<t>`: solve's time line, generate's
//     "generated in", kmeans's time and start lines;
//   - table columns: in a table whose header (columns separated by two or more spaces) names a
//     column `time ms`, `TFLOP/s`, `speedup` or any name ending in `_s`, that column of each row
//     below it (up to a blank line) becomes `<t>`, where the row has as many whitespace-separated
//     fields as the header has columns: gemm-bench (time ms, TFLOP/s, speedup), ffn (the same),
//     compare (fact_s, refine_s, total_s);
//   - whitespace: trailing spaces dropped, runs of spaces read as one (masked values differ in
//     width), trailing blank lines of an output dropped.
// Everything else -- the accuracy columns, iteration counts, labels, inertia -- must match to the
// last printed digit: the examples use the cpu backend and fixed seeds.
// When it fails after an intended change of the output: scripts/readme-examples, then rebuild
// (the build copies README.md and docs/guide/ next to the test binary).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "test_data.hpp"

namespace {

namespace fs = std::filesystem;
using tcsolve::test::CommandResult;
using tcsolve::test::run_tcsolve;

/// A document with example blocks, and the fewest blocks it holds: a document that lost its
/// markers fails here instead of passing with nothing checked.
struct ExampleDocument {
  const char* path;  ///< relative to the repository root (test_data_path)
  std::size_t min_blocks;
};

/// README keeps one short example; the CLI manual has gemm-bench, solving systems and the demos.
constexpr ExampleDocument kExampleDocuments[] = {{"README.md", 1}, {"docs/guide/cli.md", 3}};

/// One `$ tcsolve ARGS` line of an example block and the lines printed below it.
struct ExampleCommand {
  std::string example;  ///< the block's NAME
  std::string args;     ///< ARGS, as passed to the shell
  std::vector<std::string> expected;
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string rtrim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

void drop_trailing_blank_lines(std::vector<std::string>& lines) {
  while (!lines.empty() && rtrim(lines.back()).empty()) lines.pop_back();
}

/// Every `$ tcsolve` line of every example block, in document order; `blocks` counts the blocks.
std::vector<ExampleCommand> parse_examples(const std::string& document, std::size_t& blocks) {
  static const std::regex begin(R"(^<!-- example: *([A-Za-z0-9_.-]+) *-->\s*$)");
  static const std::regex end(R"(^<!-- /example -->\s*$)");
  const std::string prompt = "$ tcsolve ";
  std::vector<ExampleCommand> commands;
  std::string name;
  bool inside = false, fence = false;
  blocks = 0;
  for (const std::string& line : split_lines(document)) {
    std::smatch m;
    if (!inside) {
      if (std::regex_match(line, m, begin)) {
        inside = true;
        name = m[1];
        ++blocks;
      }
      continue;
    }
    if (std::regex_match(line, end)) {
      inside = false;
      if (!commands.empty()) drop_trailing_blank_lines(commands.back().expected);
      continue;
    }
    if (line.rfind("```", 0) == 0) {
      fence = !fence;
      continue;
    }
    if (!fence) continue;
    if (line.rfind(prompt, 0) == 0) {
      if (!commands.empty()) drop_trailing_blank_lines(commands.back().expected);
      commands.push_back({name, line.substr(prompt.size()), {}});
    } else if (!commands.empty() && commands.back().example == name) {
      commands.back().expected.push_back(line);
    }
  }
  REQUIRE_FALSE(inside);  // an example block without its end marker
  return commands;
}

bool is_timing_column(const std::string& header) {
  return header == "time ms" || header == "TFLOP/s" || header == "speedup" ||
         (header.size() > 2 && header.compare(header.size() - 2, 2, "_s") == 0);
}

std::vector<std::string> split(const std::string& s, const std::regex& separator) {
  std::vector<std::string> parts;
  for (std::sregex_token_iterator it(s.begin(), s.end(), separator, -1), e; it != e; ++it)
    if (!it->str().empty()) parts.push_back(*it);
  return parts;
}

/// The lines with the rules of the file comment applied, whitespace normalized.
std::vector<std::string> mask(const std::vector<std::string>& lines) {
  // a device name may hold one level of parentheses: "Intel(R) Xeon(R) Processor"
  static const std::regex device(R"(\b(cpu|cuda) \((?:[^()]|\([^()]*\))*\))");
  static const std::regex backend_on(R"(\bbackend (cpu|cuda) on [^,;]*)");
  static const std::regex duration(R"((^|[^0-9A-Za-z_.+-])[-+]?[0-9][0-9.]*(e[-+]?[0-9]+)? (s|ms)\b)");
  static const std::regex columns(R"( {2,})");
  static const std::regex fields(R"(\s+)");
  std::vector<std::string> out;
  std::vector<bool> timing;  // columns of the table being read; empty outside a table
  for (std::string line : lines) {
    line = rtrim(line);
    if (line.empty()) timing.clear();
    line = std::regex_replace(line, device, "$1 (<device>)");
    line = std::regex_replace(line, backend_on, "backend $1 on <device>");
    line = std::regex_replace(line, duration, "$1<t> $3");
    std::vector<std::string> row = split(line, fields);
    if (!timing.empty() && row.size() == timing.size()) {
      for (std::size_t i = 0; i < row.size(); ++i)
        if (timing[i]) row[i] = "<t>";
    } else {
      const std::vector<std::string> header = split(line, columns);
      bool any = false;
      for (const std::string& h : header) any = any || is_timing_column(h);
      if (any && header.size() > 1) {
        timing.clear();
        for (const std::string& h : header) timing.push_back(is_timing_column(h));
      }
    }
    std::string joined;
    for (const std::string& f : row) joined += (joined.empty() ? "" : " ") + f;
    out.push_back(joined);
  }
  return out;
}

std::string numbered(const std::vector<std::string>& lines) {
  std::string s;
  for (std::size_t i = 0; i < lines.size(); ++i) s += std::to_string(i + 1) + "| " + lines[i] + "\n";
  return s;
}

/// A fresh empty working folder with `inputs` leading to the test data's inputs/; the process
/// works in it while the object lives (the commands run through popen inherit it).
class ExampleFolder {
 public:
  ExampleFolder() {
    char tmpl[] = "/tmp/tcsolve_readme_examples_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir_ = tmpl;
    fs::create_directory_symlink(fs::absolute(tcsolve::test::test_data_path("inputs")),
                                 dir_ / "inputs");
    previous_ = fs::current_path();
    fs::current_path(dir_);
  }
  ~ExampleFolder() {
    std::error_code ec;
    fs::current_path(previous_, ec);
    fs::remove_all(dir_, ec);
  }
  ExampleFolder(const ExampleFolder&) = delete;
  ExampleFolder& operator=(const ExampleFolder&) = delete;

 private:
  fs::path dir_, previous_;
};

}  // namespace

TEST_CASE("the masking rules hide times and device names, nothing else", "[docs]") {
  const std::vector<std::string> a = mask({
      "backend cpu on AMD EPYC, median of 3 runs",
      "",
      "variant        resolved          time ms   TFLOP/s  rel. resid.  max rel.err  speedup",
      "fp32-simt      fp32-simt           0.059     0.035    3.001e-07    1.850e-04     1.00",
      "",
      "  time      factorization 0.234 s, refinement 0.000384 s, total 0.234 s",
      "  LU        FP32, block size 64, trailing updates ec-fp16 on cpu (AMD EPYC)",
  });
  const std::vector<std::string> b = mask({
      "backend cpu on Intel(R) Xeon(R) Platinum 8480+, median of 3 runs",
      "",
      "variant        resolved          time ms   TFLOP/s  rel. resid.  max rel.err  speedup",
      "fp32-simt      fp32-simt           10.5      0.1      3.001e-07    1.850e-04     0.5",
      "",
      "  time      factorization 1 s, refinement 2.5e-05 s, total 12.25 s",
      "  LU        FP32, block size 64, trailing updates ec-fp16 on cpu (Intel(R) Xeon(R) CPU)",
  });
  CHECK(a == b);
  CHECK(a[3] == "fp32-simt fp32-simt <t> <t> 3.001e-07 1.850e-04 <t>");
  CHECK(mask({"compare s.h5: n = 5, cpu (Intel(R) Xeon(R) Processor), block size 64"}) ==
        mask({"compare s.h5: n = 5, cpu (AMD EPYC), block size 64"}));
  // accuracy columns, iteration counts and labels are kept
  CHECK(mask({"variant  time ms  rel. resid.", "a  1.0  3.0e-07"}) !=
        mask({"variant  time ms  rel. resid.", "a  1.0  3.1e-07"}));
  CHECK(mask({"  stopped    labels_unchanged after 9 iteration(s)"}) !=
        mask({"  stopped    labels_unchanged after 8 iteration(s)"}));
  CHECK(mask({"median of 3 runs"}) != mask({"median of 5 runs"}));
}

TEST_CASE("README's and the CLI manual's example outputs are what tcsolve prints now (up to times and "
          "device names)",
          "[docs]") {
  for (const ExampleDocument& document : kExampleDocuments) {
    const std::string path = tcsolve::test::test_data_path(document.path);
    std::size_t blocks = 0;
    const std::vector<ExampleCommand> commands = parse_examples(tcsolve::test::read_file(path), blocks);
    INFO("document: " << path);
    REQUIRE(blocks >= document.min_blocks);
    REQUIRE(commands.size() >= blocks);

    const ExampleFolder folder;  // one fresh folder per document: its examples build on each other
    for (const ExampleCommand& c : commands) {
      const CommandResult r = run_tcsolve(c.args);
      INFO("example '" << c.example << "': " << r);
      REQUIRE(r.exit_code == 0);
      std::vector<std::string> fresh = split_lines(r.out);
      drop_trailing_blank_lines(fresh);
      const std::vector<std::string> want = mask(c.expected), got = mask(fresh);
      std::size_t line = 0;
      while (line < want.size() && line < got.size() && want[line] == got[line]) ++line;
      INFO("document (first) and fresh output (second), masked; first difference in line "
           << line + 1 << " (an intended change: run scripts/readme-examples and rebuild)");
      CHECK(numbered(got) == numbered(want));
    }
  }
}
