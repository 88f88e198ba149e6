// Tensor files, read without copying them: a .npy (v1-v3) or a torch.save .pt (a ZIP whose
// members are stored, holding a pickle that names a storage, offset, size and stride) is
// memory-mapped, and its elements are read as float64 in caller-sized chunks. So comparing a
// 4 GB activation needs the chunk, not 4 GB (the reference tools hold 4-5 float64 copies).
//
// Element types: f16, bf16, f32, f64, signed and unsigned 8-64 bit integers, bool.
// Lifecycle: a Tensor keeps its mapping alive (shared). Threading: read-only after opening, so
// one Tensor may be read from several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace faultd::compare {

enum class ElemType { F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool };

size_t elem_size(ElemType t);
std::string_view elem_name(ElemType t);  // "float16", "bfloat16", ...
bool is_float(ElemType t);

// Bytes that stay put: a read-only mapping of a file, or a copy held in memory.
class Bytes {
 public:
  // A job's file (job_files.hpp: a regular file, never through a link), mapped; a very sparse
  // one (kMaxSparseRatio) is refused. Throws InputError.
  static std::shared_ptr<const Bytes> map_file(const std::filesystem::path& path);
  static std::shared_ptr<const Bytes> map_fd(int fd, const std::string& name);
  static std::shared_ptr<const Bytes> copy_of(std::string_view data);
  ~Bytes();
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // Maps in [from, from + len) at once, before it is read: one call instead of a page fault
  // every few pages (a hint; kernels without MADV_POPULATE_READ fault as usual).
  void prefetch(const uint8_t* from, size_t len) const;
  // Gives back the pages of [from, from + len) that have been read: a mapping's resident pages
  // would otherwise grow to the whole file. Reading them again faults them back in.
  void release(const uint8_t* from, size_t len) const;

 private:
  Bytes() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::string owned_;
};

struct Tensor {
  std::shared_ptr<const Bytes> bytes;
  const uint8_t* base = nullptr;  // element 0
  ElemType type = ElemType::F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements
  size_t count = 0;
  bool contiguous = true;

  // Elements [first, first + n) in row-major order, converted to float64.
  void read(size_t first, size_t n, double* out) const;
  // Elements [first, first + n) are about to be read (contiguous tensors only).
  void prefetch(size_t first, size_t n) const;
  // Elements [first, first + n) will not be read again (contiguous tensors only).
  void release(size_t first, size_t n) const;
};

// Throw InputError naming the file and what is wrong with it.
Tensor read_npy(const std::filesystem::path& path);
Tensor parse_npy(std::shared_ptr<const Bytes> bytes, const std::string& name);
Tensor read_pt(const std::filesystem::path& path);
Tensor parse_pt(std::shared_ptr<const Bytes> bytes, const std::string& name);
// By extension: .npy or .pt.
Tensor read_tensor(const std::filesystem::path& path);
// The tensor a dump row names: `data_name` must be a flat file name (job_files.hpp) and is
// opened in `data_dir` (whose last component is no link either). Throws InputError.
Tensor read_dump_tensor(const std::filesystem::path& data_dir, const std::string& data_name);

// The elements a shape holds and the bytes its strides reach from element 0, with every
// product checked: false when either overflows (or a size or stride is negative).
bool tensor_extent(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                   size_t elem_bytes, size_t& count, size_t& bytes);

// IEEE half and bfloat16 bits to float.
float half_to_float(uint16_t h);
float bf16_to_float(uint16_t b);

}  // namespace faultd::compare
