// The dumps `faultctl compare` reads, as one table of rows per rank: one row per dumped tensor
// or argument, in dump order (which is execution order). Two families write them:
//
//   msprobe  <rank dir>/dump.json (+ stack.json, + dump_tensor_data/*.pt or *.npy in tensor
//            mode); modes statistics, tensor, md5 (and xor, read as md5)
//   ptdbg    <name>.pkl: text, one JSON array per line ([name, step, md5, dtype, shape,
//            summary] or a stack record), + <name>/<tensor>.npy in real-data mode
//
// Rows keep the reference tools' own spellings (dtype "<class 'int'>", shape "[32, 3]", None),
// because the result table shows them verbatim. A truncated file (the writer was killed) is read
// up to its last complete entry; `truncated` then says where it stopped.
//
// Lifecycle: value types filled by the readers. Threading: none shared.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "compare/json_reader.hpp"

namespace faultd::compare {

// Unreadable or malformed input (exit status 2 of the command); the message names the file.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class DumpFamily { Msprobe, Ptdbg };
enum class DumpMode { Statistics, Tensor, Md5 };
// "statistics", "tensor", "md5": msprobe's names, in messages and in -o json.
const char* mode_name(DumpMode mode);
enum class IoKind { Input, Params, Output, ParamsGrad };

// A table cell as the reference tools hold it: Python None, bool, int, float or str.
struct Scalar {
  enum class Kind { None, Bool, Int, Float, Str };
  Kind kind = Kind::None;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;
  std::string text;

  static Scalar from_json(const JsonValue& v);
  static Scalar of_text(std::string s);
  // Python's str(): "None", "True", "2", "0.1", "nan", the text itself.
  std::string str() const;
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float; }
  bool is_none() const { return kind == Kind::None; }
  double as_double() const { return kind == Kind::Int ? static_cast<double>(integer) : number; }
};

struct TensorRow {
  std::string name;  // as shown in the table
  std::string key;   // what matching compares (backward call indices renumbered)
  std::string api;   // the dump entry it belongs to: verdicts are per entry
  IoKind io = IoKind::Input;
  std::string dtype;       // "torch.float32", "<class 'int'>", "None"
  std::string shape_text;  // "[32, 3]", "[]", "None"
  std::optional<std::vector<int64_t>> shape;
  Scalar max, min, mean, norm;
  Scalar requires_grad;  // None when the leaf has none
  std::string md5;
  std::string data_name = "-1";  // tensor file name; "-1" when none was written
  bool is_tensor = false;
};

struct Dump {
  DumpFamily family = DumpFamily::Msprobe;
  DumpMode mode = DumpMode::Statistics;
  std::string framework = "pytorch";
  std::filesystem::path path;      // dump.json or the .pkl
  std::filesystem::path data_dir;  // where tensor files are
  std::vector<TensorRow> rows;
  std::map<std::string, std::string> stacks;  // api -> its stack, when stack info was dumped
  bool has_stack = false;
  std::optional<std::string> truncated;  // where a cut-short file stopped
};

// The whole file; ".gz" files are decompressed. Throws InputError.
std::string read_text_file(const std::filesystem::path& path);

// msprobe: a dump.json (or debug.json); stack.json beside it is read when present.
Dump read_msprobe_dump(const std::filesystem::path& dump_json);
Dump parse_msprobe_dump(const std::string& text, const std::filesystem::path& path);

// ptdbg: a .pkl; tensors are looked for in the directory named like its stem.
Dump read_ptdbg_pkl(const std::filesystem::path& pkl);
Dump parse_ptdbg_pkl(const std::string& text, const std::filesystem::path& path);

// A dump.json, debug.json, .pkl, or a rank directory holding one of them.
Dump read_dump(const std::filesystem::path& path);

// A row or entry name's dot-separated parts ("Torch.add.0.forward" -> Torch, add, 0, forward).
std::vector<std::string> split_dots(const std::string& s);

// zlib's CRC-32 as 8 lower-case hex digits: the tools' "md5" column.
std::string crc32_hex(std::string_view bytes);

}  // namespace faultd::compare
