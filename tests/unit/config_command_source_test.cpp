// The `type: command` source entry: defaults, relative programs, and every error at its
// file:line:column.
#include <catch2/catch.hpp>

#include <string>

#include "daemon/config/command_source_config.hpp"
#include "tests/support/source_entry.hpp"

using namespace faultd;
using namespace std::chrono_literals;

namespace {

auto load(const std::string& text) {
  return testing::load_source_entry(text, "npu-health", [](auto&&... args) {
    return load_command_source(std::forward<decltype(args)>(args)...);
  });
}

}  // namespace

TEST_CASE("command source config: the docs/design.md example with its defaults") {
  const auto l = load(
      R"({ name: npu-health, type: command, argv: [npu-smi, info, -t, health, -i, "{device}"],
           devices: "0-7", interval: 10s, timeout: 5s, parser: npu_smi_health })");
  INFO(l.errors);
  REQUIRE(l.config);
  CHECK(l.config->name == "npu-health");
  CHECK(l.config->argv ==
        std::vector<std::string>{"npu-smi", "info", "-t", "health", "-i", "{device}"});
  CHECK(l.config->devices == "0-7");
  CHECK_FALSE(l.config->discover);
  CHECK(l.config->interval == 10s);
  CHECK(l.config->timeout == 5s);
  CHECK(l.config->max_output_bytes == size_t{64} * 1024);
  CHECK(l.config->unresponsive_after == 3);
  CHECK(l.config->parser == CommandParser::NpuSmiHealth);
}

TEST_CASE("command source config: discover, other parsers, relative program") {
  const auto l = load(R"(
name: npu-health
type: command
argv: [bin/npu-smi, info, -t, health, -i, "{device}"]
discover: true
interval: 30s
max_output_bytes: 2048
unresponsive_after: 5
parser: npu_smi_health
)");
  INFO(l.errors);
  REQUIRE(l.config);
  CHECK(l.config->argv[0] == "/etc/faultd/bin/npu-smi");
  CHECK(l.config->discover);
  CHECK(l.config->timeout == 5s);
  CHECK(l.config->max_output_bytes == 2048);
  CHECK(l.config->unresponsive_after == 5);

  const auto cm = load(
      R"({ name: x, type: command, argv: [kubectl, get, cm, -n, kube-system, -o, json,
           mindx-dl-deviceinfo-node1], parser: deviceinfo_cm })");
  INFO(cm.errors);
  REQUIRE(cm.config);
  CHECK(cm.config->parser == CommandParser::DeviceInfoCm);
  CHECK(cm.config->argv[0] == "kubectl");  // bare names are looked up in PATH when run
}

TEST_CASE("command source config: every problem at its position") {
  const auto check_error = [](const std::string& text, const std::string& expected) {
    const auto l = load(text);
    INFO(text);
    INFO(l.errors);
    CHECK_FALSE(l.config);
    CHECK(l.errors.find(expected) != std::string::npos);
  };
  check_error("{ name: a, type: command, argv: [x], parser: npu_smi }",
              "/etc/faultd/faultd.yaml:1:46: unknown parser 'npu_smi' (one of: npu_smi_health");
  check_error("{ name: a, type: command, parser: npu_smi_health }", "needs argv");
  check_error("{ name: a, type: command, argv: \"npu-smi info\", parser: npu_smi_health }",
              "argv must be a list");
  check_error("{ name: a, type: command, argv: [], parser: npu_smi_health }",
              "argv needs at least the program");
  check_error("{ name: a, type: command, argv: [x] }", "needs a parser");
  check_error("{ name: a, type: command, argv: [x, '{device}'], parser: npu_smi_health }",
              "set devices");
  check_error("{ name: a, type: command, argv: [x], devices: '0-3', parser: npu_smi_health }",
              "has no \"{device}\"");
  check_error(
      "{ name: a, type: command, argv: [x, '{device}'], devices: '3-1', "
      "parser: npu_smi_health }",
      "1:59: devices: invalid device range '3-1'");
  check_error(
      "{ name: a, type: command, argv: [x], interval: 5s, timeout: 10s, "
      "parser: npu_smi_health }",
      "timeout (10s) must not exceed interval (5s)");
  check_error("{ name: a, type: command, argv: [x], interval: 10ms, parser: npu_smi_health }",
              "interval must be at least 100ms");
  check_error(
      "{ name: a, type: command, argv: [x], max_output_bytes: 10, "
      "parser: npu_smi_health }",
      "max_output_bytes");
  check_error("{ name: a, type: command, argv: [x], parser: npu_smi_health, paths: [a] }",
              "unknown key 'paths'");
  check_error(
      "{ name: a, type: command, argv: [x], unresponsive_after: 0, parser: npu_smi_health }",
      "1:58: 'unresponsive_after' must be an integer from 1 to 1000");
  check_error(
      "{ name: a, type: command, argv: [x], unresponsive_after: x, parser: npu_smi_health }",
      "'unresponsive_after' must be an integer");
}
