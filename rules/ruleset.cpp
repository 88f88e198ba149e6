// The rule engine: compiling specs into per-source views and matching chunks against them.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include <re2/re2.h>

#include "daemon/core/newlines.hpp"
#include "rules/prefilter.hpp"
#include "rules/rule.hpp"
#include "rules/sha256.hpp"
#include "rules/spec_check.hpp"
#include "rules/template.hpp"

namespace faultd {

FaultLevel CodeLevels::resolve(const std::string& code) const {
  if (code.empty()) return default_level;
  const auto it = levels.find(code);
  return it == levels.end() ? default_level : it->second;
}

std::string_view line_level(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (i == line.size() || line[i] != '[') return {};
  size_t j = i + 1;
  while (j < line.size() && line[j] >= 'A' && line[j] <= 'Z') ++j;
  if (j == i + 1 || j == line.size() || line[j] != ']') return {};
  return line.substr(i + 1, j - i - 1);
}

namespace rules {

struct CompiledRule {
  RuleSpec spec;
  std::unique_ptr<RE2> re;
  std::vector<std::pair<std::string, int>> groups;  // named group → submatch index
  int submatches = 0;  // how many submatches Match() must fill (0: none are needed)
  Template device;
  Template code;
};

// The rules that apply to one source, with the prefilter over their triggers.
struct View {
  std::vector<uint32_t> rules;  // indexes into RuleSet::Impl::rules, ascending = rule order
  LiteralSet triggers;
  std::vector<std::vector<uint32_t>> trigger_rules;  // per trigger: positions in `rules`
  bool every_line = false;  // some rule has no trigger, so every line is a candidate
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

  const View& view_for(std::string_view source) const {
    const auto it = by_source.find(source);
    return it == by_source.end() ? all_sources : it->second;
  }
};

}  // namespace rules

struct RuleSet::Impl : rules::Engine {};

namespace {

using rules::CompiledRule;
using rules::View;

constexpr size_t kShortTrigger = 4;  // below this a trigger costs its own pass (see prefilter)

std::string where(const RuleSpec& spec) {
  return spec.file + ':' + std::to_string(spec.line) + ':' + std::to_string(spec.column);
}

// The literals that make a line worth evaluating for `spec`: each `any` string (one of them
// must occur), else the longest `all` string (the rarest, as a rule of thumb).
std::vector<std::string> triggers_of(const RuleSpec& spec) {
  if (!spec.any.empty()) return spec.any;
  if (spec.all.empty()) return {};
  return {*std::max_element(spec.all.begin(), spec.all.end(),
                            [](const auto& a, const auto& b) { return a.size() < b.size(); })};
}

View make_view(const std::vector<CompiledRule>& rules, const std::vector<uint32_t>& members) {
  View view;
  view.rules = members;
  std::map<std::string, std::vector<uint32_t>> by_literal;
  for (uint32_t pos = 0; pos < members.size(); ++pos) {
    const auto triggers = triggers_of(rules[members[pos]].spec);
    if (triggers.empty()) view.every_line = true;
    for (const auto& t : triggers) {
      auto& list = by_literal[t];
      if (list.empty() || list.back() != pos) list.push_back(pos);
    }
  }
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
    put(out, "regex", s->regex);
    put_list(out, "level", s->levels);
    put(out, "device", s->device);
    put(out, "code", s->code);
    put(out, "fault_level", s->fault_level ? to_string(*s->fault_level) : "");
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

// Matches the lines of one chunk against one view. Lives for one scan() call.
class Scanner {
 public:
  Scanner(const rules::Engine& set, const View& view, const Chunk& chunk, TimePoint now,
          std::vector<Finding>& out, ScanStats& stats)
      : set_(set),
        view_(view),
        chunk_(chunk),
        now_(now),
        out_(out),
        stats_(stats),
        line_(chunk.first_line),
        subs_(set.max_submatches) {}

  void every_line() {
    const std::string_view data = chunk_.data;
    std::vector<uint32_t> all(view_.rules.size());
    for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    for (size_t start = 0; start < data.size();) {
      const size_t end = line_end(start);
      ++stats_.candidate_lines;
      evaluate_line(start, end, line_, all);
      ++line_;
      start = end + 1;
    }
  }

  void candidates() {
    const std::vector<size_t> starts = view_.triggers.candidate_lines(chunk_.data);
    stats_.candidate_lines += starts.size();
    std::vector<uint32_t> ids;
    std::vector<uint32_t> selected;
    for (size_t start : starts) {
      const size_t end = line_end(start);
      ids.clear();
      selected.clear();
      view_.triggers.matches(strip(start, end), ids);
      for (uint32_t id : ids) {
        const auto& positions = view_.trigger_rules[id];
        selected.insert(selected.end(), positions.begin(), positions.end());
      }
      if (selected.empty()) continue;
      // A line with several triggers is evaluated once, each rule at most once, in rule order.
      std::sort(selected.begin(), selected.end());
      selected.erase(std::unique(selected.begin(), selected.end()), selected.end());
      evaluate_line(start, end, number_of_line_at(start), selected);
    }
  }

 private:
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

  // Candidates come in ascending order, so newlines are counted once over the chunk.
  uint64_t number_of_line_at(size_t start) {
    line_ += count_newlines(chunk_.data.substr(counted_, start - counted_));
    counted_ = start;
    return line_;
  }

  void evaluate_line(size_t start, size_t end, uint64_t line_number,
                     const std::vector<uint32_t>& positions) {
    const std::string_view line = strip(start, end);
    for (uint32_t pos : positions) {
      const CompiledRule& rule = set_.rules[view_.rules[pos]];
      if (matches(rule, line)) emit(rule, line, start, line_number);
    }
  }

  bool matches(const CompiledRule& rule, std::string_view line) {
    const RuleSpec& spec = rule.spec;
    if (!spec.any.empty() && std::none_of(spec.any.begin(), spec.any.end(),
                                          [&](const auto& s) { return contains(line, s); })) {
      return false;
    }
    for (const auto& s : spec.all) {
      if (!contains(line, s)) return false;
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
    return true;
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
    return std::nullopt;
  }

  void emit(const CompiledRule& rule, std::string_view line, size_t start, uint64_t line_number) {
    auto lookup = [this](std::string_view name) { return field(name); };
    Finding f;
    f.rule = rule.spec.id;
    f.source = std::string(chunk_.source);
    if (!rule.device.expand(lookup, f.device)) {
      f.device.clear();
    } else if (!f.device.empty() && !is_valid_device_id(f.device)) {
      ++stats_.device_refused;
      f.device.clear();
    }
    std::string code;
    if (!rule.code.empty() && rule.code.expand(lookup, code)) {
      f.code = rules::normalize_code(code);
      if (!f.code.empty() && !rules::is_valid_code(f.code)) {
        ++stats_.code_refused;
        f.code.clear();
      }
    }
    f.level = rule.spec.fault_level ? *rule.spec.fault_level : set_.levels.resolve(f.code);
    f.file = std::string(chunk_.path);
    f.line = line_number;
    f.offset = chunk_.start_offset + start;
    f.identity = chunk_.identity;
    f.text = evidence(line);
    f.time = now_;
    f.noticed = chunk_.noticed;
    out_.push_back(std::move(f));
    ++stats_.findings;
  }

  const rules::Engine& set_;
  const View& view_;
  const Chunk& chunk_;
  const TimePoint now_;
  std::vector<Finding>& out_;
  ScanStats& stats_;
  uint64_t line_;       // number of the line that starts at counted_
  size_t counted_ = 0;  // newlines before this offset are counted in line_
  std::vector<re2::StringPiece> subs_;
  std::vector<std::pair<std::string_view, std::string_view>> captures_;
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
    rule.device = *rules::parse_template(spec.device.empty() ? "{device}" : spec.device, error);
    rule.code = *rules::parse_template(spec.code, error);
    source_names.insert(spec.sources.begin(), spec.sources.end());
    for (const auto& t : triggers_of(spec)) {
      if (t.size() < kShortTrigger) {
        impl.warnings.push_back(where(spec) + ": rule '" + spec.id + "': trigger '" + t +
                                "' is shorter than " + std::to_string(kShortTrigger) +
                                " bytes and costs a pass of its own over every chunk");
      }
    }
    if (triggers_of(spec).empty()) {
      impl.warnings.push_back(where(spec) + ": rule '" + spec.id +
                              "' has no 'any' or 'all' literal: its regex runs on every line "
                              "of its sources");
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

const std::string& RuleSet::sha256() const { return impl_->sha256; }

const std::vector<std::string>& RuleSet::warnings() const { return impl_->warnings; }

void RuleSet::scan(const Chunk& chunk, TimePoint now, std::vector<Finding>& out,
                   ScanStats* stats) const {
  const View& view = impl_->view_for(chunk.source);
  if (view.rules.empty() || chunk.data.empty()) return;
  ScanStats unused;
  Scanner scanner(*impl_, view, chunk, now, out, stats != nullptr ? *stats : unused);
  if (view.every_line) {
    scanner.every_line();
  } else {
    scanner.candidates();
  }
}

}  // namespace faultd
