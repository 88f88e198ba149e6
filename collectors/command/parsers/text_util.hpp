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
// A fault code as tools print it ("80818C00", "0x80818c00"), normalized to upper-case hex
// without 0x; empty if it is not 1-16 hex digits.
std::string normalize_code(std::string_view s);

}  // namespace faultd::command_parsers::detail
