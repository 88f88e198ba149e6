// msprobe's dump.json flattened into rows the way its compare does (core/compare/utils.py
// read_op, op_item_parse, gen_op_item; names and spellings follow it exactly).
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "compare/dump.hpp"
#include "compare/job_files.hpp"
#include "compare/python_text.hpp"

namespace faultd::compare {

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t dot = s.find('.', start);
    out.push_back(s.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

namespace {

// Python's str()/repr() of a JSON value as json.load gives it back.
std::string python_str(const JsonValue& v, bool top) {
  switch (v.type) {
    case JsonValue::Type::Null:
      return "None";
    case JsonValue::Type::Bool:
      return v.boolean ? "True" : "False";
    case JsonValue::Type::Int:
      return std::to_string(v.integer);
    case JsonValue::Type::Float:
      return python_float_repr(v.number);
    case JsonValue::Type::String:
      return top ? v.text : "'" + v.text + "'";
    case JsonValue::Type::Array: {
      std::string out = "[";
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i > 0) out += ", ";
        out += python_str(v.items[i], false);
      }
      return out + "]";
    }
    case JsonValue::Type::Object: {
      std::string out = "{";
      for (size_t i = 0; i < v.members.size(); ++i) {
        if (i > 0) out += ", ";
        out += "'" + v.members[i].first + "': " + python_str(v.members[i].second, false);
      }
      return out + "}";
    }
  }
  return "";
}

std::string python_type_name(const JsonValue* v) {
  if (v == nullptr || v->is_null()) return "<class 'NoneType'>";
  switch (v->type) {
    case JsonValue::Type::Bool:
      return "<class 'bool'>";
    case JsonValue::Type::Int:
      return "<class 'int'>";
    case JsonValue::Type::Float:
      return "<class 'float'>";
    case JsonValue::Type::String:
      return "<class 'str'>";
    case JsonValue::Type::Array:
      return "<class 'list'>";
    default:
      return "<class 'dict'>";
  }
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

struct Walker {
  const std::string& api;
  IoKind io;
  std::vector<TensorRow>& out;
  bool params_grad;
  bool& saw_md5;  // a tensor carries a checksum: md5 (or xor) mode

  TensorRow base(const std::string& name) const {
    TensorRow r;
    r.name = name;
    r.api = api;
    r.io = io;
    return r;
  }

  // gen_op_item: one leaf (a dict with a str "type").
  void leaf(const JsonValue& d, const std::string& name) {
    TensorRow r = base(name);
    const JsonValue* type = d.find("type");
    const std::string type_name = type != nullptr ? type->text : "";
    const JsonValue* value = d.find("value");
    const JsonValue* dtype = d.find("dtype");
    if (const JsonValue* dn = d.find("data_name");
        dn != nullptr && dn->is_string() && !dn->text.empty()) {
      r.data_name = dn->text;
      const size_t dot = dn->text.rfind('.');
      r.name = dot == std::string::npos ? dn->text : dn->text.substr(0, dot);
    }
    auto stat = [&](const char* key) {
      const JsonValue* s = d.find(key);
      return s != nullptr ? Scalar::from_json(*s) : Scalar{};
    };
    r.max = stat("Max");
    r.min = stat("Min");
    r.mean = stat("Mean");
    r.norm = stat("Norm");
    if (const JsonValue* rg = d.find("requires_grad"); rg != nullptr) {
      r.requires_grad = Scalar::from_json(*rg);
    }
    const auto set_all = [&r](const Scalar& s) { r.max = r.min = r.mean = r.norm = s; };
    const std::string last = split_dots(name).back();
    if (dtype != nullptr && !(dtype->is_string() && dtype->text.empty()) && !dtype->is_null()) {
      r.dtype = dtype->is_string() ? dtype->text : python_str(*dtype, true);
      r.is_tensor = true;
      if (const JsonValue* shape = d.find("shape"); shape != nullptr && shape->is_array()) {
        std::vector<int64_t> dims;
        for (const auto& x : shape->items) dims.push_back(x.integer);
        r.shape = dims;
        r.shape_text = python_list_repr(dims);
      } else {
        r.shape_text = shape != nullptr ? python_str(*shape, true) : "None";
      }
    } else if (type_name == "torch.Size") {
      r.dtype = type_name;
      r.shape_text = value != nullptr ? python_str(*value, true) : "None";
    } else if (type_name == "slice") {
      r.dtype = type_name;
      const size_t n = value != nullptr && value->is_array() ? value->items.size() : 0;
      r.shape_text = value != nullptr && value->is_array() ? "(" + std::to_string(n) + ",)" : "()";
    } else if (type_name == "ellipsis") {
      r.dtype = type_name;
      r.shape_text = "[]";
      set_all(value != nullptr ? Scalar::from_json(*value) : Scalar{});
    } else if (last == "src" || last == "dst" || last == "group_src" || last == "group_dst") {
      r.dtype = type_name;
      r.shape_text = "[]";
      const std::string text = value != nullptr ? python_str(*value, true) : "None";
      set_all(Scalar::of_text(text));
      r.md5 = text;
    } else if (type_name == "torch.ProcessGroup") {
      r.dtype = type_name;
      r.shape_text = "[]";
      const JsonValue* ranks = d.find("group_ranks");
      const std::string text = ranks != nullptr ? python_str(*ranks, true) : "None";
      set_all(Scalar::of_text(text));
      r.md5 = text;
    } else {
      r.dtype = python_type_name(value);
      r.shape_text = "[]";
      set_all(value != nullptr ? Scalar::from_json(*value) : Scalar{});
    }
    if (const JsonValue* md5 = d.find("md5");
        md5 != nullptr && md5->is_string() && !md5->text.empty()) {
      r.md5 = md5->text;
      if (r.is_tensor) saw_md5 = true;
    }
    if (r.md5.empty()) r.md5 = crc32_hex(value != nullptr ? python_str(*value, true) : "");
    out.push_back(std::move(r));
  }

  // op_item_parse: None is a row of Nones, empty containers and bare scalars are nothing.
  void walk(const JsonValue& v, const std::string& name, size_t depth) {
    if (depth > kMaxJsonDepth) return;
    if (v.is_null()) {
      TensorRow r = base(name);
      r.dtype = "None";
      r.shape_text = "None";
      r.max = r.min = r.mean = r.norm = Scalar::of_text("None");
      out.push_back(std::move(r));
      return;
    }
    if (v.is_array()) {
      for (size_t i = 0; i < v.items.size(); ++i) {
        walk(v.items[i], params_grad ? name : name + "." + std::to_string(i), depth + 1);
      }
      return;
    }
    if (!v.is_object() || v.members.empty()) return;
    if (const JsonValue* ct = v.find("class_type");
        ct != nullptr && ct->text == "torch.distributed.P2POp") {
      const JsonValue* tensor = v.find("tensor");
      if (tensor != nullptr && tensor->is_object()) {
        leaf(*tensor, name);
      } else {
        walk(JsonValue{}, name, depth + 1);
      }
      return;
    }
    if (const JsonValue* t = v.find("type"); t != nullptr && t->is_string()) {
      leaf(v, name);
      return;
    }
    for (const auto& [k, sub] : v.members) walk(sub, name + "." + k, depth + 1);
  }
};

// The k-th backward call of an API or module (in dump order) is renumbered k on both sides, so
// activation recomputation, which shifts backward call indices, does not break matching.
std::vector<std::string> renumbered_backward_keys(const std::vector<std::string>& apis) {
  std::map<std::string, int> seen;
  std::vector<std::string> out;
  for (const auto& api : apis) {
    auto parts = split_dots(api);
    const size_t n = parts.size();
    if (n >= 3 && parts[n - 1] == "backward" && all_digits(parts[n - 2])) {
      std::string op = api.substr(0, api.size() - parts[n - 2].size() - 10);  // ".N.backward"
      const int k = seen[op + "|api"]++;
      out.push_back(op + "." + std::to_string(k) + ".backward");
    } else if (n >= 3 && parts[n - 2] == "backward" && all_digits(parts[n - 1])) {
      std::string op = api.substr(0, api.size() - parts[n - 1].size() - 10);  // ".backward.N"
      const int k = seen[op + "|module"]++;
      out.push_back(op + ".backward." + std::to_string(k));
    } else {
      out.push_back(api);
    }
  }
  return out;
}

}  // namespace

const char* mode_name(DumpMode mode) {
  switch (mode) {
    case DumpMode::Statistics:
      return "statistics";
    case DumpMode::Tensor:
      return "tensor";
    case DumpMode::Md5:
      return "md5";
  }
  return "?";
}

Scalar Scalar::from_json(const JsonValue& v) {
  Scalar s;
  switch (v.type) {
    case JsonValue::Type::Null:
      break;
    case JsonValue::Type::Bool:
      s.kind = Kind::Bool;
      s.boolean = v.boolean;
      break;
    case JsonValue::Type::Int:
      s.kind = Kind::Int;
      s.integer = v.integer;
      s.number = v.number;
      break;
    case JsonValue::Type::Float:
      s.kind = Kind::Float;
      s.number = v.number;
      break;
    default:
      s.kind = Kind::Str;
      s.text = python_str(v, true);
  }
  return s;
}

Scalar Scalar::of_text(std::string s) {
  Scalar out;
  out.kind = Kind::Str;
  out.text = std::move(s);
  return out;
}

std::string Scalar::str() const {
  switch (kind) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return boolean ? "True" : "False";
    case Kind::Int:
      return std::to_string(integer);
    case Kind::Float:
      return python_float_repr(number);
    case Kind::Str:
      return text;
  }
  return "";
}

std::string crc32_hex(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size());
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08lx", static_cast<unsigned long>(crc));
  return buf;
}

std::string read_text_file(const std::filesystem::path& path) {
  const UniqueFd fd = open_job_file(path);
  return read_capped(fd.get(), path.string(), kMaxTextBytes, path.extension() == ".gz");
}

namespace {

// One dump entry's rows, in msprobe's order: inputs, then parameters, then outputs, then
// parameter gradients (reorder_index). Keys are set later, when every API name is known.
void flatten_entry(const std::string& api, const JsonValue& entry, std::vector<TensorRow>& out,
                   bool& saw_md5) {
  const auto parts = split_dots(api);
  if (parts.back() == "debug") return;
  std::vector<TensorRow> rows;
  const size_t n = parts.size();
  if (parts[n - 1] == "parameters_grad" || (n >= 2 && parts[n - 2] == "parameters_grad")) {
    Walker w{api, IoKind::ParamsGrad, rows, true, saw_md5};
    w.walk(entry, api, 0);
  } else {
    static constexpr std::pair<const char*, std::pair<const char*, IoKind>> kIo[] = {
        {"input_args", {".input", IoKind::Input}},
        {"input_kwargs", {".input", IoKind::Input}},
        {"output", {".output", IoKind::Output}},
        {"input", {".input", IoKind::Input}},
        {"parameters", {".parameters", IoKind::Params}}};
    for (const auto& [field, how] : kIo) {
      if (const JsonValue* v = entry.find(field); v != nullptr) {
        Walker w{api, how.second, rows, false, saw_md5};
        w.walk(*v, api + how.first, 0);
      }
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const TensorRow& a, const TensorRow& b) {
    return static_cast<int>(a.io) < static_cast<int>(b.io);
  });
  for (auto& r : rows) out.push_back(std::move(r));
}

}  // namespace

Dump parse_msprobe_dump(const std::string& text, const std::filesystem::path& path) {
  Dump dump;
  dump.family = DumpFamily::Msprobe;
  dump.path = path;
  dump.data_dir = path.parent_path() / "dump_tensor_data";
  // Entries are flattened as they are read and their trees dropped: memory is the rows, not
  // the JSON. An entry the file ends in is never handed over, so a truncated dump keeps
  // exactly its complete entries.
  std::vector<std::string> apis;
  bool saw_md5 = false;
  const JsonParse parsed =
      parse_json_streaming(text, "data", [&](std::string&& api, JsonValue&& entry) {
        flatten_entry(api, entry, dump.rows, saw_md5);
        apis.push_back(std::move(api));
      });
  const JsonValue& root = parsed.value;
  if (!root.is_object()) {
    throw InputError(path.string() + ": not a dump.json" +
                     (parsed.error ? ": " + parsed.error->message : std::string()));
  }
  const JsonValue* data = root.find("data");
  if (data == nullptr || !data->is_object()) {
    throw InputError(path.string() + ": no \"data\" object" +
                     (parsed.error ? " (" + parsed.error->message + ")" : std::string()));
  }
  if (parsed.error) {
    dump.truncated =
        path.string() + ": " + parsed.error->message + "; the entries before it are compared";
  }
  if (const JsonValue* fw = root.find("framework"); fw != nullptr && fw->is_string()) {
    dump.framework = fw->text;
  }
  const JsonValue* task = root.find("task");
  if (task != nullptr && task->text == "tensor") dump.mode = DumpMode::Tensor;
  if (saw_md5 && dump.mode != DumpMode::Tensor) dump.mode = DumpMode::Md5;

  // Matching keys: the k-th backward call renumbered k (rows of one entry are contiguous).
  const auto keys = renumbered_backward_keys(apis);
  std::map<std::string, const std::string*> key_of;
  for (size_t e = 0; e < apis.size(); ++e) key_of.emplace(apis[e], &keys[e]);
  for (auto& r : dump.rows) {
    const auto it = key_of.find(r.api);
    const std::string& key = it != key_of.end() ? *it->second : r.api;
    r.key = r.name.rfind(r.api, 0) == 0 ? key + r.name.substr(r.api.size()) : r.name;
  }
  return dump;
}

Dump read_msprobe_dump(const std::filesystem::path& dump_json) {
  Dump dump = parse_msprobe_dump(read_text_file(dump_json), dump_json);
  const auto stack_path = dump_json.parent_path() / "stack.json";
  std::error_code ec;
  if (std::filesystem::is_regular_file(stack_path, ec)) {
    dump.has_stack = true;
    const JsonParse stack = parse_json(read_text_file(stack_path));
    // {"0": [[api names], [stack lines]], ...}
    for (const auto& [id, group] : stack.value.members) {
      if (!group.is_array() || group.items.size() < 2) continue;
      std::string lines;
      for (const auto& l : group.items[1].items) {
        if (!lines.empty()) lines += '\n';
        lines += l.is_string() ? l.text : python_str(l, true);
      }
      for (const auto& name : group.items[0].items) dump.stacks[name.text] = lines;
    }
  }
  return dump;
}

}  // namespace faultd::compare
