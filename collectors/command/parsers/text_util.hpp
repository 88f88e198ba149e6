// Small text helpers shared by the command-output parsers (line splitting, trimming, hex
// checks). Internal to collectors/command; stateless.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace faultd::command_parsers::detail {

// Lines without their '\n' (and without a trailing '\r').
std::vector<std::string_view> split_lines(std::string_view text);
std::string_view trim(std::string_view s);
// Splits on runs of blanks (space, TAB).
std::vector<std::string_view> split_blanks(std::string_view s);
bool all_digits(std::string_view s);

}  // namespace faultd::command_parsers::detail
