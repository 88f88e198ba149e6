// Small tensor files for the compare tests, written byte by byte from the formats' definitions
// (no numpy, no torch): .npy v1-v3 and torch.save .pt archives (a stored ZIP holding a
// protocol-2 pickle that calls _rebuild_tensor_v2, as torch.save writes it).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace faultd::testing {

template <typename T>
std::string raw_bytes(const std::vector<T>& v) {
  std::string out(v.size() * sizeof(T), '\0');
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// A .npy: `descr` like "<f4", `shape` like "(2, 3)" or "()", `data` the raw elements.
inline std::string npy_file(const std::string& descr, const std::string& shape,
                            const std::string& data, int version = 1, bool fortran = false) {
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  const size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const auto len = static_cast<uint32_t>(header.size());
  out += static_cast<char>(len & 0xFF);
  out += static_cast<char>((len >> 8) & 0xFF);
  if (version != 1) {
    out += static_cast<char>((len >> 16) & 0xFF);
    out += static_cast<char>((len >> 24) & 0xFF);
  }
  return out + header + data;
}

inline void put16(std::string& s, uint32_t v) {
  s += static_cast<char>(v & 0xFF);
  s += static_cast<char>((v >> 8) & 0xFF);
}
inline void put32(std::string& s, uint32_t v) {
  put16(s, v & 0xFFFF);
  put16(s, v >> 16);
}

// A ZIP archive with every member stored (method 0), as torch.save writes it.
inline std::string stored_zip(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out, central;
  for (const auto& [name, data] : members) {
    const auto offset = static_cast<uint32_t>(out.size());
    put32(out, 0x04034b50);
    put16(out, 20);
    put16(out, 0);
    put16(out, 0);  // stored
    put32(out, 0);  // time, date
    put32(out, 0);  // crc (not checked by readers of stored members)
    put32(out, static_cast<uint32_t>(data.size()));
    put32(out, static_cast<uint32_t>(data.size()));
    put16(out, static_cast<uint32_t>(name.size()));
    put16(out, 0);
    out += name + data;
    put32(central, 0x02014b50);
    put16(central, 20);
    put16(central, 20);
    put16(central, 0);
    put16(central, 0);
    put32(central, 0);
    put32(central, 0);
    put32(central, static_cast<uint32_t>(data.size()));
    put32(central, static_cast<uint32_t>(data.size()));
    put16(central, static_cast<uint32_t>(name.size()));
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put32(central, 0);
    put32(central, offset);
    central += name;
  }
  const auto cd_offset = static_cast<uint32_t>(out.size());
  out += central;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<uint32_t>(members.size()));
  put16(out, static_cast<uint32_t>(members.size()));
  put32(out, static_cast<uint32_t>(central.size()));
  put32(out, cd_offset);
  put16(out, 0);
  return out;
}

inline std::string pickle_str(const std::string& s) {
  std::string out = "X";
  put32(out, static_cast<uint32_t>(s.size()));
  return out + s;
}

inline std::string pickle_int_tuple(const std::vector<int>& v) {
  std::string out = "(";
  for (int x : v) {
    out += 'J';
    put32(out, static_cast<uint32_t>(x));
  }
  return out + "t";
}

// torch.save(tensor): `storage` like "FloatStorage", `data` the storage's raw bytes.
inline std::string pt_file(const std::string& storage, const std::string& data,
                           const std::vector<int>& size, const std::vector<int>& stride,
                           int offset = 0, size_t numel = 0) {
  std::string pkl = "\x80\x02";
  pkl += "ctorch._utils\n_rebuild_tensor_v2\n";
  pkl += std::string("q\x00", 2);  // BINPUT 0, as torch.save memoizes
  pkl += "((" + pickle_str("storage") + "ctorch\n" + storage + "\n" + pickle_str("0") +
         pickle_str("cpu") + "J";
  put32(pkl, static_cast<uint32_t>(numel));
  pkl += "tQ";
  pkl += "J";
  put32(pkl, static_cast<uint32_t>(offset));
  pkl += pickle_int_tuple(size) + pickle_int_tuple(stride);
  pkl += "\x89";  // requires_grad False
  pkl += "ccollections\nOrderedDict\n)R";
  pkl += "tR.";
  return stored_zip(
      {{"archive/data.pkl", pkl}, {"archive/data/0", data}, {"archive/version", "3\n"}});
}

}  // namespace faultd::testing
