// Matching and verdicts on small dumps written here, both families, with the expected Result of
// every row worked out from msprobe's checkers and ptdbg's check_accuracy (compare.hpp); then
// two ranks, a replica set with one corrupted rank, and the command's exit codes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "compare/cli.hpp"
#include "compare/compare.hpp"
#include "compare/ranks.hpp"
#include "compare/report.hpp"
#include "tests/support/compare_files.hpp"
#include "tests/support/temp_dir.hpp"

namespace cmp = faultd::compare;
using faultd::testing::npy_file;
using faultd::testing::pt_file;
using faultd::testing::raw_bytes;
using faultd::testing::TempDir;

namespace {

std::string tensor(const std::string& dtype, const std::string& shape, double max, double min,
                   double mean, double norm, const std::string& extra = "") {
  std::ostringstream s;
  s.precision(17);
  s << R"({"type": "torch.Tensor", "dtype": ")" << dtype << R"(", "shape": )" << shape
    << R"(, "Max": )" << max << R"(, "Min": )" << min << R"(, "Mean": )" << mean << R"(, "Norm": )"
    << norm << extra << "}";
  return s.str();
}

std::string dump(const std::string& task, const std::vector<std::string>& entries) {
  std::string data;
  for (const auto& e : entries) data += (data.empty() ? "" : ",\n") + e;
  return R"({"task": ")" + task +
         R"(", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {)" + data +
         "}}";
}

std::string entry(const std::string& api, const std::string& inputs, const std::string& outputs) {
  return "\"" + api + "\": {\"input_args\": [" + inputs + "], \"output\": [" + outputs + "]}";
}

const cmp::ResultRow& row_named(const cmp::RankCompare& rc, const std::string& name) {
  for (const auto& r : rc.rows) {
    if (rc.npu.rows[r.npu].name == name) return r;
  }
  FAIL("no row " << name);
  return rc.rows.front();
}

std::vector<std::string> messages(const cmp::ResultRow& r) { return r.messages; }

}  // namespace

TEST_CASE("msprobe statistics: each checker, on rows built for it") {
  const std::string same = tensor("torch.float32", "[2, 3]", 1, -1, 0, 2);
  const auto npu =
      dump("statistics",
           {entry("Torch.matmul.0.forward", same + ", " + same,
                  tensor("torch.float32", "[2]", 4, 1, 2, 20)),
            entry("Torch.add.0.forward", same, same),  // NPU only
            entry("Torch.cast.0.forward", same, tensor("torch.float16", "[2]", 1, 0, 0.5, 1)),
            entry("Torch.view.0.forward", same, tensor("torch.float32", "[2, 3]", 1, -1, 0, 2)),
            entry("Torch.int.0.forward", same, tensor("torch.int32", "[2]", 1, 0, 0.5, 1)),
            entry("Torch.exp.0.forward", same, tensor("torch.float32", "[2]", 1, 0, 0.5, 1)),
            entry("Torch.pow.0.forward", same + R"(, {"type": "int", "value": 2})", same),
            entry("Tensor.to.0.forward", same, tensor("torch.float32", "[2]", 1, 0, 0.5, 1))});
  const auto bench =
      dump("statistics",
           {entry("Torch.matmul.0.forward", same + ", " + same,
                  tensor("torch.float32", "[2]", 4, 1, 2, 10)),
            entry("Torch.cast.0.forward", same, tensor("torch.float32", "[2]", 1, 0, 0.5, 1)),
            entry("Torch.view.0.forward", same, tensor("torch.float32", "[3, 2]", 1, -1, 0, 2)),
            entry("Torch.int.0.forward", same, tensor("torch.int64", "[2]", 1, 0, 0.5, 1)),
            entry("Torch.exp.0.forward", same, tensor("torch.float32", "[2]", 1, 0, 0.5, 1)),
            entry("Torch.pow.0.forward", same + R"(, {"type": "int", "value": 3})", same),
            entry("Tensor.to.0.forward", same, tensor("torch.float32", "[2]", 9, 0, 0.5, 9))});
  // NaN in the NPU's max of exp's output (the bench's is finite).
  std::string npu_nan = npu;
  const std::string exp_out = tensor("torch.float32", "[2]", 1, 0, 0.5, 1);
  const size_t at = npu_nan.find(exp_out, npu_nan.find("Torch.exp"));
  npu_nan.replace(
      at, exp_out.size(),
      R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": NaN, "Min": 0, "Mean": 0.5, "Norm": 1})");

  const auto rc = cmp::compare_dumps(cmp::parse_msprobe_dump(npu_nan, "npu/dump.json"),
                                     cmp::parse_msprobe_dump(bench, "bench/dump.json"), {});
  // Norm 20 against 10: NormRelativeErr 100% while the inputs are equal (their "0" is text and
  // not counted, so the input maximum is 0) -> error, and 1.0 > 0.1 -> the warning too.
  const auto& mm = row_named(rc, "Torch.matmul.0.forward.output.0");
  CHECK(mm.diff[3] == "10.0");
  CHECK(mm.rel[3] == "100.0%");
  CHECK(mm.result == "error");
  CHECK(messages(mm) ==
        std::vector<std::string>{
            "error: The NormRelativeErr of output is greater than 0.5.",
            "warning: The norm relative error of output is 10 times that of input."});
  // Present on the NPU side only: N/A bench columns, and msprobe still says pass.
  const auto& add = row_named(rc, "Torch.add.0.forward.output.0");
  CHECK_FALSE(add.bench);
  CHECK(add.result == "pass");
  const auto cells = cmp::table_cells(rc, add);
  CHECK(cells[1] == "N/A");
  CHECK(cells[8] == "N/A");
  CHECK(cells[24] == "True");  // Requires_grad Consistent: no requires_grad on either side
  // float16 against float32 passes the dtype gate, then the dtype checker flags it.
  CHECK(row_named(rc, "Torch.cast.0.forward.output.0").result == "error");
  CHECK(messages(row_named(rc, "Torch.cast.0.forward.output.0")).front() ==
        "error: The dtype of NPU and Bench are inconsistent.");
  CHECK(row_named(rc, "Torch.view.0.forward.output.0").messages.front() ==
        "error: The shape of NPU and Bench are inconsistent.");
  // int32 against int64 fails the gate: unmatched.
  CHECK_FALSE(row_named(rc, "Torch.int.0.forward.output.0").bench);
  CHECK(row_named(rc, "Torch.exp.0.forward.output.0").messages.front() ==
        "error: There is nan/inf/-inf in the maximum or minimum value of NPU.");
  CHECK(row_named(rc, "Torch.exp.0.forward.output.0").diff[0] == "Nan");
  CHECK(row_named(rc, "Torch.pow.0.forward.input.1").messages.front() ==
        "error: The scalar parameters of NPU and Bench are inconsistent.");
  // Tensor.to is on msprobe's ignore list: its norm error (|1 - 9| / 9) is not judged.
  CHECK(row_named(rc, "Tensor.to.0.forward.output.0").rel[3] == "88.88888888888889%");
  CHECK(row_named(rc, "Tensor.to.0.forward.output.0").result == "pass");

  CHECK(rc.error == 5);
  CHECK(rc.warning == 0);
  REQUIRE(rc.first_error);
  CHECK(rc.first_error->name == "Torch.matmul.0.forward.output.0");
  CHECK(rc.suspect()->api == "Torch.matmul.0.forward");
}

TEST_CASE("msprobe md5 mode: equal checksums pass, different ones are errors") {
  auto md5dump = [](const std::string& a, const std::string& b) {
    return dump("statistics",
                {entry("Torch.add.0.forward",
                       tensor("torch.bfloat16", "[2]", 1, 0, 0.5, 1, ", \"md5\": \"" + a + "\""),
                       tensor("torch.bfloat16", "[2]", 1, 0, 0.5, 1, ", \"md5\": \"" + b + "\""))});
  };
  const auto rc =
      cmp::compare_dumps(cmp::parse_msprobe_dump(md5dump("aaaa0000", "bbbb0000"), "n"),
                         cmp::parse_msprobe_dump(md5dump("aaaa0000", "cccc0000"), "b"), {});
  REQUIRE(rc.rows.size() == 2);
  CHECK(rc.rows[0].result == "pass");
  CHECK(rc.rows[1].result == "error");
  CHECK(rc.rows[1].messages.front() ==
        "error: The CRC-32 value of NPU differs from that of the bench.");
  CHECK(cmp::table_header(rc)[8] == "NPU MD5");
}

namespace {

// A msprobe tensor-mode rank directory: dump.json plus dump_tensor_data/<name>.pt.
void write_tensor_rank(const TempDir& dir, const std::string& rank, const std::vector<float>& input,
                       const std::vector<float>& output) {
  auto leaf = [](const std::string& data_name, size_t n) {
    return tensor("torch.float32", "[" + std::to_string(n) + "]", 0, 0, 0, 0,
                  ", \"requires_grad\": false, \"data_name\": \"" + data_name + "\"");
  };
  const int n = static_cast<int>(input.size());
  dir.write(rank + "/dump_tensor_data/Functional.linear.0.forward.input.0.pt",
            pt_file("FloatStorage", raw_bytes(input), {n}, {1}, 0, input.size()));
  dir.write(rank + "/dump_tensor_data/Functional.linear.0.forward.output.0.pt",
            pt_file("FloatStorage", raw_bytes(output), {n}, {1}, 0, output.size()));
  dir.write(rank + "/dump.json",
            dump("tensor",
                 {entry("Functional.linear.0.forward",
                        leaf("Functional.linear.0.forward.input.0.pt", input.size()),
                        leaf("Functional.linear.0.forward.output.0.pt", output.size())),
                  entry("Torch.gone.0.forward", leaf("Torch.gone.0.forward.input.0.pt", 2), "")}));
}

}  // namespace

TEST_CASE("msprobe tensor mode: .pt files, the seed's rule and the tensor checkers") {
  TempDir dir;
  // Inputs equal; outputs [1, 2, 3, 4] against [1, -2, 3, -4]: cosine (1 - 4 + 9 - 16) / 30 =
  // -1/3, max |d| = 8, relative errors 0, 2, 0, 2 -> one-thousandth ratio 0.5.
  write_tensor_rank(dir, "npu", {1, 2, 3, 4}, {1, 2, 3, 4});
  write_tensor_rank(dir, "bench", {1, 2, 3, 4}, {1, -2, 3, -4});
  const auto rc = cmp::compare_dumps(cmp::read_dump(dir.path() / "npu"),
                                     cmp::read_dump(dir.path() / "bench"), {});
  REQUIRE(rc.rows.size() == 3);
  const auto& out = rc.rows[1];
  CHECK(out.metrics.cosine.value == Approx(-1.0 / 3));
  CHECK(out.metrics.max_abs.value == 8);
  CHECK(out.metrics.one_thousandth.value == 0.5);
  CHECK(out.accuracy == "No");
  // OneThousandthErr needs the output ratio below 0.1: 0.5 is not, so no error; the cosine
  // falls by more than 0.1 from the input (1.0) to the output: a warning.
  CHECK(out.result == "warning");
  CHECK(out.messages == std::vector<std::string>{"warning: The input/parameters of Cosine > 0.9, "
                                                 "and input/parameters - output > 0.1"});
  REQUIRE(rc.first_seed);
  CHECK(rc.first_seed->name == "Functional.linear.0.forward.output.0");
  CHECK(rc.suspect()->reason == "Cosine < 0.99 and MaxAbsErr > 0.001");
  // The missing file: unsupported, with the tool's wording, and a note naming the file.
  CHECK(cmp::format_metric(rc.rows[2].metrics.cosine, cmp::Semantics::Msprobe, true) ==
        "unsupported");
  CHECK(rc.rows[2].note == "Dump file: Torch.gone.0.forward.input.0.pt not found or read failed.");
  REQUIRE(rc.notes.size() == 1);
  CHECK(rc.notes[0].find("Torch.gone.0.forward.input.0.pt") != std::string::npos);
  const auto header = cmp::table_header(rc);
  CHECK(header.back() == "Data_name");
  CHECK(cmp::table_cells(rc, rc.rows[0]).back() ==
        "['Functional.linear.0.forward.input.0.pt', 'Functional.linear.0.forward.input.0.pt']");
}

TEST_CASE("ptdbg real data: the queue matcher skips an extra NPU API, check_accuracy judges") {
  TempDir dir;
  auto line = [](const std::string& name, const std::string& shape) {
    return "[\"" + name + "\", 1, [], \"torch.float32\", " + shape + ", [1, 0, 0.5, 1]]\n";
  };
  const std::string a_in = "Functional_linear_0_forward_input.0";
  const std::string a_out = "Functional_linear_0_forward_output";
  const std::string x_out = "Torch_extra_0_forward_output";
  const std::string b_in = "Torch_relu_0_forward_input.0";
  const std::string b_out = "Torch_relu_0_forward_output";
  dir.write("npu/dump.pkl", line(a_in, "[2]") + line(a_out, "[2]") + line(x_out, "[2]") +
                                line(b_in, "[2]") + line(b_out, "[2]"));
  dir.write("bench/dump.pkl",
            line(a_in, "[2]") + line(a_out, "[2]") + line(b_in, "[2]") + line(b_out, "[2]"));
  auto npy = [&](const std::string& side, const std::string& name, std::vector<float> v) {
    dir.write(side + "/dump/" + name + ".npy", npy_file("<f4", "(2,)", raw_bytes(v)));
  };
  for (const auto& side : {"npu", "bench"}) {
    npy(side, a_in, {1, 2});
    npy(side, a_out, {3, 4});
    npy(side, b_in, {3, 4});
  }
  npy("npu", x_out, {0, 0});
  npy("npu", b_out, {3, 4});
  npy("bench", b_out, {3, 4.5F});  // cosine 0.9996, max |d| 0.5 -> Yes (not < 0.99, not > 1)
  const auto rc = cmp::compare_dumps(cmp::read_dump(dir.path() / "npu/dump.pkl"),
                                     cmp::read_dump(dir.path() / "bench/dump.pkl"), {});
  CHECK(rc.semantics == cmp::Semantics::Ptdbg);
  REQUIRE(rc.rows.size() == 5);
  CHECK_FALSE(rc.rows[2].bench);
  const auto x = cmp::table_cells(rc, rc.rows[2]);
  CHECK(x[1] == "Nan");
  CHECK(rc.rows[2].note == "No bench data matched.");
  CHECK(rc.rows[2].accuracy == "Nan");
  CHECK(rc.rows[0].accuracy == "Yes");
  CHECK(rc.rows[4].accuracy == "Yes");
  CHECK(cmp::table_cells(rc, rc.rows[0])[6] == "1.0");             // Cosine
  CHECK(cmp::table_cells(rc, rc.rows[4])[7] == "0.500000000000");  // MaxAbsErr
  CHECK(cmp::table_header(rc)[19] == "Accuracy Reached or Not");
  CHECK(rc.error == 0);
  CHECK(rc.suspect() == nullptr);
}

namespace {

void write_stat_rank(const TempDir& dir, const std::string& path, double out_norm,
                     double weight_max = 1) {
  const std::string in = tensor("torch.float32", "[4]", 1, 0, 0.5, 1);
  dir.write(path + "/dump.json",
            dump("statistics",
                 {"\"Module.fc.Linear.forward.0\": {\"input_args\": [" + in +
                  "], \"parameters\": {\"weight\": " +
                  tensor("torch.float32", "[4]", weight_max, 0, 0.5, 1) + "}, \"output\": [" +
                  tensor("torch.float32", "[4]", 2, 0, 1, out_norm) + "]}"}));
}

// The rank folders of `step`, read, with their labels.
void read_replicas(const TempDir& dir, const std::string& step, std::vector<cmp::Dump>& dumps,
                   std::vector<std::string>& labels) {
  for (const auto& r : cmp::find_ranks(dir.path() / step)) {
    dumps.push_back(cmp::read_dump(r.path));
    labels.push_back(r.label);
  }
}

}  // namespace

TEST_CASE("two ranks, paired by id and compared on two threads; the bad one is named") {
  TempDir dir;
  write_stat_rank(dir, "npu/step0/rank0", 2);
  write_stat_rank(dir, "npu/step0/rank1", 9);  // 9 against 2: 350% NormRelativeErr
  write_stat_rank(dir, "bench/step0/rank0", 2);
  write_stat_rank(dir, "bench/step0/rank1", 2);
  const auto pairs = cmp::pair_ranks(cmp::find_ranks(dir.path() / "npu/step0"),
                                     cmp::find_ranks(dir.path() / "bench/step0"));
  REQUIRE(pairs.size() == 2);
  const auto ranks = cmp::compare_ranks(pairs, {}, 2);
  REQUIRE(ranks.size() == 2);
  CHECK(ranks[0].label == "rank0");
  CHECK(ranks[0].error == 0);
  CHECK(ranks[1].label == "rank1");
  CHECK(ranks[1].error == 1);
  REQUIRE(cmp::earliest_suspect(ranks) != nullptr);
  CHECK(cmp::earliest_suspect(ranks)->label == "rank1");
  CHECK(cmp::verdict_exit_code(ranks) == 1);

  // rank10 must not pair with rank2 (string order would): a set mismatch names the ranks.
  write_stat_rank(dir, "bench/step0/rank2", 2);
  write_stat_rank(dir, "npu/step0/rank10", 2);
  CHECK_THROWS_WITH(cmp::pair_ranks(cmp::find_ranks(dir.path() / "npu/step0"),
                                    cmp::find_ranks(dir.path() / "bench/step0")),
                    "the two runs hold different ranks: only on the NPU side: rank10; only on "
                    "the bench side: rank2");
  // Asked for, by position: rank0-rank0, rank1-rank1, rank10-rank2 (numeric order).
  const auto by_order = cmp::pair_ranks(cmp::find_ranks(dir.path() / "npu/step0"),
                                        cmp::find_ranks(dir.path() / "bench/step0"), true);
  REQUIRE(by_order.size() == 3);
  CHECK(by_order[2].first.label == "rank10");
  CHECK(by_order[2].second.label == "rank2");
}

TEST_CASE("replicas: the rank whose parameter differs from the majority is named") {
  TempDir dir;
  // Outputs differ on every replica (each sees its own data): no majority, not counted.
  write_stat_rank(dir, "step0/rank0", 2, 1.0);
  write_stat_rank(dir, "step0/rank1", 3, 1.0);
  write_stat_rank(dir, "step0/rank2", 4, 1.0000001);  // the corrupted weight
  write_stat_rank(dir, "step0/rank3", 5, 1.0);
  std::vector<cmp::Dump> dumps;
  std::vector<std::string> labels;
  read_replicas(dir, "step0", dumps, labels);
  const auto rep = cmp::compare_replicas(dumps, labels);
  CHECK(rep.rows_checked == 2);  // the input and the weight
  REQUIRE(rep.suspect);
  CHECK(labels[*rep.suspect] == "rank2");
  REQUIRE(rep.first);
  CHECK(rep.first->name == "Module.fc.Linear.forward.0.parameters.weight");
  CHECK(rep.disagreements == std::vector<size_t>{0, 0, 1, 0});

  // Two replicas cannot say which one is wrong.
  const auto two = cmp::compare_replicas({dumps[1], dumps[2]}, {"rank1", "rank2"});
  CHECK_FALSE(two.suspect);
  CHECK(two.rows.empty());  // one against one is no majority either
}

TEST_CASE("faultctl compare: exit 0 all pass, 1 suspect, 2 input error; json and csv") {
  TempDir dir;
  write_stat_rank(dir, "a/rank0", 2);
  write_stat_rank(dir, "b/rank0", 2);
  write_stat_rank(dir, "c/rank0", 9);
  std::ostringstream out, err;
  auto run = [&](std::vector<std::string> args) {
    out.str("");
    err.str("");
    return cmp::run_compare_command(args, false, out, err);
  };
  CHECK(run({dir.file("a"), dir.file("b")}) == 0);
  CHECK(out.str().find("rank0: 3 rows, 3 pass, 0 warning, 0 error") != std::string::npos);
  CHECK(run({dir.file("c"), dir.file("b"), "-o", "json"}) == 1);
  const auto j = nlohmann::json::parse(out.str());
  CHECK(j["exit"] == 1);
  CHECK(j["ranks"][0]["suspect"]["api"] == "Module.fc.Linear.forward.0");
  CHECK(j["ranks"][0]["results"][2]["Result"] == "error");
  CHECK(err.str().find("first suspect: Module.fc.Linear.forward.0") != std::string::npos);
  CHECK(run({dir.file("c/rank0/dump.json"), dir.file("b/rank0"), "-o", "csv", "--output",
             dir.file("out.csv")}) == 1);
  CHECK(out.str().empty());
  CHECK(run({dir.file("missing"), dir.file("b")}) == 2);
  CHECK(err.str().find("missing: not found") != std::string::npos);
  CHECK(run({dir.file("a")}) == 2);
  CHECK(run({dir.file("a"), dir.file("b"), "-o", "xml"}) == 2);

  // A dump cut short still compares its complete part, and says where it stopped.
  const std::string whole = [&] {
    std::ifstream f(dir.file("c/rank0/dump.json"));
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }();
  dir.write("d/rank0/dump.json", whole.substr(0, whole.size() - 40));
  CHECK(run({dir.file("d"), dir.file("b")}) == 0);
  CHECK(out.str().find("note: ") != std::string::npos);
  CHECK(out.str().find("unexpected end of input") != std::string::npos);
}

TEST_CASE("backward calls are renumbered in order; --fuzzy ignores call indices") {
  const std::string t = tensor("torch.float32", "[2]", 1, 0, 0.5, 1);
  const std::string t2 = tensor("torch.float32", "[2]", 1, 0, 0.5, 2);
  // Recomputation numbered the NPU's backward calls 5 and 7, the bench's 0 and 1: the k-th
  // backward call of an API pairs with the k-th, whatever its index.
  const auto npu =
      dump("statistics", {entry("Torch.mm.5.backward", t, t), entry("Torch.mm.7.backward", t, t2)});
  const auto bench =
      dump("statistics", {entry("Torch.mm.0.backward", t, t), entry("Torch.mm.1.backward", t, t)});
  const auto rc = cmp::compare_dumps(cmp::parse_msprobe_dump(npu, "n"),
                                     cmp::parse_msprobe_dump(bench, "b"), {});
  REQUIRE(rc.rows.size() == 4);
  for (const auto& r : rc.rows) CHECK(r.bench);
  CHECK(rc.bench.rows[*rc.rows[3].bench].name == "Torch.mm.1.backward.output.0");
  CHECK(rc.rows[3].rel[3] == "100.0%");

  // One extra forward call on the NPU shifts every later index: only --fuzzy pairs them.
  const auto fwd_npu = dump("statistics", {entry("Torch.mm.1.forward", t, t)});
  const auto fwd_bench = dump("statistics", {entry("Torch.mm.0.forward", t, t)});
  const auto exact = cmp::compare_dumps(cmp::parse_msprobe_dump(fwd_npu, "n"),
                                        cmp::parse_msprobe_dump(fwd_bench, "b"), {});
  CHECK_FALSE(exact.rows[0].bench);
  cmp::CompareOptions fuzzy;
  fuzzy.fuzzy = true;
  const auto loose = cmp::compare_dumps(cmp::parse_msprobe_dump(fwd_npu, "n"),
                                        cmp::parse_msprobe_dump(fwd_bench, "b"), fuzzy);
  CHECK(loose.rows[0].bench);
  CHECK(loose.rows[1].bench);
}

TEST_CASE("replicas name the device when the node size is given; progress is reported") {
  TempDir dir;
  for (int rank : {8, 9, 10}) {
    write_stat_rank(dir, "step0/rank" + std::to_string(rank), rank, rank == 10 ? 7.0 : 1.0);
  }
  std::ostringstream out, err;
  CHECK(cmp::run_compare_command({"--replicas", dir.file("step0"), "--devices-per-node", "8"},
                                 false, out, err) == 1);
  CHECK(out.str().find("suspect: rank10 (device 2 of its node)") != std::string::npos);

  write_stat_rank(dir, "b/rank8", 2);
  write_stat_rank(dir, "b/rank9", 2);
  write_stat_rank(dir, "b/rank10", 2);
  std::vector<size_t> seen;
  const auto pairs =
      cmp::pair_ranks(cmp::find_ranks(dir.path() / "step0"), cmp::find_ranks(dir.path() / "b"));
  const auto ranks = cmp::compare_ranks(pairs, {}, 2, [&](size_t done, size_t total) {
    CHECK(total == 3);
    seen.push_back(done);
  });
  CHECK(seen == std::vector<size_t>{1, 2, 3});
  CHECK(ranks[2].label == "rank10");  // numeric order, not "rank10" before "rank8"
}

TEST_CASE("a data mapping (msprobe -dm) pairs renamed tensors as given") {
  TempDir dir;
  const std::string t = tensor("torch.float32", "[2]", 1, 0, 0.5, 1);
  dir.write("n/dump.json", dump("statistics", {entry("Torch.te_linear.0.forward", t, t)}));
  dir.write("b/dump.json", dump("statistics", {entry("Torch.linear.0.forward", t, t)}));
  dir.write("map.yaml", "Torch.te_linear.0.forward.output.0: Torch.linear.0.forward.output.0\n");
  dir.write("bad.yaml", "- a list\n");
  std::ostringstream out, err;
  CHECK(cmp::run_compare_command(
            {dir.file("n"), dir.file("b"), "--data-mapping", dir.file("map.yaml"), "-o", "csv"},
            false, out, err) == 0);
  std::istringstream lines(out.str());
  std::string header, input, output;
  std::getline(lines, header);
  std::getline(lines, input);
  std::getline(lines, output);
  CHECK(input.rfind("Torch.te_linear.0.forward.input.0,N/A,", 0) == 0);  // not in the mapping
  CHECK(output.rfind("Torch.te_linear.0.forward.output.0,Torch.linear.0.forward.output.0,", 0) ==
        0);
  CHECK(cmp::run_compare_command(
            {dir.file("n"), dir.file("b"), "--data-mapping", dir.file("bad.yaml")}, false, out,
            err) == 2);
  CHECK(err.str().find("expected a map") != std::string::npos);
}

TEST_CASE("ptdbg 1.0: the tensor directory may carry a time stamp") {
  TempDir dir;
  dir.write("rank0/api_stack_npu_dump.pkl",
            "[\"Torch_add_0_forward_output\", 1, [], \"torch.float32\", [2], [1, 0, 0.5, 1]]\n");
  dir.write("rank0/api_stack_npu_dump_20230104_13434/Torch_add_0_forward_output.npy",
            npy_file("<f4", "(2,)", raw_bytes(std::vector<float>{0, 1})));
  const auto d = cmp::read_dump(dir.path() / "rank0");
  CHECK(d.mode == cmp::DumpMode::Tensor);
  CHECK(d.data_dir.filename() == "api_stack_npu_dump_20230104_13434");
}

TEST_CASE("stack.json beside the NPU dump: an NPU_Stack_Info column and the suspect's stack") {
  TempDir dir;
  write_stat_rank(dir, "n/rank0", 9);
  write_stat_rank(dir, "b/rank0", 2);
  dir.write("n/rank0/stack.json", R"json({"0": [["Module.fc.Linear.forward.0"],
    ["File train.py, line 7, in step, \n y = fc(x)",
     "File model.py, line 3, in forward, \n return self.fc(x)"]]})json");
  const auto rc = cmp::compare_dumps(cmp::read_dump(dir.path() / "n/rank0"),
                                     cmp::read_dump(dir.path() / "b/rank0"), {});
  CHECK(rc.npu.has_stack);
  CHECK(cmp::table_header(rc).back() == "NPU_Stack_Info");
  CHECK(cmp::table_cells(rc, rc.rows[0]).back().find("File train.py, line 7") == 0);
  std::ostringstream out;
  cmp::print_summary(out, {rc});
  CHECK(out.str().find("    File model.py, line 3, in forward, ") != std::string::npos);
  CHECK(cmp::rank_json(rc, false)["suspect"]["stack"].get<std::string>().find("train.py") !=
        std::string::npos);
}

TEST_CASE("replicas: the suspect's first tensor is measured against a majority replica") {
  TempDir dir;
  // Statistics: the weight's Max is 1.5 on rank2, 1 elsewhere: Max diff 0.5, 50% of 1.
  for (int rank = 0; rank < 4; ++rank) {
    write_stat_rank(dir, "step0/rank" + std::to_string(rank), rank + 2, rank == 2 ? 1.5 : 1);
  }
  std::vector<cmp::Dump> dumps;
  std::vector<std::string> labels;
  read_replicas(dir, "step0", dumps, labels);
  const auto rep = cmp::compare_replicas(dumps, labels);
  REQUIRE(rep.first);
  CHECK(rep.first->name == "Module.fc.Linear.forward.0.parameters.weight");
  CHECK(rep.first_data_row == 2);  // input.0, then the weight
  CHECK(rep.first->majority == 3);
  CHECK(labels[rep.first->reference] == "rank0");
  CHECK(rep.mode == cmp::DumpMode::Statistics);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"Max diff", "0.5"},      {"Min diff", "0"},           {"Mean diff", "0"},
      {"L2norm diff", "0"},     {"MaxRelativeErr", "50.0%"}, {"MinRelativeErr", "0"},
      {"MeanRelativeErr", "0"}, {"NormRelativeErr", "0"},    {"Suspect max", "1.5"},
      {"Suspect min", "0"},     {"Suspect mean", "0.5"},     {"Suspect l2norm", "1"},
      {"Majority max", "1"},    {"Majority min", "0"},       {"Majority mean", "0.5"},
      {"Majority l2norm", "1"}, {"Result", "pass"}};
  CHECK(rep.evidence == want);

  // Tensor mode: the output is [1, 2, 3, 4] on three ranks and [1, 2, 3, 5] on rank2. Cosine
  // 34 / sqrt(39 * 30) = 0.993999088548, |d| at most 1 (EucDist 1 too), relative error 1/4 on
  // one element of four: the ratios are 0.75.
  for (int rank = 0; rank < 4; ++rank) {
    write_tensor_rank(dir, "step1/rank" + std::to_string(rank), {1, 2, 3, 4},
                      rank == 2 ? std::vector<float>{1, 2, 3, 5} : std::vector<float>{1, 2, 3, 4});
  }
  std::ostringstream out, err;
  CHECK(cmp::run_compare_command({"--replicas", dir.file("step1"), "-o", "json"}, false, out,
                                 err) == 1);
  const auto j = nlohmann::json::parse(out.str());
  CHECK(j["suspect"] == "rank2");
  const auto& first = j["first"];
  CHECK(first["name"] == "Functional.linear.0.forward.output.0");
  CHECK(first["data_row"] == 2);
  CHECK(first["reference"] == "rank0");
  CHECK(first["evidence"]["Cosine"] == "0.993999088548");
  CHECK(first["evidence"]["EucDist"] == "1.0");
  CHECK(first["evidence"]["MaxAbsErr"] == "1.0");
  CHECK(first["evidence"]["MaxRelativeErr"] == "0.25");
  CHECK(first["evidence"]["One Thousandth Err Ratio"] == "0.75");
  CHECK(first["evidence"]["Five Thousandths Err Ratio"] == "0.75");
  CHECK_FALSE(first["evidence"].contains("Data_name"));
  CHECK_FALSE(j.contains("report"));  // not asked for
}

namespace {

// Stands in for faultd: records what --report hands over and answers as told.
struct FakeFaultd {
  cmp::ReportResult answer;
  int calls = 0;
  std::string device, socket;
  std::optional<cmp::ReplicaReport> report;
  cmp::Reporter reporter() {
    return [this](const cmp::ReplicaReport& r, const std::string& d, const std::string& s) {
      ++calls;
      report = r;
      device = d;
      socket = s;
      return answer;
    };
  }
};

}  // namespace

TEST_CASE("compare --report: the suspect goes to faultd with its device; failures exit 2") {
  TempDir dir;
  for (int rank = 0; rank < 4; ++rank) {
    write_stat_rank(dir, "step0/rank" + std::to_string(rank), rank + 2, rank == 2 ? 1.5 : 1);
    write_stat_rank(dir, "same/rank" + std::to_string(rank), rank + 2);
  }
  const std::string step = dir.file("step0");
  FakeFaultd faultd;
  faultd.answer.status = cmp::ReportResult::Status::Recorded;
  faultd.answer.reply = {{"ok", true},
                         {"result", "recorded"},
                         {"fault_id", 7},
                         {"device", "npu2"},
                         {"state", "warning"}};
  std::ostringstream out, err;
  auto run = [&](std::vector<std::string> args) {
    out.str("");
    err.str("");
    return cmp::run_compare_command(args, false, out, err, faultd.reporter());
  };

  SECTION("the replicas agree: nothing is sent") {
    CHECK(run({"--replicas", dir.file("same"), "--report"}) == 0);
    CHECK(out.str().find("--report: the replicas agree: nothing to report") != std::string::npos);
    CHECK(faultd.calls == 0);
  }
  SECTION("no device for the suspect: exit 2, the comparison still printed") {
    CHECK(run({"--replicas", step, "--report", "--device", "rank1=1"}) == 2);
    CHECK(out.str().find("suspect: rank2 disagrees with the majority") != std::string::npos);
    CHECK(err.str().find("the device of rank2 is not known: give --device rank2=DEVICE") !=
          std::string::npos);
    CHECK(faultd.calls == 0);
  }
  SECTION("--device by label: sent with the evidence") {
    CHECK(run({"--replicas", step, "--report", "--device", "rank2=npu2", "--socket", "/s"}) == 1);
    REQUIRE(faultd.calls == 1);
    CHECK(faultd.device == "npu2");
    CHECK(faultd.socket == "/s");
    CHECK(faultd.report->labels[*faultd.report->suspect] == "rank2");
    CHECK(faultd.report->first->name == "Module.fc.Linear.forward.0.parameters.weight");
    CHECK(faultd.report->evidence.front() ==
          std::make_pair(std::string("Max diff"), std::string("0.5")));
    CHECK(out.str().find("suspect: rank2 (device npu2 of its node)") != std::string::npos);
    CHECK(out.str().find("against rank0 (3 of 4 agree): Max diff 0.5, ") != std::string::npos);
    CHECK(out.str().find(
              "reported to faultd: rank2 on device npu2 (recorded, fault 7, device warning)") !=
          std::string::npos);
    CHECK(err.str().empty());
  }
  SECTION("--device by rank id, and by the node's size") {
    CHECK(run({"--replicas", step, "--report", "--device", "2=5"}) == 1);
    CHECK(faultd.device == "5");
    CHECK(run({"--replicas", step, "--report", "--devices-per-node", "2"}) == 1);
    CHECK(faultd.device == "0");  // rank 2 of nodes of two
  }
  SECTION("-o json carries faultd's answer") {
    CHECK(run({"--replicas", step, "--report", "--device", "rank2=2", "-o", "json"}) == 1);
    const auto j = nlohmann::json::parse(out.str());
    CHECK(j["report"]["recorded"] == true);
    CHECK(j["report"]["fault_id"] == 7);
    CHECK(j["report"]["state"] == "warning");
    CHECK_FALSE(j["report"].contains("ok"));
  }
  SECTION("faultd unreachable or refusing: exit 2, the comparison still printed") {
    faultd.answer = {};
    faultd.answer.error = "/run/faultd/control.sock: No such file or directory";
    CHECK(run({"--replicas", step, "--report", "--device", "rank2=2"}) == 2);
    CHECK(out.str().find("suspect: rank2") != std::string::npos);
    CHECK(err.str().find("--report: cannot reach faultd: /run/faultd/control.sock: No such file "
                         "or directory; nothing recorded") != std::string::npos);
    faultd.answer.status = cmp::ReportResult::Status::Refused;
    faultd.answer.error = "device 2 is not in this node's inventory";
    CHECK(run({"--replicas", step, "--report", "--device", "rank2=2", "-o", "json"}) == 2);
    CHECK(nlohmann::json::parse(out.str())["report"]["error"] ==
          "faultd did not record it: device 2 is not in this node's inventory");
    CHECK(err.str().find("faultd did not record it") != std::string::npos);
  }
  SECTION("two replicas: nobody to blame, nothing sent") {
    CHECK(run({"--replicas", dir.file("step0/rank1"), dir.file("step0/rank2"), "--report",
               "--device", "rank2=2"}) == 0);
    CHECK(err.str().find("--report: two replicas cannot name a suspect (give three or more); "
                         "nothing recorded") != std::string::npos);
    CHECK(faultd.calls == 0);
  }
  SECTION("usage errors") {
    CHECK(run({step, step, "--report"}) == 2);
    CHECK(err.str().find("--report, --device and --socket go with --replicas") !=
          std::string::npos);
    CHECK(run({"--replicas", step, "--device", "rank2"}) == 2);
    CHECK(run({"--replicas", step, "--device", "rank2=../x"}) == 2);
    CHECK(faultd.calls == 0);
  }
}

TEST_CASE("a layer mapping (msprobe -lm) pairs layers renamed across frameworks") {
  const std::string ms = R"({"type": "mindspore.Tensor", "dtype": "Float32", "shape": [2],
      "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1})";
  const std::string pt = tensor("torch.float32", "[2]", 1, 0, 0.5, 1);
  auto layers = [](const std::string& framework, const std::vector<std::string>& names,
                   const std::string& t) {
    std::string data;
    for (const auto& n : names) data += (data.empty() ? "" : ", ") + entry(n, t, t);
    return R"({"task": "statistics", "level": "L0", "framework": ")" + framework +
           R"(", "dump_data_dir": null, "data": {)" + data + "}}";
  };
  // The model is `net` on the NPU side, `model` on the bench; a Block's `attn` is `self_attn`
  // there, and its `mlp.dense_h` (two levels) is `feed_forward.fc1`. The head's class differs
  // (Dense, Linear), its path only by the top.
  const auto npu = cmp::parse_msprobe_dump(
      layers("mindspore",
             {"Cell.net.encoder.layers.0.Block.forward.0",
              "Cell.net.encoder.layers.0.attn.Attention.forward.0",
              "Cell.net.encoder.layers.0.mlp.dense_h.Dense.forward.0",
              "Cell.net.head.Dense.forward.0", "Cell.net.head.Dense.backward.0"},
             ms),
      "npu/dump.json");
  const auto bench = cmp::parse_msprobe_dump(
      layers("pytorch",
             {"Module.model.encoder.layers.0.Block.forward.0",
              "Module.model.encoder.layers.0.self_attn.Attention.forward.0",
              "Module.model.encoder.layers.0.feed_forward.fc1.Linear.forward.0",
              "Module.model.head.Linear.forward.0", "Module.model.attn.Attention.forward.0"},
             pt),
      "bench/dump.json");
  const auto mapping = cmp::parse_layer_mapping(R"yaml(
Cell:                          # TopLayer's older name
  net: model
Block:
  attn: self_attn(Attention)   # "(Class)" is dropped
  mlp.dense_h: feed_forward.fc1
  mlp: wrong                   # the longer key wins
Head:
  net: wrong                   # rules of another class do not apply at the top
)yaml",
                                                "map.yaml");
  auto bench_of = [](const cmp::RankCompare& rc, const std::string& npu_name) -> std::string {
    const auto& r = row_named(rc, npu_name);
    return r.bench ? rc.bench.rows[*r.bench].name : "(none)";
  };
  const auto plain = cmp::compare_dumps(npu, bench, {});
  for (const auto& r : plain.rows) CHECK_FALSE(r.bench);  // nothing pairs by name

  cmp::CompareOptions o;
  o.layer_mapping = std::make_shared<cmp::LayerMapping>(mapping);
  const auto rc = cmp::compare_dumps(npu, bench, o);
  CHECK(bench_of(rc, "Cell.net.encoder.layers.0.Block.forward.0.input.0") ==
        "Module.model.encoder.layers.0.Block.forward.0.input.0");
  CHECK(bench_of(rc, "Cell.net.encoder.layers.0.attn.Attention.forward.0.output.0") ==
        "Module.model.encoder.layers.0.self_attn.Attention.forward.0.output.0");
  CHECK(bench_of(rc, "Cell.net.encoder.layers.0.mlp.dense_h.Dense.forward.0.input.0") ==
        "Module.model.encoder.layers.0.feed_forward.fc1.Linear.forward.0.input.0");
  CHECK(bench_of(rc, "Cell.net.head.Dense.forward.0.output.0") ==
        "Module.model.head.Linear.forward.0.output.0");
  // The direction is part of the match: the bench has no backward call of the head.
  CHECK(bench_of(rc, "Cell.net.head.Dense.backward.0.input.0") == "(none)");
  CHECK(std::count_if(rc.rows.begin(), rc.rows.end(), [](const auto& r) { return r.bench; }) == 8);

  // An explicit data mapping wins over the layer mapping.
  o.data_mapping = {
      {"Cell.net.head.Dense.forward.0.output.0", "Module.model.attn.Attention.forward.0.output.0"}};
  CHECK(bench_of(cmp::compare_dumps(npu, bench, o), "Cell.net.head.Dense.forward.0.output.0") ==
        "Module.model.attn.Attention.forward.0.output.0");
}

TEST_CASE("layer mapping files: every problem at its file:line:column") {
  CHECK_THROWS_WITH(cmp::parse_layer_mapping("- a list\n", "m.yaml"),
                    "m.yaml:1:1: a layer mapping is a map of layer class to {NPU name: bench "
                    "name}");
  CHECK_THROWS_WITH(cmp::parse_layer_mapping("TopLayer:\n  a: [\n", "m.yaml"),
                    Catch::StartsWith("m.yaml:3:1: "));  // the YAML itself
  CHECK_THROWS_WITH(cmp::parse_layer_mapping("TopLayer:\n"
                                             "  net: model\n"
                                             "Cell:\n"
                                             "  x: y\n"
                                             "Block: [a]\n"
                                             "Head:\n"
                                             "  a..b: c\n"
                                             "  d: {e: f}\n"
                                             "  g: h\n"
                                             "  g: i\n",
                                             "m.yaml"),
                    "m.yaml:3:1: the top layer is given twice (Cell is TopLayer's older name)\n"
                    "m.yaml:5:8: layer class Block: expected a map of NPU name to bench name\n"
                    "m.yaml:7:3: 'a..b' is not a layer name (names separated by single dots)\n"
                    "m.yaml:8:6: a layer name must be a string, not a map\n"
                    "m.yaml:10:3: 'g' is mapped twice in Head");
  TempDir dir;
  dir.write("n/dump.json", dump("statistics", {}));
  dir.write("bad.yaml", "Block:\n");
  std::ostringstream out, err;
  CHECK(cmp::run_compare_command(
            {dir.file("n"), dir.file("n"), "--layer-mapping", dir.file("bad.yaml")}, false, out,
            err) == 2);
  CHECK(err.str() == "faultctl compare: " + dir.file("bad.yaml") +
                         ":1:1: layer class Block: expected a map of NPU name to bench name\n");
  CHECK(cmp::run_compare_command(
            {dir.file("n"), dir.file("n"), "--layer-mapping", dir.file("none.yaml")}, false, out,
            err) == 2);
}
