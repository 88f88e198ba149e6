// ptdbg_ascend's .pkl: not a pickle but text, one json.dumps array per line (dump.py
// write_to_disk). Tensor records are [name, dump_step, md5, dtype, shape, summary]; stack
// records are [name_stack_info, [[file, line, func, code], ...]]. Names are
// {Prefix}_{api}_{n}_{forward|backward}_{input|output}[.i...] before 2024-05 and the same with
// '.' separators after; both are read.
#include <algorithm>

#include "compare/dump.hpp"
#include "compare/python_text.hpp"

namespace faultd::compare {

namespace {

// "Functional_linear_0_forward_input.0" -> {"Functional_linear_0_forward", input}.
bool split_name(const std::string& name, std::string& api, IoKind& io) {
  for (const char* dir : {"forward", "backward"}) {
    for (const char sep : {'_', '.'}) {
      const std::string tag = std::string(1, sep) + dir + sep;
      const size_t at = name.rfind(tag);
      if (at == std::string::npos) continue;
      api = name.substr(0, at + tag.size() - 1);
      const std::string rest = name.substr(at + tag.size());
      io = rest.rfind("output", 0) == 0 ? IoKind::Output : IoKind::Input;
      return true;
    }
  }
  return false;
}

Scalar summary_value(const JsonValue& v) {
  if (v.is_array() && v.items.empty()) return {};  // empty or bool tensors: no statistic
  if (v.is_string() && (v.text == "Nan" || v.text == "nan")) {
    Scalar s;
    s.kind = Scalar::Kind::Float;
    s.number = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  return Scalar::from_json(v);
}

}  // namespace

Dump parse_ptdbg_pkl(const std::string& text, const std::filesystem::path& path) {
  Dump dump;
  dump.family = DumpFamily::Ptdbg;
  dump.path = path;
  dump.data_dir = path.parent_path() / path.stem();
  size_t line_no = 0;
  size_t start = 0;
  bool any_md5 = false;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    const size_t line_start = start;
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const JsonParse p = parse_json(line);
    if (p.error || !p.value.is_array() || p.value.items.empty() || !p.value.items[0].is_string()) {
      const std::string why = p.error ? p.error->message : "not a record";
      if (!dump.truncated) {
        dump.truncated = path.string() + ": line " + std::to_string(line_no) + " (byte " +
                         std::to_string(line_start) + "): " + why +
                         "; the records before it are compared";
      }
      continue;
    }
    const auto& f = p.value.items;
    const std::string& name = f[0].text;
    if (f.size() == 2 && name.size() > 10 && name.substr(name.size() - 10) == "stack_info") {
      dump.has_stack = true;
      std::string lines;
      for (const auto& frame : f[1].items) {
        if (!lines.empty()) lines += '\n';
        std::string one;
        for (const auto& part : frame.items) {
          if (!one.empty()) one += ", ";
          one +=
              part.is_string() ? part.text : (part.is_number() ? std::to_string(part.integer) : "");
        }
        lines += one;
      }
      dump.stacks[name.substr(0, name.size() - 11)] = lines;
      continue;
    }
    if (f.size() < 6) continue;  // the 2022 format inlined values; it is not supported
    TensorRow r;
    r.name = name;
    r.key = name;
    if (!split_name(name, r.api, r.io)) r.api = name;
    if (f[2].is_string() && !f[2].text.empty()) {
      r.md5 = f[2].text;
      any_md5 = true;
    }
    r.dtype = f[3].is_string() ? f[3].text : "None";
    if (f[4].is_array()) {
      std::vector<int64_t> dims;
      for (const auto& d : f[4].items) dims.push_back(d.integer);
      r.shape = dims;
      r.shape_text = python_list_repr(dims);
    } else {
      r.shape_text = f[4].is_string() ? f[4].text : "None";
    }
    r.is_tensor = r.dtype.rfind("torch.", 0) == 0;
    const auto& s = f[5].items;
    if (s.size() > 0) r.max = summary_value(s[0]);
    if (s.size() > 1) r.min = summary_value(s[1]);
    if (s.size() > 2) r.mean = summary_value(s[2]);
    if (s.size() > 3) r.norm = summary_value(s[3]);
    r.data_name = name + ".npy";
    dump.rows.push_back(std::move(r));
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dump.data_dir, ec)) {
    // ptdbg 1.0 named the tensor directory with a time stamp: api_stack_npu_dump_20230104_13434.
    const std::string prefix = path.stem().string() + "_";
    for (const auto& e : std::filesystem::directory_iterator(path.parent_path(), ec)) {
      const std::string name = e.path().filename().string();
      if (e.is_directory(ec) && name.rfind(prefix, 0) == 0) dump.data_dir = e.path();
    }
  }
  if (any_md5) {
    dump.mode = DumpMode::Md5;
  } else if (std::filesystem::is_directory(dump.data_dir, ec)) {
    dump.mode = DumpMode::Tensor;
  }
  if (dump.rows.empty() && dump.truncated) throw InputError(*dump.truncated);
  return dump;
}

Dump read_ptdbg_pkl(const std::filesystem::path& pkl) {
  return parse_ptdbg_pkl(read_text_file(pkl), pkl);
}

Dump read_dump(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    for (const char* name : {"dump.json", "debug.json", "dump.json.gz"}) {
      if (std::filesystem::is_regular_file(path / name, ec)) return read_msprobe_dump(path / name);
    }
    std::vector<std::filesystem::path> pkls;
    for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
      if (e.path().extension() == ".pkl") pkls.push_back(e.path());
    }
    if (pkls.size() == 1) return read_ptdbg_pkl(pkls[0]);
    throw InputError(path.string() + ": no dump.json and " +
                     (pkls.empty() ? std::string("no .pkl") : std::string("several .pkl files")));
  }
  if (!std::filesystem::exists(path, ec)) throw InputError(path.string() + ": not found");
  if (path.extension() == ".pkl") return read_ptdbg_pkl(path);
  return read_msprobe_dump(path);
}

}  // namespace faultd::compare
