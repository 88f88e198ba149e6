#include "daemon/control/report_request.hpp"

#include <algorithm>
#include <array>
#include <set>

#include "daemon/core/hash.hpp"

namespace faultd::control {

namespace {

using json = nlohmann::json;

constexpr std::array<std::string_view, 14> kFields = {
    "cmd",  "check",    "device",   "replica",  "reference",     "api",          "tensor",
    "mode", "data_row", "replicas", "majority", "disagreements", "rows_checked", "metrics"};

bool printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7E; });
}

// A field's name as an error may show it: the client chose it.
std::string shown(std::string_view name) {
  std::string out(name.substr(0, 64));
  for (auto& c : out) {
    if (c < 0x20 || c > 0x7E) c = '?';
  }
  return out;
}

// A metric is named like a column of the compare table: a capital first, so it never collides
// with the finding's own annotations (lower case) or with one faultd gives a meaning to.
bool metric_name(std::string_view s) {
  if (s.empty() || s.size() > kMaxReportMetricNameBytes || s[0] < 'A' || s[0] > 'Z') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ' ' ||
           c == '.' || c == '_' || c == '-';
  });
}

struct Checker {
  const json& request;
  std::string error;

  bool fail(std::string why) {
    if (error.empty()) error = std::move(why);
    return false;
  }

  // A required string of 1..max printable ASCII bytes.
  bool text(const char* name, size_t max, std::string& out) {
    const auto it = request.find(name);
    if (it == request.end() || !it->is_string())
      return fail(std::string(name) + " must be a string");
    out = it->get<std::string>();
    if (out.empty() || out.size() > max) {
      return fail(std::string(name) + " must be 1 to " + std::to_string(max) + " bytes");
    }
    if (!printable(out)) return fail(std::string(name) + " must be printable ASCII");
    return true;
  }

  // A required whole number in [min, max].
  bool number(const char* name, uint64_t min, uint64_t max, uint64_t& out) {
    const auto it = request.find(name);
    if (it == request.end() || !it->is_number_unsigned() || it->get<uint64_t>() < min ||
        it->get<uint64_t>() > max) {
      return fail(std::string(name) + " must be a whole number from " + std::to_string(min) +
                  " to " + std::to_string(max));
    }
    out = it->get<uint64_t>();
    return true;
  }

  bool metrics(std::vector<std::pair<std::string, std::string>>& out) {
    const auto it = request.find("metrics");
    if (it == request.end()) return true;
    if (!it->is_array() || it->size() > kMaxReportMetrics) {
      return fail("metrics must be a list of at most " + std::to_string(kMaxReportMetrics) +
                  " [name, value] pairs");
    }
    std::set<std::string> seen;
    for (const auto& m : *it) {
      if (!m.is_array() || m.size() != 2 || !m[0].is_string() || !m[1].is_string()) {
        return fail("each metric must be a [name, value] pair of strings");
      }
      const auto& name = m[0].get_ref<const std::string&>();
      const auto& value = m[1].get_ref<const std::string&>();
      if (!metric_name(name)) {
        return fail("metric '" + shown(name) +
                    "': a name is a capital letter then letters, digits, ' ', '.', '_' or '-', "
                    "at most " +
                    std::to_string(kMaxReportMetricNameBytes) + " bytes");
      }
      if (value.size() > kMaxReportMetricValueBytes || !printable(value)) {
        return fail("metric '" + name + "': the value must be printable ASCII of at most " +
                    std::to_string(kMaxReportMetricValueBytes) + " bytes");
      }
      if (!seen.insert(name).second) return fail("metric '" + name + "' is given twice");
      out.emplace_back(name, value);
    }
    return true;
  }
};

std::string evidence_text(const ReplicaDivergence& r) {
  std::string text =
      "replica " + r.replica + " disagrees with the majority (" + std::to_string(r.majority) +
      " of " + std::to_string(r.replicas) + " replicas) at " + r.tensor + " (" + r.api +
      ", data row " + std::to_string(r.data_row) + "; " + std::to_string(r.disagreements) + " of " +
      std::to_string(r.rows_checked) + " shared tensors differ), measured against " + r.reference;
  for (size_t i = 0; i < r.metrics.size(); ++i) {
    text += (i == 0 ? ": " : ", ") + r.metrics[i].first + " " + r.metrics[i].second;
  }
  if (text.size() > kMaxEvidenceBytes) text.resize(kMaxEvidenceBytes);
  return text;
}

}  // namespace

std::string fit_report_text(std::string_view value, size_t max) {
  std::string v(value.substr(0, max));
  for (auto& ch : v) {
    if (ch < 0x20 || ch > 0x7E) ch = '?';
  }
  return v;
}

json report_request(const ReplicaDivergence& r) {
  json metrics = json::array();
  for (const auto& [name, value] : r.metrics) {
    if (metrics.size() == kMaxReportMetrics) break;
    metrics.push_back({name, fit_report_text(value, kMaxReportMetricValueBytes)});
  }
  return {{"cmd", kReportCommand},
          {"check", kReplicaDivergenceCheck},
          {"device", r.device},
          {"replica", r.replica},
          {"reference", r.reference},
          {"api", r.api},
          {"tensor", r.tensor},
          {"mode", r.mode},
          {"data_row", r.data_row},
          {"replicas", r.replicas},
          {"majority", r.majority},
          {"disagreements", r.disagreements},
          {"rows_checked", r.rows_checked},
          {"metrics", metrics}};
}

ParsedReport parse_report(const json& request, TimePoint now) {
  ParsedReport out;
  if (!request.is_object()) {
    out.error = "a report is a JSON object";
    return out;
  }
  for (const auto& [key, value] : request.items()) {
    if (std::find(kFields.begin(), kFields.end(), key) == kFields.end()) {
      out.error = "unknown field '" + shown(key) + "'";
      return out;
    }
  }
  Checker c{request, {}};
  ReplicaDivergence r;
  std::string check;
  const bool ok = c.text("check", 64, check) &&
                  (check == kReplicaDivergenceCheck ||
                   c.fail("check must be '" + std::string(kReplicaDivergenceCheck) + "'")) &&
                  c.text("device", kMaxReportLabelBytes, r.device) &&
                  (is_valid_device_id(r.device) || c.fail("invalid device id")) &&
                  c.text("replica", kMaxReportLabelBytes, r.replica) &&
                  c.text("reference", kMaxReportLabelBytes, r.reference) &&
                  c.text("api", kMaxReportNameBytes, r.api) &&
                  c.text("tensor", kMaxReportNameBytes, r.tensor) && c.text("mode", 16, r.mode) &&
                  (r.mode == "statistics" || r.mode == "tensor" || r.mode == "md5" ||
                   c.fail("mode must be statistics, tensor or md5")) &&
                  c.number("replicas", 3, kMaxReportReplicas, r.replicas) &&
                  // A majority is more than half, and the suspect is not in it.
                  c.number("majority", r.replicas / 2 + 1, r.replicas - 1, r.majority) &&
                  c.number("rows_checked", 1, uint64_t{1} << 40, r.rows_checked) &&
                  c.number("disagreements", 1, r.rows_checked, r.disagreements) &&
                  c.number("data_row", 1, uint64_t{1} << 40, r.data_row) && c.metrics(r.metrics);
  if (!ok) {
    out.error = c.error;
    return out;
  }
  Finding f;
  f.rule = std::string(kReplicaDivergenceRule);
  f.source = "faultctl";
  f.device = r.device;
  f.level = kReplicaDivergenceLevel;
  f.code = std::string(kReplicaDivergenceCode);
  f.file = r.replica;
  f.line = r.data_row;
  f.time = now;
  f.text = evidence_text(r);
  f.annotations = {{"replica", r.replica},
                   {"reference", r.reference},
                   {"api", r.api},
                   {"tensor", r.tensor},
                   {"mode", r.mode},
                   {"replicas", std::to_string(r.replicas)},
                   {"majority", std::to_string(r.majority)},
                   {"disagreements", std::to_string(r.disagreements)},
                   {"rows_checked", std::to_string(r.rows_checked)}};
  f.annotations.insert(f.annotations.end(), r.metrics.begin(), r.metrics.end());
  // The journal key: the outcome itself, so reporting the same comparison again records nothing
  // new, while another step's (other values, another tensor) is a finding of its own.
  const uint64_t key = fnv1a64(report_request(r).dump());
  f.identity.ino = key == 0 ? 1 : key;
  out.finding = std::move(f);
  return out;
}

}  // namespace faultd::control
