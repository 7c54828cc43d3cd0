// Linear systems from NumPy files (numpy_system.hpp): which arrays make the system, where each
// one's bytes are (a .npy file, or an entry "A.npy" of a .npz archive: zip_archive.hpp), their
// shapes checked against each other before any data is read, then the data converted
// (npy_input.hpp). Messages follow the HDF5 reader's: "<file>: <array>: <problem>".
#include "tcsolve/io/numpy_system.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>

#include "npy_input.hpp"
#include "tcsolve/runtime/error.hpp"
#include "zip_archive.hpp"

namespace tcsolve {
namespace {

using io_detail::NpyHeader;
using io_detail::NpyName;
using io_detail::ZipArchive;
using io_detail::ZipEntry;

bool ends_with_ci(const std::string& s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(suffix.begin(), suffix.end(), s.end() - static_cast<std::ptrdiff_t>(suffix.size()),
                    [](char lower, char c) { return std::tolower(static_cast<unsigned char>(c)) == lower; });
}

bool is_archive(const std::string& path) {
  return io_detail::is_zip_file(path) || ends_with_ci(path, ".npz");
}

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

/// One array: its header, and where its data is (a .npy file, or an entry of an archive).
class NpyArray {
 public:
  /// A .npy file; its header read and the file's length checked against it.
  static NpyArray in_file(const std::string& path, const std::string& array) {
    NpyArray a(NpyName{path, array});
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(st)) throw InvalidInput(path + ": no such file");
    if (std::filesystem::is_directory(st)) throw InvalidInput(path + ": is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InvalidInput(path + ": cannot be read (permission denied?)");
    const std::uint64_t size = std::filesystem::file_size(path, ec);
    if (ec) throw InvalidInput(path + ": cannot read its size");
    a.path_ = path;
    const std::string start = a.file_bytes(0, std::min<std::uint64_t>(size, io_detail::kNpyPreambleBytes));
    const std::uint64_t offset = io_detail::npy_data_offset(start, a.name_);
    a.header_ = io_detail::parse_npy_header(a.file_bytes(0, std::min(size, offset)), a.name_);
    a.check_length(size);
    return a;
  }

  /// An entry of an archive; its header read (inflating only its first bytes) and the entry's
  /// size checked against it.
  static NpyArray in_archive(ZipArchive& zip, const ZipEntry& entry, const std::string& array) {
    NpyArray a(NpyName{zip.path(), array});
    a.zip_ = &zip;
    a.entry_ = &entry;
    const std::uint64_t offset =
        io_detail::npy_data_offset(zip.read(entry, io_detail::kNpyPreambleBytes), a.name_);
    a.header_ = io_detail::parse_npy_header(zip.read(entry, offset), a.name_);
    a.check_length(entry.size);
    return a;
  }

  const NpyHeader& header() const { return header_; }
  const NpyName& name() const { return name_; }
  const std::vector<std::uint64_t>& shape() const { return header_.shape; }

  Eigen::MatrixXd read() {
    if (zip_ != nullptr) {
      const std::string all = zip_->read(*entry_);
      return io_detail::npy_matrix(header_, std::string_view(all).substr(header_.data_offset), name_);
    }
    const std::string data = file_bytes(header_.data_offset, header_.data_bytes());
    return io_detail::npy_matrix(header_, data, name_);
  }

 private:
  explicit NpyArray(NpyName name) : name_(std::move(name)) {}

  void check_length(std::uint64_t total) const {
    const std::uint64_t data = total - std::min(total, header_.data_offset);
    if (data < header_.data_bytes())
      name_.fail("truncated: " + std::to_string(data) + " bytes of data after the header, " +
                 header_.describe() + " needs " + std::to_string(header_.data_bytes()));
  }

  std::string file_bytes(std::uint64_t offset, std::uint64_t count) const {
    std::ifstream in(path_, std::ios::binary);
    std::string s(static_cast<std::size_t>(count), '\0');
    in.seekg(static_cast<std::streamoff>(offset));
    if (!in || (count > 0 && !in.read(s.data(), static_cast<std::streamsize>(count))))
      throw InvalidInput(path_ + ": read error at byte " + std::to_string(offset));
    return s;
  }

  NpyName name_;
  NpyHeader header_;
  std::string path_;
  ZipArchive* zip_ = nullptr;
  const ZipEntry* entry_ = nullptr;
};

std::string dims_text(const std::vector<std::uint64_t>& shape) {
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? " x " : "") + std::to_string(shape[i]);
  return s;
}

/// "2-D (3 x 4)", "1-D (length 5)", "a scalar", as the HDF5 reader says it.
std::string rank_text(const std::vector<std::uint64_t>& shape) {
  if (shape.empty()) return "a scalar";
  if (shape.size() == 1) return "1-D (length " + dims_text(shape) + ")";
  return std::to_string(shape.size()) + "-D (" + dims_text(shape) + ")";
}

/// A's order, after checking that it is a non-empty square matrix.
std::uint64_t check_matrix(const NpyArray& a) {
  const std::vector<std::uint64_t>& s = a.shape();
  if (s.size() != 2) a.name().fail(rank_text(s) + ", expected 2-D (n x n)");
  if (s[0] != s[1]) a.name().fail("not square (" + dims_text(s) + ")");
  if (s[0] == 0) a.name().fail("empty (0 x 0)");
  return s[0];
}

/// b against A's order n; `a_file` names A's file when b is in another one.
void check_rhs(const NpyArray& b, std::uint64_t n, const std::string& a_file) {
  const std::vector<std::uint64_t>& s = b.shape();
  const std::string rows = "rows of A" + (a_file.empty() ? "" : " in " + a_file);
  if (s.size() != 1 && s.size() != 2) b.name().fail(rank_text(s) + ", expected 1-D (n) or 2-D (n x nrhs)");
  if (s.size() == 1 && s[0] != n)
    b.name().fail("length " + dims_text(s) + ", expected " + std::to_string(n) + " (" + rows + ")");
  if (s.size() == 2 && s[0] != n)
    b.name().fail(dims_text(s) + ", expected " + std::to_string(n) + " rows (" + rows + ")");
  if (s.size() == 2 && s[1] == 0) b.name().fail(dims_text(s) + ", no right-hand side");
}

/// The archive's entry for array `array` ("A.npy", as np.savez names it, or "A").
const ZipEntry* entry_of(const ZipArchive& zip, const std::string& array, bool required) {
  if (const ZipEntry* e = zip.find(array + ".npy")) return e;
  if (const ZipEntry* e = zip.find(array)) return e;
  if (!required) return nullptr;
  std::string held;
  for (const ZipEntry& e : zip.entries()) {
    std::string n = e.name;
    if (ends_with_ci(n, ".npy")) n.resize(n.size() - 4);
    held += (held.empty() ? "" : ", ") + n;
  }
  throw InvalidInput(zip.path() + ": " + array + ": array missing (the archive holds: " +
                     (held.empty() ? std::string("nothing") : held) + ")");
}

/// The arrays of a system, opened and their shapes checked: a .npz's A, b, x, or a .npy A and
/// b (or A alone).
struct OpenedArrays {
  std::unique_ptr<ZipArchive> zip;
  std::optional<NpyArray> A, b, x;
  std::uint64_t n = 0;
};

OpenedArrays open_arrays(const std::string& path, const std::string& rhs_path) {
  OpenedArrays o;
  if (is_archive(path)) {
    o.zip = std::make_unique<ZipArchive>(path);
    if (!rhs_path.empty())
      throw InvalidInput(rhs_path + ": b: a second file for b goes with a .npy matrix; the archive " + path +
                         " holds its own b");
    o.A.emplace(NpyArray::in_archive(*o.zip, *entry_of(*o.zip, "A", true), "A"));
    o.n = check_matrix(*o.A);
    o.b.emplace(NpyArray::in_archive(*o.zip, *entry_of(*o.zip, "b", true), "b"));
    check_rhs(*o.b, o.n, "");
    if (const ZipEntry* x = entry_of(*o.zip, "x", false)) {
      o.x.emplace(NpyArray::in_archive(*o.zip, *x, "x"));
      if (o.x->shape() != o.b->shape())
        o.x->name().fail("shape (" + dims_text(o.x->shape()) + "), expected (" + dims_text(o.b->shape()) +
                         ") as b");
    }
    return o;
  }
  o.A.emplace(NpyArray::in_file(path, "A"));
  o.n = check_matrix(*o.A);
  if (!rhs_path.empty()) {
    if (is_archive(rhs_path))
      throw InvalidInput(rhs_path +
                         ": b: a .npz archive; b goes in a .npy file (np.save), or A and b in one .npz");
    o.b.emplace(NpyArray::in_file(rhs_path, "b"));
    check_rhs(*o.b, o.n, file_name(path));
  }
  return o;
}

}  // namespace

bool is_numpy_file(const std::string& path) {
  if (ends_with_ci(path, ".npy") || ends_with_ci(path, ".npz")) return true;
  std::ifstream in(path, std::ios::binary);
  char magic[6] = {};
  if (in.read(magic, 6) && std::string_view(magic, 6) == std::string_view("\x93NUMPY", 6)) return true;
  return io_detail::is_zip_file(path);
}

SystemShape inspect_numpy_system(const std::string& path, const std::string& rhs_path) {
  const OpenedArrays o = open_arrays(path, rhs_path);
  SystemShape shape;
  shape.n = static_cast<std::int64_t>(o.n);
  shape.nrhs = o.b && o.b->shape().size() == 2 ? static_cast<std::int64_t>(o.b->shape()[1]) : 1;
  shape.has_x = o.x.has_value() || !o.b;
  shape.a_bytes_per_element = o.A->header().item_bytes;
  return shape;
}

LinearSystem read_numpy_system(const std::string& path, const std::string& rhs_path) {
  OpenedArrays o = open_arrays(path, rhs_path);
  LinearSystem sys;
  sys.A = o.A->read();
  const std::string a_text = "A " + o.A->header().describe();
  if (o.b) {
    sys.b = o.b->read();
    sys.b_is_vector = o.b->shape().size() == 1;
    if (o.x) sys.x_true = o.x->read();
    const std::string b_text = "b " + o.b->header().describe();
    sys.description =
        o.zip
            ? "NumPy archive " + file_name(path) + " (" + a_text + ", " + b_text + (o.x ? ", x" : "") + ")"
            : "NumPy " + file_name(path) + " (" + a_text + "), " + file_name(rhs_path) + " (" + b_text + ")";
  } else {
    const Eigen::MatrixXd x = Eigen::MatrixXd::Ones(sys.A.rows(), 1);
    sys.b.noalias() = sys.A * x;
    sys.x_true = x;
    sys.b_is_vector = true;
    sys.description = "NumPy " + file_name(path) + " (" + a_text + "); x = ones, b = A x";
  }
  return sys;
}

}  // namespace tcsolve
