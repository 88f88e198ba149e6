#include "daemon/core/fault_code.hpp"

namespace faultd {
namespace {

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

std::string normalize_code(std::string_view code) {
  if (code.size() > 2 && code[0] == '0' && (code[1] == 'x' || code[1] == 'X')) {
    code.remove_prefix(2);
  }
  std::string out(code);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

bool is_valid_code(std::string_view code) {
  if (code.empty() || code.size() > kMaxCodeLength) return false;
  for (char c : code) {
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string hex_code(std::string_view text) {
  std::string code = normalize_code(text);
  if (code.empty() || code.size() > 16) return {};
  for (char c : code) {
    if (!is_hex_digit(c)) return {};
  }
  return code;
}

std::string code_label(std::string_view code) {
  if (code.empty()) return {};  // a finding without a code: no code, not a wrong one
  std::string normalized = normalize_code(code);
  return is_valid_code(normalized) ? normalized : "invalid";
}

void CodeLabels::set_known(std::set<std::string> known) {
  std::lock_guard lock(mu_);
  known_ = std::move(known);
}

std::string CodeLabels::label(std::string_view code) {
  std::string label = code_label(code);
  if (label.empty() || label == "invalid") return label;
  std::lock_guard lock(mu_);
  if (known_.count(label) != 0 || others_.count(label) != 0) return label;
  if (others_.size() >= cap_) return "other";
  others_.insert(label);
  return label;
}

}  // namespace faultd
