// The matcher micro-benchmark: the literal prefilter and the whole rule engine over a log held
// in memory, so the figures are the matcher's alone (no read(), no page cache, no output).
//
//   bench_matcher FILE [MiB-to-scan=512]
//
// FILE is a log such as tests/bench/gen_plog.py's plog (the first 64 MiB are used). Reports
// MB per CPU second for: the shipped packs' prefilter alone (candidate_lines), RuleSet::scan with
// the shipped packs in 1 MiB chunks (what --replay does), and RuleSet::scan with 10, 100 and 1,000
// synthetic rules whose literals never occur. Built only on request (`--target bench_matcher`);
// it asserts nothing, the benchmark suite (tests/bench/run) checks correctness.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "rules/prefilter.hpp"
#include "rules/rule.hpp"

namespace {

constexpr size_t kChunk = size_t{1} << 20;

std::string read_head(const char* path, size_t max) {
  std::ifstream in(path, std::ios::binary);
  std::string data(max, '\0');
  in.read(data.data(), static_cast<std::streamsize>(max));
  data.resize(static_cast<size_t>(in.gcount()));
  data.resize(data.rfind('\n') + 1);  // whole lines only
  return data;
}

// Chunks of whole lines, as the readers hand them to the engine.
std::vector<std::string_view> chunks_of(const std::string& data) {
  std::vector<std::string_view> out;
  for (size_t pos = 0; pos < data.size();) {
    size_t end = std::min(data.size(), pos + kChunk);
    if (end < data.size()) end = data.rfind('\n', end - 1) + 1;
    out.emplace_back(data.data() + pos, end - pos);
    pos = end;
  }
  return out;
}

// CPU time of this process: on a shared machine the wall clock also measures the neighbours.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

template <class F>
double mb_per_s(size_t bytes_per_pass, size_t target_bytes, F&& pass) {
  const size_t passes = std::max<size_t>(1, target_bytes / bytes_per_pass);
  pass();  // warm caches and tables
  const double t0 = cpu_seconds();
  for (size_t i = 0; i < passes; ++i) pass();
  const double s = cpu_seconds() - t0;
  return static_cast<double>(bytes_per_pass * passes) / 1e6 / s;
}

std::shared_ptr<const faultd::RuleSet> build(std::vector<faultd::RuleSpec> specs) {
  faultd::ErrorList errors;
  auto set = faultd::RuleSet::build(std::move(specs), {}, errors);
  if (!set) {
    std::cerr << errors.to_string();
    std::exit(1);
  }
  return set;
}

std::vector<faultd::RuleSpec> synthetic(size_t n) {
  static const char* const kWords[] = {
      "accelerator", "allocation", "barrier", "checkpoint", "collective", "compiler",
      "descriptor",  "doorbell",   "encoder", "firmware",   "gradient",   "handshake",
      "interrupt",   "journal",    "kernel",  "launcher",   "mailbox",    "notifier",
      "overflow",    "pipeline",   "quorum",  "register",   "scheduler",  "semaphore",
      "telemetry",   "uplink",     "voltage", "watchdog"};
  std::mt19937 rng(static_cast<unsigned>(n));
  std::set<std::string> phrases;
  while (phrases.size() < n) {
    std::string p;
    const int words = 3 + static_cast<int>(rng() % 3);
    for (int i = 0; i < words; ++i) p += std::string(kWords[rng() % std::size(kWords)]) + " ";
    phrases.insert(p + "fault");
  }
  std::vector<faultd::RuleSpec> specs;
  for (const auto& p : phrases) {
    faultd::RuleSpec s;
    s.id = "synthetic.r" + std::to_string(specs.size());
    s.any = {p};
    s.regex = R"(device_id=(?P<device>\d+))";
    s.fault_level = faultd::FaultLevel::SubHealthFault;
    specs.push_back(std::move(s));
  }
  return specs;
}

double scan_rate(const faultd::RuleSet& set, const std::vector<std::string_view>& chunks,
                 size_t bytes, size_t target, size_t& findings) {
  std::vector<faultd::Finding> out;
  const faultd::Fields no_fields;
  return mb_per_s(bytes, target, [&] {
    findings = 0;
    for (auto c : chunks) {
      faultd::Chunk chunk;
      chunk.source = "plog";
      chunk.path = "bench.log";
      chunk.data = c;
      chunk.path_fields = &no_fields;
      out.clear();
      set.scan(chunk, faultd::TimePoint{}, out);
      findings += out.size();
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: bench_matcher FILE [MiB-to-scan]\n";
    return 2;
  }
  const std::string data = read_head(argv[1], size_t{64} << 20);
  const size_t target = (argc > 2 ? std::stoul(argv[2]) : 512) << 20;
  const auto chunks = chunks_of(data);

  std::vector<faultd::RuleSpec> specs;
  faultd::ErrorList errors;
  for (const auto& e :
       std::filesystem::directory_iterator(FAULTD_SOURCE_DIR "/etc/faultd/rules.d")) {
    if (e.path().extension() == ".yaml") faultd::load_rule_file(e.path().string(), specs, errors);
  }
  std::vector<std::string> literals;
  for (const auto& s : specs) {
    for (const auto& a : s.any) literals.push_back(a);
  }
  std::sort(literals.begin(), literals.end());
  literals.erase(std::unique(literals.begin(), literals.end()), literals.end());
  const faultd::rules::LiteralSet prefilter(literals);
  size_t candidates = 0;
  const double pf = mb_per_s(data.size(), target, [&] {
    candidates = 0;
    for (auto c : chunks) candidates += prefilter.candidate_lines(c).size();
  });
  std::printf("%-44s %8.0f MB/s  (%zu literals, %zu candidate lines)\n",
              "prefilter, shipped packs' literals", pf, literals.size(), candidates);

  size_t findings = 0;
  const auto shipped = build(specs);
  const double all = scan_rate(*shipped, chunks, data.size(), target, findings);
  std::printf("%-44s %8.0f MB/s  (%zu rules, %zu findings)\n", "RuleSet::scan, shipped packs", all,
              shipped->size(), findings);
  for (size_t n : {10, 100, 1000}) {
    const auto set = build(synthetic(n));
    const double r = scan_rate(*set, chunks, data.size(), target, findings);
    std::printf("%-44s %8.0f MB/s  (%zu findings)\n",
                ("RuleSet::scan, " + std::to_string(n) + " synthetic rules").c_str(), r, findings);
  }
  return 0;
}
