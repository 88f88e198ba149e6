// ProbeTracker and the probe records: consecutive failures per device, one unresponsive line at
// the Nth, one recovered line at the next success, news kept until it is handed on.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "collectors/command/records.hpp"

using namespace faultd;

namespace {

// What a source does with a run's result: the probe line, handed on when there is one.
std::optional<std::string> fail(ProbeTracker& t, const std::string& device,
                                const std::string& reason, bool sink_accepts = true) {
  auto line = t.failed(device, reason);
  if (line && sink_accepts) t.handed_on(device);
  return line;
}

std::optional<std::string> succeed(ProbeTracker& t, const std::string& device,
                                   bool sink_accepts = true) {
  auto line = t.succeeded(device);
  if (line && sink_accepts) t.handed_on(device);
  return line;
}

bool is_up(const ProbeTracker& t, const std::string& device) {
  for (const ProbeUp& p : t.up()) {
    if (p.device == device) return p.up;
  }
  FAIL("no probe for device " << device);
  return false;
}

}  // namespace

TEST_CASE("probe: the Nth failure in a row is news once, the next success recovers once") {
  ProbeTracker t(3);
  CHECK_FALSE(fail(t, "5", "timed out after 3s"));
  CHECK_FALSE(is_up(t, "5"));
  CHECK_FALSE(fail(t, "5", "timed out after 3s"));
  CHECK(fail(t, "5", "timed out after 3s") ==
        "probe: device=5 status=unresponsive failures=3 reason=\"timed out after 3s\"");
  CHECK_FALSE(fail(t, "5", "timed out after 3s"));  // said once per episode
  CHECK(t.failures("5") == 4);

  CHECK(succeed(t, "5") == "probe: device=5 status=OK recovered");
  CHECK(is_up(t, "5"));
  CHECK(t.failures("5") == 0);
  CHECK_FALSE(succeed(t, "5"));

  // A new episode needs N failures in a row again.
  CHECK_FALSE(fail(t, "5", "exit status 1"));
  CHECK_FALSE(fail(t, "5", "exit status 1"));
  CHECK(fail(t, "5", "exit status 1: Error: device not found").has_value());
}

TEST_CASE("probe: failures that do not reach N in a row are no news, nor their end") {
  ProbeTracker t(3);
  for (int i = 0; i < 5; ++i) {
    CHECK_FALSE(fail(t, "2", "exit status 1"));
    CHECK_FALSE(fail(t, "2", "exit status 1"));
    CHECK_FALSE(succeed(t, "2"));  // resets the count, and was never reported
  }
  CHECK(is_up(t, "2"));
}

TEST_CASE("probe: devices are counted apart, a device without a run has no probe") {
  ProbeTracker t(2);
  CHECK_FALSE(fail(t, "1", "x"));
  CHECK_FALSE(succeed(t, "2"));
  CHECK_FALSE(fail(t, "3", "x"));
  CHECK(fail(t, "1", "x").has_value());
  CHECK_FALSE(succeed(t, "3"));  // 3 failed once only
  const auto up = t.up();
  REQUIRE(up.size() == 3);
  CHECK((up[0].device == "1" && !up[0].up));
  CHECK((up[1].device == "2" && up[1].up));
  CHECK((up[2].device == "3" && up[2].up));
  t.forget("2");
  CHECK(t.up().size() == 2);
}

TEST_CASE("probe: a line the sink refused is offered again at the next run") {
  ProbeTracker t(1);
  CHECK(fail(t, "4", "timed out after 3s", /*sink_accepts=*/false).has_value());
  CHECK(fail(t, "4", "timed out after 3s") ==
        "probe: device=4 status=unresponsive failures=2 reason=\"timed out after 3s\"");
  CHECK_FALSE(fail(t, "4", "timed out after 3s"));

  CHECK(succeed(t, "4", /*sink_accepts=*/false).has_value());
  CHECK(succeed(t, "4") == "probe: device=4 status=OK recovered");
  CHECK_FALSE(succeed(t, "4"));
}

TEST_CASE("probe: a command not run per device has one probe without device=") {
  ProbeTracker t(1);
  CHECK(fail(t, "", "unparsable output: no npu-smi table header") ==
        "probe: status=unresponsive failures=1 reason=\"unparsable output: no npu-smi table "
        "header\"");
  CHECK(succeed(t, "") == "probe: status=OK recovered");
}

TEST_CASE("probe records: the reason is quoted as it is, control bytes as spaces, capped") {
  CHECK(format_unresponsive_record("7", 3, "exit status 2: say \"no\"\x1b[2J\\") ==
        "probe: device=7 status=unresponsive failures=3 reason=\"exit status 2: say \\\"no\\\" "
        "[2J\\\\\"");
  CHECK(format_unresponsive_record("7", 3, "killed") ==
        "probe: device=7 status=unresponsive failures=3 reason=killed");
  const std::string line = format_unresponsive_record("7", 3, std::string(5000, 'x'));
  CHECK(line.size() < 1100);
  CHECK(line.find('\n') == std::string::npos);
}

TEST_CASE("probe: a failed run's own words are news once per output, until the device answers") {
  using Strings = std::vector<std::string>;
  const std::string lost =
      "Unable to determine the device handle for GPU 0000:C1:00.0: GPU is lost.  Reboot the "
      "system to recover this GPU\n";
  ProbeTracker t(3);
  const Strings first = t.failed_output("", lost);
  CHECK(first == Strings{lost.substr(0, lost.size() - 1)});
  // Not handed on (a refused chunk): the same output is news at the next run.
  CHECK(t.failed_output("", lost) == first);
  t.output_handed_on("");
  CHECK(t.failed_output("", lost).empty());        // the same failure again
  CHECK(t.failed_output("", "\r\n  \n").empty());  // nothing said
  const Strings other = t.failed_output("", "No devices were found\n");
  CHECK(other == Strings{"No devices were found"});
  t.output_handed_on("");
  CHECK(t.failed_output("", "No devices were found\n").empty());
  // A tool that alternates between two messages is not news at every run; the oldest of more
  // than four messages is forgotten.
  CHECK(t.failed_output("", lost).empty());
  for (int i = 0; i < 3; ++i) {
    CHECK(t.failed_output("", "timeout " + std::to_string(i)).size() == 1);
    t.output_handed_on("");
  }
  CHECK(t.failed_output("", lost).size() == 1);  // the fifth since it was said
  CHECK(t.failed_output("", "timeout 2").empty());
  // The device answered: the next failure is news again, whatever it says. Other devices keep
  // their own.
  CHECK(t.failed_output("3", lost).size() == 1);
  t.output_handed_on("3");
  t.succeeded("");
  CHECK(t.failed_output("", "No devices were found\n").size() == 1);
  CHECK(t.failed_output("3", lost).empty());
  // The handed-on probe line does not count as the output (nor the other way round).
  CHECK_FALSE(fail(t, "4", "exit status 15"));
  CHECK(t.failed_output("4", lost).size() == 1);
}

TEST_CASE("probe: a failed run's output, as the rules read it") {
  using Strings = std::vector<std::string>;
  CHECK(failed_output_lines("a\r\n\n   \n\tb  \nc") == Strings{"a", "\tb", "c"});
  std::string many;
  for (int i = 0; i < 100; ++i) many += "line " + std::to_string(i) + "\n";
  const Strings kept = failed_output_lines(many);
  REQUIRE(kept.size() == kMaxFailedOutputLines);
  CHECK(kept.back() == "line " + std::to_string(kMaxFailedOutputLines - 1));
  CHECK(failed_output_lines(std::string(5000, 'x')).front().size() == 1024);
  CHECK(failed_output_lines("").empty());
}
