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

  // Appends the expansion to `out`. A field that is missing or empty expands to nothing and
  // the rest is kept ("{card}-{chip}" with only card=3 gives "3-"), so one missing field costs
  // only its own part. Returns false when the template names fields and none of them has a
  // value: what is left is bare literal text ("npu" from "npu{device}") that names nothing,
  // and the caller treats the value as unknown.
  template <class Lookup>
  bool expand(Lookup&& lookup, std::string& out) const {
    bool any_field = false;
    bool any_value = false;
    for (const Part& part : parts) {
      if (!part.field) {
        out += part.text;
        continue;
      }
      any_field = true;
      const std::optional<std::string_view> value = lookup(std::string_view(part.text));
      if (!value || value->empty()) continue;
      any_value = true;
      out.append(value->data(), value->size());
    }
    return !any_field || any_value;
  }
};

// A field name as used in templates and named regex groups: [A-Za-z_][A-Za-z0-9_]*.
bool is_field_name(std::string_view name);

// Parses "text{name}text". Braces must pair up and enclose a field name; there is no escape
// (codes and device ids never contain braces). On failure returns nullopt and sets `error`.
std::optional<Template> parse_template(std::string_view text, std::string& error);

}  // namespace faultd::rules
