#include "daemon/core/errors.hpp"

namespace faultd {

std::string ConfigError::to_string() const {
  std::string out = file;
  if (line > 0) {
    out += ':' + std::to_string(line) + ':' + std::to_string(column > 0 ? column : 1);
  }
  out += ": " + message;
  return out;
}

void ErrorList::add(std::string file, int line, int column, std::string message) {
  errors_.push_back({std::move(file), line, column, std::move(message)});
}

std::string ErrorList::to_string() const {
  std::string out;
  for (const auto& e : errors_) out += e.to_string() + '\n';
  return out;
}

}  // namespace faultd
