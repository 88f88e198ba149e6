// The Flight Recorder reader on dumps in PyTorch's format (our own, written by
// tests/flight_recorder/make_fixtures.py with Python's pickle, protocol 2) and hostile pickles,
// and the flight_recorder source over a directory of dumps.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "collectors/flight_recorder/flight_recorder.hpp"
#include "collectors/flight_recorder/flight_recorder_source.hpp"
#include "collectors/flight_recorder/pickle_data.hpp"
#include "tests/support/collectors_file_support.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using namespace faultd::flight_recorder;
using faultd::testing::RecordingSink;
using faultd::testing::TempDir;

namespace {

const std::string kFixtures = std::string(FAULTD_SOURCE_DIR) + "/tests/flight_recorder/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<RankDump> job(const std::string& prefix, int first, int count) {
  std::vector<RankDump> out;
  for (int r = first; r < first + count; ++r) {
    out.push_back({r, parse_dump(slurp(kFixtures + prefix + std::to_string(r)))});
  }
  return out;
}

std::string refusal(const std::string& bytes, const pickle::PickleLimits& limits = {}) {
  try {
    parse_dump(bytes, limits);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

const TimePoint kLater = SystemClock::now() + std::chrono::hours(1);

}  // namespace

TEST_CASE("flight recorder: a 2.4 dump gives each group's progress from pg_status",
          "[collectors][flight_recorder]") {
  const Dump waiting = parse_dump(slurp(kFixtures + "nccl-2.4/nccl_trace_rank_0"));
  CHECK(waiting.version == "2.4");
  REQUIRE(waiting.groups.size() == 1);
  const GroupProgress& g = waiting.groups[0];
  CHECK(g.pg_id == "0");
  CHECK(g.pg_name == "0");
  CHECK(g.pg_desc == "default_pg");
  CHECK(g.ranks == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(g.last_enqueued == 13);
  CHECK(g.last_started == 13);
  CHECK(g.last_completed == 12);
  CHECK(g.state() == "started");
  CHECK(g.last_op == "nccl:all_reduce");

  const Dump stuck = parse_dump(slurp(kFixtures + "nccl-2.4/nccl_trace_rank_5"));
  REQUIRE(stuck.groups.size() == 1);
  CHECK(stuck.groups[0].last_enqueued == 12);
  CHECK(stuck.groups[0].state() == "completed");
}

TEST_CASE("flight recorder: a dump without pg_status (2.2) is read from its entries",
          "[collectors][flight_recorder]") {
  const Dump d = parse_dump(slurp(kFixtures + "hccl-2.2/hccl_trace_rank_0"));
  CHECK(d.version == "2.2");
  REQUIRE(d.groups.size() == 1);
  CHECK(d.groups[0].last_enqueued == 7);
  CHECK(d.groups[0].last_started == 7);
  CHECK(d.groups[0].last_completed == 6);
  CHECK(d.groups[0].last_op == "hccl:all_reduce");
  CHECK(d.groups[0].ranks == std::vector<int64_t>{0, 1, 2, 3});
}

TEST_CASE("flight recorder: the rank that never entered the collective is the culprit",
          "[collectors][flight_recorder]") {
  const auto w = find_wavefronts(job("nccl-2.4/nccl_trace_rank_", 0, 8));
  REQUIRE(w.size() == 1);
  CHECK(w[0].complete);
  CHECK(w[0].waited_seq == 13);
  CHECK(w[0].behind == std::vector<int64_t>{5});
  CHECK(w[0].behind_last == std::vector<int64_t>{12});
  CHECK(w[0].waiting == std::vector<int64_t>{0, 1, 2, 3, 4, 6, 7});

  const auto h = find_wavefronts(job("hccl-2.2/hccl_trace_rank_", 0, 4));
  REQUIRE(h.size() == 1);
  CHECK(h[0].behind == std::vector<int64_t>{2});
  CHECK(h[0].complete);
}

TEST_CASE("flight recorder: half a group on this node names no culprit",
          "[collectors][flight_recorder]") {
  const auto w = find_wavefronts(job("nccl-2.4-half/nccl_trace_rank_", 8, 8));
  REQUIRE(w.size() == 1);
  CHECK_FALSE(w[0].complete);
  CHECK(w[0].behind.empty());
  CHECK(w[0].waiting.size() == 8);
  CHECK(w[0].absent == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("flight recorder: a finished group is no wavefront", "[collectors][flight_recorder]") {
  auto ranks = job("nccl-2.4/nccl_trace_rank_", 0, 8);
  for (auto& r : ranks) r.dump.groups[0].last_completed = r.dump.groups[0].last_enqueued = 13;
  CHECK(find_wavefronts(ranks).empty());
}

TEST_CASE("flight recorder: hostile and malformed dumps are refused with the reason",
          "[collectors][flight_recorder]") {
  auto file = [](const std::string& name) { return slurp(kFixtures + "hostile/" + name); };
  CHECK_THAT(refusal(file("runs-code.pkl")), Catch::Contains("refused opcode GLOBAL"));
  CHECK_THAT(refusal(file("self-list.pkl")), Catch::Contains("holds itself"));
  CHECK_THAT(refusal(file("deep.pkl")), Catch::Contains("nested deeper than 32"));
  CHECK_THAT(refusal(file("truncated.pkl")), Catch::Contains("truncated"));
  CHECK_THAT(refusal(file("not-a-dict.pkl")), Catch::Contains("not a dict"));
  CHECK_THAT(refusal(file("wide-int.pkl")), Catch::Contains("wider than 64 bits"));
  CHECK_THAT(refusal(file("protocol-0.pkl")), Catch::Contains("unsupported opcode"));
  CHECK_THAT(refusal(""), Catch::Contains("no STOP"));

  const std::string good = slurp(kFixtures + "nccl-2.4/nccl_trace_rank_0");
  pickle::PickleLimits small;
  small.max_bytes = 100;
  CHECK_THAT(refusal(good, small), Catch::Contains("larger than 100 bytes"));
  pickle::PickleLimits few;
  few.max_values = 50;
  CHECK_THAT(refusal(good, few), Catch::Contains("more than 50 values"));
  // REDUCE and BUILD by themselves (no GLOBAL before them) are refused as well.
  CHECK_THAT(refusal(std::string("\x80\x02)}R.", 6)), Catch::Contains("REDUCE"));
  CHECK_THAT(refusal(std::string("\x80\x02}}b.", 6)), Catch::Contains("BUILD"));
}

TEST_CASE("flight_recorder source: names the culprit and the victims once",
          "[collectors][flight_recorder]") {
  TempDir dir;
  for (int r = 0; r < 8; ++r) {
    const std::string name = "nccl_trace_rank_" + std::to_string(r);
    std::filesystem::copy_file(kFixtures + "nccl-2.4/" + name, dir.file(name));
  }
  FlightRecorderSourceConfig c;
  c.name = "fr";
  c.prefix = dir.file("nccl_trace_rank_");
  FlightRecorderSource source(c);
  RecordingSink sink;
  source.poll_once(kLater, sink);
  REQUIRE(sink.chunks.size() == 1);
  const std::string& data = sink.chunks[0].data;
  CHECK_THAT(data, Catch::Contains("flight recorder: rank=5 device=5 pg=0 last_enqueued=12 "
                                   "last_started=12 last_completed=12 state=completed "
                                   "op=nccl:all_reduce file=" +
                                   c.prefix + "5\n"));
  CHECK_THAT(data, Catch::Contains("flight recorder: culprit device=5 rank=5 pg=0 waited_seq=13 "
                                   "last_seq=12 victims=0-4,6-7\n"));
  CHECK_THAT(data, Catch::Contains("flight recorder: victim device=0 rank=0 pg=0 waited_seq=13 "
                                   "culprits=5\n"));
  CHECK(source.stats().files.load() == 8);

  // Unchanged dumps: nothing new. A rewritten dump is read again, the wavefront not repeated.
  source.poll_once(kLater + std::chrono::minutes(1), sink);
  CHECK(sink.chunks.size() == 1);
  std::filesystem::remove(dir.file("nccl_trace_rank_3"));
  std::filesystem::copy_file(kFixtures + "nccl-2.4/nccl_trace_rank_3",
                             dir.file("nccl_trace_rank_3"));
  source.poll_once(kLater + std::chrono::minutes(2), sink);
  REQUIRE(sink.chunks.size() == 2);
  CHECK_THAT(sink.chunks[1].data, !Catch::Contains("culprit"));
  CHECK(sink.chunks[1].start_offset >= sink.chunks[0].end_offset);
}

TEST_CASE("flight_recorder source: a refused dump is counted, the others still read",
          "[collectors][flight_recorder]") {
  TempDir dir;
  std::filesystem::copy_file(kFixtures + "hostile/runs-code.pkl", dir.file("nccl_trace_rank_0"));
  std::filesystem::copy_file(kFixtures + "nccl-2.4/nccl_trace_rank_1",
                             dir.file("nccl_trace_rank_1"));
  dir.write("nccl_trace_rank_x", "not a rank");
  FlightRecorderSourceConfig c;
  c.name = "fr";
  c.prefix = dir.file("nccl_trace_rank_");
  FlightRecorderSource source(c);
  RecordingSink sink;
  source.poll_once(kLater, sink);
  CHECK(source.stats().error_count(SourceErrorKind::Parse) == 1);
  REQUIRE(sink.chunks.size() == 1);
  CHECK_THAT(sink.chunks[0].data, Catch::Contains("rank=1 device=1"));
  CHECK_THAT(sink.chunks[0].data, !Catch::Contains("rank=0 "));
  // Half a job here: no culprit, the waiting rank says what is absent.
  CHECK_THAT(sink.chunks[0].data, Catch::Contains("flight recorder: waiting device=1 rank=1 pg=0 "
                                                  "waited_seq=13 absent=0,2-7\n"));
  // The refused file is not counted again while it stays as it is.
  source.poll_once(kLater + std::chrono::minutes(1), sink);
  CHECK(source.stats().error_count(SourceErrorKind::Parse) == 1);
}

TEST_CASE("flight_recorder source: a dump still being written waits for settle",
          "[collectors][flight_recorder]") {
  TempDir dir;
  std::filesystem::copy_file(kFixtures + "nccl-2.4/nccl_trace_rank_0",
                             dir.file("nccl_trace_rank_0"));
  FlightRecorderSourceConfig c;
  c.name = "fr";
  c.prefix = dir.file("nccl_trace_rank_");
  c.settle = std::chrono::hours(2);
  FlightRecorderSource source(c);
  RecordingSink sink;
  source.poll_once(kLater, sink);
  CHECK(sink.chunks.empty());
  source.poll_once(kLater + std::chrono::hours(2), sink);
  CHECK(sink.chunks.size() == 1);
}
