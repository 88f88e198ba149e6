// The readers: Python's JSON dialect, msprobe dump.json, ptdbg .pkl, .npy and .pt, including
// the ways real files go wrong (cut short by a crash, big-endian, compressed members).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "compare/dump.hpp"
#include "compare/json_reader.hpp"
#include "compare/python_text.hpp"
#include "compare/tensor.hpp"
#include "tests/support/compare_files.hpp"
#include "tests/support/shared_data.hpp"
#include "tests/support/temp_dir.hpp"

namespace cmp = faultd::compare;
using faultd::testing::npy_file;
using faultd::testing::pt_file;
using faultd::testing::raw_bytes;

namespace {

std::vector<double> all_of(const cmp::Tensor& t, size_t chunk = 3) {
  std::vector<double> out(t.count);
  for (size_t at = 0; at < t.count; at += chunk) {
    t.read(at, std::min(chunk, t.count - at), out.data() + at);
  }
  return out;
}

cmp::Tensor npy(const std::string& bytes) {
  return cmp::parse_npy(cmp::Bytes::copy_of(bytes), "t.npy");
}

}  // namespace

TEST_CASE("JSON: Python's NaN, Infinity and -Infinity; member order; int or float") {
  const auto p = cmp::parse_json(
      R"({"b": NaN, "a": Infinity, "c": -Infinity, "i": 2, "f": 2.0, "e": 1e-05, "s": "x\u00e9"})");
  REQUIRE_FALSE(p.error);
  const auto& m = p.value.members;
  REQUIRE(m.size() == 7);
  CHECK(m[0].first == "b");  // file order, not sorted
  CHECK(std::isnan(m[0].second.number));
  CHECK(m[1].second.number == INFINITY);
  CHECK(m[2].second.number == -INFINITY);
  CHECK(m[3].second.type == cmp::JsonValue::Type::Int);
  CHECK(m[4].second.type == cmp::JsonValue::Type::Float);
  CHECK(m[5].second.number == 1e-05);
  CHECK(m[6].second.text == "x\xc3\xa9");
}

TEST_CASE("JSON: a truncated document names where it stopped and keeps what was complete") {
  const auto p = cmp::parse_json("{\"data\": {\"a\": [1, 2],\n \"b\": [3, ");
  REQUIRE(p.error);
  CHECK(p.error->truncated);
  CHECK(p.error->line == 2);
  CHECK(p.error->message.find("unexpected end of input (line 2") != std::string::npos);
  REQUIRE(p.open_path.size() >= 2);
  CHECK(p.open_path[0] == 0);  // "data"
  CHECK(p.open_path[1] == 1);  // "b" was open
  CHECK(p.value.find("data")->find("a")->items.size() == 2);

  const auto bad = cmp::parse_json("{\"a\": 1 \"b\": 2}");
  REQUIRE(bad.error);
  CHECK_FALSE(bad.error->truncated);
  CHECK(bad.error->column == 9);
  CHECK(cmp::parse_json(std::string(300, '[')).error->message.find("too deep") !=
        std::string::npos);
}

TEST_CASE("Python spellings: float repr, list str, CSV quoting") {
  CHECK(cmp::python_float_repr(1e-05) == "1e-05");
  CHECK(cmp::python_float_repr(0.0001) == "0.0001");
  CHECK(cmp::python_float_repr(1.0) == "1.0");
  CHECK(cmp::python_float_repr(-0.5) == "-0.5");
  CHECK(cmp::python_float_repr(1e16) == "1e+16");
  CHECK(cmp::python_float_repr(123456789012345.6) == "123456789012345.6");
  CHECK(cmp::python_float_repr(7.441285561071709e-05) == "7.441285561071709e-05");
  CHECK(cmp::python_float_repr(NAN) == "nan");
  CHECK(cmp::python_list_repr({32, 3}) == "[32, 3]");
  CHECK(cmp::python_list_repr({}) == "[]");
  CHECK(cmp::csv_field("a,b") == "\"a,b\"");
  CHECK(cmp::csv_field("[\"x\"]") == "\"[\"\"x\"\"]\"");
  CHECK(cmp::csv_field("plain") == "plain");
}

TEST_CASE("msprobe dump.json: leaves flattened as msprobe names them, inputs before outputs") {
  const std::string text = R"({
 "task": "statistics", "level": "mix", "framework": "pytorch", "dump_data_dir": null,
 "data": {
  "Functional.max_pool2d.0.forward": {
   "input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 3],
                   "Max": 1.0, "Min": -1, "Mean": NaN, "Norm": 2.5, "requires_grad": true},
                  null, [{"type": "int", "value": 2}], {"type": "torch.Size", "value": [2, 3]}],
   "input_kwargs": {"ceil_mode": {"type": "bool", "value": false}},
   "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [], "Max": 3,
               "Min": 3, "Mean": 3, "Norm": 3, "requires_grad": false}],
   "parameters": {"weight": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1],
                             "Max": 1, "Min": 1, "Mean": 1, "Norm": 1}}
  },
  "Module.fc.Linear.parameters_grad.0": {"bias": [{"type": "torch.Tensor",
     "dtype": "torch.float32", "shape": [4], "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1}]}
 }
})";
  const auto d = cmp::parse_msprobe_dump(text, "x/dump.json");
  CHECK(d.mode == cmp::DumpMode::Statistics);
  CHECK_FALSE(d.truncated);
  std::vector<std::string> names;
  for (const auto& r : d.rows) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{
                     "Functional.max_pool2d.0.forward.input.0",
                     "Functional.max_pool2d.0.forward.input.1",
                     "Functional.max_pool2d.0.forward.input.2.0",
                     "Functional.max_pool2d.0.forward.input.3",
                     "Functional.max_pool2d.0.forward.input.ceil_mode",
                     "Functional.max_pool2d.0.forward.parameters.weight",
                     "Functional.max_pool2d.0.forward.output.0",
                     "Module.fc.Linear.parameters_grad.0.bias",
                 });
  const auto& t = d.rows[0];
  CHECK(t.dtype == "torch.float32");
  CHECK(t.shape_text == "[2, 3]");
  CHECK(t.max.str() == "1.0");
  CHECK(t.min.str() == "-1");
  CHECK(std::isnan(t.mean.number));
  CHECK(t.requires_grad.str() == "True");
  CHECK(d.rows[1].dtype == "None");  // a None argument is a row of Nones
  CHECK(d.rows[2].dtype == "<class 'int'>");
  CHECK(d.rows[2].max.str() == "2");
  CHECK(d.rows[3].dtype == "torch.Size");
  CHECK(d.rows[3].shape_text == "[2, 3]");
  CHECK(d.rows[4].max.str() == "False");
  CHECK(d.rows[4].md5 == "ea0c4734");  // zlib.crc32(b"False"): compare checksums str(value)
  CHECK(d.rows[5].io == cmp::IoKind::Params);
  CHECK(d.rows[6].io == cmp::IoKind::Output);
  CHECK(d.rows[7].io == cmp::IoKind::ParamsGrad);
  CHECK(cmp::crc32_hex("hello") == "3610a686");  // zlib.crc32(b"hello")
}

TEST_CASE("msprobe dump.json cut short mid-entry: the complete entries are compared") {
  const std::string whole = R"({"task": "statistics", "level": "L1", "framework": "pytorch",
 "dump_data_dir": null, "data": {
  "Torch.add.0.forward": {"input_args": [{"type": "int", "value": 1}], "output": [{"type": "int", "value": 2}]},
  "Torch.mul.0.forward": {"input_args": [{"type": "int", "value": 3}], "output": [{"type": "int", "value": 6}]}
 }})";
  const std::string cut = whole.substr(0, whole.find("\"value\": 6") + 5);
  const auto d = cmp::parse_msprobe_dump(cut, "rank0/dump.json");
  REQUIRE(d.truncated);
  CHECK(d.truncated->find("rank0/dump.json") != std::string::npos);
  CHECK(d.truncated->find("unexpected end of input (line 4") != std::string::npos);
  REQUIRE(d.rows.size() == 2);  // Torch.add only; the half-written Torch.mul is dropped
  CHECK(d.rows[1].name == "Torch.add.0.forward.output.0");
  CHECK_THROWS_AS(cmp::parse_msprobe_dump("{\"task\": \"stat", "d.json"), cmp::InputError);
}

TEST_CASE("msprobe md5 mode is recognised from the tensors' checksums") {
  const auto d = cmp::parse_msprobe_dump(R"({"task": "statistics", "data": {"Torch.add.0.forward":
    {"output": [{"type": "torch.Tensor", "dtype": "torch.bfloat16", "shape": [2],
     "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1, "md5": "00d69ba8"}]}}})",
                                         "dump.json");
  CHECK(d.mode == cmp::DumpMode::Md5);
  CHECK(d.rows[0].md5 == "00d69ba8");
}

TEST_CASE("ptdbg .pkl: 3- and 4-value summaries, md5, stack records, both name separators") {
  const std::string text =
      "[\"Functional_linear_0_forward_input.0\", 1, [], \"torch.float32\", [3, 2], [1.5, -1.0, "
      "0.25]]\n"
      "[\"Functional.linear.0.forward.output\", 1, [], \"torch.float16\", [3], [2.0, 0.5, 1.0, "
      "NaN]]\n"
      "[\"Functional.linear.0.forward_stack_info\", [[\"train.py\", 10, \"step\", \"y = "
      "f(x)\"]]]\n"
      "[\"Torch.relu.0.forward.input.0\", 1, [], \"torch.bool\", [0], [[], [], [], \"Nan\"]]\n"
      "[\"Torch.relu.0.forward.out";  // the writer was killed mid-line
  const auto d = cmp::parse_ptdbg_pkl(text, "dir/api_stack_npu_dump.pkl");
  REQUIRE(d.rows.size() == 3);
  CHECK(d.rows[0].api == "Functional_linear_0_forward");
  CHECK(d.rows[0].io == cmp::IoKind::Input);
  CHECK(d.rows[0].norm.is_none());
  CHECK(d.rows[1].api == "Functional.linear.0.forward");
  CHECK(d.rows[1].io == cmp::IoKind::Output);
  CHECK(std::isnan(d.rows[1].norm.number));
  CHECK(d.rows[2].max.is_none());
  CHECK(d.has_stack);
  CHECK(d.stacks.at("Functional.linear.0.forward") == "train.py, 10, step, y = f(x)");
  REQUIRE(d.truncated);
  CHECK(d.truncated->find("line 5") != std::string::npos);
  CHECK(d.data_dir == std::filesystem::path("dir/api_stack_npu_dump"));

  const auto md5 = cmp::parse_ptdbg_pkl(
      "[\"Torch.add.0.forward.output\", 1, \"1a2b3c4d\", \"torch.float32\", [2], []]\n", "m.pkl");
  CHECK(md5.mode == cmp::DumpMode::Md5);
}

TEST_CASE("the real ptdbg .pkl: 8 records in 3 APIs") {
  SKIP_WITHOUT_COMPARE_FIXTURE("ptdbg_att/npu_test.pkl");
  const auto d = cmp::read_dump(faultd::testing::compare_fixture("ptdbg_att/npu_test.pkl"));
  REQUIRE(d.rows.size() == 8);
  std::vector<std::string> apis;
  for (const auto& r : d.rows) {
    if (apis.empty() || apis.back() != r.api) apis.push_back(r.api);
  }
  CHECK(apis == std::vector<std::string>{"Functional_linear_0_forward", "Torch_relu_0_forward",
                                         "Functional_relu_0_forward"});
  CHECK(d.rows[3].name == "Functional_linear_0_forward_output");
  CHECK(d.rows[3].io == cmp::IoKind::Output);
}

TEST_CASE("the real cross-framework pair parses with its frameworks") {
  SKIP_WITHOUT_COMPARE_FIXTURE("msprobe_xframe/mindspore_data/dump.json");
  const auto ms = cmp::read_dump(faultd::testing::compare_fixture("msprobe_xframe/mindspore_data"));
  const auto pt = cmp::read_dump(faultd::testing::compare_fixture("msprobe_xframe/pytorch_data"));
  CHECK(ms.framework == "mindspore");
  CHECK(pt.framework == "pytorch");
  CHECK_FALSE(ms.rows.empty());
  CHECK_FALSE(pt.rows.empty());
  CHECK(ms.rows[0].dtype == "Int32");
}

TEST_CASE(".npy: the real v1 file decodes to [[1, 2, 3], [1, 2, 3]]") {
  SKIP_WITHOUT_COMPARE_FIXTURE("npy/2_3_input.npy");
  const auto t = cmp::read_npy(faultd::testing::compare_fixture("npy/2_3_input.npy"));
  CHECK(t.type == cmp::ElemType::F32);
  CHECK(t.shape == std::vector<int64_t>{2, 3});
  CHECK(all_of(t) == std::vector<double>{1, 2, 3, 1, 2, 3});
}

TEST_CASE(".npy: v1-v3 headers, dtypes, Fortran order, and what is refused") {
  SECTION("versions and dtypes") {
    const auto v3 = npy(npy_file("<i8", "(3,)", raw_bytes(std::vector<int64_t>{-5, 0, 7}), 3));
    CHECK(v3.type == cmp::ElemType::I64);
    CHECK(all_of(v3) == std::vector<double>{-5, 0, 7});
    // f16: 1.0, -2.0, inf, the smallest subnormal
    const auto h = npy(npy_file(
        "<f2", "(4,)", raw_bytes(std::vector<uint16_t>{0x3C00, 0xC000, 0x7C00, 0x0001}), 2));
    const auto hv = all_of(h);
    CHECK(hv[0] == 1.0);
    CHECK(hv[1] == -2.0);
    CHECK(hv[2] == INFINITY);
    CHECK(hv[3] == std::ldexp(1.0, -24));
    const auto b = npy(npy_file("|b1", "(2,)", std::string("\x01\x00", 2)));
    CHECK(all_of(b) == std::vector<double>{1, 0});
    const auto scalar = npy(npy_file("<f8", "()", raw_bytes(std::vector<double>{2.5})));
    CHECK(scalar.shape.empty());
    CHECK(scalar.count == 1);
    CHECK(all_of(scalar) == std::vector<double>{2.5});
    // Fortran order: memory holds columns; elements come back in row-major order.
    const auto f =
        npy(npy_file("<f4", "(2, 3)", raw_bytes(std::vector<float>{1, 4, 2, 5, 3, 6}), 1, true));
    CHECK(all_of(f, 4) == std::vector<double>{1, 2, 3, 4, 5, 6});
  }
  SECTION("what is refused, and why") {
    auto why = [](const std::string& bytes) {
      try {
        npy(bytes);
      } catch (const cmp::InputError& e) {
        return std::string(e.what());
      }
      return std::string("accepted");
    };
    const std::string good = npy_file("<f4", "(4,)", raw_bytes(std::vector<float>{1, 2, 3, 4}));
    CHECK(why(good.substr(0, good.size() - 3)).find("truncated: the data ends at byte") !=
          std::string::npos);
    CHECK(why(good.substr(0, 40)).find("truncated in the header") != std::string::npos);
    CHECK(why(npy_file(">f4", "(1,)", "abcd")).find("big-endian") != std::string::npos);
    CHECK(why(npy_file("<c8", "(1,)", "abcdefgh")).find("unsupported dtype") != std::string::npos);
    CHECK(why("hello").find("not a .npy") != std::string::npos);
    CHECK(why(npy_file("<f4", "(4611686018427387904, 4)", "")).find("too large") !=
          std::string::npos);
  }
}

TEST_CASE(".pt: torch.save archives, with offset, strides and bf16") {
  const auto pt = [](const std::string& bytes) {
    return cmp::parse_pt(cmp::Bytes::copy_of(bytes), "t.pt");
  };
  const auto f32 = pt(pt_file("FloatStorage", raw_bytes(std::vector<float>{1, 2, 3, 4, 5, 6}),
                              {2, 3}, {3, 1}, 0, 6));
  CHECK(f32.type == cmp::ElemType::F32);
  CHECK(f32.shape == std::vector<int64_t>{2, 3});
  CHECK(all_of(f32) == std::vector<double>{1, 2, 3, 4, 5, 6});
  // A transposed view (size (3, 2), stride (1, 3)) of the same storage, from element 0.
  const auto tr = pt(pt_file("FloatStorage", raw_bytes(std::vector<float>{1, 2, 3, 4, 5, 6}),
                             {3, 2}, {1, 3}, 0, 6));
  CHECK_FALSE(tr.contiguous);
  CHECK(all_of(tr) == std::vector<double>{1, 4, 2, 5, 3, 6});
  // A view starting at element 2.
  const auto off =
      pt(pt_file("FloatStorage", raw_bytes(std::vector<float>{1, 2, 3, 4, 5, 6}), {2}, {1}, 2, 6));
  CHECK(all_of(off) == std::vector<double>{3, 4});
  // bf16 stays 16-bit in the file: 1.0, 2.0, 1.5, -0.5.
  const auto bf =
      pt(pt_file("BFloat16Storage",
                 raw_bytes(std::vector<uint16_t>{0x3F80, 0x4000, 0x3FC0, 0xBF00}), {4}, {1}, 0, 4));
  CHECK(bf.type == cmp::ElemType::BF16);
  CHECK(all_of(bf) == std::vector<double>{1.0, 2.0, 1.5, -0.5});
  // A 0-d tensor.
  const auto zero_d = pt(pt_file("DoubleStorage", raw_bytes(std::vector<double>{7}), {}, {}, 0, 1));
  CHECK(zero_d.shape.empty());
  CHECK(all_of(zero_d) == std::vector<double>{7});

  // A view that reaches past its storage, and a file cut short, are refused with a reason.
  CHECK_THROWS_WITH(
      pt(pt_file("FloatStorage", raw_bytes(std::vector<float>{1, 2}), {3}, {1}, 0, 2)),
      Catch::Contains("needed"));
  const std::string whole = pt_file("FloatStorage", raw_bytes(std::vector<float>{1, 2}), {2}, {1});
  CHECK_THROWS_WITH(pt(whole.substr(0, whole.size() - 30)), Catch::Contains("not a torch.save"));
}
