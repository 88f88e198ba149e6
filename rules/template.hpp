// The `device:` and `code:` templates of a rule: literal text with `{field}` references, e.g.
// "{device}", "npu{device}", "80818C00". Parsed once when a rule is loaded, expanded per
// finding from the line's fields. Plain values; thread-safe to share once built.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultd::rules {

struct Template {
  struct Part {
    bool field = false;  // true: `text` names a field; false: `text` is copied as is
    std::string text;
  };
  std::vector<Part> parts;

  bool empty() const { return parts.empty(); }
  bool is_literal() const { return parts.size() <= 1 && (parts.empty() || !parts[0].field); }

  // Appends the expansion to `out`. Returns false (and leaves `out` unspecified) when a field
  // is missing or empty: a half-expanded device or code is worse than none.
  template <class Lookup>
  bool expand(Lookup&& lookup, std::string& out) const {
    for (const Part& part : parts) {
      if (!part.field) {
        out += part.text;
        continue;
      }
      const std::optional<std::string_view> value = lookup(std::string_view(part.text));
      if (!value || value->empty()) return false;
      out.append(value->data(), value->size());
    }
    return true;
  }
};

// A field name as used in templates and named regex groups: [A-Za-z_][A-Za-z0-9_]*.
bool is_field_name(std::string_view name);

// Parses "text{name}text". Braces must pair up and enclose a field name; there is no escape
// (codes and device ids never contain braces). On failure returns nullopt and sets `error`.
std::optional<Template> parse_template(std::string_view text, std::string& error);

}  // namespace faultd::rules
