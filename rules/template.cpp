#include "rules/template.hpp"

namespace faultd::rules {

bool is_field_name(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit))) return false;
  }
  return true;
}

std::optional<Template> parse_template(std::string_view text, std::string& error) {
  Template t;
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find_first_of("{}", i);
    if (open == std::string_view::npos) {
      t.parts.push_back({false, std::string(text.substr(i))});
      break;
    }
    if (text[open] == '}') {
      error = "unmatched '}' at offset " + std::to_string(open);
      return std::nullopt;
    }
    if (open > i) t.parts.push_back({false, std::string(text.substr(i, open - i))});
    const size_t close = text.find_first_of("{}", open + 1);
    if (close == std::string_view::npos || text[close] == '{') {
      error = "unclosed '{' at offset " + std::to_string(open);
      return std::nullopt;
    }
    const std::string_view name = text.substr(open + 1, close - open - 1);
    if (!is_field_name(name)) {
      error = "'{" + std::string(name) + "}' is not a field name ([A-Za-z_][A-Za-z0-9_]*)";
      return std::nullopt;
    }
    t.parts.push_back({true, std::string(name)});
    i = close + 1;
  }
  return t;
}

}  // namespace faultd::rules
