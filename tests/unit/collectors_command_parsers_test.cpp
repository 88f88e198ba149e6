// Golden/table tests of the command-output parsers on verbatim vendor output, and of the
// records a HealthTracker derives from a sequence of observations.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "collectors/command/command_source.hpp"
#include "collectors/command/parsers/parsers.hpp"
#include "collectors/command/records.hpp"

using namespace faultd;
using namespace faultd::command_parsers;
using Strings = std::vector<std::string>;

namespace {

// docs/log-formats.md §5: MindCluster fixture of `npu-smi info -t health`, TAB-indented, padded to
// column 32, three codes, Error Information continued on lines separated by blank lines.
const char kHealthAlarm[] =
    "\tHealth Status                  : Alarm\n"
    "\tError Code                     : A4025021 8C03A000 8C084E00\n"
    "\tError Information              : ascend_monitor adda heart beat lost error\n"
    "\n"
    "\t                               : node type=process-manager, sensor type=General Software, "
    "event state=The process start failed or exit abnormally\n"
    "\n"
    "\t                               : node type=adda, sensor type=Heartbeat Sensor, event "
    "state=Heartbeat Lost.\n";

// A healthy device: OK / NA / NA (docs/log-formats.md §5), space-padded this time.
const char kHealthOk[] =
    "        Health Status                  : OK\n"
    "        Error Code                     : NA\n"
    "        Error Information              : NA\n";

// The ASD case as documented in prose (seed 004, docs/log-formats.md §7): constructed in the tool's
// layout.
const char kHealthAsd[] =
    "\tHealth Status                  : Warning\r\n"
    "\tError Code                     : 80818C00\r\n"
    "\tError Information              : node type=SoC, sensor type=Check Sensor, event "
    "state=check fail\r\n";

// docs/log-formats.md §5: the table of the MindCluster collecting-logs doc (npu-smi 23.0.5).
const char kInfoPlain[] =
    "| NPU   Name                | Health        | Power(W)    Temp(C)           "
    "Hugepages-Usage(page)|\n"
    "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)    "
    "    |\n"
    "| 0     xxx                 | OK            | 73.1        37                0    / 0       "
    "      |\n"
    "| 0                         | 0000:61:00.0  | 0           920  / 13553      0    / 32768   "
    "      |\n";

// vllm-ascend#5588 (npu-smi 25.3.rc1, A3): two chips per NPU, second chip's power "-".
const char kInfoA3[] =
    "+-------------------------------------------------------------------------------------------"
    "-----+\n"
    "| npu-smi 25.3.rc1                 Version: 25.3.rc1                                          "
    "   |\n"
    "+---------------------------+---------------+----------------------------------------------"
    "------+\n"
    "| NPU   Name                | Health        | Power(W)    Temp(C)           "
    "Hugepages-Usage(page)|\n"
    "| Chip  Phy-ID              | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)    "
    "    |\n"
    "+===========================+===============+=============================================="
    "======+\n"
    "| 0     Ascend910           | OK            | 163.6       30                0    / 0       "
    "      |\n"
    "| 0     0                   | 0000:9D:00.0  | 0           0    / 0          3180 / 65536   "
    "      |\n"
    "+-------------------------------------------------------------------------------------------"
    "-----+\n"
    "| 0     Ascend910           | OK            | -           30                0    / 0       "
    "      |\n"
    "| 1     1                   | 0000:9F:00.0  | 0           0    / 0          2896 / 65536   "
    "      |\n"
    "+===========================+===============+=============================================="
    "======+\n"
    "| 1     Ascend910           | Alarm         | 164.5       29                0    / 0       "
    "      |\n"
    "| 0     2                   | 0000:99:00.0  | 0           0    / 0          3180 / 65536   "
    "      |\n"
    "+-------------------------------------------------------------------------------------------"
    "-----+\n"
    "| 1     Ascend910           | OK            | -           29                0    / 0       "
    "      |\n"
    "| 1     3                   | 0000:9B:00.0  | 0           0    / 0          2896 / 65536   "
    "      |\n"
    "+===========================+===============+=============================================="
    "======+\n"
    "| NPU     Chip              | Process id    | Process name             | Process memory(MB) "
    "     |\n"
    "+===========================+===============+=============================================="
    "======+\n"
    "| No running processes found in NPU 0                                                       "
    "      |\n"
    "+===========================+===============+=============================================="
    "======+\n";

// Project-HAMi/HAMi-WebUI#47 (npu-smi 25.2.0, 910B4-1): plain layout, bus ids masked as "xx".
const char kInfoHami[] =
    "| npu-smi 25.2.0                   Version: 25.2.0                                            "
    "   |\n"
    "| NPU   Name                | Health        | Power(W)    Temp(C)           "
    "Hugepages-Usage(page)|\n"
    "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)    "
    "    |\n"
    "| 0     910B4-1             | OK            | 91.3        33                0    / 0       "
    "      |\n"
    "| 0                         | 0000:xx:00.0  | 0           0    / 0          3197 / 65536   "
    "      |\n"
    "| 1     910B4-1             | OK            | 88.1        32                0    / 0       "
    "      |\n"
    "| 0                         | 0000:xx:00.0  | 0           0    / 0          3197 / 65536   "
    "      |\n";

Strings devices_of(const std::vector<DeviceHealth>& v) {
  Strings out;
  for (const auto& h : v) out.push_back(h.device + "/" + h.chip + "=" + h.status);
  return out;
}

DeviceHealth health(std::string device, std::string status, Strings codes = {}) {
  DeviceHealth h;
  h.device = std::move(device);
  h.status = std::move(status);
  h.codes = std::move(codes);
  return h;
}

}  // namespace

TEST_CASE("npu_smi_health reads status, several codes and multi-line information") {
  std::string error;
  const auto h = parse_npu_smi_health(kHealthAlarm, error);
  REQUIRE(h);
  CHECK(h->status == "Alarm");
  CHECK(h->codes == Strings{"A4025021", "8C03A000", "8C084E00"});
  CHECK(h->info == Strings{"ascend_monitor adda heart beat lost error",
                           "node type=process-manager, sensor type=General Software, event "
                           "state=The process start failed or exit abnormally",
                           "node type=adda, sensor type=Heartbeat Sensor, event state=Heartbeat "
                           "Lost."});
  CHECK_FALSE(h->ok());
}

TEST_CASE("npu_smi_health: OK/NA/NA, and the ASD warning with CRLF") {
  std::string error;
  const auto ok = parse_npu_smi_health(kHealthOk, error);
  REQUIRE(ok);
  CHECK(ok->ok());
  CHECK(ok->codes.empty());
  CHECK(ok->info.empty());

  const auto asd = parse_npu_smi_health(kHealthAsd, error);
  REQUIRE(asd);
  CHECK(asd->status == "Warning");
  CHECK(asd->codes == Strings{"80818C00"});
  CHECK(asd->info == Strings{"node type=SoC, sensor type=Check Sensor, event state=check fail"});
}

TEST_CASE("npu_smi_health keeps an unknown status as printed") {
  std::string error;
  const auto h = parse_npu_smi_health("Health Status : Critical\nError Code : 0x80e18402\n", error);
  REQUIRE(h);
  CHECK(h->status == "Critical");
  CHECK(h->codes == Strings{"80E18402"});
}

TEST_CASE("npu_smi_health refuses truncated and garbled output") {
  const auto refused = [](std::string_view text) {
    std::string error;
    const bool ok = parse_npu_smi_health(text, error).has_value();
    CHECK_FALSE(error.empty());
    return !ok;
  };
  CHECK(refused(""));
  CHECK(refused("\tHealth Status                  : Warning\n"));   // cut after the first line
  CHECK(refused("\tError Code                     : 80818C00\n"));  // no status
  CHECK(refused("\tHealth Status : Warning\n\tError Code : ZZZZ\n"));
  CHECK(refused("Error: device 9 does not exist\n"));
  CHECK(refused("\t : stray continuation\n\tHealth Status : OK\n\tError Code : NA\n"));
  // Cut inside the code: "8081" is valid hex, so only the missing newline tells.
  CHECK(refused("\tHealth Status : Warning\n\tError Code : 8081"));
  CHECK(refused("\tHealth Status : Warning\n\tError Code : 80818C00\n\tError Information : node"));
}

TEST_CASE("npu_smi_info reads the plain layout") {
  std::string error;
  const auto t = parse_npu_smi_info(kInfoPlain, error);
  REQUIRE(t);
  CHECK(devices_of(*t) == Strings{"0/0=OK"});

  const auto hami = parse_npu_smi_info(kInfoHami, error);
  REQUIRE(hami);
  CHECK(devices_of(*hami) == Strings{"0/0=OK", "1/0=OK"});
  CHECK(npu_ids(*hami) == Strings{"0", "1"});
}

TEST_CASE("npu_smi_info reads the A3 layout: a row pair per chip, '-' power") {
  std::string error;
  const auto t = parse_npu_smi_info(kInfoA3, error);
  REQUIRE(t);
  CHECK(devices_of(*t) == Strings{"0/0=OK", "0/1=OK", "1/0=Alarm", "1/1=OK"});
  CHECK(npu_ids(*t) == Strings{"0", "1"});
}

TEST_CASE("npu_smi_info refuses output without the table or with a cut row pair") {
  std::string error;
  CHECK_FALSE(parse_npu_smi_info("", error));
  CHECK_FALSE(parse_npu_smi_info(kHealthOk, error));
  std::string cut(kInfoPlain);
  cut.resize(cut.rfind("| 0                         | 0000:61"));
  error.clear();
  CHECK_FALSE(parse_npu_smi_info(cut, error));
  CHECK(error.find("truncated") != std::string::npos);
  // A caller that can use part of a table gets the complete pairs before the cut (NPU 1's
  // second chip is cut off here).
  std::string a3_cut(kInfoA3);
  a3_cut.resize(a3_cut.find("| 1     3                   | 0000:9B"));
  bool truncated = false;
  error.clear();
  CHECK_FALSE(parse_npu_smi_info(a3_cut, error));  // not without asking
  const auto part = parse_npu_smi_info(a3_cut, error, &truncated);
  REQUIRE(part);
  CHECK(truncated);
  CHECK(error.find("truncated") != std::string::npos);
  CHECK(devices_of(*part) == Strings{"0/0=OK", "0/1=OK", "1/0=Alarm"});
  // Cut inside the first pair: nothing complete, still an error.
  truncated = false;
  CHECK_FALSE(parse_npu_smi_info(cut, error, &truncated));
}

namespace {

// docs/log-formats.md §6: kube-system/mindx-dl-deviceinfo-<node>, key DeviceInfoCfg, fault lists as
// escaped JSON arrays. Constructed from the documented field names.
std::string configmap(const std::string& fault_list) {
  std::string cfg =
      R"({"DeviceInfo":{"DeviceList":{"huawei.com/Ascend910":"Ascend910-0,Ascend910-1,Ascend910-2",)"
      R"("huawei.com/Ascend910-Fault":")" +
      fault_list +
      R"(","huawei.com/Ascend910-NetworkUnhealthy":"","huawei.com/Ascend910-Unhealthy":"",)"
      R"("huawei.com/Ascend910-Recovering":""},"UpdateTime":1700545013},"CheckCode":"abc"})";
  std::string escaped;
  for (const char c : cfg) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return R"({"apiVersion":"v1","kind":"ConfigMap","data":{"DeviceInfoCfg":")" + escaped +
         R"("},"metadata":{"name":"mindx-dl-deviceinfo-k8smaster","namespace":"kube-system"}})";
}

}  // namespace

TEST_CASE("deviceinfo_cm: per-device faults from the escaped list, others OK") {
  const std::string faults =
      R"([{\"fault_type\":\"CardUnhealthy\",\"npu_name\":\"Ascend910-2\",)"
      R"(\"large_model_fault_level\":\"RestartBusiness\",\"fault_level\":\"RestartBusiness\",)"
      R"(\"fault_handling\":\"RestartBusiness\",\"fault_code\":\"8C084E00,80818C00\",)"
      R"(\"fault_time_and_level_map\":{\"8C084E00\":{\"fault_time\":1700545013000}}}])";
  std::string error;
  const auto list = parse_deviceinfo_cm(configmap(faults), error);
  INFO(error);
  REQUIRE(list);
  CHECK(devices_of(*list) == Strings{"0/=OK", "1/=OK", "2/=Fault"});
  CHECK((*list)[2].codes == Strings{"8C084E00", "80818C00"});
  CHECK((*list)[2].fault_level == "RestartBusiness");

  const auto empty = parse_deviceinfo_cm(configmap("[]"), error);
  REQUIRE(empty);
  CHECK(devices_of(*empty) == Strings{"0/=OK", "1/=OK", "2/=OK"});
}

TEST_CASE("deviceinfo_cm refuses what is not a DeviceInfoCfg") {
  std::string error;
  CHECK_FALSE(parse_deviceinfo_cm("", error));
  CHECK_FALSE(parse_deviceinfo_cm("{\"data\":{}}", error));
  CHECK_FALSE(parse_deviceinfo_cm(configmap("not json"), error));
  CHECK_FALSE(parse_deviceinfo_cm(configmap(R"([{\"fault_code\":\"1\"}])"), error));
  CHECK_FALSE(parse_deviceinfo_cm(
      configmap(R"([{\"npu_name\":\"Ascend910-1\",\"fault_code\":\"not-hex\"}])"), error));
}

TEST_CASE("nvidia_smi_bus reads index, bus id pairs") {
  std::string error;
  const auto map = parse_nvidia_smi_bus("0, 00000000:3B:00.0\n1, 00000000:86:00.0\n\n", error);
  REQUIRE(map);
  CHECK(*map == std::vector<GpuBus>{{"0", "00000000:3B:00.0"}, {"1", "00000000:86:00.0"}});
  CHECK(format_gpu_record((*map)[0]) == "nvidia-smi gpu: index=0 bus_id=00000000:3B:00.0");
  CHECK_FALSE(parse_nvidia_smi_bus("", error));
  CHECK_FALSE(parse_nvidia_smi_bus("index, pci.bus_id\n", error));
  CHECK_FALSE(
      parse_nvidia_smi_bus("NVIDIA-SMI has failed because it couldn't communicate\n", error));
}

TEST_CASE("HealthTracker: a new code is news once, recovery once, healthy start is silent") {
  HealthTracker t("npu-smi health");
  const auto step = [&t](const std::vector<DeviceHealth>& observed) {
    auto lines = t.diff(observed);
    t.commit(observed);
    return lines;
  };
  DeviceHealth warn = health("3", "Warning", {"80818C00"});
  warn.chip = "0";
  warn.info = {"node type=SoC, sensor type=Check Sensor, event state=check fail"};
  DeviceHealth ok = health("3", "OK");
  ok.chip = "0";

  CHECK(step({ok}).empty());
  CHECK(step({warn}) ==
        Strings{"npu-smi health: device=3 chip=0 status=Warning code=80818C00 info=\"node "
                "type=SoC, sensor type=Check Sensor, event state=check fail\""});
  CHECK(step({warn}).empty());  // still sick, nothing new
  DeviceHealth worse = warn;
  worse.status = "Alarm";
  worse.codes = {"80818C00", "8C084E00"};
  worse.info.clear();
  CHECK(step({worse}) == Strings{"npu-smi health: device=3 chip=0 status=Alarm code=8C084E00"});
  CHECK(step({ok}) == Strings{"npu-smi health: device=3 chip=0 status=OK recovered"});
  CHECK(step({ok}).empty());
}

TEST_CASE("HealthTracker: first sight of a sick device, codeless states, other devices") {
  HealthTracker t("deviceinfo");
  const auto step = [&t](const std::vector<DeviceHealth>& observed) {
    auto lines = t.diff(observed);
    t.commit(observed);
    return lines;
  };
  DeviceHealth sick = health("2", "Fault", {"8C084E00"});
  sick.fault_level = "RestartBusiness";
  CHECK(step({health("1", "OK"), sick}) ==
        Strings{"deviceinfo: device=2 status=Fault code=8C084E00 fault_level=RestartBusiness"});
  // Device 2 missing from an observation keeps its state: no recovery.
  CHECK(step({health("1", "OK")}).empty());
  CHECK(step({health("1", "Not supported")}) ==
        Strings{"deviceinfo: device=1 status=\"Not supported\""});
  CHECK(step({health("1", "Unknown")}) == Strings{"deviceinfo: device=1 status=Unknown"});
  CHECK(step({health("1", "OK"), health("2", "OK")}) ==
        Strings{"deviceinfo: device=1 status=OK recovered",
                "deviceinfo: device=2 status=OK recovered"});
}

TEST_CASE("records quote and escape values that are not plain tokens") {
  DeviceHealth h = health("0", "Warning", {"80818C00"});
  h.info = {"say \"hi\"\\ now\x01"};
  CHECK(format_health_record("npu-smi health", h, "80818C00") ==
        "npu-smi health: device=0 status=Warning code=80818C00 info=\"say \\\"hi\\\"\\\\ now \"");
  h.info = {std::string(3000, 'x')};
  CHECK(format_health_record("p", h, "").size() < 1100);
}

TEST_CASE("device lists: ranges and lists, errors for the rest") {
  std::string error;
  CHECK(parse_device_list("0-7", error) == Strings{"0", "1", "2", "3", "4", "5", "6", "7"});
  CHECK(parse_device_list("0,2,4-5", error) == Strings{"0", "2", "4", "5"});
  CHECK(parse_device_list(" 3 ", error) == Strings{"3"});
  for (const char* bad : {"", "7-0", "a", "1,1", "0-", "-1", "1,,2", "0-99999"}) {
    INFO(bad);
    error.clear();
    CHECK_FALSE(parse_device_list(bad, error));
    CHECK_FALSE(error.empty());
  }
}

TEST_CASE("parser names round-trip") {
  for (const auto p :
       {CommandParser::NpuSmiHealth, CommandParser::NpuSmiInfo, CommandParser::DeviceInfoCm,
        CommandParser::NvidiaSmiBus, CommandParser::NvidiaSmiQuery}) {
    CHECK(parse_command_parser(to_string(p)) == p);
  }
  CHECK_FALSE(parse_command_parser("npu_smi"));
}

TEST_CASE("deviceinfo_cm: an npu_name with a huge number is skipped, not a crash",
          "[collectors][command][parsers]") {
  std::string error;
  const std::string cfg =
      R"({"DeviceInfo": {"DeviceList": {"huawei.com/Ascend910": "Ascend910-99999999999999,Ascend910-2",)"
      R"( "huawei.com/Ascend910-Fault": "[]"}}})";
  auto parsed = faultd::command_parsers::parse_deviceinfo_cm(cfg, error);
  INFO(error);
  REQUIRE(parsed);
  REQUIRE(parsed->size() == 1);
  CHECK((*parsed)[0].device == "2");
}

namespace {

std::string golden_q(const std::string& name) {
  std::ifstream in(std::string(FAULTD_SOURCE_DIR) + "/tests/golden/nvidia-smi-q/" + name,
                   std::ios::binary);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("nvidia_smi_query: remapped rows pending after Xid 63 (real -q output)",
          "[collectors][command][parsers]") {
  std::string error;
  const auto gpus = parse_nvidia_smi_query(golden_q("ml-engineering-a100-xid63.txt"), error);
  REQUIRE(gpus);
  REQUIRE(gpus->size() == 1);
  CHECK((*gpus)[0].device == "00000000:10:1C.0");
  CHECK((*gpus)[0].status == "Error");
  // Correctable DRAM errors (177) are no problem; the pending remap is.
  CHECK((*gpus)[0].codes == Strings{"REMAPPED_ROWS_PENDING"});
}

TEST_CASE("nvidia_smi_query: a healthy GPU with N/A counts and a field it lacks is OK",
          "[collectors][command][parsers]") {
  std::string error;
  const auto gpus = parse_nvidia_smi_query(golden_q("gpud-535-rtx4090-head.txt"), error);
  REQUIRE(gpus);
  REQUIRE(gpus->size() == 1);
  CHECK((*gpus)[0].device == "00000000:01:00.0");
  CHECK((*gpus)[0].ok());
  CHECK((*gpus)[0].codes.empty());
}

TEST_CASE("nvidia_smi_query: uncorrectable counts by timescale and pages pending retirement",
          "[collectors][command][parsers]") {
  std::string error;
  const auto gpus = parse_nvidia_smi_query(golden_q("composed-ecc-uncorrectable.txt"), error);
  REQUIRE(gpus);
  REQUIRE(gpus->size() == 1);
  CHECK((*gpus)[0].codes == Strings{"VOLATILE_UNCORRECTABLE_ECC", "AGGREGATE_UNCORRECTABLE_ECC",
                                    "RETIRED_PAGES_PENDING"});
  CHECK((*gpus)[0].info[0] == "volatile SRAM Uncorrectable 1");
  CHECK((*gpus)[0].info[1] == "aggregate SRAM Uncorrectable 5");
}

TEST_CASE("nvidia_smi_query: sections are the GPU's own, and other output is refused",
          "[collectors][command][parsers]") {
  std::string error;
  // "Pending : Yes" of another section (MIG mode, an ECC mode change) is no remap.
  const auto gpus = parse_nvidia_smi_query(
      "GPU 00000000:3B:00.0\n"
      "    MIG Mode\n"
      "        Current                           : Disabled\n"
      "        Pending                           : Yes\n"
      "    Remapped Rows\n"
      "        Pending                           : No\n"
      "GPU 00000000:86:00.0\n"
      "    Remapped Rows\n"
      "        Pending                           : Yes\n",
      error);
  REQUIRE(gpus);
  REQUIRE(gpus->size() == 2);
  CHECK((*gpus)[0].ok());
  CHECK((*gpus)[1].codes == Strings{"REMAPPED_ROWS_PENDING"});
  CHECK_FALSE(parse_nvidia_smi_query("No devices were found\n", error));
  CHECK(error == "no GPU listed");
  CHECK_FALSE(parse_nvidia_smi_query("GPU 0: NVIDIA A100 (UUID: GPU-1234)\n", error));
}

TEST_CASE("nvidia_smi_query records: a new problem is news, a reset that clears it recovers",
          "[collectors][command][parsers]") {
  std::string error;
  HealthTracker tracker(std::string(record_prefix(CommandParser::NvidiaSmiQuery)));
  auto sick = parse_nvidia_smi_query(golden_q("ml-engineering-a100-xid63.txt"), error);
  REQUIRE(sick);
  const auto first = tracker.diff(*sick);
  REQUIRE(first.size() == 1);
  CHECK(first[0] ==
        "nvidia-smi query: device=00000000:10:1C.0 status=Error code=REMAPPED_ROWS_PENDING "
        "info=\"remapped rows pending\"");
  tracker.commit(*sick);
  CHECK(tracker.diff(*sick).empty());
  std::vector<DeviceHealth> healthy = *sick;
  healthy[0].status = "OK";
  healthy[0].codes.clear();
  healthy[0].info.clear();
  CHECK(tracker.diff(healthy) ==
        Strings{"nvidia-smi query: device=00000000:10:1C.0 status=OK recovered"});
}
