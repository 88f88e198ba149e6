#include "compare/tensor.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "compare/dump.hpp"
#include "compare/job_files.hpp"

namespace faultd::compare {

size_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::Bool:
    case ElemType::I8:
    case ElemType::U8:
      return 1;
    case ElemType::F16:
    case ElemType::BF16:
    case ElemType::I16:
    case ElemType::U16:
      return 2;
    case ElemType::F32:
    case ElemType::I32:
    case ElemType::U32:
      return 4;
    default:
      return 8;
  }
}

std::string_view elem_name(ElemType t) {
  switch (t) {
    case ElemType::F16:
      return "float16";
    case ElemType::BF16:
      return "bfloat16";
    case ElemType::F32:
      return "float32";
    case ElemType::F64:
      return "float64";
    case ElemType::I8:
      return "int8";
    case ElemType::I16:
      return "int16";
    case ElemType::I32:
      return "int32";
    case ElemType::I64:
      return "int64";
    case ElemType::U8:
      return "uint8";
    case ElemType::U16:
      return "uint16";
    case ElemType::U32:
      return "uint32";
    case ElemType::U64:
      return "uint64";
    case ElemType::Bool:
      return "bool";
  }
  return "?";
}

bool is_float(ElemType t) {
  return t == ElemType::F16 || t == ElemType::BF16 || t == ElemType::F32 || t == ElemType::F64;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits = 0;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant != 0) {  // subnormal: normalise
    exp = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3FFu) << 13);
  } else {
    bits = sign;
  }
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float bf16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

Bytes::~Bytes() {
  if (mapped_ && data_ != nullptr) munmap(const_cast<uint8_t*>(data_), size_);
}

std::shared_ptr<const Bytes> Bytes::map_file(const std::filesystem::path& path) {
  const UniqueFd fd = open_job_file(path);
  return map_fd(fd.get(), path.string());
}

std::shared_ptr<const Bytes> Bytes::map_fd(int fd, const std::string& name) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) throw InputError(name + ": not a regular file");
  const auto size = static_cast<uint64_t>(st.st_size);
  const auto allocated = static_cast<uint64_t>(st.st_blocks) * 512;
  if (size > kSparseFloorBytes && allocated < size / kMaxSparseRatio) {
    throw InputError(name + ": a sparse file (" + std::to_string(size) + " bytes, " +
                     std::to_string(allocated) + " on disk): refused, its holes would be read " +
                     "as zeros at the cost of real data");
  }
  std::shared_ptr<Bytes> b(new Bytes());
  b->size_ = static_cast<size_t>(size);
  if (b->size_ > 0) {
    void* p = mmap(nullptr, b->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) throw InputError(name + ": cannot map: " + std::strerror(errno));
    madvise(p, b->size_, MADV_SEQUENTIAL);
    b->data_ = static_cast<const uint8_t*>(p);
    b->mapped_ = true;
  }
  return b;
}

void Bytes::prefetch(const uint8_t* from, size_t len) const {
#ifdef MADV_POPULATE_READ
  if (!mapped_ || len == 0) return;
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t lo = static_cast<size_t>(from - data_) / page * page;
  const size_t hi = std::min(size_, static_cast<size_t>(from - data_) + len);
  madvise(const_cast<uint8_t*>(data_) + lo, hi - lo, MADV_POPULATE_READ);
#else
  (void)from;
  (void)len;
#endif
}

void Bytes::release(const uint8_t* from, size_t len) const {
  if (!mapped_ || len == 0) return;
  // The mapping starts on a page boundary; whole pages inside the range only, so a page shared
  // with data not read yet stays.
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const auto start = static_cast<size_t>(from - data_);
  const size_t lo = (start + page - 1) / page * page;
  const size_t hi = (start + len) / page * page;
  if (hi > lo) madvise(const_cast<uint8_t*>(data_) + lo, hi - lo, MADV_DONTNEED);
}

std::shared_ptr<const Bytes> Bytes::copy_of(std::string_view data) {
  std::shared_ptr<Bytes> b(new Bytes());
  b->owned_.assign(data);
  b->data_ = reinterpret_cast<const uint8_t*>(b->owned_.data());
  b->size_ = b->owned_.size();
  return b;
}

namespace {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

double element(ElemType t, const uint8_t* p) {
  switch (t) {
    case ElemType::F16:
      return half_to_float(load<uint16_t>(p));
    case ElemType::BF16:
      return bf16_to_float(load<uint16_t>(p));
    case ElemType::F32:
      return load<float>(p);
    case ElemType::F64:
      return load<double>(p);
    case ElemType::I8:
      return load<int8_t>(p);
    case ElemType::I16:
      return load<int16_t>(p);
    case ElemType::I32:
      return load<int32_t>(p);
    case ElemType::I64:
      return static_cast<double>(load<int64_t>(p));
    case ElemType::U8:
      return load<uint8_t>(p);
    case ElemType::U16:
      return load<uint16_t>(p);
    case ElemType::U32:
      return load<uint32_t>(p);
    case ElemType::U64:
      return static_cast<double>(load<uint64_t>(p));
    case ElemType::Bool:
      return load<uint8_t>(p) != 0 ? 1.0 : 0.0;
  }
  return 0;
}

template <typename T, typename F>
void convert(const uint8_t* p, size_t n, double* out, F f) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<double>(f(load<T>(p + i * sizeof(T))));
}

// Strides in elements, C order or Fortran order; false when one overflows (a shape far larger
// than any file, which the extent check would refuse anyway).
bool dense_strides(const std::vector<int64_t>& shape, bool fortran, std::vector<int64_t>& out) {
  out.assign(shape.size(), 1);
  int64_t s = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    const size_t i = fortran ? k : shape.size() - 1 - k;
    out[i] = s;
    if (__builtin_mul_overflow(s, shape[i] > 0 ? shape[i] : 1, &s)) return false;
  }
  return true;
}

}  // namespace

bool tensor_extent(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                   size_t esize, size_t& count, size_t& bytes) {
  if (shape.size() != strides.size()) return false;
  count = 1;
  size_t last = 0;  // offset of the last element, in elements
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0 || strides[i] < 0) return false;
    const auto dim = static_cast<size_t>(shape[i]);
    if (dim != 0 && count > std::numeric_limits<size_t>::max() / dim) return false;
    count *= dim;
    if (dim > 0) {
      const auto s = static_cast<size_t>(strides[i]);
      if (s != 0 && dim - 1 > (std::numeric_limits<size_t>::max() / 2 - last) / s) return false;
      last += (dim - 1) * s;
    }
  }
  if (count == 0) {
    bytes = 0;
    return true;
  }
  if (last + 1 > std::numeric_limits<size_t>::max() / esize) return false;
  bytes = (last + 1) * esize;
  return true;
}

void Tensor::read(size_t first, size_t n, double* out) const {
  const size_t es = elem_size(type);
  if (contiguous) {
    const uint8_t* p = base + first * es;
    switch (type) {
      case ElemType::F32:
        convert<float>(p, n, out, [](float v) { return v; });
        return;
      case ElemType::F16:
        convert<uint16_t>(p, n, out, half_to_float);
        return;
      case ElemType::BF16:
        convert<uint16_t>(p, n, out, bf16_to_float);
        return;
      case ElemType::F64:
        convert<double>(p, n, out, [](double v) { return v; });
        return;
      default:
        for (size_t i = 0; i < n; ++i) out[i] = element(type, p + i * es);
        return;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    size_t linear = first + i;
    size_t offset = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      const auto dim = static_cast<size_t>(shape[d]);
      offset += (linear % dim) * static_cast<size_t>(strides[d]);
      linear /= dim;
    }
    out[i] = element(type, base + offset * es);
  }
}

void Tensor::prefetch(size_t first, size_t n) const {
  if (contiguous && bytes) bytes->prefetch(base + first * elem_size(type), n * elem_size(type));
}

void Tensor::release(size_t first, size_t n) const {
  if (contiguous && bytes) bytes->release(base + first * elem_size(type), n * elem_size(type));
}

Tensor parse_npy(std::shared_ptr<const Bytes> bytes, const std::string& name) {
  const uint8_t* d = bytes->data();
  const size_t size = bytes->size();
  auto fail = [&name](const std::string& why) { throw InputError(name + ": " + why); };
  if (size < 10 || std::memcmp(d, "\x93NUMPY", 6) != 0) fail("not a .npy file (no magic)");
  const int major = d[6];
  size_t header_len = 0;
  size_t header_at = 0;
  if (major == 1) {
    header_len = static_cast<size_t>(d[8]) | (static_cast<size_t>(d[9]) << 8);
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) fail("truncated in the header length (byte " + std::to_string(size) + ")");
    header_len = static_cast<size_t>(d[8]) | (static_cast<size_t>(d[9]) << 8) |
                 (static_cast<size_t>(d[10]) << 16) | (static_cast<size_t>(d[11]) << 24);
    header_at = 12;
  } else {
    fail("unsupported .npy version " + std::to_string(major));
  }
  if (header_len > size - header_at) {
    fail("truncated in the header (byte " + std::to_string(size) + " of " +
         std::to_string(header_at + header_len) + ")");
  }
  const std::string header(reinterpret_cast<const char*>(d + header_at), header_len);
  auto value_of = [&](const char* key) -> size_t {
    const size_t k = header.find(key);
    if (k == std::string::npos) fail(std::string("header has no ") + key);
    const size_t colon = header.find(':', k);
    if (colon == std::string::npos) fail(std::string("header: no value for ") + key);
    return header.find_first_not_of(' ', colon + 1);
  };
  size_t at = value_of("'descr'");
  if (at == std::string::npos || (header[at] != '\'' && header[at] != '"'))
    fail("header: bad descr");
  const size_t close = header.find(header[at], at + 1);
  if (close == std::string::npos) fail("header: bad descr");
  const std::string descr = header.substr(at + 1, close - at - 1);
  at = value_of("'fortran_order'");
  const bool fortran = at != std::string::npos && header.compare(at, 4, "True") == 0;
  at = value_of("'shape'");
  if (at == std::string::npos || header[at] != '(') fail("header: bad shape");
  const size_t shape_end = header.find(')', at);
  if (shape_end == std::string::npos) fail("header: bad shape");
  std::vector<int64_t> shape;
  for (size_t i = at + 1; i < shape_end;) {
    while (i < shape_end && (header[i] == ' ' || header[i] == ',')) ++i;
    if (i >= shape_end) break;
    int64_t v = 0;
    size_t digits = 0;
    while (i < shape_end && header[i] >= '0' && header[i] <= '9') {
      if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("header: shape too large");
      v = v * 10 + (header[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0) fail("header: bad shape");
    shape.push_back(v);
    if (shape.size() > 64) fail("header: too many dimensions");
  }
  if (descr.size() < 3) fail("unsupported dtype '" + descr + "'");
  if (descr[0] == '>') fail("big-endian data ('" + descr + "') is not supported");
  const std::string code = descr.substr(1);
  static constexpr std::pair<const char*, ElemType> kTypes[] = {
      {"f2", ElemType::F16}, {"f4", ElemType::F32}, {"f8", ElemType::F64}, {"i1", ElemType::I8},
      {"i2", ElemType::I16}, {"i4", ElemType::I32}, {"i8", ElemType::I64}, {"u1", ElemType::U8},
      {"u2", ElemType::U16}, {"u4", ElemType::U32}, {"u8", ElemType::U64}, {"b1", ElemType::Bool}};
  Tensor t;
  bool known = false;
  for (const auto& [c, type] : kTypes) {
    if (code == c) {
      t.type = type;
      known = true;
    }
  }
  if (!known) fail("unsupported dtype '" + descr + "'");
  t.shape = shape;
  if (!dense_strides(shape, fortran, t.strides)) fail("shape too large");
  if (fortran) t.contiguous = shape.size() <= 1;
  size_t need = 0;
  if (!tensor_extent(t.shape, t.strides, elem_size(t.type), t.count, need)) fail("shape too large");
  const size_t data_at = header_at + header_len;
  if (need > size - data_at) {
    fail("truncated: the data ends at byte " + std::to_string(size) + ", " +
         std::to_string(data_at + need) + " expected");
  }
  t.base = d + data_at;
  t.bytes = std::move(bytes);
  return t;
}

Tensor read_npy(const std::filesystem::path& path) {
  return parse_npy(Bytes::map_file(path), path.string());
}

Tensor read_tensor(const std::filesystem::path& path) {
  if (path.extension() == ".pt") return read_pt(path);
  return read_npy(path);
}

Tensor read_dump_tensor(const std::filesystem::path& data_dir, const std::string& data_name) {
  const std::string shown = (data_dir / data_name).string();
  if (const auto why = bad_data_name(data_name)) throw InputError(shown + ": " + *why);
  const UniqueFd dir = open_job_dir(data_dir);
  const UniqueFd fd = open_job_file_at(dir.get(), data_name, shown);
  auto bytes = Bytes::map_fd(fd.get(), shown);
  if (std::filesystem::path(data_name).extension() == ".pt") return parse_pt(bytes, shown);
  return parse_npy(bytes, shown);
}

}  // namespace faultd::compare
