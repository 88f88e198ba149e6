// Fuzzes the Alertmanager webhook payload parser: the body of an authenticated POST, which a
// token holder (or anyone who steals the token) controls completely. It must answer every body
// with a batch or a short printable reason, never crash, recurse without bound or echo
// arbitrary bytes back into a reply.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "daemon/control/alertmanager_payload.hpp"
#include "tests/support/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto parsed = faultd::parse_alertmanager_payload(body);
  if (const auto* error = std::get_if<std::string>(&parsed)) {
    FAULTD_FUZZ_CHECK(!error->empty());
    FAULTD_FUZZ_CHECK(error->size() <= 1024);
    for (char c : *error) FAULTD_FUZZ_CHECK(c >= 0x20 && c < 0x7f);
    return 0;
  }
  const auto& batch = std::get<faultd::WebhookBatch>(parsed);
  FAULTD_FUZZ_CHECK(batch.status == "firing" || batch.status == "resolved");
  for (const auto& alert : batch.alerts) {
    FAULTD_FUZZ_CHECK(alert.status == "firing" || alert.status == "resolved");
  }
  return 0;
}
