#include <catch2/catch.hpp>

#include "daemon/core/errors.hpp"
#include "daemon/core/json.hpp"
#include "daemon/core/types.hpp"

using namespace faultd;
using namespace std::chrono_literals;

TEST_CASE("durations parse in every unit and reject garbage", "[core]") {
  CHECK(parse_duration("500ms") == Duration(500ms));
  CHECK(parse_duration("30s") == Duration(30s));
  CHECK(parse_duration("5m") == Duration(5min));
  CHECK(parse_duration("24h") == Duration(24h));
  CHECK(parse_duration("1h30m") == Duration(90min));
  CHECK_FALSE(parse_duration(""));
  CHECK_FALSE(parse_duration("5"));
  CHECK_FALSE(parse_duration("s"));
  CHECK_FALSE(parse_duration("5 s"));
  CHECK_FALSE(parse_duration("-5s"));
  CHECK_FALSE(parse_duration("5d"));
  CHECK_FALSE(parse_duration("99999999999999999999s"));
  CHECK(format_duration(90s) == "90s");
  CHECK(format_duration(2h) == "2h");
  CHECK(format_duration(250ms) == "250ms");
}

TEST_CASE("device ids are validated before they reach labels, env or store", "[core]") {
  CHECK(is_valid_device_id("0"));
  CHECK(is_valid_device_id("npu-7"));
  CHECK(is_valid_device_id("GPU-0000:44:00.0"));
  CHECK(is_valid_device_id(std::string(64, 'a')));
  CHECK_FALSE(is_valid_device_id(""));
  CHECK_FALSE(is_valid_device_id(std::string(65, 'a')));
  CHECK_FALSE(is_valid_device_id("../../x"));
  CHECK_FALSE(is_valid_device_id("0;rm -rf /"));
  CHECK_FALSE(is_valid_device_id("a b"));
  CHECK_FALSE(is_valid_device_id(std::string("a\0b", 3)));
}

TEST_CASE("fault levels and states round-trip through their names", "[core]") {
  for (int i = 0; i < kFaultLevelCount; ++i) {
    const auto level = static_cast<FaultLevel>(i);
    CHECK(parse_fault_level(to_string(level)) == level);
  }
  CHECK_FALSE(parse_fault_level("separatenpu"));
  CHECK(more_severe(FaultLevel::SeparateNPU, FaultLevel::SubHealthFault));
  CHECK_FALSE(more_severe(FaultLevel::NotHandleFault, FaultLevel::SubHealthFault));
  for (int i = 0; i < kDeviceStateCount; ++i) {
    const auto s = static_cast<DeviceState>(i);
    CHECK(parse_device_state(to_string(s)) == s);
  }
}

TEST_CASE("config errors render as file:line:column: message", "[core]") {
  ErrorList errors;
  errors.add("/etc/faultd/faultd.yaml", 3, 7, "unknown key 'sorces'");
  errors.add("/etc/faultd/x.yaml", 0, 0, "cannot read file");
  CHECK(
      errors.to_string() ==
      "/etc/faultd/faultd.yaml:3:7: unknown key 'sorces'\n/etc/faultd/x.yaml: cannot read file\n");
}

TEST_CASE("times format as RFC 3339 UTC with milliseconds", "[core]") {
  CHECK(format_time(from_unix_ms(1'700'000'000'123)) == "2023-11-14T22:13:20.123Z");
  CHECK(to_unix_ms(from_unix_ms(42)) == 42);
}

TEST_CASE("a finding's JSON says recovery only for recoveries", "[core]") {
  faultd::Finding f;
  f.rule = "ascend.npu-smi.health-recovered";
  CHECK_FALSE(faultd::to_json(f).contains("recovery"));
  f.recovery = true;
  CHECK(faultd::to_json(f).at("recovery") == true);
}
