#include "daemon/config/catalogs.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace faultd {
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

// Most codes are 8 hex digits; the real catalogue also lists 9-digit ones (e.g. 200001002).
bool is_hex_code(const std::string& s) {
  return !s.empty() && s.size() <= 16 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c));
  });
}

}  // namespace

CodeLevels load_mindcluster_fault_codes(const std::string& path, ErrorList& errors) {
  CodeLevels out;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    errors.add(path, 0, 0, "cannot read the MindCluster fault code catalogue");
    return out;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    int line = 0, col = 0;
    line_col(text, e.byte > 0 ? e.byte - 1 : 0, line, col);
    errors.add(path, line, col, std::string("invalid JSON: ") + e.what());
    return out;
  } catch (const nlohmann::json::exception& e) {
    // Valid syntax the library still refuses, such as a number too large for a double
    // (out_of_range.406): it has no byte position.
    errors.add(path, 1, 1, std::string("invalid JSON: ") + e.what());
    return out;
  }
  if (!doc.is_object()) {
    errors.add(path, 1, 1, "the catalogue must be a JSON object of \"<Level>Codes\" lists");
    return out;
  }
  for (const auto& [key, codes] : doc.items()) {
    const std::string suffix = "Codes";
    std::optional<FaultLevel> level;
    if (key.size() > suffix.size() &&
        key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0) {
      level = parse_fault_level(key.substr(0, key.size() - suffix.size()));
    }
    if (!level) {
      errors.add(path, 0, 0, "unknown key \"" + key + "\" (expected <FaultLevel>Codes)");
      continue;
    }
    if (!codes.is_array()) {
      errors.add(path, 0, 0, "\"" + key + "\" must be a list of codes");
      continue;
    }
    for (const auto& c : codes) {
      std::string code = c.is_string() ? c.get<std::string>() : std::string();
      if (!is_hex_code(code)) {
        errors.add(path, 0, 0, "\"" + key + "\" holds a malformed code " + c.dump());
        continue;
      }
      std::transform(code.begin(), code.end(), code.begin(),
                     [](unsigned char ch) { return std::toupper(ch); });
      // A code listed twice keeps its most severe level: safer to over- than under-react.
      auto [it, inserted] = out.levels.emplace(code, *level);
      if (!inserted && more_severe(*level, it->second)) it->second = *level;
    }
  }
  return out;
}

}  // namespace faultd
