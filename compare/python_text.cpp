#include "compare/python_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace faultd::compare {

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // The shortest round-trip digits, then Python's layout: fixed for exponents -4..15, else
  // scientific with a signed exponent of at least two digits.
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string sci(buf, r.ptr);
  const size_t e_at = sci.find('e');
  std::string mantissa = sci.substr(0, e_at);
  const int exponent = std::atoi(sci.c_str() + e_at + 1);
  const bool negative = !mantissa.empty() && mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-exponent - 1), '0');
      out += digits;
    } else {
      const size_t int_len = static_cast<size_t>(exponent) + 1;
      if (digits.size() <= int_len) {
        out += digits;
        out.append(int_len - digits.size(), '0');
        out += ".0";
      } else {
        out += digits.substr(0, int_len);
        out += '.';
        out += digits.substr(int_len);
      }
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  out += exponent < 0 ? "e-" : "e+";
  const int mag = exponent < 0 ? -exponent : exponent;
  if (mag < 10) out += '0';
  out += std::to_string(mag);
  return out;
}

std::string python_list_repr(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(v[i]);
  }
  return out + "]";
}

namespace {

// A number as the tables spell one ("-0.5", "+inf", "-1e-05", "-nan"): a leading sign is then
// arithmetic, not a formula.
bool is_number(std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

}  // namespace

std::string csv_field(std::string_view text) {
  // A spreadsheet runs a cell that starts with = + - @ (or a tab or CR before one) as a
  // formula, quoted or not; a job chooses the names in these tables.
  std::string guarded;
  if (!text.empty() && std::string_view("=+-@\t\r").find(text[0]) != std::string_view::npos &&
      !is_number(text)) {
    guarded = "'" + std::string(text);
    text = guarded;
  }
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace faultd::compare
