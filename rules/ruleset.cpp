// The rule engine: compiling specs into per-source views and matching chunks against them.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include <re2/re2.h>

#include "daemon/core/newlines.hpp"
#include "rules/envelope.hpp"
#include "rules/prefilter.hpp"
#include "rules/rule.hpp"
#include "rules/sha256.hpp"
#include "rules/spec_check.hpp"
#include "rules/step_fields.hpp"
#include "rules/template.hpp"

namespace faultd {

FaultLevel CodeLevels::resolve(const std::string& code) const {
  if (code.empty()) return default_level;
  const auto it = levels.find(code);
  return it == levels.end() ? default_level : it->second;
}

namespace rules {

struct CompiledRule {
  RuleSpec spec;
  std::unique_ptr<RE2> re;
  // For a rule without a trigger literal: `re` in multi-line mode, unable to match '\n', run
  // over a whole chunk to find the lines worth a per-line evaluation (null when the pattern
  // depends on where the text ends; see searchable_over_chunk).
  std::unique_ptr<RE2> chunk_re;
  std::vector<std::pair<std::string, int>> groups;  // named group → submatch index
  int submatches = 0;  // how many submatches Match() must fill (0: none are needed)
  Template device;
  Template code;
  int multiline_slot = -1;  // index of this rule's progress in a ScanContext file entry
};

// The rules that apply to one source, with the prefilter over their triggers.
struct View {
  std::vector<uint32_t> rules;  // indexes into RuleSet::Impl::rules, ascending = rule order
  LiteralSet triggers;
  std::vector<std::vector<uint32_t>> trigger_rules;  // per trigger: positions in `rules`
  // Positions of rules without a trigger: evaluated on every line, alone, so one regex-only
  // rule costs its own regex per line, not a full evaluation of every rule of the view.
  std::vector<uint32_t> untriggered;
  // Positions of rules without a trigger whose regex is searched once over each chunk: only
  // the lines it hits are evaluated (one RE2 pass instead of one RE2 call per line).
  std::vector<uint32_t> searched;
};

// Everything a RuleSet holds (RuleSet::Impl is this; the scanner below reads it).
struct Engine {
  std::vector<CompiledRule> rules;
  CodeLevels levels;
  // Rules without `sources` for sources no rule names; one view per name otherwise.
  View all_sources;
  std::map<std::string, View, std::less<>> by_source;
  std::string sha256;
  std::vector<std::string> warnings;
  size_t max_submatches = 0;
  std::vector<uint32_t> multiline_groups;  // per multi-line slot: how many `lines` entries
  uint64_t serial = 0;                     // tells a ScanContext which RuleSet it tracked

  uint32_t multiline_count() const { return static_cast<uint32_t>(multiline_groups.size()); }

  const View& view_for(std::string_view source) const {
    const auto it = by_source.find(source);
    return it == by_source.end() ? all_sources : it->second;
  }
};

}  // namespace rules

struct RuleSet::Impl : rules::Engine {};

// Multi-line progress per file: for each multi-line rule, the line number of the latest line
// that matched each `lines` entry (0: none yet). Files are keyed by device and inode (the
// path when the source has no identity), so a rotated file keeps its progress.
struct ScanContext::Impl {
  using Key = std::tuple<uint64_t, uint64_t, std::string>;
  struct File {
    uint64_t last_used = 0;
    std::vector<std::vector<uint64_t>> progress;  // by multi-line slot, then by entry
    // The device each process id was last seen with in this file (a torch_npu tuple or a CANN
    // line naming both), for its later lines that name only the process: bounded, and an entry
    // expires once kPidDeviceLines lines passed without its process naming the device again.
    struct PidDevice {
      std::string device;
      uint64_t line = 0;
    };
    std::map<std::string, PidDevice, std::less<>> pid_devices;
  };
  static constexpr size_t kMaxPidDevices = 64;
  static constexpr uint64_t kPidDeviceLines = 100000;
  uint64_t serial = 0;
  uint64_t uses = 0;
  std::map<Key, File> files;
  std::vector<size_t> candidates;    // scratch: a chunk's candidate line starts, capacity kept
  StepFieldReader step_fields;       // the step fields of the source's last step lines
  LineDeviceReader spelled_devices;  // the devices they spell
  // The triggers a line holds, kept for the shapes of the last few lines (a job's step lines):
  // they are the same for every line of a shape unless a trigger with a digit could fit it.
  ShapeCache<std::vector<uint32_t>> trigger_shapes;
  std::vector<uint32_t> ids;  // scratch: the triggers of a line of no kept shape

  const std::vector<uint32_t>& trigger_ids(const rules::LiteralSet& triggers,
                                           std::string_view line) {
    if (const std::vector<uint32_t>* known = trigger_shapes.find(line)) return *known;
    ids.clear();
    triggers.matches(line, ids);
    if (triggers.shape_decides(line)) trigger_shapes.keep(line, ids);
    return ids;
  }

  // The view's triggers with their Wu-Manber windows chosen for this source's own text, once
  // its first kSampleBytes are read (rules::BlockCounts): the same literals, so the same
  // candidate lines, fewer windows to verify. Until then, and after a reload until the next
  // sample is in, the view's own triggers.
  static constexpr size_t kSampleBytes = size_t{1} << 20;
  uint64_t sampled_serial = 0;
  const rules::View* sampled_view = nullptr;
  std::unique_ptr<rules::BlockCounts> sample;
  std::optional<rules::LiteralSet> adapted;

  const rules::LiteralSet& triggers_for(const rules::Engine& engine, const rules::View& view,
                                        std::string_view text) {
    if (sampled_serial != engine.serial || sampled_view != &view) {
      sampled_serial = engine.serial;
      sampled_view = &view;
      sample.reset();
      adapted.reset();
      trigger_shapes.clear();  // another rule set's literals
    }
    if (adapted) return *adapted;
    if (view.triggers.empty()) return view.triggers;
    if (!sample) sample = std::make_unique<rules::BlockCounts>();
    sample->add(text.substr(0, kSampleBytes - std::min(kSampleBytes, sample->bytes())));
    if (sample->bytes() < kSampleBytes) return view.triggers;
    adapted.emplace(view.triggers.literals(), sample.get());
    sample.reset();
    return *adapted;
  }

  // Whether the source colours its lines (an ANSI escape in its first kSampleBytes): a colour
  // sequence in the middle of a line may cut a trigger literal in two ("NCCL \x1b[33mWARN"),
  // so every line of such a source holding an escape is a candidate too. A source without
  // colour pays nothing; one that colours pays a memchr for ESC over its chunks.
  bool coloured = false;
  size_t colour_sampled = 0;

  bool colours(std::string_view text) {
    if (coloured || colour_sampled >= kSampleBytes) return coloured;
    const std::string_view head = text.substr(0, kSampleBytes - colour_sampled);
    colour_sampled += head.size();
    coloured = head.find('\x1b') != std::string_view::npos;
    return coloured;
  }

  File& file_for(const Chunk& chunk, const rules::Engine& engine) {
    if (serial != engine.serial) {
      files.clear();
      serial = engine.serial;
    }
    Key key = chunk.identity.ino != 0 ? Key{chunk.identity.dev, chunk.identity.ino, std::string()}
                                      : Key{0, 0, std::string(chunk.path)};
    auto it = files.find(key);
    if (it == files.end()) {
      if (files.size() >= kMaxFiles) {
        files.erase(std::min_element(files.begin(), files.end(), [](const auto& a, const auto& b) {
          return a.second.last_used < b.second.last_used;
        }));
      }
      it = files.emplace(std::move(key), File{}).first;
      it->second.progress.resize(engine.multiline_count());
      for (uint32_t slot = 0; slot < engine.multiline_count(); ++slot) {
        it->second.progress[slot].assign(engine.multiline_groups[slot], 0);
      }
    }
    it->second.last_used = ++uses;
    return it->second;
  }
};

ScanContext::ScanContext() : impl_(std::make_unique<Impl>()) {}
ScanContext::~ScanContext() = default;
void ScanContext::clear() { impl_->files.clear(); }
size_t ScanContext::files_tracked() const { return impl_->files.size(); }

namespace {

using rules::CompiledRule;
using rules::View;

constexpr size_t kShortTrigger = 4;  // below this a trigger costs its own pass (see prefilter)

std::string where(const RuleSpec& spec) {
  return spec.file + ':' + std::to_string(spec.line) + ':' + std::to_string(spec.column);
}

const std::string& longest(const std::vector<std::string>& strings) {
  return *std::max_element(strings.begin(), strings.end(),
                           [](const auto& a, const auto& b) { return a.size() < b.size(); });
}

// The literals that make a line worth evaluating for `spec`: each `any` string (one of them
// must occur); else the longest string of each `any_of` alternative or `lines` entry (one
// alternative must occur whole); else the longest `all` string (the rarest, as a rule of thumb).
std::vector<std::string> triggers_of(const RuleSpec& spec) {
  if (!spec.any.empty()) return spec.any;
  const auto& groups = !spec.any_of.empty() ? spec.any_of : spec.lines;
  if (!groups.empty()) {
    std::vector<std::string> out;
    out.reserve(groups.size());
    for (const auto& group : groups) out.push_back(longest(group));
    return out;
  }
  if (spec.all.empty()) return {};
  return {longest(spec.all)};
}

// Whether a match of `pattern` on a line is also a match of its chunk form ("(?m)" prefixed,
// never matching '\n') on that line's bytes inside the chunk. Per line, the text ends at
// '\n' or before a trailing '\r'; in the chunk its neighbours are '\n', '\r' or the chunk's
// edges: all non-word bytes, so \b and \B agree, and (?m) makes ^ a line start. What can
// disagree is an assertion on where the text ends ($ before "\r\n", \A and \z, a flag group
// that turns multi-line mode off): such patterns keep the per-line evaluation. Conservative:
// any "$", "\A" or "\z" counts, even escaped.
bool searchable_over_chunk(const std::string& pattern) {
  if (pattern.find('$') != std::string::npos || pattern.find("\\A") != std::string::npos ||
      pattern.find("\\z") != std::string::npos) {
    return false;
  }
  for (size_t at = pattern.find("(?"); at != std::string::npos; at = pattern.find("(?", at + 2)) {
    const size_t end = pattern.find_first_of(":)", at + 2);
    const std::string flags = pattern.substr(at + 2, end - (at + 2));
    if (flags.find('-') != std::string::npos &&
        flags.find_first_not_of("imsU-") == std::string::npos) {
      return false;
    }
  }
  return true;
}

std::unique_ptr<RE2> chunk_regex(const RE2& line_re) {
  if (!searchable_over_chunk(line_re.pattern())) return nullptr;
  RE2::Options options = line_re.options();
  options.set_never_nl(true);
  auto re = std::make_unique<RE2>("(?m)" + line_re.pattern(), options);
  return re->ok() ? std::move(re) : nullptr;
}

// ", Device:" of the tuple "(PID:13075, Device:0, RankID:8)": long enough not to cost the
// prefilter its skips (docs/performance.md).
constexpr std::string_view kContextTrigger = ", Device:";

// `literal` as Go's encoding/json writes it inside a string with HTML escaping on (docker's
// json-file logger): <, >, & as \u003c, \u003e, \u0026, '"' and '\\' escaped, tabs as \t.
std::string json_escaped(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out;
}

View make_view(const std::vector<CompiledRule>& rules, const std::vector<uint32_t>& members) {
  View view;
  view.rules = members;
  std::map<std::string, std::vector<uint32_t>> by_literal;
  for (uint32_t pos = 0; pos < members.size(); ++pos) {
    const auto triggers = triggers_of(rules[members[pos]].spec);
    if (triggers.empty()) {
      (rules[members[pos]].chunk_re ? view.searched : view.untriggered).push_back(pos);
    }
    for (const auto& t : triggers) {
      auto& list = by_literal[t];
      if (list.empty() || list.back() != pos) list.push_back(pos);
    }
  }
  // docker's json-file logger writes a line as a JSON string, Go's escaping (<, >, & as \u003c,
  // \u003e, \u0026, '"' and '\\' after a backslash): a trigger holding one of those is also
  // looked for as docker wrote it, for the same rules (unwrap decodes the line before matching).
  std::vector<std::pair<std::string, std::vector<uint32_t>>> escaped;
  for (const auto& [literal, positions] : by_literal) {
    std::string json = json_escaped(literal);
    if (json != literal) escaped.emplace_back(std::move(json), positions);
  }
  for (auto& [json, positions] : escaped) {
    auto& list = by_literal[json];
    list.insert(list.end(), positions.begin(), positions.end());
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  // Lines that teach the context which device a process uses (the torch_npu tuple before a CANN
  // error block that names only the process) are candidates even when no rule wants them.
  if (!members.empty()) by_literal.try_emplace(std::string(kContextTrigger));
  std::vector<std::string> literals;
  for (auto& [literal, positions] : by_literal) {
    literals.push_back(literal);
    view.trigger_rules.push_back(std::move(positions));
  }
  view.triggers = rules::LiteralSet(std::move(literals));
  return view;
}

void put(std::string& out, std::string_view key, std::string_view value) {
  out.append(key).append(" ").append(std::to_string(value.size())).append(":").append(value);
  out += '\n';
}

void put_list(std::string& out, std::string_view key, const std::vector<std::string>& values) {
  put(out, key, std::to_string(values.size()));
  for (const auto& v : values) put(out, "-", v);
}

// Length-prefixed fields, rules sorted by id: equal rule sets hash equal whatever the file
// order or layout; any change to what a rule matches or reports changes the hash.
std::string canonical_form(const std::vector<CompiledRule>& rules) {
  std::vector<const RuleSpec*> sorted;
  sorted.reserve(rules.size());
  for (const auto& r : rules) sorted.push_back(&r.spec);
  std::sort(sorted.begin(), sorted.end(),
            [](const RuleSpec* a, const RuleSpec* b) { return a->id < b->id; });
  std::string out = "faultd-rules 1\n";
  for (const RuleSpec* s : sorted) {
    put(out, "id", s->id);
    put(out, "description", s->description);
    put_list(out, "sources", s->sources);
    put_list(out, "any", s->any);
    put_list(out, "all", s->all);
    put_list(out, "none", s->none);
    put(out, "regex", s->regex);
    if (s->step_fields) put(out, "fields", "step");
    put_list(out, "level", s->levels);
    put(out, "device", s->device);
    put(out, "code", s->code);
    put(out, "fault_level", s->fault_level ? to_string(*s->fault_level) : "");
    if (!s->level_from.empty()) put(out, "level_from", s->level_from);
    if (s->default_level) put(out, "default_level", to_string(*s->default_level));
    if (s->shadow) put(out, "mode", "shadow");
    if (s->detect) put(out, "detect", s->detect->canonical());
    // Later keys are written only when used, so rule sets without them keep their hash.
    if (!s->any_of.empty()) {
      put(out, "any_of", std::to_string(s->any_of.size()));
      for (const auto& group : s->any_of) put_list(out, "-", group);
    }
    if (!s->lines.empty()) {
      put(out, "lines", std::to_string(s->lines.size()));
      for (const auto& group : s->lines) put_list(out, "-", group);
      put(out, "max_lines", std::to_string(s->max_lines));
    }
    if (s->recovery) put(out, "recovery", "true");
    if (!s->annotations.empty()) {
      put(out, "annotations", std::to_string(s->annotations.size()));
      for (const auto& [name, value] : s->annotations) {
        put(out, "-", name);
        put(out, "=", value);
      }
    }
  }
  return out;
}

std::string evidence(std::string_view line) {
  if (line.size() <= kMaxEvidenceBytes) return std::string(line);
  size_t cut = kMaxEvidenceBytes;
  // Cut before a UTF-8 sequence rather than through it (continuation bytes are 10xxxxxx).
  for (int i = 0; i < 3 && cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80; ++i) {
    --cut;
  }
  return std::string(line.substr(0, cut));
}

bool contains(std::string_view line, const std::string& s) {
  return line.find(s) != std::string_view::npos;
}

bool contains_all(std::string_view line, const std::vector<std::string>& strings) {
  return std::all_of(strings.begin(), strings.end(),
                     [&](const auto& s) { return contains(line, s); });
}

// Matches the lines of one chunk against one view. Lives for one scan() call.
class Scanner {
 public:
  Scanner(const rules::Engine& set, const View& view, const Chunk& chunk, TimePoint now,
          std::vector<Finding>& out, ScanStats& stats, ScanContext::Impl& context)
      : set_(set),
        view_(view),
        chunk_(chunk),
        now_(now),
        out_(out),
        stats_(stats),
        context_(context),
        line_(chunk.first_line),
        subs_(set.max_submatches),
        triggers_(context.triggers_for(set, view, chunk.data)) {}

  void run() {
    std::vector<size_t>& starts = context_.candidates;
    starts.clear();
    if (!triggers_.empty()) triggers_.candidate_lines(chunk_.data, starts);
    if (context_.colours(chunk_.data)) add_coloured_lines(starts);
    const std::vector<std::pair<size_t, uint32_t>> hits = searched_hits();
    auto next = starts.begin();
    auto hit = hits.begin();
    std::vector<uint32_t> selected;
    auto visit = [&](size_t start) {
      const size_t end = line_end(start);
      ++stats_.candidate_lines;
      selected.assign(view_.untriggered.begin(), view_.untriggered.end());
      for (; hit != hits.end() && hit->first == start; ++hit) selected.push_back(hit->second);
      const bool triggered = next != starts.end() && *next == start;
      if (triggered) {
        add_triggered(start, end, selected);
        ++next;
      } else {
        sort_unique(selected);
      }
      // A trigger with no rule selected is the context trigger: the line only teaches.
      if (!selected.empty() || triggered) {
        evaluate_line(start, end, number_of_line_at(start), selected);
      }
      return end + 1;
    };
    if (!view_.untriggered.empty()) {
      // Every line is a candidate for the untriggered rules evaluated per line.
      for (size_t start = 0; start < chunk_.data.size();) start = visit(start);
      return;
    }
    // The candidate lines of the prefilter and of the searched regexes, in ascending order.
    while (next != starts.end() || hit != hits.end()) {
      if (hit == hits.end() || (next != starts.end() && *next < hit->first)) {
        visit(*next);
      } else {
        visit(hit->first);
      }
    }
  }

 private:
  // (line start, rule position) for every line a searched rule's chunk regex hits, sorted.
  std::vector<std::pair<size_t, uint32_t>> searched_hits() const {
    std::vector<std::pair<size_t, uint32_t>> hits;
    const std::string_view data = chunk_.data;
    for (uint32_t pos : view_.searched) {
      const RE2& re = *set_.rules[view_.rules[pos]].chunk_re;
      re2::StringPiece match;
      for (size_t from = 0; from < data.size();) {
        if (!re.Match(data, from, data.size(), RE2::UNANCHORED, &match, 1)) break;
        // The match cannot span a newline: it lies on the line around its start.
        const size_t at = static_cast<size_t>(match.data() - data.data());
        const void* nl = memrchr(data.data() + from, '\n', at - from);
        const size_t start = nl == nullptr ? from : static_cast<const char*>(nl) - data.data() + 1;
        if (start >= data.size()) break;  // an empty match after the last newline: no line
        hits.emplace_back(start, pos);
        from = line_end(at) + 1;
      }
    }
    std::sort(hits.begin(), hits.end());
    return hits;
  }

  // Adds the start of every line holding an escape byte to `starts` (ascending, unique).
  void add_coloured_lines(std::vector<size_t>& starts) const {
    const std::string_view data = chunk_.data;
    const size_t before = starts.size();
    for (size_t at = data.find('\x1b'); at != std::string_view::npos;) {
      const void* nl = memrchr(data.data(), '\n', at);
      starts.push_back(nl == nullptr ? 0 : static_cast<const char*>(nl) - data.data() + 1);
      at = data.find('\x1b', line_end(at));
    }
    if (starts.size() == before) return;
    std::inplace_merge(starts.begin(), starts.begin() + static_cast<ptrdiff_t>(before),
                       starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  }

  static void sort_unique(std::vector<uint32_t>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }

  // Appends the rules whose triggers occur on the line; leaves `selected` sorted and unique
  // (a line with several triggers evaluates each rule at most once, in rule order).
  void add_triggered(size_t start, size_t end, std::vector<uint32_t>& selected) {
    const std::string_view line = strip(start, end);
    // Colour may split a trigger: the triggers of a coloured line are those of its text.
    if (line.find('\x1b') != std::string_view::npos) {
      const std::string text = without_ansi(line);
      add_triggers(context_.trigger_ids(triggers_, text), selected);
      return;
    }
    add_triggers(context_.trigger_ids(triggers_, line), selected);
  }

  void add_triggers(const std::vector<uint32_t>& ids, std::vector<uint32_t>& selected) {
    for (uint32_t id : ids) {
      const auto& positions = view_.trigger_rules[id];
      selected.insert(selected.end(), positions.begin(), positions.end());
    }
    sort_unique(selected);
  }

  size_t line_end(size_t start) const {
    const void* nl = std::memchr(chunk_.data.data() + start, '\n', chunk_.data.size() - start);
    return nl == nullptr ? chunk_.data.size()
                         : static_cast<size_t>(static_cast<const char*>(nl) - chunk_.data.data());
  }

  // The line as rules see it: no '\n', no trailing '\r'.
  std::string_view strip(size_t start, size_t end) const {
    std::string_view line = chunk_.data.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  }

  // Candidates come in ascending order, so newlines are counted at most once over the chunk,
  // and only from the line mark before the candidate where the chunk's reader left marks (a
  // training log's step lines are candidates every hundred lines or so).
  uint64_t number_of_line_at(size_t start) {
    if (const LineMarks* marks = chunk_.line_marks; marks != nullptr && !marks->empty()) {
      const size_t mark = std::min(start / kLineMarkBytes, marks->size() - 1);
      if (mark * kLineMarkBytes > counted_) {
        line_ = chunk_.first_line + (*marks)[mark];
        counted_ = mark * kLineMarkBytes;
      }
    }
    line_ += count_newlines(chunk_.data.substr(counted_, start - counted_));
    counted_ = start;
    return line_;
  }

  // Rules see the message without its envelope (rules/envelope.hpp); the evidence is the line.
  void evaluate_line(size_t start, size_t end, uint64_t line_number,
                     const std::vector<uint32_t>& positions) {
    const std::string_view line = strip(start, end);
    unwrap(line, env_);
    const std::string_view message = env_.message;
    // What was read from the previous line is stale (its message may even reuse the same
    // decoding buffer): the step fields and the device spellings are read again, once.
    step_line_ = {};
    tuple_device_.reset();
    spelled_device_.reset();
    line_pid_.reset();
    learn_pid_device(message, line_number);
    for (uint32_t pos : positions) {
      const CompiledRule& rule = set_.rules[view_.rules[pos]];
      if (rule.multiline_slot >= 0) captures_.clear();  // no capture of an earlier rule's
      const bool hit = rule.multiline_slot >= 0 ? completes_lines(rule, message, line_number)
                                                : matches(rule, message);
      if (hit) emit(rule, line, message, start, line_number);
    }
  }

  ScanContext::Impl::File& file() {
    if (file_ == nullptr) file_ = &context_.file_for(chunk_, set_);
    return *file_;
  }

  // What the line names, each read once and only when asked (they are regex scans of the line).
  std::string_view tuple_device(std::string_view message) {
    if (!tuple_device_) tuple_device_ = torch_npu_device(message);
    return *tuple_device_;
  }
  std::string_view spelled_device(std::string_view message) {
    if (!spelled_device_) spelled_device_ = context_.spelled_devices.read(message);
    return *spelled_device_;
  }
  std::string_view pid(std::string_view message) {
    if (!line_pid_) {
      line_pid_ = line_pid(message);
      if (line_pid_->empty()) line_pid_ = std::string_view(env_.pid);
    }
    return *line_pid_;
  }

  // A line naming both its process and its device teaches the context that pairing.
  void learn_pid_device(std::string_view message, uint64_t line_number) {
    const std::string_view process = pid(message);
    if (process.empty()) return;
    std::string_view device = tuple_device(message);
    if (device.empty()) device = spelled_device(message);
    if (device.empty()) return;
    auto& known = file().pid_devices;
    if (known.size() >= ScanContext::Impl::kMaxPidDevices && known.count(process) == 0) {
      known.erase(std::min_element(known.begin(), known.end(), [](const auto& a, const auto& b) {
        return a.second.line < b.second.line;
      }));
    }
    known[std::string(process)] = {std::string(device), line_number};
  }

  std::optional<std::string_view> device_of_pid(std::string_view message, uint64_t line_number) {
    const std::string_view process = pid(message);
    if (process.empty()) return std::nullopt;
    auto& known = file().pid_devices;
    const auto it = known.find(process);
    if (it == known.end() || line_number < it->second.line ||
        line_number - it->second.line > ScanContext::Impl::kPidDeviceLines) {
      return std::nullopt;
    }
    return std::string_view(it->second.device);
  }

  // Records which `lines` entries this line matches; true when it completes the set within
  // the rule's window (the progress then starts over).
  bool completes_lines(const CompiledRule& rule, std::string_view line, uint64_t line_number) {
    const RuleSpec& spec = rule.spec;
    std::vector<uint64_t>* progress = nullptr;
    for (size_t g = 0; g < spec.lines.size(); ++g) {
      if (!contains_all(line, spec.lines[g])) continue;
      if (progress == nullptr)
        progress = &file().progress[static_cast<size_t>(rule.multiline_slot)];
      (*progress)[g] = line_number;
    }
    if (progress == nullptr) return false;
    // A line number above this one is left from before a truncation: not in the window.
    const bool complete = std::all_of(progress->begin(), progress->end(), [&](uint64_t seen) {
      return seen != 0 && seen <= line_number && line_number - seen < spec.max_lines;
    });
    if (complete) std::fill(progress->begin(), progress->end(), 0);
    return complete;
  }

  bool matches(const CompiledRule& rule, std::string_view line) {
    const RuleSpec& spec = rule.spec;
    // A rule with `any` was selected because one of them occurs in the line (they are its
    // triggers): a line without an envelope needs no second look.
    const bool any_seen = env_.layers == 0;
    if (!spec.any.empty() && !any_seen &&
        std::none_of(spec.any.begin(), spec.any.end(),
                     [&](const auto& s) { return contains(line, s); })) {
      return false;
    }
    if (!contains_all(line, spec.all)) return false;
    if (std::any_of(spec.none.begin(), spec.none.end(),
                    [&](const auto& s) { return contains(line, s); })) {
      return false;
    }
    if (!spec.any_of.empty() &&
        std::none_of(spec.any_of.begin(), spec.any_of.end(),
                     [&](const auto& group) { return contains_all(line, group); })) {
      return false;
    }
    if (!spec.levels.empty()) {
      const std::string_view level = line_level(line);
      if (std::find(spec.levels.begin(), spec.levels.end(), level) == spec.levels.end()) {
        return false;
      }
    }
    captures_.clear();
    if (rule.re) {
      if (!rule.re->Match(line, 0, line.size(), RE2::UNANCHORED, subs_.data(), rule.submatches)) {
        return false;
      }
      for (const auto& [name, index] : rule.groups) {
        const re2::StringPiece& sub = subs_[index];
        if (sub.data() != nullptr)
          captures_.emplace_back(name, std::string_view(sub.data(), sub.size()));
      }
    }
    if (spec.step_fields) {
      // A line that names no more than a step ("step=[5]" of a runtime line) is no step line.
      const StepFields& step = step_fields_of(line);
      if (std::all_of(step.begin(), step.end(), [](const auto& f) { return f.first == "step"; })) {
        return false;
      }
      if (rule.re == nullptr) {
        captures_.assign(step.begin(), step.end());  // the step fields are unique by name
      } else {
        for (const auto& [name, value] : step) {
          if (!field_captured(name)) captures_.emplace_back(name, value);
        }
      }
    }
    return true;
  }

  // The line's step fields, read once however many rules want them.
  const StepFields& step_fields_of(std::string_view line) {
    if (step_line_.data() == nullptr) {
      step_fields_ = &context_.step_fields.read(line);
      step_line_ = line;
    }
    return *step_fields_;
  }

  std::optional<std::string_view> field(std::string_view name) const {
    for (const auto& [n, v] : captures_) {
      if (n == name) return v;
    }
    if (chunk_.path_fields != nullptr) {
      for (const auto& [n, v] : *chunk_.path_fields) {
        if (n == name) return std::string_view(v);
      }
    }
    if (const std::string* v = envelope_field(name); v != nullptr) return std::string_view(*v);
    return std::nullopt;
  }

  // What the line's envelope said, by field name (rank, pid, host, stream); null when nothing.
  const std::string* envelope_field(std::string_view name) const {
    const std::string* v = name == "rank"     ? &env_.rank
                           : name == "pid"    ? &env_.pid
                           : name == "host"   ? &env_.host
                           : name == "stream" ? &env_.stream
                                              : nullptr;
    return v != nullptr && !v->empty() ? v : nullptr;
  }

  bool field_captured(std::string_view name) const {
    return std::any_of(captures_.begin(), captures_.end(),
                       [name](const auto& c) { return c.first == name; });
  }

  // The device, first found of (docs/log-formats.md §11): the torch_npu tuple of the message,
  // the source's path field (the device-N/ directory), the directory of a collected file the
  // envelope named, the rule's own capture, a documented spelling on the message, and the
  // device the line's process was last seen with in this file. `from` says which.
  std::optional<std::string_view> device_field(std::string_view message, uint64_t line_number,
                                               const char*& from) {
    from = "line";
    if (const std::string_view d = tuple_device(message); !d.empty()) return d;
    from = "path";
    if (chunk_.path_fields != nullptr) {
      for (const auto& [n, v] : *chunk_.path_fields) {
        if (n == "device" && !v.empty()) return std::string_view(v);
      }
    }
    if (const std::string_view d = path_device(env_.path); !d.empty()) return d;
    from = "line";
    for (const auto& [n, v] : captures_) {
      if (n == "device") return v;
    }
    if (const std::string_view d = spelled_device(message); !d.empty()) return d;
    from = "context";
    return device_of_pid(message, line_number);
  }

  // The job the line belongs to: the rule's `job` capture, else the source's `job` path field.
  // A name that fails validation is refused and counted, never shortened into another job.
  std::string job() {
    const std::optional<std::string_view> named = field("job");
    if (!named || named->empty()) return {};
    if (!is_valid_job_id(*named)) {
      ++stats_.job_refused;
      return {};
    }
    return std::string(*named);
  }

  // The finding's level: see RuleSpec::level_from.
  template <typename Lookup>
  FaultLevel level_of(const RuleSpec& spec, const std::string& code, Lookup& lookup) const {
    if (!spec.level_from.empty()) {
      if (const auto named = lookup(spec.level_from)) {
        if (const auto level = parse_fault_level(*named)) return *level;
      }
    }
    if (spec.default_level) {
      return set_.levels.knows(code) ? set_.levels.resolve(code) : *spec.default_level;
    }
    return spec.fault_level ? *spec.fault_level : set_.levels.resolve(code);
  }

  void emit(const CompiledRule& rule, std::string_view line, std::string_view message, size_t start,
            uint64_t line_number) {
    const auto& types = rule.spec.source_types;
    if (!types.empty() &&
        std::find(types.begin(), types.end(), chunk_.source_type) == types.end()) {
      ++stats_.source_type_refused;  // e.g. a command's record printed into a log file
      return;
    }
    const char* device_from = nullptr;
    auto lookup = [&](std::string_view name) {
      if (name != "device") return field(name);
      auto d = device_field(message, line_number, device_from);
      if (!d) device_from = nullptr;
      return d;
    };
    std::string device, code;
    expand_device_and_code(rule, line_number, lookup, device, code, device_from);
    const FaultLevel level = level_of(rule.spec, code, lookup);
    if (rule.spec.detect && joins_input(rule, device, code, level, line_number)) return;
    Finding& f = out_.emplace_back();  // filled in place: a Finding is costly to move
    f.rule = rule.spec.id;
    f.source = std::string(chunk_.source);
    f.device = std::move(device);
    if (!f.device.empty() && device_from != nullptr) f.device_from = device_from;
    f.job = job();
    f.code = std::move(code);
    f.level = level;
    f.file = std::string(chunk_.path);
    f.line = line_number;
    f.offset = chunk_.start_offset + start;
    f.identity = chunk_.identity;
    f.text = evidence(line);
    f.time = now_;
    f.noticed = chunk_.noticed;
    if (rule.spec.detect) {
      f.detector_input = true;
      detector_fields(f.fields);
      last_input_ = out_.size() - 1;
      last_input_captured_ = rule.re != nullptr;
      last_input_step_fields_ = rule.spec.step_fields;
    }
    f.recovery = rule.spec.recovery;
    f.annotations = rule.spec.annotations;
    ++stats_.findings;
  }

  // The finding's device and code from the rule's templates. A step line feeds several rules
  // with the same templates and no regex of their own: their fields, and so what the templates
  // expand to, are the same, and the first rule's expansion is reused for the others.
  template <typename Lookup>
  void expand_device_and_code(const CompiledRule& rule, uint64_t line_number, Lookup& lookup,
                              std::string& device, std::string& code, const char*& device_from) {
    Expanded& memo = expanded_;
    // A multi-line rule's hit has no captures of this line (matches() did not run for it).
    const bool reusable = rule.re == nullptr && rule.multiline_slot < 0;
    if (reusable && memo.device_template != nullptr && memo.line == line_number &&
        memo.step_fields == rule.spec.step_fields && *memo.device_template == rule.spec.device &&
        *memo.code_template == rule.spec.code) {
      device = memo.device;
      code = memo.code;
      device_from = memo.device_from;
      stats_.device_refused += memo.device_refused;  // counted per finding, as expanded ones
      stats_.code_refused += memo.code_refused;
      return;
    }
    const uint64_t devices_refused = stats_.device_refused;
    const uint64_t codes_refused = stats_.code_refused;
    if (!rule.device.expand(lookup, device)) {
      device.clear();
    } else if (!device.empty() && !is_valid_device_id(device)) {
      ++stats_.device_refused;
      device.clear();
    }
    if (!rule.code.empty() && rule.code.expand(lookup, code)) {
      code = normalize_code(code);
      if (!code.empty() && !is_valid_code(code)) {
        ++stats_.code_refused;
        code.clear();
      }
    }
    if (!reusable) {
      memo.device_template = nullptr;
      return;
    }
    memo = {line_number,
            rule.spec.step_fields,
            &rule.spec.device,
            &rule.spec.code,
            device,
            code,
            device_from,
            stats_.device_refused - devices_refused,
            stats_.code_refused - codes_refused};
  }

  // A detector input's fields: the captures, the path fields no capture names, and the
  // envelope's rank.
  void detector_fields(std::vector<std::pair<std::string, std::string>>& fields) const {
    fields.reserve(fields.size() + captures_.size() +
                   (chunk_.path_fields != nullptr ? chunk_.path_fields->size() : 0) + 1);
    for (const auto& [name, value] : captures_) fields.emplace_back(name, value);
    if (chunk_.path_fields != nullptr) {
      for (const auto& [name, value] : *chunk_.path_fields) {
        if (!field_captured(name)) fields.emplace_back(name, value);
      }
    }
    if (!field_captured("rank") && envelope_field("rank") != nullptr &&
        std::none_of(fields.begin(), fields.end(),
                     [](const auto& kv) { return kv.first == "rank"; })) {
      fields.emplace_back("rank", env_.rank);
    }
  }

  // One detector input per line: a detector rule that matched the line this input came from
  // with the same device, code, fields and annotations joins it (a step line feeds several
  // rules, which then share one copy of the line).
  bool joins_input(const CompiledRule& rule, const std::string& device, const std::string& code,
                   FaultLevel level, uint64_t line_number) {
    if (last_input_ >= out_.size()) return false;
    Finding& input = out_[last_input_];
    if (input.line != line_number || input.device != device || input.code != code ||
        input.annotations != rule.spec.annotations || input.recovery != rule.spec.recovery) {
      return false;
    }
    // Without regex captures on either side, both rules' fields are the line's step fields (when
    // both read them: a liveness rule on a step line does not), path fields and rank: the same.
    if (rule.re != nullptr || last_input_captured_ ||
        rule.spec.step_fields != last_input_step_fields_) {
      scratch_fields_.clear();
      detector_fields(scratch_fields_);
      if (scratch_fields_ != input.fields) return false;
    }
    // A step line feeds up to six rules of the shipped packs: one allocation, not four.
    if (input.more_detectors.empty()) input.more_detectors.reserve(8);
    input.more_detectors.emplace_back(rule.spec.id, level);
    return true;
  }

  const rules::Engine& set_;
  const View& view_;
  const Chunk& chunk_;
  const TimePoint now_;
  std::vector<Finding>& out_;
  ScanStats& stats_;
  ScanContext::Impl& context_;
  ScanContext::Impl::File* file_ = nullptr;  // this chunk's file in context_, once needed
  uint64_t line_;                            // number of the line holding the byte at counted_
  size_t counted_ = 0;                       // newlines before this offset are counted in line_
  std::vector<re2::StringPiece> subs_;
  const rules::LiteralSet& triggers_;  // the view's, or those adapted to this source (ScanContext)
  std::vector<std::pair<std::string_view, std::string_view>> captures_;
  std::optional<std::string_view> tuple_device_;    // the line's torch_npu tuple device, once read
  std::optional<std::string_view> spelled_device_;  // the line's spelled device, once read
  std::string_view step_line_;                      // the line step_fields_ was read from
  const StepFields* step_fields_ = nullptr;
  Envelope env_;                              // the line being evaluated, unwrapped
  std::optional<std::string_view> line_pid_;  // its process id (empty: none), once read
  size_t last_input_ = SIZE_MAX;              // the last detector input this scan emitted, in out_
  bool last_input_captured_ = false;          // its rule had a regex (its fields may hold captures)
  bool last_input_step_fields_ = false;       // its rule read the step-line fields
  std::vector<std::pair<std::string, std::string>> scratch_fields_;
  // The last expansion of a rule without regex on this line (expand_device_and_code).
  struct Expanded {
    uint64_t line = 0;
    bool step_fields = false;                      // the rule's captures were the step fields
    const std::string* device_template = nullptr;  // the rule's templates as written; null: none
    const std::string* code_template = nullptr;
    std::string device;
    std::string code;
    const char* device_from = nullptr;
    uint64_t device_refused = 0;  // what the expansion counted
    uint64_t code_refused = 0;
  } expanded_;
};

}  // namespace

RuleSet::RuleSet() : impl_(std::make_unique<Impl>()) {}
RuleSet::~RuleSet() = default;

std::shared_ptr<const RuleSet> RuleSet::build(std::vector<RuleSpec> specs, CodeLevels levels,
                                              ErrorList& errors) {
  const size_t errors_before = errors.size();
  std::map<std::string, const RuleSpec*> first;
  for (const auto& spec : specs) {
    for (const auto& problem : rules::check_spec(spec)) {
      errors.add(spec.file, spec.line, spec.column, "rule '" + spec.id + "': " + problem);
    }
    const auto [it, inserted] = first.emplace(spec.id, &spec);
    if (!inserted) {
      errors.add(
          spec.file, spec.line, spec.column,
          "duplicate rule id '" + spec.id + "' (first defined at " + where(*it->second) + ")");
    }
  }
  if (errors.size() != errors_before) return nullptr;

  std::shared_ptr<RuleSet> set(new RuleSet());
  Impl& impl = *set->impl_;
  static std::atomic<uint64_t> next_serial{1};
  impl.serial = next_serial++;
  impl.levels = std::move(levels);
  std::set<std::string> source_names;
  for (auto& spec : specs) {
    rules::CompiledRule rule;
    std::string error;  // cannot fail: check_spec compiled the same text
    if (!spec.regex.empty()) {
      rule.re = rules::compile_regex(spec.regex, error);
      for (const auto& [name, index] : rule.re->NamedCapturingGroups()) {
        rule.groups.emplace_back(name, index);
        rule.submatches = std::max(rule.submatches, index + 1);
      }
      impl.max_submatches = std::max(impl.max_submatches, static_cast<size_t>(rule.submatches));
    }
    if (rule.re && triggers_of(spec).empty()) rule.chunk_re = chunk_regex(*rule.re);
    rule.device = *rules::parse_template(spec.device.empty() ? "{device}" : spec.device, error);
    rule.code = *rules::parse_template(spec.code, error);
    if (!spec.lines.empty()) {
      rule.multiline_slot = static_cast<int>(impl.multiline_groups.size());
      impl.multiline_groups.push_back(static_cast<uint32_t>(spec.lines.size()));
    }
    source_names.insert(spec.sources.begin(), spec.sources.end());
    for (const auto& t : triggers_of(spec)) {
      if (t.size() < kShortTrigger) {
        impl.warnings.push_back(where(spec) + ": rule '" + spec.id + "': trigger '" + t +
                                "' is shorter than " + std::to_string(kShortTrigger) +
                                " bytes and costs a pass of its own over every chunk");
      }
    }
    if (triggers_of(spec).empty()) {
      impl.warnings.push_back(
          where(spec) + ": rule '" + spec.id + "' has no 'any' or 'all' literal: its regex runs " +
          (rule.chunk_re ? "over every chunk" : "on every line") + " of its sources");
    }
    rule.spec = std::move(spec);
    impl.rules.push_back(std::move(rule));
  }

  std::vector<uint32_t> unrestricted;
  for (uint32_t i = 0; i < impl.rules.size(); ++i) {
    if (impl.rules[i].spec.sources.empty()) unrestricted.push_back(i);
  }
  impl.all_sources = make_view(impl.rules, unrestricted);
  for (const auto& name : source_names) {
    std::vector<uint32_t> members;
    for (uint32_t i = 0; i < impl.rules.size(); ++i) {
      const auto& sources = impl.rules[i].spec.sources;
      if (sources.empty() || std::find(sources.begin(), sources.end(), name) != sources.end()) {
        members.push_back(i);
      }
    }
    impl.by_source.emplace(name, make_view(impl.rules, members));
  }
  impl.sha256 = rules::sha256_hex(canonical_form(impl.rules));
  return set;
}

size_t RuleSet::size() const { return impl_->rules.size(); }

std::vector<std::string> RuleSet::rule_ids() const {
  std::vector<std::string> ids;
  for (const auto& r : impl_->rules) ids.push_back(r.spec.id);
  return ids;
}

std::vector<std::string> RuleSet::pack_rule_ids(
    std::span<const std::string_view> source_types) const {
  auto may_match = [&](const RuleSpec& spec) {
    if (spec.source_types.empty()) return true;
    return std::any_of(spec.source_types.begin(), spec.source_types.end(), [&](const auto& type) {
      return std::find(source_types.begin(), source_types.end(), type) != source_types.end();
    });
  };
  std::vector<std::string> ids;
  for (const auto& r : impl_->rules) {
    if (!r.spec.knowledge_base && may_match(r.spec)) ids.push_back(r.spec.id);
  }
  return ids;
}

std::set<std::string> RuleSet::known_codes() const {
  std::set<std::string> codes;
  for (const auto& known : impl_->levels.levels) codes.insert(known.first);
  for (const auto& r : impl_->rules) {
    if (!r.code.empty() && r.code.is_literal()) codes.insert(r.spec.code);
  }
  return codes;
}

std::vector<std::string> RuleSet::shadow_rule_ids() const {
  std::vector<std::string> ids;
  for (const auto& r : impl_->rules) {
    if (r.spec.shadow) ids.push_back(r.spec.id);
  }
  return ids;
}

std::vector<std::string> RuleSet::device_field_rule_ids() const {
  std::vector<std::string> ids;
  for (const auto& r : impl_->rules) {
    if (r.spec.device.empty() || r.spec.device == "{device}") ids.push_back(r.spec.id);
  }
  return ids;
}

std::vector<std::pair<std::string, std::string>> RuleSet::named_sources() const {
  std::map<std::string, std::string> first;
  for (const auto& r : impl_->rules) {
    for (const auto& source : r.spec.sources) first.try_emplace(source, r.spec.id);
  }
  return {first.begin(), first.end()};
}

std::vector<std::pair<std::string, DetectorSpec>> RuleSet::detectors() const {
  std::vector<std::pair<std::string, DetectorSpec>> out;
  for (const auto& r : impl_->rules) {
    if (r.spec.detect) out.emplace_back(r.spec.id, *r.spec.detect);
  }
  return out;
}

const std::string& RuleSet::sha256() const { return impl_->sha256; }

const std::vector<std::string>& RuleSet::warnings() const { return impl_->warnings; }

void RuleSet::scan(const Chunk& chunk, TimePoint now, std::vector<Finding>& out, ScanStats* stats,
                   ScanContext* context) const {
  const View& view = impl_->view_for(chunk.source);
  if (view.rules.empty() || chunk.data.empty()) return;
  ScanStats unused;
  // Without a caller's context, multi-line progress lives for this chunk only (nothing is
  // allocated unless a multi-line rule sees a line of its own).
  std::optional<ScanContext> local;
  ScanContext::Impl& ctx = context != nullptr ? *context->impl_ : *local.emplace().impl_;
  Scanner scanner(*impl_, view, chunk, now, out, stats != nullptr ? *stats : unused, ctx);
  scanner.run();
}

}  // namespace faultd
