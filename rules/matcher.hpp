// The one matching path: a Chunk in, the findings the daemon journals out. The daemon, `faultd
// --replay` and the golden tests all match through a Matcher, so what a rule author sees offline
// is what the daemon does.
//
//   Chunk ──RuleSet::scan (per-source ScanContext)──▶ matches ──NeighbourDevices──▶
//         ──DetectorBank──▶ findings
//
// A Matcher owns what matching keeps between chunks: the multi-line progress of each source
// (a ScanContext per source name), the neighbouring lines that give a deviceless finding its
// device (which may hold such a finding until the lines after it are read), and the
// training-numerics detectors' series. It counts the
// values the rules refused (device ids and codes that fail validation): the rules refused them,
// so they are the rules' figures, not a source's.
//
// Lifecycle: configure() at start and on every reload (unchanged detector rules keep their
// state; contexts start over with a new RuleSet). Threading: io thread only, except refusals(),
// whose counters are atomics read at scrape time.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "daemon/core/types.hpp"
#include "rules/detectors/bank.hpp"
#include "rules/neighbour_devices.hpp"
#include "rules/rule.hpp"

namespace faultd {

struct Refusals {
  std::atomic<uint64_t> devices{0};  // device values that failed is_valid_device_id
  std::atomic<uint64_t> codes{0};    // codes that were not [A-Z0-9._-]{1,32}
  // lines of a rule's form from a source type the rule refuses (a record forged in a log)
  std::atomic<uint64_t> source_types{0};
  std::atomic<uint64_t> jobs{0};  // job names that failed is_valid_job_id
};

class Matcher {
 public:
  Matcher();
  ~Matcher();
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  void configure(std::shared_ptr<const RuleSet> rules);
  const RuleSet& rules() const { return *rules_; }

  // Matches the chunk and passes detector matches through the detectors: appends the findings
  // to journal (plain matches and the verdicts detector matches complete), each dated `now`.
  // Returns the number of rule matches, detector inputs included (which the detectors consume).
  size_t match(const Chunk& chunk, TimePoint now, std::vector<Finding>& out);

  // The two halves of match(), for a caller that dates each line itself (the golden tests take
  // line N to arrive N seconds after the start): scan() appends the raw matches, detector inputs
  // included; detect() replaces the detector inputs by the verdicts they complete, each observed
  // at its own `time`.
  void scan(const Chunk& chunk, TimePoint now, std::vector<Finding>& out);
  void detect(std::vector<Finding>& findings);

  // Time-based verdicts (stalls) as of `now`, and the findings held for their neighbouring lines
  // longer than NeighbourDevices::kHoldFor.
  std::vector<Finding> tick(TimePoint now);
  // Some detector rule is loaded or a finding is held: only then is a tick needed.
  bool needs_tick() const { return detectors_.active() || neighbours_.holding(); }
  bool detectors_active() const { return detectors_.active(); }
  // The end of the input (replay, tests): every held finding, with the device it has.
  std::vector<Finding> flush();
  // Where a saved read position of the chunk's file must stop: before its first held finding.
  ReadPosition clamp(ReadPosition position) const;
  std::vector<DetectorBank::SeriesStats> series_stats() const { return detectors_.series_stats(); }

  const std::shared_ptr<Refusals>& refusals() const { return refusals_; }

 private:
  std::shared_ptr<const RuleSet> rules_;
  std::map<std::string, ScanContext, std::less<>> contexts_;  // per source
  NeighbourDevices neighbours_;
  std::set<std::string, std::less<>> device_field_rules_;  // eligible for neighbours_
  DetectorBank detectors_;
  std::shared_ptr<Refusals> refusals_ = std::make_shared<Refusals>();
};

}  // namespace faultd
