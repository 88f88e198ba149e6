// Scan throughput of the shipped packs over realistic plog text. Hidden ([.bench]): run it on an
// optimized build, e.g. `test_rules "[.bench]"` in a RelWithDebInfo tree. Figures are printed,
// never asserted (timing belongs to the benchmark suite, not to tests).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>

#include "rules/rule.hpp"

using namespace faultd;

namespace {

std::shared_ptr<const RuleSet> shipped() {
  std::vector<RuleSpec> specs;
  ErrorList errors;
  for (const auto& e : std::filesystem::directory_iterator(std::string(FAULTD_SOURCE_DIR) +
                                                           "/etc/faultd/rules.d")) {
    if (e.path().extension() == ".yaml") load_rule_file(e.path().string(), specs, errors);
  }
  auto set = RuleSet::build(std::move(specs), CodeLevels{}, errors);
  REQUIRE(errors.empty());
  return set;
}

// ~`bytes` of plog/device-log lines (docs/log-formats.md §2 shapes, numbers varied), with the
// SilentCheckV3 L1 error every `fault_every` lines.
std::string plog_text(size_t bytes, size_t fault_every, size_t& faults) {
  static const char* const kLines[] = {
      "[ERROR] RUNTIME(160186,python):2023-01-10-09:25:%02d.322.063 [engine.cc:1263]163618 "
      "ReportExceptProc:Task exception! device_id=0, stream_id=17, task_id=%d, type=13, "
      "retCode=0x91, [the model stream execute failed].",
      "[INFO] DRV(10972,python):2023-09-23-05:41:%02d.697.570 [ascend][curpid: 98, 98][drv]"
      "[devmm][_svm_mem_stats_show 154]DEV_MEM dev0 mem stats(Bytes): %d",
      "[TRACE] HCCL(10972,python3):2023-01-31-02:48:%02d.222.202 [status:init] [hcom.cc:196]"
      "[hccl-10972-0-1675133310-hccl_world_group][3]hcom init by file success, rank %d",
      "[ERROR] HCCL(59420,python3):2025-01-24-11:24:%02d.908.526 [comm_base.cc:968][107626]   |  "
      "comm error, device[0] num[%d] ",
      "[INFO] AICPU(26559,aicpu_scheduler):2025-02-25-18:46:%02d.678.981 [silent_check_v3.cc:240]"
      "[SilentCheck][tid:26572]SilentCheckV3 normal case, val=[3.350337e-08], step=[%d]",
      "[INFO] RUNTIME(10972,python):2023-09-23-05:41:%02d.256.365 [stream.cc:1100]49835 "
      "StreamSynchronize: stream_id=%d sync ok",
      "[EVENT] TDT(4717,tsdaemon):2023-10-31-16:41:%02d.406.087 [tsdaemon.cpp:1811]"
      "[RunSpecialProcess][tid:4717] [TsdEVENT] Event id=0x8c17a%03d.",
      "[WARNING] GE(10972,python):2023-09-23-05:41:%02d.100.001 [graph_manager.cc:512]49835 "
      "OptimizeGraph: fusion pass skipped for node %d",
  };
  const std::string fault =
      "[ERROR] AICPU(26533,aicpu_scheduler):2025-02-25-18:40:56.176.403 [silent_check_v3.cc:250]"
      "[ComputeL1Error][tid:26552]SilentCheckV3 ComputeL1Error:val = [nan], max = [nan], "
      "avg=[1.128970e-09], step=[5]";
  std::mt19937 rng(42);
  std::string out;
  out.reserve(bytes + 1024);
  char buf[512];
  faults = 0;
  for (size_t n = 1; out.size() < bytes; ++n) {
    if (n % fault_every == 0) {
      out += fault;
      ++faults;
    } else {
      const int len = std::snprintf(buf, sizeof buf, kLines[rng() % 8],
                                    static_cast<int>(rng() % 60), static_cast<int>(rng() % 100000));
      out.append(buf, static_cast<size_t>(len));
    }
    out += '\n';
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("bench: scan throughput of the shipped packs on plog text", "[.bench][rules]") {
  const auto set = shipped();
  size_t faults = 0;
  const std::string data = plog_text(200u << 20, 100000, faults);
  const double mb = static_cast<double>(data.size()) / (1 << 20);
  const Fields fields = {{"device", "3"}};

  for (size_t chunk_size : {size_t{64} << 10, size_t{1} << 20, data.size()}) {
    // Cut whole lines, as a file source delivers them, before the clock starts.
    std::vector<Chunk> chunks;
    uint64_t line = 1;
    for (size_t start = 0; start < data.size();) {
      size_t end = std::min(data.size(), start + chunk_size);
      const size_t nl = data.rfind('\n', end - 1);
      end = (nl == std::string::npos || nl < start) ? data.size() : nl + 1;
      Chunk chunk;
      chunk.source = "device-log";
      chunk.path = "/root/ascend/log/debug/device-3/device-1_20250225184036913.log";
      chunk.data = std::string_view(data).substr(start, end - start);
      chunk.first_line = line;
      chunk.start_offset = start;
      chunk.path_fields = &fields;
      chunks.push_back(chunk);
      line += static_cast<uint64_t>(std::count(chunk.data.begin(), chunk.data.end(), '\n'));
      start = end;
    }
    std::vector<Finding> out;
    ScanStats stats;
    const auto t = std::chrono::steady_clock::now();
    for (const Chunk& chunk : chunks) set->scan(chunk, TimePoint{}, out, &stats);
    const double s = seconds_since(t);
    std::cout << "scan, " << (chunk_size >> 10) << " KiB chunks: " << mb << " MB in " << s
              << " s = " << mb / s << " MB/s, " << stats.findings << " findings, "
              << stats.candidate_lines << " candidate lines\n";
    CHECK(stats.findings == faults);
    for (const auto& f : out) CHECK(f.line % 100000 == 0);  // where the faults were put
  }

  // The floor: one memchr per line, what "costs about a memchr" means.
  const auto t = std::chrono::steady_clock::now();
  size_t lines = 0;
  for (const char* p = data.data();
       (p = static_cast<const char*>(std::memchr(p, '\n', data.data() + data.size() - p))); ++p) {
    ++lines;
  }
  const double s = seconds_since(t);
  std::cout << "memchr per line: " << mb / s << " MB/s (" << lines << " lines)\n";
}
