// The device of a finding whose line names none, from the lines around it (device_from
// "context"): which neighbour wins, which lines may give one, and that the answer does not
// depend on how the file was cut into reads.
#include <catch2/catch.hpp>

#include "rules/matcher.hpp"
#include "tests/support/rules_support.hpp"

using namespace faultd;

namespace {

constexpr const char* kRules = R"(rules:
  - id: link
    match: { any: [LINK_TIMEOUT] }
    fault: { level: RestartBusiness }
  - id: host
    match: { any: [HOST_OOM] }
    device: "{npu}"
    fault: { level: RestartBusiness }
  - id: recovered
    match: { any: [LINK_BACK] }
    fault: { level: NotHandleFault }
    recovery: true
  - id: named
    match: { any: [NAMED_FAULT] }
    fault: { level: RestartBusiness }
)";

// The file's lines fed to one Matcher, cut into reads after the given line counts (the rest
// in one last read); the findings it gives, flushed at the end.
std::vector<Finding> feed(const std::vector<std::string>& lines, std::vector<size_t> cuts = {},
                          Matcher* keep = nullptr) {
  Matcher local;
  Matcher& matcher = keep != nullptr ? *keep : local;
  if (keep == nullptr) matcher.configure(testing::build(kRules));
  cuts.push_back(lines.size());
  std::vector<Finding> out;
  std::string text;
  size_t next = 0;
  uint64_t offset = 0;
  for (size_t cut : cuts) {
    text.clear();
    const size_t first = next;
    for (; next < cut && next < lines.size(); ++next) text += lines[next] + '\n';
    if (text.empty()) continue;
    Chunk chunk;
    chunk.source = "plog";
    chunk.path = "/var/log/npu/plog/plog-1.log";
    chunk.identity = {1, 2, 3, 4};
    chunk.data = text;
    chunk.first_line = first + 1;
    chunk.end_line = next;
    chunk.start_offset = offset;
    chunk.end_offset = offset + text.size();
    offset = chunk.end_offset;
    matcher.match(chunk, TimePoint{}, out);
  }
  if (keep == nullptr) {
    for (auto& f : matcher.flush()) out.push_back(std::move(f));
  }
  return out;
}

std::vector<std::string> described(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    out.push_back(f.rule + "@" + std::to_string(f.line) + " device=" + f.device +
                  " from=" + f.device_from);
  }
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("neighbours: the device of a line after the fault line, in the same process",
          "[rules][neighbours]") {
  const Strings lines = {
      "[ERROR] HCCL(114654,python3):2025 [socket.cc:778] LINK_TIMEOUT role[1] rank[10]",
      "[ERROR] HCCL(114654,python3):2025 [socket.cc:591]   ____LINK_ERROR_INFO____",
      "[ERROR] HCCL(114654,python3):2025 [socket.cc:592]   |  comm error, device[2]",
  };
  CHECK(described(feed(lines)) == Strings{"link@1 device=2 from=context"});
}

TEST_CASE("neighbours: the nearest line wins, a tie goes to the earlier line, kLines at most",
          "[rules][neighbours]") {
  Strings lines = {"x device_id=5", "y", "LINK_TIMEOUT", "z", "w device_id=6"};
  CHECK(described(feed(lines)) == Strings{"link@3 device=5 from=context"});
  lines = {"x device_id=5", "y", "LINK_TIMEOUT", "w device_id=6"};
  CHECK(described(feed(lines)) == Strings{"link@3 device=6 from=context"});

  // A GE exception dump runs 13 lines (tests/corpus: the AIC_INFO block before TsdClient's
  // deviceId): kLines covers it.
  static_assert(NeighbourDevices::kLines == 16);
  const int n = static_cast<int>(NeighbourDevices::kLines);
  Strings far = {"x device_id=5"};
  for (int i = 0; i < n; ++i) far.push_back("filler");
  far.push_back("LINK_TIMEOUT");  // kLines + 1 lines after the device
  for (int i = 0; i < n; ++i) far.push_back("filler");
  far.push_back("w device_id=6");  // kLines + 1 lines after the fault
  const std::string at = "link@" + std::to_string(n + 2);
  CHECK(described(feed(far)) == Strings{at + " device= from="});
  far.erase(far.begin() + 1);  // now kLines lines before
  CHECK(described(feed(far)) ==
        Strings{"link@" + std::to_string(n + 1) + " device=5 from=context"});
}

TEST_CASE("neighbours: another process, another rank or an invalid id gives nothing",
          "[rules][neighbours]") {
  // Another process id on both lines: not the same stream.
  CHECK(described(feed({"[ERROR] HCCL(1,python):x LINK_TIMEOUT",
                        "[ERROR] HCCL(2,python):x comm error, device[2]"})) ==
        Strings{"link@1 device= from="});
  // The envelope's pid links a line naming another (torch_npu's own PID) in the same worker.
  CHECK(
      described(feed({"(train pid=8464) RuntimeError: LINK_TIMEOUT",
                      "(train pid=8464) [ERROR] 2025 (PID:13075, Device:0, RankID:8) ERR00100"})) ==
      Strings{"link@1 device=0 from=context"});
  // A line that names no process continues the block of the one that does.
  CHECK(
      described(feed({"EI0002: [PID: 726962] LINK_TIMEOUT", "        TsdOpen failed. devId=2"})) ==
      Strings{"link@1 device=2 from=context"});
  // Interleaved launcher ranks.
  CHECK(described(feed({"[rank1]: LINK_TIMEOUT", "[rank2]: on device 3"})) ==
        Strings{"link@1 device= from="});
  CHECK(described(feed({"[rank1]: LINK_TIMEOUT", "[rank1]: on device 3"})) ==
        Strings{"link@1 device=3 from=context"});
  // NCCL's communicator line gives the device of the rank it names: another rank's line is no
  // neighbour, the same rank's is.
  CHECK(described(feed({"node:36:36 [0] NCCL INFO comm 0x55d0 rank 0 nranks 4 cudaDev 0 nvmlDev 2 "
                        "busId 41000 commId 0x1 - Init COMPLETE",
                        "[rank2]: LINK_TIMEOUT"})) == Strings{"link@2 device= from="});
  CHECK(described(feed({"node:38:38 [2] NCCL INFO comm 0x55d2 rank 2 nranks 4 cudaDev 2 nvmlDev 0 "
                        "busId 61000 commId 0x1 - Init COMPLETE",
                        "[rank2]: LINK_TIMEOUT"})) == Strings{"link@2 device=2 from=context"});
  // An id that fails validation is no answer; the next valid one is.
  CHECK(described(feed({"LINK_TIMEOUT", "device_id=99999", "device_id=1"})) ==
        Strings{"link@1 device=1 from=context"});
}

TEST_CASE("neighbours: a rule that names no device, a recovery and a named device keep theirs",
          "[rules][neighbours]") {
  CHECK(described(feed({"HOST_OOM", "device_id=1", "LINK_BACK", "NAMED_FAULT device_id=4"})) ==
        Strings{"host@1 device= from=", "recovered@3 device= from=", "named@4 device=4 from=line"});
}

TEST_CASE("neighbours: the same answers whatever the reads, in line order", "[rules][neighbours]") {
  const Strings lines = {
      "a device_id=1",
      "LINK_TIMEOUT",
      "b",
      "c",
      "d",
      "e",
      "NAMED_FAULT device_id=7",
      "LINK_TIMEOUT",
      "f",
      "g",
      "LINK_TIMEOUT",
      "h",
      "i device_id=3",
      "LINK_BACK",
      "j",
  };
  const auto whole = described(feed(lines));
  CHECK(whole == Strings{"link@2 device=1 from=context", "named@7 device=7 from=line",
                         "link@8 device=7 from=context", "link@11 device=3 from=context",
                         "recovered@14 device= from="});
  for (size_t every = 1; every < lines.size(); ++every) {
    std::vector<size_t> cuts;
    for (size_t c = every; c < lines.size(); c += every) cuts.push_back(c);
    INFO("a read every " << every << " lines");
    CHECK(described(feed(lines, cuts)) == whole);
  }
}

TEST_CASE("neighbours: a long line kept from an earlier read still gives its device",
          "[rules][neighbours]") {
  // Lines up to kMaxTailText are kept as text and parsed when looked back on; a longer one is
  // parsed when read. Either way the next read's finding gets the device.
  for (size_t size : {size_t{10}, NeighbourDevices::kMaxTailText + 100}) {
    const Strings lines = {std::string(size, 'x') + " device_id=4", "LINK_TIMEOUT"};
    INFO("a line of " << size << " bytes");
    CHECK(described(feed(lines, {1})) == Strings{"link@2 device=4 from=context"});
  }
}

TEST_CASE("neighbours: a held finding stops the saved position and leaves after its time",
          "[rules][neighbours]") {
  Matcher matcher;
  matcher.configure(testing::build(kRules));
  // Another process's fault on the next line names its device: no answer for line 2 yet.
  const Strings lines = {"start", "[ERROR] HCCL(1,python):x LINK_TIMEOUT",
                         "[ERROR] HCCL(2,python):x NAMED_FAULT device_id=7"};
  const auto out = feed(lines, {}, &matcher);
  CHECK(out.empty());  // the fault waits for the lines after it, the named one waits behind it
  CHECK(matcher.needs_tick());
  const ReadPosition end{"plog", "/var/log/npu/plog/plog-1.log", {1, 2, 3, 4}, 100, 3};
  const ReadPosition clamped = matcher.clamp(end);
  CHECK(clamped.offset == 6);  // "start\n"
  CHECK(clamped.line == 1);
  // Another file's position is not held back.
  CHECK(matcher.clamp({"plog", "/other", {1, 9, 3, 4}, 100, 3}).offset == 100);

  CHECK(matcher.tick(TimePoint{} + std::chrono::seconds(1)).empty());
  const auto late = matcher.tick(TimePoint{} + NeighbourDevices::kHoldFor);
  CHECK(described(late) == Strings{"link@2 device= from=", "named@3 device=7 from=line"});
  CHECK(!matcher.needs_tick());
  CHECK(matcher.clamp(end).offset == 100);
}

TEST_CASE("neighbours: after a truncation the old lines are no neighbours", "[rules][neighbours]") {
  Matcher matcher;
  matcher.configure(testing::build(kRules));
  std::vector<Finding> out;
  const std::string before = "x device_id=5\n";
  const std::string after = "LINK_TIMEOUT\n";
  Chunk chunk;
  chunk.source = "plog";
  chunk.path = "/p";
  chunk.identity = {1, 2, 3, 4};
  chunk.data = before;
  chunk.first_line = 1;
  chunk.end_line = 1;
  chunk.end_offset = before.size();
  matcher.match(chunk, TimePoint{}, out);
  chunk.data = after;  // the file was truncated: line 1 again
  chunk.end_offset = after.size();
  matcher.match(chunk, TimePoint{}, out);
  for (auto& f : matcher.flush()) out.push_back(std::move(f));
  CHECK(described(out) == Strings{"link@1 device= from="});
}
