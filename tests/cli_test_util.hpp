// Helpers for tests that run the built `tcsolve` executable (TCSOLVE_EXE) through popen: exit
// code, stdout and stderr of one command, and a strict minimal JSON reader to check --json.
#pragma once

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tcsolve::test {

struct CommandResult {
  std::string args;
  int exit_code = -1;  ///< -1 when the process did not exit normally
  std::string out, err;
};

/// For INFO(r): the command and what it printed, shown when a check fails.
inline std::ostream& operator<<(std::ostream& os, const CommandResult& r) {
  return os << "tcsolve " << r.args << "\nexit code " << r.exit_code << "\nstdout:\n"
            << r.out << "\nstderr:\n" << r.err;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The tcsolve executable: the build's (TCSOLVE_EXE), or, when the tests run from a bundle on
/// another machine (bundle/bin/tcsolve_tests), the tcsolve beside the test binary.
inline std::string tcsolve_exe() {
  std::error_code ec;
  if (std::filesystem::exists(TCSOLVE_EXE, ec)) return TCSOLVE_EXE;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto sibling = self.parent_path() / "tcsolve";
    if (std::filesystem::exists(sibling, ec)) return sibling.string();
  }
  return TCSOLVE_EXE;
}

/// Runs the shell command `command` (stdout read, stderr into a temp file); `args` names it.
inline CommandResult run_shell(const std::string& command_line, const std::string& args) {
  char err_path[] = "/tmp/tcsolve_cli_stderr_XXXXXX";
  const int fd = mkstemp(err_path);
  REQUIRE(fd >= 0);
  close(fd);
  const std::string command = "{ " + command_line + "; } 2>'" + err_path + "'";
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

/// Runs `tcsolve <args>` (args are passed through the shell as written), stderr into a temp file.
inline CommandResult run_tcsolve(const std::string& args) {
  return run_shell("'" + tcsolve_exe() + "' " + args, args);
}

/// run_tcsolve and the largest resident set of the tcsolve process (ru_maxrss), in bytes.
struct MeasuredRun {
  CommandResult result;
  double max_rss_bytes = 0;
};
inline MeasuredRun run_tcsolve_measured(const std::string& args) {
  char out_path[] = "/tmp/tcsolve_cli_stdout_XXXXXX", err_path[] = "/tmp/tcsolve_cli_stderr_XXXXXX";
  for (char* path : {out_path, err_path}) {
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
  }
  // exec: the shell becomes tcsolve, so that wait4 reports tcsolve's own resource use
  std::string command = "exec '" + tcsolve_exe() + "' " + args + " >'" + out_path + "' 2>'" + err_path + "'";
  std::string sh = "sh", dash_c = "-c";
  char* argv[] = {sh.data(), dash_c.data(), command.data(), nullptr};
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, environ) == 0);
  int status = 0;
  struct rusage usage {};
  REQUIRE(wait4(pid, &status, 0, &usage) == pid);
  MeasuredRun m;
  m.result.args = args;
  if (WIFEXITED(status)) m.result.exit_code = WEXITSTATUS(status);
  m.result.out = read_file(out_path);
  m.result.err = read_file(err_path);
  std::remove(out_path);
  std::remove(err_path);
  m.max_rss_bytes = static_cast<double>(usage.ru_maxrss) * 1024;  // KiB on Linux
  return m;
}

inline bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

/// How often `needle` occurs in `text` (without overlaps).
inline std::size_t occurrences(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

/// Whether mpirun is on the PATH (the tests of the commands under mpirun skip without it).
inline bool have_mpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

/// `mpirun -np <ranks> tcsolve <args>` (OpenMPI as root in CI: --allow-run-as-root, and
/// --oversubscribe for more ranks than cores).
inline CommandResult run_ranks(int ranks, const std::string& args) {
  return run_shell("mpirun --allow-run-as-root --oversubscribe -np " + std::to_string(ranks) + " '" + tcsolve_exe() +
                       "' " + args,
                   "(mpirun -np " + std::to_string(ranks) + ") " + args);
}

inline std::size_t count_lines(std::string_view s) {
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
inline Json require_one_object(const CommandResult& r) {
  INFO("stdout:\n" << r.out);
  const std::optional<Json> doc = JsonReader(r.out).parse_document();
  REQUIRE(doc.has_value());
  REQUIRE(doc->type == Json::Type::object);
  return *doc;
}

}  // namespace tcsolve::test
