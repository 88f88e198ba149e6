#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <sstream>
#include <thread>

#include "daemon/export/metrics.hpp"

using namespace faultd;
using namespace std::chrono_literals;

namespace {

class StubSource final : public Source {
 public:
  explicit StubSource(std::string n) : name_(std::move(n)) {}
  const std::string& name() const override { return name_; }
  bool poll_once(TimePoint, ChunkSink&) override { return false; }
  SourceStats& stats() override { return stats_; }

 private:
  std::string name_;
  SourceStats stats_;
};

std::string http_get(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  const std::string req = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  REQUIRE(::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size()));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

// http_get without Catch2 assertions, for threads other than the test's own.
std::string fetch(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  const std::string req = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

RuleSpec rule_spec(const std::string& id, const std::string& code = "",
                   bool knowledge_base = false) {
  RuleSpec s;
  s.id = id;
  s.any = {"trigger of " + id};
  s.code = code;
  s.fault_level = FaultLevel::SeparateNPU;
  s.knowledge_base = knowledge_base;
  return s;
}

std::shared_ptr<const RuleSet> rule_set(std::vector<RuleSpec> specs, CodeLevels levels = {}) {
  ErrorList errors;
  auto set = RuleSet::build(std::move(specs), std::move(levels), errors);
  INFO(errors.to_string());
  REQUIRE(set);
  return set;
}

// The distinct values of `label` over the samples of `family` in an exposition.
std::set<std::string> label_values(const std::string& text, const std::string& family,
                                   const std::string& label) {
  std::set<std::string> values;
  std::istringstream lines(text);
  const std::string key = label + "=\"";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(family + "{", 0) != 0) continue;
    const auto at = line.find(key);
    if (at == std::string::npos) continue;
    const auto begin = at + key.size();
    values.insert(line.substr(begin, line.find('"', begin) - begin));
  }
  return values;
}

}  // namespace

TEST_CASE("every loaded rule has a counter at 0 and build info names the ruleset", "[export]") {
  Metrics m;
  const auto first = rule_set({rule_spec("a.one"), rule_spec("b.two")});
  m.on_rules(*first);
  const auto text = m.render();
  CHECK_THAT(text, Catch::Contains("faultd_rule_matches_total{rule=\"a.one\"} 0"));
  CHECK_THAT(text, Catch::Contains("faultd_rule_matches_total{rule=\"b.two\"} 0"));
  CHECK_THAT(text, Catch::Contains("faultd_rules_loaded 2"));
  CHECK_THAT(text, Catch::Contains("ruleset_sha256=\"" + first->sha256() + "\""));
  CHECK_THAT(text, Catch::Contains("faultd_config_reloads_total{result=\"failure\"} 0"));
  // A reload replaces the build info series instead of adding one.
  const auto second = rule_set({rule_spec("a.one")});
  REQUIRE(second->sha256() != first->sha256());
  m.on_rules(*second);
  const auto after = m.render();
  CHECK_THAT(after, !Catch::Contains(first->sha256()));
  CHECK_THAT(after, Catch::Contains("ruleset_sha256=\"" + second->sha256() + "\""));
}

TEST_CASE("a rule for a source type no source produces gets its counter at its first match",
          "[export]") {
  Metrics m;
  auto kernel = rule_spec("nvidia.xid.kernel-only");
  kernel.source_types = {"kmsg", "kernel_log"};
  auto records = rule_spec("ascend.health.records");
  records.source_types = {"command"};
  const auto rules = rule_set({kernel, records, rule_spec("any.type")});
  const std::vector<std::string_view> file_and_command = {"file", "command"};
  m.on_rules(*rules, file_and_command);
  const auto idle = label_values(m.render(), "faultd_rule_matches_total", "rule");
  CHECK(idle == std::set<std::string>{"ascend.health.records", "any.type"});
  const std::vector<std::string_view> with_kernel_log = {"file", "kernel_log"};
  Metrics n;
  n.on_rules(*rules, with_kernel_log);
  CHECK(label_values(n.render(), "faultd_rule_matches_total", "rule") ==
        std::set<std::string>{"nvidia.xid.kernel-only", "any.type"});
}

TEST_CASE("a knowledge base's entries get their counter at their first match, the packs' at 0",
          "[export]") {
  Metrics m;
  std::vector<RuleSpec> specs = {rule_spec("ascend.pack-rule")};
  for (int i = 0; i < 1000; ++i) {
    specs.push_back(rule_spec("faultdiag.entry-" + std::to_string(i), "", true));
  }
  m.on_rules(*rule_set(std::move(specs)));
  const auto idle = m.render();
  CHECK_THAT(idle, Catch::Contains("faultd_rule_matches_total{rule=\"ascend.pack-rule\"} 0"));
  CHECK_THAT(idle, Catch::Contains("faultd_rules_loaded 1001"));
  CHECK(label_values(idle, "faultd_rule_matches_total", "rule").size() == 1);
  Finding f;
  f.rule = "faultdiag.entry-7";
  f.device = "2";
  m.on_finding(f, TimePoint{1s});
  const auto text = m.render();
  CHECK_THAT(text, Catch::Contains("faultd_rule_matches_total{rule=\"faultdiag.entry-7\"} 1"));
  CHECK(label_values(text, "faultd_rule_matches_total", "rule").size() == 2);
}

TEST_CASE("codes outside the catalogue and the rules fold into 'other' past the cap", "[export]") {
  Metrics m;
  CodeLevels levels;
  levels.levels["80E01801"] = FaultLevel::SeparateNPU;
  m.on_rules(*rule_set({rule_spec("r", "80818C00"), rule_spec("any-code", "{code}")}, levels));
  Finding f;
  f.rule = "any-code";
  f.device = "1";
  f.level = FaultLevel::SeparateNPU;
  // A log writer names 10,000 codes of its own.
  for (int i = 0; i < 10'000; ++i) {
    f.code = "F" + std::to_string(100'000 + i);
    m.on_finding(f, TimePoint{1s});
  }
  for (const char* known : {"80818C00", "80e01801"}) {
    f.code = known;
    m.on_finding(f, TimePoint{1s});
  }
  const auto text = m.render();
  const auto codes = label_values(text, "faultd_faults_total", "code");
  CHECK(codes.size() <= CodeLabels::kDefaultCap + 2 + 1);  // the cap, the known codes, "other"
  CHECK(codes.count("F100000") == 1);                      // the first ones keep their code
  CHECK(codes.count("F109999") == 0);
  CHECK(codes.count("80818C00") == 1);  // a rule's literal code
  CHECK(codes.count("80E01801") == 1);  // the catalogue's
  const auto other = static_cast<int>(10'000 - CodeLabels::kDefaultCap);
  CHECK_THAT(text, Catch::Contains(
                       "faultd_faults_total{code=\"other\",device=\"1\",level=\"SeparateNPU\"} " +
                       std::to_string(other)));
}

TEST_CASE("devices not healthy export when their incident started, by device and code",
          "[export]") {
  Metrics m;
  auto view = std::make_shared<DeviceView>();
  m.set_devices(view);
  DeviceRecord warning;
  warning.device = "3";
  warning.state = DeviceState::Warning;
  warning.code = "80818C00";
  warning.incident_start = from_unix_ms(1'700'000'000'250);
  warning.since = from_unix_ms(1'700'000'100'000);  // a later escalation: not the start
  DeviceRecord isolated = warning;
  isolated.device = "4";
  isolated.state = DeviceState::Isolated;
  isolated.incident_start = from_unix_ms(1'700'000'003'000);
  DeviceRecord healthy;
  healthy.device = "5";
  view->publish({{"3", warning}, {"4", isolated}, {"5", healthy}});
  const auto text = m.render();
  CHECK_THAT(text, Catch::Contains("# TYPE faultd_device_incident_start_timestamp_seconds gauge"));
  CHECK_THAT(text,
             Catch::Contains("faultd_device_incident_start_timestamp_seconds{code=\"80818C00\","
                             "device=\"3\"} 1700000000.25"));
  CHECK_THAT(text,
             Catch::Contains("faultd_device_incident_start_timestamp_seconds{code=\"80818C00\","
                             "device=\"4\"} 1700000003"));
  CHECK(label_values(text, "faultd_device_incident_start_timestamp_seconds", "device") ==
        std::set<std::string>{"3", "4"});
}

TEST_CASE("device states export one series per state with exactly one at 1", "[export]") {
  Metrics m;
  DeviceRecord d;
  d.device = "3";
  d.state = DeviceState::Warning;
  auto view = std::make_shared<DeviceView>();
  m.set_devices(view);
  CHECK_THAT(m.render(), !Catch::Contains("faultd_device_state{"));
  view->publish({{"3", d}});  // read at scrape time: no further call to the exporter
  const auto text = m.render();
  CHECK_THAT(text, Catch::Contains("faultd_device_state{device=\"3\",state=\"healthy\"} 0"));
  CHECK_THAT(text, Catch::Contains("faultd_device_state{device=\"3\",state=\"warning\"} 1"));
  CHECK_THAT(text, Catch::Contains("faultd_device_state{device=\"3\",state=\"isolated\"} 0"));
}

TEST_CASE("values the rules refused are counted by field", "[export]") {
  Metrics m;
  auto refusals = std::make_shared<Refusals>();
  m.set_refusals(refusals);
  refusals->devices += 3;
  refusals->codes += 1;
  const auto text = m.render();
  CHECK_THAT(text, Catch::Contains("faultd_rule_refused_values_total{field=\"device\"} 3"));
  CHECK_THAT(text, Catch::Contains("faultd_rule_refused_values_total{field=\"code\"} 1"));
}

TEST_CASE("findings count by device, level and code; latency is observed", "[export]") {
  Metrics m;
  Finding f;
  f.rule = "r";
  f.device = "1";
  f.level = FaultLevel::SeparateNPU;
  f.code = "80818C00";
  f.noticed = TimePoint{1s};
  m.on_finding(f, TimePoint{1s} + 3ms);
  f.code = "bad code\"}";
  m.on_finding(f, TimePoint{1s} + 3ms);
  const auto text = m.render();
  CHECK_THAT(text,
             Catch::Contains(
                 "faultd_faults_total{code=\"80818C00\",device=\"1\",level=\"SeparateNPU\"} 1"));
  CHECK_THAT(text, Catch::Contains("code=\"invalid\""));  // log text never becomes a label
  CHECK_THAT(text, Catch::Contains("faultd_detection_latency_seconds_count 2"));
  CHECK_THAT(text, Catch::Contains("faultd_detection_latency_seconds_bucket{le=\"0.005\"} 2"));
  CHECK_THAT(text, Catch::Contains("faultd_detection_latency_seconds_bucket{le=\"0.0025\"} 0"));
}

TEST_CASE("a finding without a code counts with an empty code, not an invalid one", "[export]") {
  Metrics m;
  Finding f;
  f.rule = "r";
  f.device = "1";
  f.level = FaultLevel::RestartBusiness;
  m.on_finding(f, TimePoint{1s});
  const auto text = m.render();
  CHECK_THAT(text, Catch::Contains(
                       "faultd_faults_total{code=\"\",device=\"1\",level=\"RestartBusiness\"} 1"));
  CHECK_THAT(text, !Catch::Contains("invalid"));
}

TEST_CASE("device info carries the labels dcgm-exporter and npu-exporter join on", "[export]") {
  Metrics m;
  auto view = std::make_shared<DeviceView>();
  m.set_devices(view);
  InventoryDevice gpu;
  gpu.id = "0";
  gpu.vendor = "nvidia";
  gpu.model = "NVIDIA L40S";
  gpu.bus_id = "00000000:0D:00.0";
  gpu.uuid = "GPU-a8affe7e-7930-ae20-3fc6-4b0edf3ebbf3";
  gpu.seen_by = {"nvidia-smi"};
  InventoryDevice npu;
  npu.id = "1";
  npu.vendor = "ascend";
  npu.model = "910B3";
  npu.bus_id = "0000:C2:00.0";
  npu.physical_id = "5";
  npu.seen_by = {"npu-smi"};
  Inventory inventory;
  inventory.load({gpu, npu});
  view->publish({}, inventory);
  const auto text = m.render();
  CHECK_THAT(text, Catch::Contains("gpu=\"0\",UUID=\"GPU-a8affe7e-7930-ae20-3fc6-4b0edf3ebbf3\","
                                   "pci_bus_id=\"00000000:0D:00.0\",id=\"\",pcie_bus_info=\"\"}"));
  // npu-exporter's `id` is the chip's physical id, not faultd's logical one.
  CHECK_THAT(text, Catch::Contains("gpu=\"\",UUID=\"\",pci_bus_id=\"\",id=\"5\","
                                   "pcie_bus_info=\"0000:C2:00.0\"}"));
}

TEST_CASE("a recovery is a rule match, not one more fault", "[export]") {
  Metrics m;
  Finding f;
  f.rule = "recovered";
  f.device = "1";
  f.level = FaultLevel::SeparateNPU;  // the level of the code it recovers from
  f.code = "80818C00";
  f.recovery = true;
  m.on_finding(f, TimePoint{1s});
  const auto text = m.render();
  CHECK_THAT(text, !Catch::Contains("faultd_faults_total{code=\"80818C00\""));
  CHECK_THAT(text, Catch::Contains("faultd_rule_matches_total{rule=\"recovered\"} 1"));
}

TEST_CASE("source health is read from the sources at scrape time", "[export]") {
  Metrics m;
  auto src = std::make_shared<StubSource>("plog");
  m.set_sources({src});
  src->stats().lines = 42;
  src->stats().rotations_truncate = 2;
  src->stats().count_error(SourceErrorKind::LongLine);
  const auto text = m.render();
  CHECK_THAT(text, Catch::Contains("faultd_source_lines_total{source=\"plog\"} 42"));
  CHECK_THAT(text,
             Catch::Contains("faultd_source_rotations_total{kind=\"truncate\",source=\"plog\"} 2"));
  CHECK_THAT(text,
             Catch::Contains("faultd_source_errors_total{kind=\"long_line\",source=\"plog\"} 1"));
  CHECK_THAT(text, Catch::Contains("faultd_source_errors_total{kind=\"read\",source=\"plog\"} 0"));
}

TEST_CASE("action results are counted and timed", "[export]") {
  Metrics m;
  m.on_actions_configured({"isolate", "resume"});
  CHECK_THAT(m.render(),
             Catch::Contains("faultd_actions_total{action=\"resume\",result=\"failure\"} 0"));
  CHECK_THAT(m.render(),
             Catch::Contains("faultd_action_duration_seconds_count{action=\"resume\"} 0"));
  m.on_action("isolate", ActionStatus::Success, 2s);
  m.on_action("isolate", ActionStatus::Skipped, 0s);
  m.on_action("resume", ActionStatus::Timeout, 120s);
  const auto text = m.render();
  CHECK_THAT(text,
             Catch::Contains("faultd_actions_total{action=\"isolate\",result=\"success\"} 1"));
  CHECK_THAT(text,
             Catch::Contains("faultd_actions_total{action=\"isolate\",result=\"skipped\"} 1"));
  CHECK_THAT(text, Catch::Contains("faultd_actions_total{action=\"resume\",result=\"timeout\"} 1"));
  CHECK_THAT(text, Catch::Contains("faultd_action_duration_seconds_count{action=\"isolate\"} 1"));
}

TEST_CASE("metrics are served over HTTP on a port chosen at bind time", "[export]") {
  Metrics m;
  m.serve("127.0.0.1:0");
  const auto ports = m.listening_ports();
  REQUIRE(ports.size() == 1);
  DeviceRecord d;
  d.device = "0";
  auto view = std::make_shared<DeviceView>();
  view->publish({{"0", d}});
  m.set_devices(view);
  const auto body = http_get(ports[0], "/metrics");
  CHECK_THAT(body, Catch::Contains("200 OK"));
  CHECK_THAT(body, Catch::Contains("# HELP faultd_device_state"));
  CHECK_THAT(body, Catch::Contains("faultd_device_state{device=\"0\",state=\"healthy\"} 1"));
  CHECK_THROWS(Metrics().serve("127.0.0.1:" + std::to_string(ports[0])));
}

// Security audit F9: 8 clients that sent one byte each delayed a scrape by 3 s, 16 by 6 s, as
// each held one of the 8 HTTP threads until the 3 s request timeout. Held open here for the
// whole scrape: it must not wait for any of them.
TEST_CASE("a scrape is not delayed by 16 idle connections held open", "[export]") {
  Metrics m;
  m.serve("127.0.0.1:0");
  const int port = m.listening_ports().at(0);
  std::vector<int> idle;
  for (int i = 0; i < 16; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    idle.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::write(fd, "G", 1) == 1);
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string body = http_get(port, "/metrics");
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK_THAT(body, Catch::Contains("200 OK"));
  // Under one request timeout (1 s): no idle connection's thread was waited for.
  CHECK(took < 800ms);
  for (const int fd : idle) ::close(fd);
}

TEST_CASE("the isolation budget is exported as remaining and exhausted", "[export]") {
  Metrics m;
  m.on_isolation_budget(2);
  CHECK_THAT(m.render(), Catch::Contains("faultd_isolation_budget_remaining 2"));
  CHECK_THAT(m.render(), Catch::Contains("faultd_isolation_budget_exhausted 0"));
  m.on_isolation_budget(0);
  CHECK_THAT(m.render(), Catch::Contains("faultd_isolation_budget_remaining 0"));
  CHECK_THAT(m.render(), Catch::Contains("faultd_isolation_budget_exhausted 1"));
  m.on_isolation_budget(-1);  // a lowered limit below what was already used
  CHECK_THAT(m.render(), Catch::Contains("faultd_isolation_budget_remaining 0"));
}

// The exporter's HTTP threads collect while the io thread reports: run under ThreadSanitizer
// (scripts/test's third pass) this is the test that finds a report path that forgot its lock.
TEST_CASE("scrapes on the HTTP threads run alongside the io thread's reports", "[export]") {
  Metrics m;
  m.serve("127.0.0.1:0");
  const int port = m.listening_ports().at(0);
  m.on_rules(*rule_set({rule_spec("r0")}));
  m.on_actions_configured({"isolate"});
  std::atomic<bool> stop{false};
  std::atomic<int> scrapes{0};
  std::atomic<int> incomplete{0};
  std::thread scraper([&] {
    while (!stop) {
      const std::string body = fetch(port, "/metrics");
      if (body.find("200 OK") == std::string::npos ||
          body.find("faultd_rules_loaded") == std::string::npos) {
        ++incomplete;
      }
      ++scrapes;
    }
  });
  auto src = std::make_shared<StubSource>("plog");
  auto view = std::make_shared<DeviceView>();
  m.set_devices(view);
  // Reports go on until the scraper has overlapped them a few times, whatever the speed.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  int i = 0;
  while ((i < 400 || scrapes < 20) && std::chrono::steady_clock::now() < deadline) {
    ++i;
    m.set_sources({src, std::make_shared<StubSource>("round-" + std::to_string(i % 3))});
    ++src->stats().lines;
    src->stats().count_error(SourceErrorKind::Read);
    DeviceRecord d;
    d.device = std::to_string(i % 8);
    d.state = i % 2 == 0 ? DeviceState::Warning : DeviceState::Healthy;
    view->publish({{d.device, d}});
    Finding f;
    f.rule = "r0";
    f.device = d.device;
    f.level = FaultLevel::SeparateNPU;
    f.code = "80818C00";
    m.on_finding(f, TimePoint{1s});
    m.on_action("isolate", ActionStatus::Success, 1s);
    if (i % 100 == 0) m.on_rules(*rule_set({rule_spec("r0"), rule_spec("r" + std::to_string(i))}));
  }
  stop = true;
  scraper.join();
  CHECK(scrapes >= 20);
  CHECK(incomplete == 0);
  const auto text = m.render();
  const std::string n = std::to_string(i);
  CHECK_THAT(text, Catch::Contains("faultd_source_lines_total{source=\"plog\"} " + n));
  CHECK_THAT(text,
             Catch::Contains("faultd_actions_total{action=\"isolate\",result=\"success\"} " + n));
}

TEST_CASE("a series' step time is exported once a step line printed one", "[export]") {
  Metrics m;
  DetectorBank::SeriesStats with_time;
  with_time.device = "5";
  with_time.last_step = 12;
  with_time.step_time = 1300;
  DetectorBank::SeriesStats without;
  without.device = "6";
  without.last_step = 12;
  m.on_numerics({with_time, without});
  const auto text = m.render();
  CHECK_THAT(text, Catch::Contains("faultd_training_step_time{device=\"5\",rank=\"\"} 1300"));
  CHECK(label_values(text, "faultd_training_step_time", "device") == std::set<std::string>{"5"});
  m.on_numerics({without});
  CHECK_THAT(m.render(), !Catch::Contains("faultd_training_step_time"));
}
