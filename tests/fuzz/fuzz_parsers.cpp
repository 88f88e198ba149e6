// Fuzzes what faultd reads from other programs and the kernel: npu-smi's health block and device
// table, the Device Plugin's DeviceInfoCfg, nvidia-smi's bus ids, /dev/kmsg records, overflow dump
// paths and their JSON companions, raw overflow status words, and the activity parsers (npu-smi
// usages and process table, nvidia-smi activity and compute apps, hccn_tool counters). The first
// input byte picks the parser. A tool that prints garbage or is cut off mid-line must give an
// error, never a crash, and what a parser does return must be usable downstream.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "collectors/command/parsers/activity.hpp"
#include "collectors/command/parsers/parsers.hpp"
#include "collectors/kmsg/kmsg_source.hpp"
#include "collectors/overflow_dump/dump_path.hpp"
#include "collectors/overflow_dump/overflow_status.hpp"
#include "tests/support/fuzz_support.hpp"

namespace {

using namespace faultd;

void check_health(const command_parsers::DeviceHealth& h) {
  for (const auto& code : h.codes) {
    FAULTD_FUZZ_CHECK(!code.empty());
    for (char c : code) FAULTD_FUZZ_CHECK(c != '\n' && c != '\0');
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t which = data[0] % 13;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string error;
  switch (which) {
    case 0:
      if (auto h = command_parsers::parse_npu_smi_health(text, error)) {
        check_health(*h);
      } else {
        FAULTD_FUZZ_CHECK(!error.empty());
      }
      break;
    case 1: {
      bool truncated = false;
      if (auto t = command_parsers::parse_npu_smi_info(text, error, &truncated)) {
        for (const auto& h : *t) check_health(h);
        (void)command_parsers::npu_ids(*t);
        FAULTD_FUZZ_CHECK(!truncated || (!error.empty() && !t->empty()));
      } else {
        FAULTD_FUZZ_CHECK(!error.empty());
      }
      break;
    }
    case 2:
      if (auto t = command_parsers::parse_deviceinfo_cm(text, error)) {
        for (const auto& h : *t) check_health(h);
      } else {
        FAULTD_FUZZ_CHECK(!error.empty());
      }
      break;
    case 3:
      if (!command_parsers::parse_nvidia_smi_bus(text, error)) FAULTD_FUZZ_CHECK(!error.empty());
      break;
    case 4:
      if (auto r = parse_kmsg_record(text)) {
        // The message is a view into the record, never past its end.
        FAULTD_FUZZ_CHECK(r->message.data() >= text.data());
        FAULTD_FUZZ_CHECK(r->message.data() + r->message.size() <= text.data() + text.size());
      }
      break;
    case 5:
      (void)overflow::parse_dump_path(text);
      break;
    case 6:
      if (auto d = overflow::parse_dump_json(text, error)) {
        for (const auto* r : d->errors()) FAULTD_FUZZ_CHECK(r != nullptr);
      } else {
        FAULTD_FUZZ_CHECK(!error.empty());
      }
      break;
    case 7: {
      // A status word of each kind: every set bit is named, known or unknown.
      uint64_t status = 0;
      std::memcpy(&status, text.data(), std::min(text.size(), sizeof status));
      for (auto kind : overflow::kStatusKinds) {
        const auto decoded = overflow::decode_status(kind, status);
        FAULTD_FUZZ_CHECK(decoded.has_error() || decoded.causes.empty());
        (void)decoded.cause_codes();
      }
      break;
    }
    case 8:
      if (auto u = command_parsers::parse_npu_smi_usages(text, error)) {
        FAULTD_FUZZ_CHECK(u->utilization >= 0 && u->utilization <= 100);
      } else {
        FAULTD_FUZZ_CHECK(!error.empty());
      }
      break;
    case 9:
    case 11: {
      auto p = which == 9 ? command_parsers::parse_npu_smi_processes(text, error)
                          : command_parsers::parse_nvidia_smi_apps(text, error);
      if (p) {
        for (const auto& x : *p) FAULTD_FUZZ_CHECK(x.pid > 0);
      } else {
        FAULTD_FUZZ_CHECK(!error.empty());
      }
      break;
    }
    case 10:
      if (auto g = command_parsers::parse_nvidia_smi_activity(text, error)) {
        for (const auto& u : *g) FAULTD_FUZZ_CHECK(u.utilization >= 0 && u.utilization <= 100);
      } else {
        FAULTD_FUZZ_CHECK(!error.empty());
      }
      break;
    case 12:
      if (!command_parsers::parse_hccn_stat_packets(text, error)) FAULTD_FUZZ_CHECK(!error.empty());
      break;
  }
  return 0;
}
