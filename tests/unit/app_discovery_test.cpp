// Discovery: the inventory read from real npu-smi tables (tests/corpus/logs, with their sources
// in tests/corpus/expected.tsv), real nvidia-smi query outputs (tests/golden/nvidia-smi-query,
// sources in its README) and a /dev directory.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "daemon/app/discovery.hpp"
#include "daemon/core/child_process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using namespace faultd::command_parsers;

namespace {

std::string read(const std::string& relative) {
  std::ifstream in(std::string(FAULTD_SOURCE_DIR) + "/" + relative, std::ios::binary);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The complete row pairs of a table (the corpus excerpts end mid-table).
std::vector<DeviceHealth> table_of(const std::string& corpus_log) {
  std::string error;
  bool truncated = false;
  auto table = parse_npu_smi_info(read("tests/corpus/logs/" + corpus_log), error, &truncated);
  REQUIRE(table);
  return *table;
}

}  // namespace

TEST_CASE("npu-smi, one chip per NPU: the NPU id is the device, with its bus id and name",
          "[app][discovery]") {
  const Discovery d =
      discovery_from_npu_smi(table_of("asc_neg_npusmi_info_vm_passthrough_npu4_npu5_ok.txt"));
  CHECK(d.by == "npu-smi");
  REQUIRE(d.devices.size() == 2);
  CHECK(d.devices[0].id == "4");
  CHECK(d.devices[0].card == "4");
  CHECK(d.devices[0].chip == "0");
  CHECK(d.devices[0].bus_id == "0000:06:00.0");
  CHECK(d.devices[0].model == "910B3");
  CHECK(d.devices[1].id == "5");
  CHECK(d.devices[1].bus_id == "0000:07:00.0");
  Inventory inv;
  inv.merge(d, {});
  for (const char* name :
       {"5", "5-0", "Ascend910-5", "davinci5", "npu:5", "0000:07:00", "07:00.0"}) {
    INFO(name);
    CHECK(inv.resolve(name) == "5");
  }
}

TEST_CASE("npu-smi, A3 layout: chips are logical devices in table order, with physical ids",
          "[app][discovery]") {
  const Discovery d =
      discovery_from_npu_smi(table_of("asc_neg_npusmi_info_table_a3_all_ok_24_1_rc3.txt"));
  REQUIRE(d.devices.size() == 2);
  CHECK(d.devices[0].id == "0");
  CHECK(d.devices[1].id == "1");
  CHECK(d.devices[1].card == "0");
  CHECK(d.devices[1].chip == "1");
  CHECK(d.devices[1].physical_id == "1");
  CHECK(d.devices[1].bus_id == "0000:9F:00.0");
  CHECK(d.devices[1].model == "Ascend910");
}

TEST_CASE("npu-smi, 310P layout: the Device column is the logical id", "[app][discovery]") {
  const Discovery d =
      discovery_from_npu_smi(table_of("asc_neg_npusmi_info_310p3_layout_npu_ids_0_and_32_ok.txt"));
  REQUIRE(d.devices.size() == 1);
  CHECK(d.devices[0].id == "0");
  CHECK(d.devices[0].card == "0");
  CHECK(d.devices[0].bus_id == "0000:01:00.0");
  Inventory inv;
  inv.merge(d, {});
  CHECK(inv.resolve("Ascend310P-0") == "0");
}

TEST_CASE("a cut npu-smi table is no discovery", "[app][discovery]") {
  std::string error;
  CHECK_FALSE(parse_npu_smi_info(
      read("tests/corpus/logs/asc_neg_npusmi_info_table_a3_all_ok_24_1_rc3.txt"), error));
  CHECK_THAT(error, Catch::Contains("truncated"));
}

TEST_CASE("nvidia-smi query outputs of real nodes parse to what they print", "[app][discovery]") {
  const std::string dir = "tests/golden/nvidia-smi-query/";
  std::map<std::string, std::vector<std::vector<std::string>>> expected;
  std::istringstream rows(read(dir + "expected.tsv"));
  for (std::string line; std::getline(rows, line);) {
    std::vector<std::string> cells;
    std::istringstream cols(line);
    for (std::string cell; std::getline(cols, cell, '\t');) cells.push_back(cell);
    cells.resize(6);
    expected[cells[0]].push_back(cells);
  }
  size_t files = 0;
  for (const auto& [file, want] : expected) {
    if (file.starts_with("L-")) continue;  // `nvidia-smi -L`: not a query output
    INFO(file);
    const std::string stem = file.substr(0, file.size() - 4);
    std::istringstream query(read(dir + stem + ".query"));
    std::string fields;
    std::getline(query, fields);
    std::string error;
    const auto gpus = parse_nvidia_smi_gpus(read(dir + file), error, fields);
    INFO(error);
    REQUIRE(gpus);
    REQUIRE(gpus->size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const GpuInfo& g = (*gpus)[i];
      CHECK(g.index == want[i][1]);
      CHECK(g.bus_id == want[i][2]);
      CHECK(g.uuid == want[i][3]);
      CHECK(g.serial == (want[i][4] == "[N/A]" ? "" : want[i][4]));
      CHECK(g.name == want[i][5]);
    }
    ++files;
  }
  CHECK(files >= 5);
}

TEST_CASE("nvidia-smi: the inventory's own query, with every spelling of each GPU",
          "[app][discovery]") {
  // The default query's layout (index, pci.bus_id, uuid, serial, name), built from the A800
  // node's real index, UUID, serial and name cells and bus ids in nvidia-smi's printed form.
  const std::string output =
      "0, 00000000:18:00.0, GPU-fd189414-e0f6-58a0-7031-fefe0ce43b1d, 1321923001828, NVIDIA "
      "A800-SXM4-80GB\n"
      "5, 00000000:3B:00.0, GPU-67fc57fc-34ad-4126-2f66-0b8d29144c75, [N/A], NVIDIA "
      "A800-SXM4-80GB\n";
  std::string error;
  const auto gpus = parse_nvidia_smi_gpus(output, error);
  REQUIRE(gpus);
  const Discovery d = discovery_from_nvidia_smi(*gpus);
  REQUIRE(d.devices.size() == 2);
  CHECK(d.devices[1].id == "5");
  CHECK(d.devices[1].serial.empty());
  CHECK(d.devices[1].model == "NVIDIA A800-SXM4-80GB");
  Inventory inv;
  inv.merge(d, {});
  for (const char* name : {"5", "0000:3b:00", "00000000:3B:00.0", "3b:00.0",
                           "GPU-67fc57fc-34ad-4126-2f66-0b8d29144c75", "cuda:5", "nvidia5"}) {
    INFO(name);
    CHECK(inv.resolve(name) == "5");
  }
  CHECK(inv.resolve("1321923001828") == "0");
  // Garbled or foreign output is refused whole.
  for (const char* bad :
       {"", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
        "0, 00000000:18:00.0\n", "x, 00000000:18:00.0, GPU-a, 1, n\n", "0, 18, GPU-a, 1, n\n"}) {
    INFO(bad);
    CHECK_FALSE(parse_nvidia_smi_gpus(bad, error));
  }
}

TEST_CASE("/dev: davinciN and nvidiaN are devices, the control nodes are not", "[app][discovery]") {
  faultd::testing::TempDir dir;
  for (const char* name : {"davinci0", "davinci1", "davinci10", "davinci_manager", "devmm_svm",
                           "hisi_hdc", "nvidia3", "nvidiactl", "nvidia-uvm", "nvidia-modeset"}) {
    std::ofstream(dir.file(name)) << "";
  }
  const Discovery d = discovery_from_dev(dir.path().string());
  CHECK(d.by == "dev");
  std::vector<std::string> ids;
  for (const auto& dev : d.devices) ids.push_back(dev.vendor + ":" + dev.id);
  CHECK(ids == std::vector<std::string>{"ascend:0", "ascend:1", "nvidia:3", "ascend:10"});
}

// Security audit N12: a discoverer ran with faultd's whole environment and was found through
// faultd's PATH; it now runs as a hook does.
TEST_CASE("a discoverer is found in the system's directories, never in faultd's PATH",
          "[app][discovery]") {
  std::string error;
  const auto sh = discoverer_command({"sh", "-c", "exit 0"}, error);
  REQUIRE(sh);
  CHECK(sh->argv.front().front() == '/');
  CHECK(std::filesystem::exists(sh->argv.front()));
  CHECK(sh->argv == std::vector<std::string>{sh->argv.front(), "-c", "exit 0"});

  // A program that only faultd's PATH holds (a directory a unit file or a shell put first).
  faultd::testing::TempDir dir;
  const std::string planted = dir.write("faultd-test-planted-smi", "#!/bin/sh\nexit 0\n");
  std::filesystem::permissions(planted, std::filesystem::perms::owner_all);
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path != nullptr ? old_path : "";
  ::setenv("PATH", (dir.path().string() + ":" + saved).c_str(), 1);
  const auto found = discoverer_command({"faultd-test-planted-smi", "info"}, error);
  ::setenv("PATH", saved.c_str(), 1);
  CHECK_FALSE(found);
  CHECK(error == "faultd-test-planted-smi: not found in " + std::string(kChildPath));

  // A path given in the config is the one run.
  const auto given = discoverer_command({planted, "info"}, error);
  REQUIRE(given);
  CHECK(given->argv == std::vector<std::string>{planted, "info"});
}

TEST_CASE("a discoverer's environment is the hooks' PATH and nothing of faultd's",
          "[app][discovery]") {
  ::setenv("FAULTD_TEST_SECRET_ENV", "hunter2", 1);
  std::string error;
  const auto cmd = discoverer_command({"/bin/true"}, error);
  ::unsetenv("FAULTD_TEST_SECRET_ENV");
  REQUIRE(cmd);
  using Env = std::vector<std::pair<std::string, std::string>>;
  CHECK(cmd->env == Env{{"PATH", std::string(kChildPath)}});
}
