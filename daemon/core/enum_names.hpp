// One pattern for an enum's names: a constexpr array in enum order, read both ways by these
// helpers. The names of most enums are part of a contract (metric labels, config values, stored
// text), so each enum has exactly one list, next to its to_string.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace faultd {

template <typename Enum, size_t N>
constexpr std::string_view name_of(const std::array<std::string_view, N>& names, Enum value) {
  const auto i = static_cast<size_t>(value);
  return i < N ? names[i] : std::string_view("unknown");
}

template <typename Enum, size_t N>
constexpr std::optional<Enum> enum_named(const std::array<std::string_view, N>& names,
                                         std::string_view text) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

// "a, b, c", for error messages that list what is accepted.
template <size_t N>
std::string joined_names(const std::array<std::string_view, N>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace faultd
