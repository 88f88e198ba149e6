// The activity parsers (collectors/command/parsers/activity.hpp) on real tool output where one
// was found (tests/golden/npu-smi-activity/README.md says where each comes from), on
// constructed inputs where none was (labelled), and on hostile input; and the sample lines
// a command source writes from them.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "collectors/command/parsers/activity.hpp"
#include "collectors/command/records.hpp"

using namespace faultd;
using namespace faultd::command_parsers;

namespace {

std::string golden(const std::string& relative) {
  std::ifstream in(std::string(FAULTD_SOURCE_DIR) + "/" + relative, std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("npu-smi usages: the 25.5.1 layout (telegraf's recorded output)") {
  std::string error;
  const auto u = parse_npu_smi_usages(
      golden("tests/golden/npu-smi-activity/usages-telegraf-25.5.1.txt"), error);
  REQUIRE(u);
  CHECK(u->utilization == 0);
  CHECK(u->memory_mb == 3277);  // 5 % of 65536 MB
}

TEST_CASE("npu-smi usages: an A3 card's two chips, the busier chip and the sum of memory") {
  // Constructed from the recorded layout: two chip blocks, each closed by its Chip ID.
  const std::string two_chips =
      "        NPU ID                         : 2\n"
      "        Chip Count                     : 2\n"
      "\n"
      "        HBM Capacity(MB)               : 65536\n"
      "        HBM Usage Rate(%)              : 50\n"
      "        Aicore Usage Rate(%)           : 12\n"
      "        Chip ID                        : 0\n"
      "\n"
      "        HBM Capacity(MB)               : 65536\n"
      "        HBM Usage Rate(%)              : 25\n"
      "        Aicore Usage Rate(%)           : 97\n"
      "        Chip ID                        : 1\n";
  std::string error;
  const auto u = parse_npu_smi_usages(two_chips, error);
  REQUIRE(u);
  CHECK(u->utilization == 97);
  CHECK(u->memory_mb == 32768 + 16384);
}

TEST_CASE("npu-smi usages: other output is refused") {
  std::string error;
  CHECK_FALSE(parse_npu_smi_usages("", error));
  CHECK_FALSE(parse_npu_smi_usages("        Health Status                  : OK\n", error));
  CHECK_FALSE(parse_npu_smi_usages("        Aicore Usage Rate(%)           : lots\n", error));
  CHECK(error.find("not a number") != std::string::npos);
  CHECK_FALSE(parse_npu_smi_usages("Error: device 9 not found\n", error));
  // A rate over 100 is capped; a negative one refused.
  auto u = parse_npu_smi_usages("Aicore Usage Rate(%) : 250\n", error);
  REQUIRE(u);
  CHECK(u->utilization == 100);
  CHECK_FALSE(parse_npu_smi_usages("Aicore Usage Rate(%) : -3\n", error));
}

TEST_CASE("npu-smi process table: held cards (constructed) and none (a real idle node)") {
  std::string error;
  const auto held = parse_npu_smi_processes(
      golden("tests/golden/npu-smi-activity/processes-constructed.txt"), error);
  REQUIRE(held);
  REQUIRE(held->size() == 2);
  CHECK((*held)[0] == DeviceProcess{"1", "", 48988, "python3", 30784});
  CHECK((*held)[1] == DeviceProcess{"3", "", 55115, "VLLM EngineCore", 61035});

  const auto idle = parse_npu_smi_processes(
      golden("tests/corpus/logs/neg_npusmi_info_8x910b3_idle_no_processes_health_ok.log"), error);
  REQUIRE(idle);
  CHECK(idle->empty());
}

TEST_CASE("npu-smi process table: no header, garbled rows") {
  std::string error;
  CHECK_FALSE(parse_npu_smi_processes("| NPU Name | Health |\n", error));
  const std::string header =
      "| NPU     Chip              | Process id    | Process name             | Process memory(MB) "
      "     |\n";
  CHECK_FALSE(parse_npu_smi_processes(header + "| 0  0 | -12 | python | 5 |\n", error));
  CHECK_FALSE(parse_npu_smi_processes(header + "| 0  0 | 99999999999 | python | 5 |\n", error));
  CHECK_FALSE(parse_npu_smi_processes(header + "| x | 1 | python | 5 |\n", error));
  CHECK_FALSE(parse_npu_smi_processes(header + "not a row\n", error));
  const auto ok = parse_npu_smi_processes(header + "| 7  0 | 1 | p | 5 |\n", error);
  REQUIRE(ok);
  CHECK(ok->at(0).device == "7");
}

TEST_CASE("nvidia-smi activity: 8 A800s (recorded), columns by the query's fields") {
  const std::string csv = golden("tests/golden/nvidia-smi-query/gputil-a800-8gpu-noheader.csv");
  std::string query = golden("tests/golden/nvidia-smi-query/gputil-a800-8gpu-noheader.query");
  query = query.substr(0, query.find('\n'));
  std::string error;
  const auto gpus = parse_nvidia_smi_activity(csv, error, query);
  REQUIRE(gpus);
  REQUIRE(gpus->size() == 8);
  CHECK((*gpus)[0].device == "0");
  CHECK((*gpus)[0].utilization == 0);
  CHECK((*gpus)[0].memory_mb == 2);
  CHECK((*gpus)[7].device == "7");
}

TEST_CASE("nvidia-smi activity: a header, units, [N/A] and garbled lines") {
  std::string error;
  const auto h = parse_nvidia_smi_activity(
      "index, pci.bus_id, utilization.gpu [%], memory.used [MiB]\n"
      "0, 00000000:3B:00.0, 37 %, 2048 MiB\n"
      "1, 00000000:86:00.0, [N/A], [N/A]\n",
      error);
  REQUIRE(h);
  REQUIRE(h->size() == 1);  // the GPU that says nothing of its activity is not taken for idle
  CHECK((*h)[0] == DeviceUsage{"0", "00000000:3B:00.0", 37, 2048});
  CHECK_FALSE(parse_nvidia_smi_activity("0, 00000000:3B:00.0, 37\n", error));
  CHECK_FALSE(parse_nvidia_smi_activity("x, 00000000:3B:00.0, 37, 5\n", error));
}

TEST_CASE("nvidia-smi compute apps (constructed from the query's documented columns)") {
  std::string error;
  const auto apps =
      parse_nvidia_smi_apps("00000000:3B:00.0, 4242, 30784\n00000000:86:00.0, 4243, 512\n", error);
  REQUIRE(apps);
  REQUIRE(apps->size() == 2);
  CHECK((*apps)[1] == DeviceProcess{"", "00000000:86:00.0", 4243, "", 512});
  const auto none = parse_nvidia_smi_apps("", error);
  REQUIRE(none);
  CHECK(none->empty());
  CHECK_FALSE(parse_nvidia_smi_apps("00000000:3B:00.0, pid, 1\n", error));
  CHECK_FALSE(parse_nvidia_smi_apps("garbage\n", error));
}

TEST_CASE("hccn_tool stat: RoCE packets (constructed from the counter names it prints)") {
  std::string error;
  const auto p = parse_hccn_stat_packets(
      "packet statistics:\nmac_tx_total_pkt_num:10\nmac_rx_total_pkt_num:20\n"
      "roce_rx_all_pkt_num:1000\nroce_tx_all_pkt_num:2000\n",
      error);
  REQUIRE(p);
  CHECK(*p == 3000);
  const auto mac =
      parse_hccn_stat_packets("mac_tx_total_pkt_num:10\nmac_rx_total_pkt_num:20\n", error);
  REQUIRE(mac);
  CHECK(*mac == 30);
  CHECK_FALSE(parse_hccn_stat_packets("roce_rx_all_pkt_num:x\n", error));
  const auto top = parse_hccn_stat_packets(
      "roce_rx_all_pkt_num:18446744073709551615\nroce_tx_all_pkt_num:5\n", error);
  REQUIRE(top);
  CHECK(*top == UINT64_MAX);  // saturates, never wraps into a small figure
}

TEST_CASE("activity parsers' sample lines, every run") {
  std::string error;
  auto usage =
      observe(CommandParser::NpuSmiUsages,
              golden("tests/golden/npu-smi-activity/usages-telegraf-25.5.1.txt"), "4", "", error);
  REQUIRE(usage);
  CHECK(usage->samples == std::vector<std::string>{"activity: device=4 util=0.0 memory_mb=3277"});
  auto table =
      observe(CommandParser::NpuSmiProcesses,
              golden("tests/golden/npu-smi-activity/processes-constructed.txt"), "", "", error);
  REQUIRE(table);
  CHECK(table->samples ==
        std::vector<std::string>{
            "holders: count=2", "holder: device=1 pid=48988 name=python3 memory_mb=30784",
            "holder: device=3 pid=55115 name=\"VLLM EngineCore\" memory_mb=61035"});
  CHECK(is_sample_parser(CommandParser::HccnStat));
  CHECK_FALSE(is_sample_parser(CommandParser::NpuSmiHealth));
  CHECK(parse_command_parser("npu_smi_usages") == CommandParser::NpuSmiUsages);
}
