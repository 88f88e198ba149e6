#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "collectors/overflow_dump/dump_path.hpp"
#include "collectors/overflow_dump/overflow_status.hpp"

using namespace faultd::overflow;

namespace {

std::vector<std::string> codes(const StatusDecode& d) {
  std::vector<std::string> out;
  for (const auto& c : d.causes) out.push_back(c.code);
  return out;
}

}  // namespace

TEST_CASE("decode_status: the reference's examples", "[collectors][overflow]") {
  // 272 = 0x110: "the error cause is 0x00000010+0x00000100".
  auto ai = decode_status(StatusKind::AiCore, 272);
  CHECK(codes(ai) == std::vector<std::string>{"0x00000010", "0x00000100"});
  CHECK(ai.cause_codes() == "0x00000010+0x00000100");
  CHECK(ai.causes[0].text ==
        "integer addition, subtraction, multiplication, or multiplication overflow");
  CHECK(ai.causes[1].text ==
        "FP32 to FP16 conversion or 32-bit signed integer to FP16 conversion overflow");
  // 2546 = 0b1001'1111'0010: bits 8-15 are 1001 -> 0x9, atomic overflow.
  auto dha = decode_status(StatusKind::DhaAtomicAdd, 2546);
  REQUIRE(codes(dha) == std::vector<std::string>{"0x9"});
  CHECK(dha.causes[0].text == "atomic overflow");
  CHECK(dha.causes[0].known);
  // The same value as L2 Atomic Add: bits 16-18 are 000, no error.
  auto l2 = decode_status(StatusKind::L2AtomicAdd, 2546);
  CHECK_FALSE(l2.has_error());
  CHECK(l2.cause_codes() == "none");
  // The JSON example of the reference: AI Core status 32.
  CHECK(codes(decode_status(StatusKind::AiCore, 32)) == std::vector<std::string>{"0x00000020"});
}

TEST_CASE("decode_status: every documented value, and unknown ones reported",
          "[collectors][overflow]") {
  struct Case {
    StatusKind kind;
    uint64_t status;
    std::vector<std::string> codes;
    std::vector<bool> known;
  };
  const Case cases[] = {
      {StatusKind::AiCore, 0, {}, {}},
      {StatusKind::AiCore, 0x8, {"0x00000008"}, {true}},
      {StatusKind::AiCore, 0x80, {"0x00000080"}, {true}},
      {StatusKind::AiCore, 0x400, {"0x00000400"}, {true}},
      {StatusKind::AiCore,
       0x5B8,
       {"0x00000008", "0x00000010", "0x00000020", "0x00000080", "0x00000100", "0x00000400"},
       {true, true, true, true, true, true}},
      // 0x1 and 0x40 are not in the reference: reported, not dropped.
      {StatusKind::AiCore, 0x41, {"0x00000001", "0x00000040"}, {false, false}},
      {StatusKind::AiCore, 0x10 | 0x10000, {"0x00000010", "0x00010000"}, {true, false}},
      {StatusKind::DhaAtomicAdd, 0xA00, {"0xA"}, {true}},
      {StatusKind::DhaAtomicAdd, 0xB00, {"0xB"}, {true}},
      {StatusKind::DhaAtomicAdd, 0xC00, {"0xC"}, {true}},
      {StatusKind::DhaAtomicAdd, 0xD00, {"0xD"}, {true}},
      {StatusKind::DhaAtomicAdd, 0xFF, {}, {}},  // bits 0-7 are not the cause field
      {StatusKind::DhaAtomicAdd, 0x3F00, {"0x3F"}, {false}},
      {StatusKind::L2AtomicAdd, 1u << 16, {"001"}, {true}},
      {StatusKind::L2AtomicAdd, 2u << 16, {"010"}, {true}},
      {StatusKind::L2AtomicAdd, 3u << 16, {"011"}, {true}},
      {StatusKind::L2AtomicAdd, 4u << 16, {"100"}, {true}},
      {StatusKind::L2AtomicAdd, (5u << 16) | 0xFFFF, {"101"}, {true}},
      {StatusKind::L2AtomicAdd, 6u << 16, {"110"}, {false}},
      {StatusKind::L2AtomicAdd, 7u << 16, {"111"}, {false}},
  };
  for (const auto& c : cases) {
    INFO(short_name(c.kind) << " " << c.status);
    auto d = decode_status(c.kind, c.status);
    CHECK(codes(d) == c.codes);
    std::vector<bool> known;
    for (const auto& cause : d.causes) {
      known.push_back(cause.known);
      CHECK(cause.text.empty() == false);
      if (!cause.known) CHECK(cause.text.rfind("unknown", 0) == 0);
    }
    CHECK(known == c.known);
  }
}

TEST_CASE("parse_status_kind: short and record names", "[collectors][overflow]") {
  CHECK(parse_status_kind("aicore") == StatusKind::AiCore);
  CHECK(parse_status_kind("AI Core") == StatusKind::AiCore);
  CHECK(parse_status_kind("dha") == StatusKind::DhaAtomicAdd);
  CHECK(parse_status_kind("dha atomic add") == StatusKind::DhaAtomicAdd);
  CHECK(parse_status_kind("L2") == StatusKind::L2AtomicAdd);
  CHECK_FALSE(parse_status_kind("l3").has_value());
  CHECK_FALSE(parse_status_kind("").has_value());
}

TEST_CASE("parse_dump_json: the reference's converted dump", "[collectors][overflow]") {
  const std::string text = R"({ "DHA Atomic Add": { "model_id": 0, "stream_id": 0, "task_id": 0,
    "task_type": 0, "pc_start": "0x0", "para_base": "0x0", "status": 0 }, "L2 Atomic Add": {
    "model_id": 0, "stream_id": 0, "task_id": 0, "task_type": 0, "pc_start": "0x0",
    "para_base": "0x0", "status": 0 }, "AI Core": { "model_id": 514, "stream_id": 563,
    "task_id": 57, "task_type": 0, "pc_start": "0x1008005b0000", "para_base": "0x100800297000",
    "kernel_code": "0x1008005ae000", "block_idx": 1, "status": 32 } })";
  std::string error;
  auto d = parse_dump_json(text, error);
  REQUIRE(d.has_value());
  REQUIRE(d->records.size() == 3);
  auto errs = d->errors();
  REQUIRE(errs.size() == 1);
  CHECK(errs[0]->kind == StatusKind::AiCore);
  CHECK(errs[0]->model_id == 514);
  CHECK(errs[0]->stream_id == 563);
  CHECK(errs[0]->task_id == 57);
  CHECK(errs[0]->block_idx == 1);
  CHECK(errs[0]->decoded.cause_codes() == "0x00000020");
}

TEST_CASE("parse_dump_json: bad input is an error with a reason", "[collectors][overflow]") {
  const char* bad[] = {
      "",
      "not json",
      "[1, 2]",
      R"({"something": 1})",
      R"({"AI Core": 5})",
      R"({"AI Core": {"model_id": 1}})",
      R"({"AI Core": {"status": -4}})",
      R"({"AI Core": {"status": "0x10"}})",
      R"({"AI Core": {"status": 1.5}})",
  };
  for (const char* text : bad) {
    INFO(text);
    std::string error;
    CHECK_FALSE(parse_dump_json(text, error).has_value());
    CHECK_FALSE(error.empty());
  }
  // A quoted decimal status is tolerated; unknown fields are ignored.
  std::string error;
  auto d = parse_dump_json(R"({"L2 Atomic Add": {"status": "65536", "extra": [1]}})", error);
  REQUIRE(d.has_value());
  CHECK(d->records[0].decoded.cause_codes() == "001");
}

TEST_CASE("parse_dump_path: both layouts and what breaks them", "[collectors][overflow]") {
  struct Case {
    const char* path;
    bool ok;
    DumpPath::Layout layout;
    const char* device;
    const char* model_id;
    uint64_t iteration;
    uint64_t task;
    std::optional<uint64_t> stream;
    uint64_t timestamp;
    bool is_json;
  };
  using L = DumpPath::Layout;
  const Case cases[] = {
      // The reference's example directory with its file name pattern.
      {"/home/HwHiAiUser/output/20200808163566/0/11/0/OpDebug.Node_Opdebug.59.1597922031178434",
       true, L::Cann, "0", "11", 0, 59, std::nullopt, 1597922031178434, false},
      // The other capitalisation, as the reference's parse command spells it.
      {"/d/20200808163566/3/1/7/Opdebug.Node_OpDebug.12.1597922031178434", true, L::Cann, "3", "1",
       7, 12, std::nullopt, 1597922031178434, false},
      {"/dump/1/20240101120000/5/kernel_graph_0/2/7/Opdebug.Node_OpDebug.12.2.1700000000000001",
       true, L::MindSpore, "5", "2", 7, 12, 2, 1700000000000001, false},
      {"/dump/1/20240101120000/5/kernel_graph_0/2/7/"
       "Opdebug.Node_OpDebug.12.2.1700000000000001.output.0.json",
       true, L::MindSpore, "5", "2", 7, 12, 2, 1700000000000001, true},
      // An extra numeric field between stream and timestamp is tolerated.
      {"/dump/1/20240101120000/5/net/2/7/OPDEBUG.NODE_OPDEBUG.12.2.9.1700000000000001", true,
       L::MindSpore, "5", "2", 7, 12, 2, 1700000000000001, false},
      // Not dumps.
      {"/d/20200808163566/0/11/0/Conv2D.conv1.59.1597922031178434", false, L::Cann, "", "", 0, 0,
       std::nullopt, 0, false},
      {"/d/20200808163566/0/11/0/OpDebug.Node_Opdebug.59", false, L::Cann, "", "", 0, 0,
       std::nullopt, 0, false},
      {"/d/20200808163566/0/11/0/OpDebug.Node_Opdebug.59.x12", false, L::Cann, "", "", 0, 0,
       std::nullopt, 0, false},
      {"/d/20200808163566/0/11/0/OpDebug.Node_Opdebug.59..12", false, L::Cann, "", "", 0, 0,
       std::nullopt, 0, false},
      // Too shallow for either layout.
      {"/d/0/OpDebug.Node_Opdebug.59.12", false, L::Cann, "", "", 0, 0, std::nullopt, 0, false},
      // A non-numeric iteration directory.
      {"/dump/1/20240101120000/5/net/2/last/Opdebug.Node_OpDebug.12.2.17", false, L::Cann, "", "",
       0, 0, std::nullopt, 0, false},
  };
  for (const auto& c : cases) {
    INFO(c.path);
    auto d = parse_dump_path(c.path);
    REQUIRE(d.has_value() == c.ok);
    if (!c.ok) continue;
    CHECK(d->layout == c.layout);
    CHECK(d->device == c.device);
    CHECK(d->model_id == c.model_id);
    CHECK(d->iteration == c.iteration);
    CHECK(d->task_id == c.task);
    CHECK(d->stream_id == c.stream);
    CHECK(d->timestamp == c.timestamp);
    CHECK(d->is_json == c.is_json);
  }
  auto ms = parse_dump_path(
      "/dump/1/20240101120000/5/kernel_graph_0/2/7/"
      "Opdebug.Node_OpDebug.12.2.1700000000000001.output.3.json");
  REQUIRE(ms.has_value());
  CHECK(ms->model_name == "kernel_graph_0");
  CHECK(ms->output_index == 3u);
  CHECK(ms->dump_name == "Opdebug.Node_OpDebug.12.2.1700000000000001");
  auto extra = parse_dump_path("/dump/1/20240101120000/5/net/2/7/Opdebug.Node_OpDebug.1.2.9.8.17");
  REQUIRE(extra.has_value());
  CHECK(extra->extra_fields == std::vector<uint64_t>{9, 8});
  // A suffix that leaves no fields after the prefix is not a dump (found by fuzzing).
  CHECK_FALSE(parse_dump_path("/dump/7/2026/3/1/0/Opdebug.Node_OpDebug.output.1.json"));
  CHECK_FALSE(parse_dump_path("/dump/7/2026/3/1/0/OpDebug.Node_Opdebug.json"));
}

TEST_CASE("earliest_dump: lowest data_index, then lowest timestamp", "[collectors][overflow]") {
  auto p = [](const char* path) { return *parse_dump_path(path); };
  std::vector<DumpPath> dumps = {
      p("/d/20200808163566/0/11/2/OpDebug.Node_Opdebug.1.100"),
      p("/d/20200808163566/0/11/1/OpDebug.Node_Opdebug.2.300"),
      p("/d/20200808163566/0/11/1/OpDebug.Node_Opdebug.3.200"),
      p("/d/20200808163566/0/11/3/OpDebug.Node_Opdebug.4.50"),
  };
  CHECK(earliest_dump(dumps) == 2);
  CHECK(earliest_dump({}) == 0);
}

TEST_CASE("parse_dump_name: an overflow dump's name alone, outside any layout",
          "[collectors][overflow]") {
  // msaccucmp's -out directory holds converted dumps without the dump tree around them.
  auto d = parse_dump_name("Opdebug.Node_OpDebug.12.2.1700000000000001.output.3.json");
  REQUIRE(d.has_value());
  CHECK(d->task_id == 12u);
  CHECK(d->stream_id == 2u);
  CHECK(d->timestamp == 1700000000000001u);
  CHECK(d->is_json);
  CHECK(d->output_index == 3u);
  CHECK(d->device.empty());
  CHECK_FALSE(parse_dump_path("/out/Opdebug.Node_OpDebug.12.2.1700000000000001.output.3.json"));
  CHECK_FALSE(parse_dump_name("OpDebug.Node_Opdebug.json"));
  CHECK_FALSE(parse_dump_name("OpDebug.Node_Opdebug.5.x.json"));
  CHECK_FALSE(parse_dump_name("notes.json"));
}
