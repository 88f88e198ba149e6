#include "rules/catalogs/json_file.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace faultd::catalogs {
namespace {

void line_col(const std::string& text, size_t byte, int& line, int& col) {
  line = 1;
  col = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
}

}  // namespace

std::optional<nlohmann::json> read_json_file(const std::string& path, const std::string& what,
                                             ErrorList& errors) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    errors.add(path, 0, 0, "cannot read the " + what);
    return std::nullopt;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    int line = 0, col = 0;
    line_col(text, e.byte > 0 ? e.byte - 1 : 0, line, col);
    errors.add(path, line, col, std::string("invalid JSON: ") + e.what());
    return std::nullopt;
  } catch (const nlohmann::json::exception& e) {
    // Valid syntax the library still refuses, such as a number too large for a double
    // (out_of_range.406): it has no byte position.
    errors.add(path, 1, 1, std::string("invalid JSON: ") + e.what());
    return std::nullopt;
  }
}

}  // namespace faultd::catalogs
