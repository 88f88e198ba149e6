// The hang verdict (collectors/activity/hang_judge.hpp), one poll at a time, with a fake /proc
// and a fake log clock: each cause on its device, and the cases that are no hang.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <map>

#include "collectors/activity/hang_judge.hpp"
#include "collectors/activity/hang_source.hpp"

using namespace faultd;
using namespace std::chrono_literals;

namespace {

class FakeProcs final : public ProcessReader {
 public:
  std::map<int64_t, ProcessSample> procs;
  std::optional<ProcessSample> read(int64_t pid) const override {
    const auto it = procs.find(pid);
    if (it == procs.end()) return std::nullopt;
    return it->second;
  }
  double ticks_per_second() const override { return 100; }
};

class FakeLogs final : public LogActivity {
 public:
  std::map<std::string, TimePoint, std::less<>> last;
  std::optional<TimePoint> last_line(std::string_view device) const override {
    const auto it = last.find(device);
    if (it == last.end()) return std::nullopt;
    return it->second;
  }
};

HangThresholds thresholds() {
  HangThresholds t;
  t.interval = 60s;
  t.polls = 3;
  t.busy_above = 95;
  return t;
}

struct Node {
  HangJudge judge{thresholds()};
  FakeProcs procs;
  FakeLogs logs;
  std::map<std::string, std::vector<Holder>> holders;
  TimePoint now = TimePoint{} + 1000h;
  // One poll: every device's sample; the holders' CPU grows by `cpu_ticks` each poll.
  std::vector<HangVerdict> poll(const std::vector<DeviceSample>& samples, uint64_t cpu_ticks = 0) {
    now += 60s;
    for (auto& [pid, p] : procs.procs) p.cpu_ticks += cpu_ticks;
    return judge.step(now, samples, holders, procs, logs);
  }
  void hold(const std::string& device, int64_t pid, char state = 'S', int64_t session = 7) {
    holders[device] = {{pid, "python3"}};
    procs.procs[pid] = ProcessSample{state, 0, session, ""};
  }
};

DeviceSample sample(std::string device, double util, uint64_t memory = 3180) {
  DeviceSample s;
  s.device = std::move(device);
  s.utilization = util;
  s.memory_mb = memory;
  return s;
}

// Training (busy, logging), then `flat` polls of `util`; returns every verdict.
std::vector<HangVerdict> train_then_flat(Node& n, const std::string& device, double util,
                                         uint32_t flat, uint64_t cpu_ticks = 0) {
  n.logs.last[device] = n.now;
  n.poll({sample(device, 80)});
  n.logs.last[device] = n.now;
  std::vector<HangVerdict> out;
  for (uint32_t i = 0; i < flat; ++i) {
    for (auto& v : n.poll({sample(device, util)}, cpu_ticks)) out.push_back(v);
  }
  return out;
}

}  // namespace

TEST_CASE("hang: busy with no progress and a silent log is a device wedge, once") {
  Node n;
  n.hold("5", 4242);
  auto v = train_then_flat(n, "5", 100, 2);
  CHECK(v.empty());  // two flat polls: not yet
  v = n.poll({sample("5", 100)});
  REQUIRE(v.size() == 1);
  CHECK(v[0].device == "5");
  CHECK(v[0].cause == "device-wedge");
  CHECK(v[0].holder.pid == 4242);
  CHECK(v[0].polls == 3);
  CHECK(n.poll({sample("5", 100)}).empty());  // one verdict per flat run
}

TEST_CASE("hang: idle device, holder busy on the CPU is a data stall") {
  Node n;
  n.hold("0", 100, 'R');
  const auto v = train_then_flat(n, "0", 0, 3, 60 * 100);  // a CPU second per second
  REQUIRE(v.size() == 1);
  CHECK(v[0].cause == "data-stall");
  CHECK(v[0].cpu_per_minute == Approx(60));
}

TEST_CASE("hang: idle device, holder asleep is a collective wait, with the job's devices") {
  Node n;
  for (int d = 0; d < 4; ++d) n.hold(std::to_string(d), 200 + d, 'S', 9);
  std::vector<DeviceSample> busy, idle;
  for (int d = 0; d < 4; ++d) {
    busy.push_back(sample(std::to_string(d), 80));
    idle.push_back(sample(std::to_string(d), 0));
  }
  n.poll(busy);
  std::vector<HangVerdict> v;
  for (int i = 0; i < 3; ++i) v = n.poll(idle);
  REQUIRE(v.size() == 4);
  for (const auto& x : v) {
    CHECK(x.cause == "collective-wait");
    CHECK(x.job_devices == 4);
    CHECK(x.job_devices_flat == 4);
  }
}

TEST_CASE("hang: holder in D state: in the driver a wedge, elsewhere the host") {
  Node n;
  n.hold("2", 300, 'D');
  n.procs.procs[300].wchan = "devdrv_manager_ioctl";
  n.hold("3", 301, 'D');
  n.procs.procs[301].wchan = "nfs_wait_bit_killable";
  n.poll({sample("2", 80), sample("3", 80)});
  std::vector<HangVerdict> v;
  for (int i = 0; i < 3; ++i) v = n.poll({sample("2", 0), sample("3", 0)});
  REQUIRE(v.size() == 2);
  CHECK(v[0].device == "2");
  CHECK(v[0].cause == "device-wedge");
  CHECK(v[1].device == "3");
  CHECK(v[1].cause == "host");
}

TEST_CASE("hang: a usage probe that keeps failing while the holder is in D state") {
  Node n;
  n.hold("6", 400, 'D');
  n.poll({sample("6", 80)});
  DeviceSample failed;
  failed.device = "6";
  failed.probe_failed = true;
  std::vector<HangVerdict> v;
  for (int i = 0; i < 3; ++i) v = n.poll({failed});
  REQUIRE(v.size() == 1);
  CHECK(v[0].cause == "device-wedge");
}

TEST_CASE("no hang: the compile phase before the first step (never busy)") {
  Node n;
  n.hold("1", 500, 'R');
  for (int i = 0; i < 10; ++i) CHECK(n.poll({sample("1", 0)}, 6000).empty());
}

TEST_CASE("no hang: a checkpoint save shorter than the window, then steps") {
  Node n;
  n.hold("1", 501);
  CHECK(train_then_flat(n, "1", 0, 2).empty());
  n.logs.last["1"] = n.now;
  CHECK(n.poll({sample("1", 85)}).empty());
  CHECK(n.poll({sample("1", 0)}).empty());
  CHECK(n.poll({sample("1", 0)}).empty());
}

TEST_CASE("no hang: an evaluation pass (busy, memory moving, or the log still writing)") {
  Node n;
  n.hold("1", 502);
  // Busy below busy_above: computing.
  CHECK(train_then_flat(n, "1", 60, 6).empty());
  // At 100 % but the log keeps writing: the job is alive.
  Node m;
  m.hold("1", 503);
  m.poll({sample("1", 80)});
  for (int i = 0; i < 6; ++i) {
    m.logs.last["1"] = m.now + 30s;  // a line in the interval before the next poll
    CHECK(m.poll({sample("1", 100)}).empty());
  }
  // Idle but the memory grows (loading the eval set onto the device).
  Node k;
  k.hold("1", 504);
  k.poll({sample("1", 80)});
  for (uint64_t i = 0; i < 6; ++i) CHECK(k.poll({sample("1", 0, 4000 + i * 100)}).empty());
}

TEST_CASE("no hang: a job that is simply gone") {
  Node n;
  n.hold("4", 600);
  n.poll({sample("4", 80)});
  n.poll({sample("4", 0)});
  n.procs.procs.erase(600);  // exited; the tool still lists it for a moment
  for (int i = 0; i < 5; ++i) CHECK(n.poll({sample("4", 0)}).empty());
  n.holders.erase("4");  // and then no longer
  for (int i = 0; i < 5; ++i) CHECK(n.poll({sample("4", 0)}).empty());
}

TEST_CASE("no hang: busy without traffic or a log naming the device is simply training") {
  Node n;
  n.hold("7", 700);
  for (int i = 0; i < 8; ++i) CHECK(n.poll({sample("7", 100)}).empty());
}

TEST_CASE("hang: traffic under the floor keeps a busy device flat, over it not") {
  Node n;
  n.hold("7", 701);
  auto with_packets = [](double util, uint64_t packets) {
    DeviceSample s = sample("7", util);
    s.packets = packets;
    return s;
  };
  n.poll({with_packets(80, 1000)});
  CHECK(n.poll({with_packets(100, 100000)}).empty());  // 99000 packets a minute: progress
  std::vector<HangVerdict> v;
  for (int i = 0; i < 3; ++i) v = n.poll({with_packets(100, 100010)});
  REQUIRE(v.size() == 1);
  CHECK(v[0].cause == "device-wedge");
}

TEST_CASE("hang: a new holder set starts over") {
  Node n;
  n.hold("5", 800);
  train_then_flat(n, "5", 100, 2);
  n.hold("5", 801);  // the job was restarted: its flat polls count from here
  CHECK(n.poll({sample("5", 100)}).empty());
  CHECK(n.poll({sample("5", 100)}).empty());
  CHECK(n.poll({sample("5", 100)}).size() == 1);
}

TEST_CASE("hang: the record line the rules read") {
  HangVerdict v;
  v.device = "5";
  v.cause = "device-wedge";
  v.holder = {4242, "python 3"};
  v.state = 'S';
  v.utilization = 100;
  v.memory_mb = 3180;
  v.polls = 5;
  v.silent_for = 25s;
  v.job_devices = 1;
  v.job_devices_flat = 1;
  CHECK(format_hang_record(v, FaultLevel::SeparateNPU) ==
        "hang: device=5 cause=device-wedge level=SeparateNPU pid=4242 process=python_3 state=S "
        "wchan=- cpu_per_min=0.0 util=100.0 memory_mb=3180 polls=5 silent_for=25s "
        "job_devices_flat=1/1");
  v.cause = "data-stall";
  CHECK(format_hang_record(v, FaultLevel::SeparateNPU).find(" level=NotHandleFault ") !=
        std::string::npos);
}

TEST_CASE("/proc/PID/stat: state, CPU time and session, a command with blanks and parens") {
  const auto p = parse_proc_stat(
      "4242 (python3 (x) y) S 1 4242 4200 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 8 0 12345 "
      "0 0\n");
  REQUIRE(p);
  CHECK(p->state == 'S');
  CHECK(p->cpu_ticks == 300);
  CHECK(p->session == 4200);
  CHECK_FALSE(parse_proc_stat("garbage"));
  CHECK_FALSE(parse_proc_stat("1 (x) S 1 2"));
  const auto self = ProcfsReader().read(getpid());
  REQUIRE(self);
  CHECK(self->state == 'R');
}
