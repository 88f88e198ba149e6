// Fault codes, one definition for every reader: a rule's code template, the catalogues, the
// command parsers, the config's escalation lists, the Alertmanager intake and the metrics.
// A code is carried upper case without a 0x prefix (80818C00, XID79, EE9999), and only codes of
// [A-Z0-9._-]{1,32} are kept: codes become metric labels.
#pragma once

#include <cstddef>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace faultd {

inline constexpr size_t kMaxCodeLength = 32;

// Upper case, a leading 0x removed. Says nothing about validity.
std::string normalize_code(std::string_view code);

// [A-Z0-9._-]{1,kMaxCodeLength}: the form every kept code has.
bool is_valid_code(std::string_view code);

// A vendor's hex fault code (the MindCluster catalogues, npu-smi, the Device Plugin): 1 to 16
// hex digits, with or without 0x, normalized; empty when the text is not one.
std::string hex_code(std::string_view text);

// A code as a metric label: empty for no code, the normalized code when valid, else "invalid"
// (never log text).
std::string code_label(std::string_view code);

// Code labels with a bounded number of values, since a log writer chooses the codes its lines
// name (security audit F6). The codes expected on the node (the catalogue's and the rules'
// literal codes, set once per rule set) are always kept; other codes are kept until `cap`
// distinct ones were seen, and every later one is labelled "other". Codes once kept stay kept.
// Thread-safe: the io thread labels findings, the exporter's threads label device incidents.
class CodeLabels {
 public:
  static constexpr size_t kDefaultCap = 64;
  explicit CodeLabels(size_t cap = kDefaultCap) : cap_(cap) {}
  void set_known(std::set<std::string> known);
  // code_label(code), or "other" for a code past the cap.
  std::string label(std::string_view code);

 private:
  const size_t cap_;
  std::mutex mu_;
  std::set<std::string> known_;
  std::set<std::string> others_;  // codes outside `known_` that keep their label
};

}  // namespace faultd
