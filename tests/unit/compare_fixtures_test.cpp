// The accuracy tools' own fixtures (data/compare/ in the shared directory, never copied here):
// the real ResNet-50 statistics dump compared step1 against step0 must reproduce msprobe's
// result table, and the ptdbg .pkl, the cross-framework pair and the .npy must parse.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compare/compare.hpp"
#include "compare/dump.hpp"
#include "compare/layer_mapping.hpp"
#include "compare/report.hpp"
#include "compare/tensor.hpp"
#include "tests/support/shared_data.hpp"

namespace cmp = faultd::compare;
using faultd::testing::compare_fixture;

namespace {

// One CSV record per line as pandas writes them (QUOTE_MINIMAL; no line breaks in these cells).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(cell);
      cell.clear();
    } else if (c == '\n') {
      row.push_back(cell);
      rows.push_back(row);
      row.clear();
      cell.clear();
    } else if (c != '\r') {
      cell += c;
    }
  }
  if (!cell.empty() || !row.empty()) {
    row.push_back(cell);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

TEST_CASE("quick-start statistics dump, step1 against step0, reproduces msprobe's table") {
  SKIP_WITHOUT_COMPARE_FIXTURE("msprobe_quickstart/step0/proc2016/dump.json.gz");
  const auto npu =
      cmp::read_dump(compare_fixture("msprobe_quickstart/step1/proc2016/dump.json.gz"));
  const auto bench =
      cmp::read_dump(compare_fixture("msprobe_quickstart/step0/proc2016/dump.json.gz"));
  CHECK(npu.mode == cmp::DumpMode::Statistics);
  CHECK_FALSE(npu.truncated);
  const auto rc = cmp::compare_dumps(npu, bench, {});

  // The figures msprobe reports for this pair.
  CHECK(rc.rows.size() == 2822);
  CHECK(rc.pass == 2696);
  CHECK(rc.error == 64);
  CHECK(rc.warning == 62);
  REQUIRE(rc.first_error);
  CHECK(rc.first_error->name == "Tensor.add_.0.forward.output.0");
  CHECK(rc.first_error->row + 1 == 17);  // data row 17, CSV line 18
  REQUIRE(rc.first_warning);
  CHECK(rc.first_warning->name == "Functional.relu.1.forward.output.0");
  CHECK(rc.first_warning->row + 1 == 78);
  REQUIRE(rc.suspect() != nullptr);
  CHECK(rc.suspect()->api == "Tensor.add_.0.forward");

  const std::string oracle_path = "msprobe_quickstart/expected/compare_result_proc2016.csv.gz";
  SKIP_WITHOUT_COMPARE_FIXTURE(oracle_path);
  const auto oracle = parse_csv(cmp::read_text_file(compare_fixture(oracle_path)));
  REQUIRE(oracle.size() == 2823);
  CHECK(oracle[0] == cmp::table_header(rc));
  // Every cell as msprobe wrote it, down to the last digit of each float (its diffs go through
  // pandas' own number parser, which this reproduces).
  size_t differing_cells = 0;
  std::string first_difference;
  for (size_t r = 0; r < rc.rows.size(); ++r) {
    const auto mine = cmp::table_cells(rc, rc.rows[r]);
    const auto& ref = oracle[r + 1];
    REQUIRE(mine.size() == ref.size());
    for (size_t c = 0; c < mine.size(); ++c) {
      if (mine[c] == ref[c]) continue;
      if (differing_cells++ == 0) {
        first_difference = "data row " + std::to_string(r + 1) + ", " + oracle[0][c] + ": " +
                           mine[c] + " vs " + ref[c];
      }
    }
  }
  INFO(first_difference);
  CHECK(differing_cells == 0);
  // And the file itself, byte for byte.
  std::ostringstream csv;
  cmp::write_csv(csv, rc);
  CHECK(csv.str() == cmp::read_text_file(compare_fixture(oracle_path)));
}

TEST_CASE("MindSpore against PyTorch: Mint. is Torch., and dtypes compare without spelling") {
  SKIP_WITHOUT_COMPARE_FIXTURE("msprobe_xframe/mindspore_data/dump.json");
  const auto rc =
      cmp::compare_dumps(cmp::read_dump(compare_fixture("msprobe_xframe/mindspore_data")),
                         cmp::read_dump(compare_fixture("msprobe_xframe/pytorch_data")), {});
  bool cos_matched = false;
  for (const auto& row : rc.rows) {
    const auto& n = rc.npu.rows[row.npu];
    if (n.name != "Mint.cos.0.forward.input.0") continue;
    REQUIRE(row.bench);
    CHECK(rc.bench.rows[*row.bench].name == "Torch.cos.0.forward.input.0");
    CHECK(row.result == "pass");  // Float32 against torch.float32 is no dtype difference
    cos_matched = true;
  }
  CHECK(cos_matched);
}

TEST_CASE("MindSpore against PyTorch with the fixture's layer_mapping.yaml: layers pair") {
  SKIP_WITHOUT_COMPARE_FIXTURE("msprobe_xframe/layer_mapping.yaml");
  cmp::CompareOptions o;
  o.layer_mapping = std::make_shared<cmp::LayerMapping>(
      cmp::load_layer_mapping(compare_fixture("msprobe_xframe/layer_mapping.yaml").string()));
  const auto rc =
      cmp::compare_dumps(cmp::read_dump(compare_fixture("msprobe_xframe/mindspore_data")),
                         cmp::read_dump(compare_fixture("msprobe_xframe/pytorch_data")), o);
  std::map<std::string, std::string> paired;
  for (const auto& row : rc.rows) {
    if (row.bench) paired[rc.npu.rows[row.npu].name] = rc.bench.rows[*row.bench].name;
  }
  // TopLayer: network_with_loss -> module; ParallelTransformerLayer: attention -> self_attention.
  const std::string ms = "Cell.network_with_loss.module.language_model.";
  const std::string pt = "Module.module.module.language_model.";
  for (const auto& [n, b] : std::vector<std::pair<std::string, std::string>>{
           {"embedding.word_embeddings.VocabParallelEmbedding.forward.0.input.0",
            "embedding.word_embeddings.VocabParallelEmbedding.forward.0.input.0"},
           {"encoder.layers.0.ParallelTransformerLayer.forward.0.output.0",
            "encoder.layers.0.ParallelTransformerLayer.forward.0.output.0"},
           {"encoder.layers.0.attention.ParallelAttention.forward.0.output.0",
            "encoder.layers.0.self_attention.ParallelAttention.forward.0.output.0"}}) {
    INFO(n);
    CHECK(paired[ms + n] == pt + b);
  }
  CHECK(paired["Mint.cos.0.forward.input.0"] == "Torch.cos.0.forward.input.0");  // still by name
}

TEST_CASE("a statistics dump against a tensor dump is refused, naming both") {
  const auto stats =
      cmp::parse_msprobe_dump(R"({"task": "statistics", "data": {}})", "a/dump.json");
  const auto tensor = cmp::parse_msprobe_dump(R"({"task": "tensor", "data": {}})", "b/dump.json");
  CHECK_THROWS_WITH(cmp::compare_dumps(stats, tensor, {}),
                    "cannot compare a statistics dump (a/dump.json) with a tensor dump "
                    "(b/dump.json)");
}
