// A fault line often names no device while a line next to it does: torch_npu prints its tuple
// "(PID:p, Device:d, RankID:r)" on the line before or after a CANN error block, HCCL's
// LINK_ERROR_INFO table says "comm error, device[2]" two lines below the timeout, a runtime
// error is followed by "device fault reported: device_id=4". NeighbourDevices gives such a
// finding the device of the nearest line within kLines before or after it in the same file
// (device_from "context"), when both lines come from the same stream: their process ids (on the
// line or in its envelope) share one or one of them names none, and their ranks (the launcher's,
// or the one an NCCL communicator line is about) agree.
// Ties go to the earlier line. Only findings of rules whose device is the plain "{device}"
// field are eligible (a rule that names no device on purpose keeps none); recoveries and
// detector inputs never are.
//
// The same file gives the same devices whatever the read sizes: a finding is held until the
// lines that could still change its answer have been read (those after it and nearer than the
// best line before it, at most kLines), so its answer never depends on where a read ended. The
// last kLines lines of each file are kept, parsed (device, pids, rank), for the findings at the
// start of the next read. A held finding is released with the best answer it has after
// kHoldFor (release_expired) or at the end of input (flush); held_from() tells the caller where a
// saved read position must stop, so a crash re-reads a held finding rather than losing it.
//
// Findings leave in the order of their lines: one that is settled waits behind an earlier one
// still held (detector inputs excepted: the detectors read them at once, dated by their read).
// Bounded: kMaxFiles files (least recently read forgotten first, their held findings released),
// kMaxHeld held findings per file. Threading: one owner (the Matcher), io thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "daemon/core/types.hpp"

namespace faultd {

class NeighbourDevices {
 public:
  // A GE exception dump (AIC_INFO) is 13 lines before the line naming its device.
  static constexpr uint64_t kLines = 16;
  static constexpr size_t kMaxTailText = 1024;
  static constexpr size_t kMaxFiles = 64;
  static constexpr size_t kMaxHeld = 256;
  static constexpr Duration kHoldFor = std::chrono::seconds(2);

  // What a line says about where it came from.
  struct LineFacts {
    std::string device;     // the device it names (torch_npu tuple, then the spellings), validated
    std::string pid;        // the process it names ("HCCL(123,python)", "[PID: 123]", the tuple)
    std::string env_pid;    // the process its envelope names ("(train pid=8464) ")
    std::string outer_pid;  // a relay's around that envelope (syslog's "python3[4711]: ")
    std::string rank;       // the launcher rank of its envelope ("[rank3]: "), else the rank an
                            // NCCL communicator line gives its device for ("comm 0x.. rank 8 ..")
  };
  static LineFacts facts_of(std::string_view line);
  static bool same_stream(const LineFacts& a, const LineFacts& b);

  // Settles out[from..], the findings of `chunk`: an eligible finding without a device gets the
  // device of its neighbours, now or (held) once the lines after it are read. Findings held
  // since earlier reads of the file that this chunk settles come before out[from].
  // `eligible(rule id)` says whether the rule's device is the plain "{device}" field.
  template <typename Eligible>
  void settle(const Chunk& chunk, TimePoint now, std::vector<Finding>& out, size_t from,
              const Eligible& eligible) {
    std::vector<bool> wanted(out.size() - from);
    for (size_t i = from; i < out.size(); ++i) {
      const Finding& f = out[i];
      wanted[i - from] = f.device.empty() && !f.recovery && !f.detector_input && eligible(f.rule);
    }
    settle_wanted(chunk, now, out, from, wanted);
  }

  // Held findings older than kHoldFor, appended to `out` with the best device they have.
  void release_expired(TimePoint now, std::vector<Finding>& out);
  // Every held finding (the end of the input).
  void flush(std::vector<Finding>& out);
  bool holding() const { return held_count_ > 0; }
  // The earliest held finding of the file: (offset, lines before it), where a saved position
  // of that file must stop.
  std::optional<std::pair<uint64_t, uint64_t>> held_from(std::string_view source,
                                                         const FileIdentity& identity,
                                                         std::string_view path) const;

 private:
  struct Held {
    Finding finding;
    LineFacts facts;
    // The nearest same-stream device found so far: before it (at before_distance lines), or
    // after it once one nearer was read; empty when none.
    std::string answer;
    uint64_t before_distance = 0;  // the distance of the one before it; 0 when none
    uint64_t after_seen = 0;       // lines after the finding examined so far
    TimePoint since{};
    // Its answer is final; it waits only behind an earlier held finding (findings leave in
    // line order: a recovery never overtakes the fault before it).
    bool settled = false;
  };
  struct File {
    // The file's last lines read (at most kLines), oldest first; each parsed only when a
    // finding looks back on it (most reads have no finding that does).
    struct TailLine {
      std::string text;
      std::optional<LineFacts> facts;
    };
    std::deque<TailLine> tail;
    uint64_t next_line = 0;  // the number of the line after the tail
    std::vector<Held> held;  // in line order
    uint64_t last_used = 0;
  };
  using Key = std::tuple<std::string, uint64_t, uint64_t, std::string>;
  static Key key_of(std::string_view source, const FileIdentity& identity, std::string_view path);

  void settle_wanted(const Chunk& chunk, TimePoint now, std::vector<Finding>& out, size_t from,
                     const std::vector<bool>& wanted);
  File& file_for(const Chunk& chunk, std::vector<Finding>& released);
  static void release(Held& h, std::vector<Finding>& out);
  // Releases the settled findings at the front of the file's queue.
  static void release_settled(File& file, std::vector<Finding>& out);
  void count_held();

  std::map<Key, File> files_;
  uint64_t uses_ = 0;
  size_t held_count_ = 0;
};

}  // namespace faultd
