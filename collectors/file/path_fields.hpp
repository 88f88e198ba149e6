// A file's path fields: the named groups of a source's `path_fields` regex over the file's path
// (e.g. `device-(?P<device>\d+)/` gives device=3 for .../device-3/device-305322_1.log). The file
// source attaches them to every chunk of the file; `--replay` and the golden tests take them from
// here too, so all three see the same fields in the same order.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "daemon/core/types.hpp"

namespace re2 {
class RE2;
}

namespace faultd {

// Compiles a `path_fields` regex. Returns null and sets `error` when it does not compile.
std::unique_ptr<re2::RE2> compile_path_fields(const std::string& regex, std::string& error);

// The named groups that took part in a match of `re` anywhere in `path`, in group order; a group
// that did not take part is left out. Empty when the regex does not match.
Fields capture_path_fields(const re2::RE2& re, std::string_view path);

}  // namespace faultd
