// Errors found at the edge (config, rules, catalogues) carry the place they were found, so an
// operator reads `file:line:column: message` and goes straight there. Loaders collect every
// error instead of stopping at the first one.
#pragma once

#include <string>
#include <vector>

namespace faultd {

struct ConfigError {
  std::string file;
  int line = 0;    // 1-based; 0 when the error is about the file as a whole
  int column = 0;  // 1-based
  std::string message;
  std::string to_string() const;
};

class ErrorList {
 public:
  void add(std::string file, int line, int column, std::string message);
  void add(ConfigError e) { errors_.push_back(std::move(e)); }
  bool empty() const { return errors_.empty(); }
  size_t size() const { return errors_.size(); }
  const std::vector<ConfigError>& all() const { return errors_; }
  std::string to_string() const;  // one error per line

 private:
  std::vector<ConfigError> errors_;
};

}  // namespace faultd
