#include "rules/neighbour_devices.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include <re2/re2.h>

#include "rules/envelope.hpp"

namespace faultd {

NeighbourDevices::LineFacts NeighbourDevices::facts_of(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  Envelope env;
  unwrap(line, env);
  LineFacts facts;
  std::string_view device = torch_npu_device(env.message);
  if (device.empty()) device = line_device(env.message);
  if (!device.empty() && is_valid_device_id(device)) facts.device = std::string(device);
  facts.pid = std::string(line_pid(env.message));
  facts.env_pid = std::move(env.pid);
  facts.outer_pid = std::move(env.outer_pid);
  facts.rank = std::move(env.rank);
  if (facts.rank.empty()) {
    // NCCL's communicator lines name the rank whose device they give: "comm 0x9f2ef80 rank 8
    // nranks 16 cudaDev 0 busId b000 - Abort COMPLETE". Another rank's line is another stream.
    static const RE2 comm(R"(\bcomm 0x[0-9a-f]+ rank (\d{1,6}) nranks \d)");
    re2::StringPiece rank;
    if (RE2::PartialMatch(re2::StringPiece(env.message.data(), env.message.size()), comm, &rank)) {
      facts.rank = std::string(rank.data(), rank.size());
    }
  }
  return facts;
}

bool NeighbourDevices::same_stream(const LineFacts& a, const LineFacts& b) {
  if (!a.rank.empty() && !b.rank.empty() && a.rank != b.rank) return false;
  const bool a_names = !a.pid.empty() || !a.env_pid.empty();
  const bool b_names = !b.pid.empty() || !b.env_pid.empty();
  if (!a_names || !b_names) return true;
  auto names = [](const LineFacts& f, const std::string& pid) {
    return !pid.empty() && (f.pid == pid || f.env_pid == pid);
  };
  if (names(b, a.pid) || names(b, a.env_pid)) return true;
  // A line wrapped once by a relay (syslog's writer, a Ray worker) and one the same relay
  // carries from an inner launcher: the relay's process is all the first one says.
  auto relayed = [](const LineFacts& once, const LineFacts& twice) {
    return once.outer_pid.empty() && !twice.outer_pid.empty() && once.pid.empty() &&
           once.env_pid == twice.outer_pid;
  };
  return relayed(a, b) || relayed(b, a);
}

NeighbourDevices::Key NeighbourDevices::key_of(std::string_view source,
                                               const FileIdentity& identity,
                                               std::string_view path) {
  return identity.ino != 0 ? Key{std::string(source), identity.dev, identity.ino, std::string()}
                           : Key{std::string(source), 0, 0, std::string(path)};
}

namespace {

// How far after a held finding a line may still win: nearer than the best line before it (a
// tie goes to the earlier line), at most kLines.
uint64_t reach(uint64_t before_distance) {
  return before_distance == 0 ? NeighbourDevices::kLines : before_distance - 1;
}

// The lines of one chunk, parsed on demand, each at most once.
class ChunkLines {
 public:
  explicit ChunkLines(std::string_view data) : data_(data) {}

  size_t end_of(size_t start) const {
    const void* nl = std::memchr(data_.data() + start, '\n', data_.size() - start);
    return nl == nullptr ? data_.size()
                         : static_cast<size_t>(static_cast<const char*>(nl) - data_.data());
  }
  // The start of the line before the one at `start` (start > 0).
  size_t start_before(size_t start) const {
    const size_t end = start - 1;  // its '\n'
    const void* nl = end == 0 ? nullptr : memrchr(data_.data(), '\n', end);
    return nl == nullptr ? 0 : static_cast<size_t>(static_cast<const char*>(nl) - data_.data()) + 1;
  }
  bool has_line_at(size_t start) const { return start < data_.size(); }
  std::string_view text_at(size_t start) const {
    return data_.substr(start, end_of(start) - start);
  }

  const NeighbourDevices::LineFacts& facts(size_t start) {
    auto it = cache_.find(start);
    if (it == cache_.end()) {
      it = cache_.emplace(start, NeighbourDevices::facts_of(text_at(start))).first;
    }
    return it->second;
  }

 private:
  std::string_view data_;
  std::unordered_map<size_t, NeighbourDevices::LineFacts> cache_;
};

}  // namespace

void NeighbourDevices::release(Held& h, std::vector<Finding>& out) {
  if (!h.answer.empty()) {
    h.finding.device = std::move(h.answer);
    h.finding.device_from = "context";
  }
  out.push_back(std::move(h.finding));
}

NeighbourDevices::File& NeighbourDevices::file_for(const Chunk& chunk,
                                                   std::vector<Finding>& released) {
  Key key = key_of(chunk.source, chunk.identity, chunk.path);
  auto it = files_.find(key);
  if (it == files_.end()) {
    if (files_.size() >= kMaxFiles) {
      auto oldest = std::min_element(
          files_.begin(), files_.end(),
          [](const auto& a, const auto& b) { return a.second.last_used < b.second.last_used; });
      for (auto& h : oldest->second.held) release(h, released);
      files_.erase(oldest);
    }
    it = files_.emplace(std::move(key), File{}).first;
  }
  it->second.last_used = ++uses_;
  return it->second;
}

void NeighbourDevices::settle_wanted(const Chunk& chunk, TimePoint now, std::vector<Finding>& out,
                                     size_t from, const std::vector<bool>& wanted) {
  std::vector<Finding> released;  // held since earlier reads, settled now
  File& file = file_for(chunk, released);
  ChunkLines lines(chunk.data);
  const bool continues = file.next_line == chunk.first_line;
  if (!continues) file.tail.clear();  // a truncation, a rotation, a jump: the tail is another text

  // Findings held since earlier reads examine this chunk's first lines.
  for (auto& h : file.held) {
    if (h.settled) continue;
    // It saw every line up to the end of the previous read: this chunk's first line is next.
    const uint64_t limit = reach(h.before_distance);
    for (size_t start = 0;
         continues && !h.settled && h.after_seen < limit && lines.has_line_at(start);
         start = lines.end_of(start) + 1) {
      ++h.after_seen;
      const LineFacts& facts = lines.facts(start);
      if (!facts.device.empty() && same_stream(h.facts, facts)) {
        h.answer = facts.device;
        h.settled = true;
      }
    }
    if (!continues || h.after_seen >= limit) h.settled = true;
  }
  release_settled(file, released);

  // This chunk's findings: settled now when the lines that decide them are here, else held;
  // behind a held one, every later finding of the file waits its turn. When none wants a
  // device and none waits, they stay where they are (a chunk of step lines: thousands).
  const bool pass_through = released.empty() && file.held.empty() &&
                            std::find(wanted.begin(), wanted.end(), true) == wanted.end();
  std::vector<Finding> settled;
  if (!pass_through) settled.reserve(out.size() - from);
  for (size_t i = pass_through ? out.size() : from; i < out.size(); ++i) {
    Finding& f = out[i];
    Held h;
    h.since = now;
    if (!wanted[i - from]) {
      h.finding = std::move(f);
      h.settled = true;
    } else {
      const size_t at = static_cast<size_t>(f.offset - chunk.start_offset);
      h.facts = lines.facts(at);
      // The nearest line before it from the same stream that names a device.
      size_t start = at;
      for (uint64_t d = 1; d <= kLines; ++d) {
        const LineFacts* facts = nullptr;
        if (start > 0) {
          start = lines.start_before(start);
          facts = &lines.facts(start);
        } else if (continues && d - 1 - (f.line - chunk.first_line) < file.tail.size()) {
          // Before the chunk: the tail, newest last.
          const size_t back = static_cast<size_t>(d - (f.line - chunk.first_line));
          auto& line = file.tail[file.tail.size() - back];
          if (!line.facts) line.facts = facts_of(line.text);
          facts = &*line.facts;
        } else {
          break;
        }
        if (!facts->device.empty() && same_stream(h.facts, *facts)) {
          h.answer = facts->device;
          h.before_distance = d;
          break;
        }
      }
      // The lines after it that could still be nearer.
      const uint64_t limit = reach(h.before_distance);
      start = lines.end_of(at) + 1;
      while (!h.settled && h.after_seen < limit && lines.has_line_at(start)) {
        ++h.after_seen;
        const LineFacts& facts = lines.facts(start);
        if (!facts.device.empty() && same_stream(h.facts, facts)) {
          h.answer = facts.device;
          h.settled = true;
        }
        start = lines.end_of(start) + 1;
      }
      if (h.after_seen >= limit) h.settled = true;
      h.finding = std::move(f);
    }
    // A detector input never waits: the detectors read it with the time of its own read.
    if (h.settled && (file.held.empty() || h.finding.detector_input)) {
      release(h, settled);
    } else if (file.held.size() < kMaxHeld) {
      file.held.push_back(std::move(h));
    } else {
      // Bounded: past kMaxHeld the oldest leaves with the answer it has.
      file.held.front().settled = true;
      release_settled(file, settled);
      file.held.push_back(std::move(h));
    }
  }
  if (!pass_through) {
    out.resize(from);
    for (auto& f : released) out.push_back(std::move(f));
    for (auto& f : settled) out.push_back(std::move(f));
  }

  // The chunk's last lines become the tail the next read looks back on.
  std::vector<size_t> last;  // line starts, newest first
  if (!chunk.data.empty()) {
    const size_t size = chunk.data.size();
    size_t start = lines.start_before(chunk.data.back() == '\n' ? size : size + 1);
    while (last.size() < kLines) {
      last.push_back(start);
      if (start == 0) break;
      start = lines.start_before(start);
    }
  }
  if (last.size() >= kLines) file.tail.clear();
  for (auto it = last.rbegin(); it != last.rend(); ++it) {
    // Kept as text, parsed if a later finding looks back; a long line is parsed now, so the
    // tails of kMaxFiles files hold at most kLines * kMaxTailText bytes each.
    const std::string_view text = lines.text_at(*it);
    if (text.size() <= kMaxTailText) {
      file.tail.push_back({std::string(text), std::nullopt});
    } else {
      file.tail.push_back({std::string(), lines.facts(*it)});
    }
  }
  while (file.tail.size() > kLines) file.tail.pop_front();
  file.next_line = chunk.end_line + 1;
  count_held();
}

void NeighbourDevices::release_settled(File& file, std::vector<Finding>& out) {
  size_t n = 0;
  for (; n < file.held.size() && file.held[n].settled; ++n) release(file.held[n], out);
  file.held.erase(file.held.begin(), file.held.begin() + static_cast<std::ptrdiff_t>(n));
}

void NeighbourDevices::release_expired(TimePoint now, std::vector<Finding>& out) {
  if (held_count_ == 0) return;
  for (auto& [key, file] : files_) {
    for (auto& h : file.held) {
      if (now - h.since >= kHoldFor) h.settled = true;
    }
    release_settled(file, out);
  }
  count_held();
}

void NeighbourDevices::flush(std::vector<Finding>& out) {
  for (auto& [key, file] : files_) {
    for (auto& h : file.held) release(h, out);
    file.held.clear();
  }
  held_count_ = 0;
}

std::optional<std::pair<uint64_t, uint64_t>> NeighbourDevices::held_from(
    std::string_view source, const FileIdentity& identity, std::string_view path) const {
  const auto it = files_.find(key_of(source, identity, path));
  if (it == files_.end() || it->second.held.empty()) return std::nullopt;
  const Finding& first = it->second.held.front().finding;
  return std::make_pair(first.offset, first.line - 1);
}

void NeighbourDevices::count_held() {
  held_count_ = 0;
  for (const auto& [key, file] : files_) held_count_ += file.held.size();
}

}  // namespace faultd
