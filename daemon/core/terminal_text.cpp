#include "daemon/core/terminal_text.hpp"

#include <cstdint>

namespace faultd {
namespace {

// Length of the UTF-8 sequence starting at text[i] (1..4), or 0 if it is not one.
size_t utf8_length(std::string_view text, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(text[i + k]); };
  const uint8_t lead = b(0);
  size_t n = 0;
  uint32_t cp = 0;
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) {
    n = 2;
    cp = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    n = 3;
    cp = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    n = 4;
    cp = lead & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;  // overlong...
  if (cp >= 0x80 && cp <= 0x9F) return 0;                                        // C1 control
  return n;
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<uint8_t>(text[i]);
    const size_t n = c < 0x20 || c == 0x7F ? 0 : utf8_length(text, i);
    if (n == 0) {
      // C1 controls are two bytes in UTF-8: both are written, so the text stays reversible.
      const size_t bytes = c == 0xC2 && i + 1 < text.size() ? 2 : 1;
      for (size_t k = 0; k < bytes; ++k) {
        const auto b = static_cast<uint8_t>(text[i + k]);
        out += "\\x";
        out += kHex[b >> 4];
        out += kHex[b & 0xF];
      }
      i += bytes;
      continue;
    }
    if (c == '\\') out += '\\';
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace faultd
