#include "rules/envelope.hpp"

#include <re2/re2.h>

#include <array>
#include <cstring>

namespace faultd {
namespace {

constexpr int kMaxLayers = 8;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
bool is_blank(char c) { return c == ' ' || c == '\t'; }

size_t digits_at(std::string_view text, size_t from = 0) {
  size_t n = 0;
  while (from + n < text.size() && is_digit(text[from + n])) ++n;
  return n;
}

std::string_view skip_blanks(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_blank(s[i])) ++i;
  return s.substr(i);
}

}  // namespace

// ---- ANSI escape sequences (ECMA-48): CSI "ESC [ params final", OSC "ESC ] ... BEL" or
// "ESC ] ... ESC \" (a title, a hyperlink), and two-byte "ESC x", removed.
std::string without_ansi(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\x1b') {
      out.push_back(line[i]);
      continue;
    }
    if (i + 1 < line.size() && line[i + 1] == '[') {
      size_t j = i + 2;
      while (j < line.size() && !(line[j] >= '@' && line[j] <= '~')) ++j;
      i = j;  // the final byte, or the end
    } else if (i + 1 < line.size() && line[i + 1] == ']') {
      size_t j = i + 2;
      while (j < line.size() && line[j] != '\a' && line[j] != '\x1b') ++j;
      if (j + 1 < line.size() && line[j] == '\x1b' && line[j + 1] == '\\') ++j;  // ESC \ ends it
      i = j;  // the terminator, or the end
    } else {
      ++i;  // ESC and the byte after it
    }
  }
  return out;
}

namespace {

// ---- docker json-file: {"log":"<escaped>","stream":"stderr","time":"..."}
// Decodes a JSON string body starting at `s[0]` (after the opening quote) into `out`; returns
// the length consumed including the closing quote, or 0 when the string is not complete.
size_t json_string(std::string_view s, std::string& out) {
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') return i + 1;
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (++i >= s.size()) return 0;
    switch (s[i]) {
      case 'n':
      case 'r':
        break;  // the line's own newline: not part of the message
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        if (i + 4 >= s.size()) return 0;
        unsigned v = 0;
        for (size_t k = 1; k <= 4; ++k) {
          const char h = s[i + k];
          v <<= 4;
          if (h >= '0' && h <= '9')
            v |= static_cast<unsigned>(h - '0');
          else if (h >= 'a' && h <= 'f')
            v |= static_cast<unsigned>(h - 'a' + 10);
          else if (h >= 'A' && h <= 'F')
            v |= static_cast<unsigned>(h - 'A' + 10);
          else
            return 0;
        }
        i += 4;
        // UTF-8 for the BMP (surrogate halves are kept as their three bytes, never valid text)
        if (v < 0x80) {
          out.push_back(static_cast<char>(v));
        } else if (v < 0x800) {
          out.push_back(static_cast<char>(0xC0 | (v >> 6)));
          out.push_back(static_cast<char>(0x80 | (v & 0x3F)));
        } else {
          out.push_back(static_cast<char>(0xE0 | (v >> 12)));
          out.push_back(static_cast<char>(0x80 | ((v >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (v & 0x3F)));
        }
        break;
      }
      default:
        out.push_back(s[i]);  // \" \\ \/ and anything else as itself
    }
  }
  return 0;
}

bool docker_json(std::string_view line, Envelope& env, std::string& decoded) {
  constexpr std::string_view kOpen = "{\"log\":\"";
  if (!line.starts_with(kOpen)) return false;
  std::string message;
  const size_t used = json_string(line.substr(kOpen.size()), message);
  if (used == 0) return false;
  const std::string_view rest = line.substr(kOpen.size() + used);
  constexpr std::string_view kStream = "\"stream\":\"";
  if (const size_t at = rest.find(kStream); at != std::string_view::npos) {
    const std::string_view value = rest.substr(at + kStream.size());
    env.stream = std::string(value.substr(0, value.find('"')));
  }
  decoded = std::move(message);
  return true;
}

// A wrapper names the process that printed the line; an outer one's is a relay's (syslog's
// writer, a Ray worker around a launcher).
void name_pid(Envelope& env, std::string_view pid) {
  if (!env.pid.empty() && env.outer_pid.empty()) env.outer_pid = std::move(env.pid);
  env.pid = std::string(pid);
}

// ---- CRI: "<RFC 3339 time> <stdout|stderr> <F|P> "
size_t cri_prefix(std::string_view line, Envelope& env) {
  // 2024-01-01T00:00:00[.frac](Z|+hh:mm)
  if (line.size() < 20 || digits_at(line) != 4 || line[4] != '-' || line[10] != 'T') return 0;
  const size_t space = line.find(' ');
  if (space == std::string_view::npos || space > 40) return 0;
  const std::string_view rest = line.substr(space + 1);
  for (std::string_view stream : {"stdout", "stderr"}) {
    if (rest.starts_with(stream) && rest.size() > stream.size() + 3 && rest[stream.size()] == ' ' &&
        (rest[stream.size() + 1] == 'F' || rest[stream.size() + 1] == 'P') &&
        rest[stream.size() + 2] == ' ') {
      env.stream = std::string(stream);
      return space + 1 + stream.size() + 3;
    }
  }
  return 0;
}

// ---- syslog / journald: "<time> <host> <ident>[<pid>]: " or "<time> <host> <ident>: "
size_t syslog_prefix(std::string_view line, Envelope& env) {
  static const RE2 re(
      R"(^(?:[A-Z][a-z]{2} [ 0-3]\d \d\d:\d\d:\d\d(?:\.\d+)?|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?) ([\w.-]{1,64}) [\w./()-]{1,64}?(?:\[(\d{1,10})\])?: )");
  re2::StringPiece subs[3];
  if (!re.Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::ANCHOR_START, subs,
                3)) {
    return 0;
  }
  env.host = std::string(subs[1].data(), subs[1].size());
  if (subs[2].data() != nullptr) name_pid(env, std::string_view(subs[2].data(), subs[2].size()));
  return subs[0].size();
}

// ---- a quoted excerpt: "> " before each line of a log pasted into an e-mail reply or a
// Markdown blockquote (a ticket, an issue thread); "> > " is two quotes, each a layer.
size_t quote_prefix(std::string_view line) {
  const bool quoted = line.size() > 2 && line[0] == '>' && line[1] == ' ' && !is_blank(line[2]);
  return quoted ? 2 : 0;
}

// ---- a log collector's or a launcher's bare time: " 2025-02-18 12:54 ", "2025-02-18 12:54:03,422
// ",
// "[2025-02-18 12:54:03.422] ", "2025-02-18T12:54:03.422+08:00 ": a date and at least hours and
// minutes, then blanks; what follows (never nothing) is the message.
size_t timestamp_prefix(std::string_view line) {
  static const RE2 re(
      R"(^[ \t]*(?:\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:[.,]\d{1,9})?)?(?:Z|[+-]\d\d:?\d\d)?\]|\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:[.,]\d{1,9})?)?(?:Z|[+-]\d\d:?\d\d)?):? +)");
  re2::StringPiece match;
  if (!re.Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::ANCHOR_START,
                &match, 1)) {
    return 0;
  }
  return match.size() < line.size() ? match.size() : 0;
}

// ---- the kernel's own timestamp: "[ 1126.635824] " or "<4>[ 1126.635824] "
size_t kernel_time_prefix(std::string_view line) {
  size_t i = 0;
  if (line.starts_with('<')) {
    const size_t d = digits_at(line, 1);
    if (d == 0 || d > 3 || line.size() <= d + 1 || line[d + 1] != '>') return 0;
    i = d + 2;
  }
  if (i >= line.size() || line[i] != '[') return 0;
  ++i;
  while (i < line.size() && line[i] == ' ') ++i;
  const size_t whole = digits_at(line, i);
  if (whole == 0 || i + whole >= line.size() || line[i + whole] != '.') return 0;
  i += whole + 1;
  const size_t frac = digits_at(line, i);
  if (frac == 0 || i + frac >= line.size() || line[i + frac] != ']') return 0;
  i += frac + 1;
  if (i < line.size() && line[i] == ' ') ++i;
  return i;
}

// ---- grep -rn over a bundle: "<path>:<line>:" where the path looks like a file of logs.
size_t grep_prefix(std::string_view line, Envelope& env) {
  constexpr size_t kMaxPath = 512;
  const size_t colon = line.find(':');
  if (colon == 0 || colon == std::string_view::npos || colon > kMaxPath) return 0;
  const std::string_view path = line.substr(0, colon);
  for (char c : path) {
    if (c == ' ' || c == '\t' || c == '[' || c == '(' || c == '"' || c == '=') return 0;
  }
  const bool in_dir = path.find('/') != std::string_view::npos;
  const bool log_name = path.ends_with(".log") || path.ends_with(".txt") ||
                        path.ends_with(".out") || path.find(".log.") != std::string_view::npos;
  if (!in_dir && !log_name) return 0;
  const size_t digits = digits_at(line, colon + 1);
  if (digits == 0 || colon + 1 + digits >= line.size() || line[colon + 1 + digits] != ':') {
    // "grep -r" without -n: only a log file's name is sure enough to be a path
    if (!log_name) return 0;
    env.path = std::string(path);
    return colon + 1;
  }
  env.path = std::string(path);
  return colon + 1 + digits + 1;
}

// ---- launcher prefixes
// A node's name and a local rank: "[nccl-e9ef-7d4f-0:3]:" (a SkyPilot job's torchrun lines).
size_t host_rank_prefix(std::string_view text, Envelope* env) {
  constexpr size_t kMaxHost = 64;
  if (!text.starts_with('[')) return 0;
  size_t i = 1;
  while (i < text.size() && i <= kMaxHost &&
         (is_alnum(text[i]) || text[i] == '-' || text[i] == '.' || text[i] == '_')) {
    ++i;
  }
  if (i == 1 || i >= text.size() || text[i] != ':' || !is_alpha(text[1])) return 0;
  const size_t digits = digits_at(text, i + 1);
  if (digits == 0 || text.substr(i + 1 + digits, 2) != "]:") return 0;
  if (env != nullptr) {
    env->host = std::string(text.substr(1, i - 1));
    env->rank = std::string(text.substr(i + 1, digits));
  }
  return i + 1 + digits + 2;
}

size_t launcher_prefix(std::string_view text, Envelope* env) {
  constexpr size_t kMaxLauncherName = 64;  // "(RayWorkerWrapper pid=123, ip=10.0.0.1) ": a name
  size_t n = 0;
  if (text.starts_with('(')) {
    const size_t close = text.find(')');
    if (close == std::string_view::npos || close > kMaxLauncherName) return 0;
    std::string_view inner = text.substr(1, close - 1);
    std::string_view ip;
    if (const size_t comma = inner.find(", ip="); comma != std::string_view::npos) {
      ip = inner.substr(comma + 5);
      inner = inner.substr(0, comma);
      for (char c : ip) {
        if (!(is_digit(c) || c == '.' || c == ':' || (c >= 'a' && c <= 'f'))) return 0;
      }
    }
    const size_t pid = inner.rfind("pid=");
    if (pid == std::string_view::npos || (pid > 0 && inner[pid - 1] != ' ')) return 0;
    const size_t digits = digits_at(inner, pid + 4);
    if (digits == 0 || pid + 4 + digits != inner.size()) return 0;
    if (env != nullptr) {
      name_pid(*env, inner.substr(pid + 4, digits));
      if (!ip.empty()) env->host = std::string(ip);
    }
    n = close + 1;
  } else if (text.starts_with("[rank") || text.starts_with("[default")) {
    const size_t name = text.starts_with("[rank") ? 5 : 8;
    const size_t digits = digits_at(text, name);
    if (digits == 0 || text.substr(name + digits, 2) != "]:") return 0;
    if (env != nullptr) env->rank = std::string(text.substr(name, digits));
    n = name + digits + 2;
  } else if (text.starts_with("rank")) {
    const size_t digits = digits_at(text, 4);
    if (digits == 0 || text.substr(4 + digits, 1) != ":") return 0;
    if (env != nullptr) env->rank = std::string(text.substr(4, digits));
    n = 4 + digits + 1;
  } else if (const size_t k = host_rank_prefix(text, env); k > 0) {
    n = k;
  } else if (text.starts_with('[')) {
    // mpirun --tag-output: "[1,0]<stderr>:"
    const size_t job = digits_at(text, 1);
    if (job == 0 || text.size() <= job + 1 || text[job + 1] != ',') return 0;
    const size_t rank = digits_at(text, job + 2);
    if (rank == 0 || text.size() <= job + 2 + rank || text[job + 2 + rank] != ']') return 0;
    std::string_view rest = text.substr(job + 3 + rank);
    size_t tag = 0;
    for (std::string_view s : {"<stdout>:", "<stderr>:"}) {
      if (rest.starts_with(s)) tag = s.size();
    }
    if (tag == 0) return 0;
    if (env != nullptr) {
      env->rank = std::string(text.substr(job + 2, rank));
      env->stream = std::string(rest.substr(1, 6));
    }
    n = job + 3 + rank + tag;
  } else {
    return 0;
  }
  if (n < text.size() && is_blank(text[n])) ++n;
  return n;
}

// ---- tqdm: "<desc>: 50%|█████     | 5/10 [00:01<00:01,  4.50it/s]<message>"
size_t progress_bar_prefix(std::string_view line) {
  // The rate ends the bar's "[...]": looked for at each ']' (rare) rather than everywhere.
  for (size_t close = line.find(']'); close != std::string_view::npos;
       close = line.find(']', close + 1)) {
    const std::string_view before = line.substr(0, close);
    const bool rate =
        before.ends_with("it/s") || before.ends_with("s/it") || before.ends_with("B/s");
    if (!rate) continue;
    const size_t end = close + 1;
    const size_t open = line.rfind(" [", close);
    if (open == std::string_view::npos || line.find('|') > open) continue;  // not a bar
    if (end < line.size() && !is_blank(line[end])) return end;
  }
  return 0;
}

// ---- where a record starts behind an unknown prefix
// The forms a record of the programs faultd reads starts with, whatever a launcher or a tool
// put before it: CANN's "[LEVEL] MODULE(", NCCL's "host:pid:tid [N] ", the
// kernel's "NVRM: ", Python's "Traceback (most recent call last):" and "SomeError: ". Each
// reads a byte's class, never a digit's value (LineDeviceReader's shape cache relies on it).
bool is_level_word(std::string_view w) {
  for (std::string_view level :
       {"ERROR", "WARNING", "WARN", "INFO", "DEBUG", "EVENT", "TRACE", "CRITICAL", "FATAL"}) {
    if (w == level) return true;
  }
  return false;
}

bool is_upper_or_underscore_byte(char c) { return (c >= 'A' && c <= 'Z') || c == '_'; }

bool level_record_at(std::string_view s) {
  if (s.empty() || s[0] != '[') return false;
  size_t j = 1;
  while (j < s.size() && j <= 9 && s[j] >= 'A' && s[j] <= 'Z') ++j;
  if (j >= s.size() || s[j] != ']' || !is_level_word(s.substr(1, j - 1))) return false;
  // CANN's "[ERROR] RUNTIME(": a bracketed level inside a record ("[drv_soft_fault] [ERROR]
  // [heart_beat_judge 318]") is not where one starts.
  size_t k = j + 1;
  if (k >= s.size() || s[k] != ' ') return false;
  const size_t word = ++k;
  while (k < s.size() && is_upper_or_underscore_byte(s[k])) ++k;
  return k > word && k < s.size() && s[k] == '(';
}

bool python_record_at(std::string_view s) {
  if (s.starts_with("Traceback (most recent call last):")) return true;
  // A dotted exception name ending in Error or Exception, a colon after it.
  size_t j = 0;
  while (j < s.size() && j < 96 && (is_alnum(s[j]) || s[j] == '_' || s[j] == '.')) ++j;
  if (j == 0 || j >= s.size() || s[j] != ':' || !is_alpha(s[0])) return false;
  // A class's name, not the word alone ("reason=exit status 1: Error: device not found").
  const std::string_view name = s.substr(0, j);
  return (name.ends_with("Error") && name.size() > 5) ||
         (name.ends_with("Exception") && name.size() > 9);
}

std::string_view nccl_prefix_device(std::string_view line);

bool record_at(std::string_view s) {
  switch (s[0]) {
    case '[':
      // CANN's error message report: "[PID: 3448331] 2025-12-04-21:59:08 ... (EI0013): ".
      if (level_record_at(s)) return true;
      break;
    case 'N':
      if (s.starts_with("NVRM: ")) return true;
      break;
    default:
      break;
  }
  if (is_alpha(s[0]) && python_record_at(s)) return true;
  if (!nccl_prefix_device(s).empty()) return true;
  // An envelope that says something (a launcher's process or rank, a collected file's path)
  // behind the unknown label: peeled next, as at the line's start.
  Envelope scratch;
  return launcher_prefix(s, nullptr) > 0 || grep_prefix(s, scratch) > 0;
}

// Where the first record form starts in `m` behind a label: at 0, or after a byte that ends a
// launcher's or a tool's label (':', ']', ')', '>', then blanks), within the first
// kMaxRecordStart bytes; 0 when none does (the line is left as it is).
constexpr size_t kMaxRecordStart = 160;

size_t record_start(std::string_view m) {
  const size_t limit = std::min(m.size(), kMaxRecordStart);
  bool after_label = true;  // the line's start counts as one
  for (size_t i = 0; i < limit; ++i) {
    const char c = m[i];
    if (is_blank(c)) continue;
    if (after_label && record_at(m.substr(i))) return i;
    after_label = c == ':' || c == ']' || c == ')' || c == '>';
  }
  return 0;
}

}  // namespace

void unwrap(std::string_view line, Envelope& env) {
  env = Envelope{};
  std::string_view m = line;
  for (int layer = 0; layer < kMaxLayers; ++layer) {
    if (m.find('\x1b') != std::string_view::npos) {
      env.decoded = without_ansi(m);
      m = env.decoded;
      ++env.layers;
      continue;
    }
    std::string decoded;
    if (docker_json(m, env, decoded)) {
      env.decoded = std::move(decoded);
      m = env.decoded;
      ++env.layers;
      continue;
    }
    size_t n = quote_prefix(m);
    if (n == 0) n = cri_prefix(m, env);
    if (n == 0) n = syslog_prefix(m, env);
    if (n == 0) n = kernel_time_prefix(m);
    if (n == 0) n = timestamp_prefix(m);
    if (n == 0) {
      const std::string_view rest = skip_blanks(m);
      const size_t k = launcher_prefix(rest, &env);
      if (k > 0) n = (m.size() - rest.size()) + k;
    }
    if (n == 0) n = grep_prefix(m, env);
    if (n == 0) n = progress_bar_prefix(m);
    if (n == 0) n = record_start(m);
    if (n == 0) break;
    m.remove_prefix(n);
    ++env.layers;
  }
  env.message = m;
}

std::string_view strip_launcher_prefix(std::string_view line) {
  for (;;) {
    const std::string_view rest = skip_blanks(line);
    const size_t n = launcher_prefix(rest, nullptr);
    if (n == 0) return line;
    line = rest.substr(n);
  }
}

std::string_view line_level(std::string_view line) {
  line = skip_blanks(strip_launcher_prefix(line));
  if (line.empty() || line[0] != '[') return {};
  size_t j = 1;
  while (j < line.size() && line[j] >= 'A' && line[j] <= 'Z') ++j;
  if (j == 1 || j == line.size() || line[j] != ']') return {};
  return line.substr(1, j - 1);
}

std::string_view torch_npu_device(std::string_view line) {
  const size_t open = line.find("(PID:");
  if (open == std::string_view::npos) return {};
  const size_t close = line.find(')', open);
  const std::string_view tuple =
      line.substr(open, close == std::string_view::npos ? std::string_view::npos : close - open);
  const size_t key = tuple.find("Device:");
  if (key == std::string_view::npos) return {};
  const std::string_view rest = skip_blanks(tuple.substr(key + 7));
  return rest.substr(0, digits_at(rest));
}

namespace {

bool is_upper_or_underscore(char c) { return (c >= 'A' && c <= 'Z') || c == '_'; }

// Whether `line` may name a process as line_pid() reads it: "PID:" or a capital word followed by
// "(" and a digit. Cheaper than the regex, which most candidate lines (step lines) would fail.
bool may_name_pid(std::string_view line) {
  if (line.find("PID:") != std::string_view::npos) return true;
  for (size_t at = line.find('('); at != std::string_view::npos; at = line.find('(', at + 1)) {
    if (at > 0 && is_upper_or_underscore(line[at - 1]) && at + 1 < line.size() &&
        is_digit(line[at + 1])) {
      return true;
    }
  }
  return false;
}

// Whether `line` holds a word that one of line_device()'s spellings starts with: "dev" in any
// case (device, Device, DEVICE, devId, cudaDev, logicDevId ...), NPU, GPU, chipId, cuda:, (PCI:
// or gpu(.
bool may_name_device(std::string_view line) {
  // Each spelling has a byte rarer than its first (the v of dev, the U of NPU, the I of chipId,
  // the colon of cuda:): only the positions of those are looked at.
  static constexpr auto kRare = [] {
    std::array<bool, 256> table{};
    for (char c : {'v', 'V', 'U', 'I', ':', '('}) table[static_cast<uint8_t>(c)] = true;
    return table;
  }();
  for (size_t i = 2; i < line.size(); ++i) {
    const char c = line[i];
    if (!kRare[static_cast<uint8_t>(c)]) continue;
    const char a = line[i - 2], b = line[i - 1];
    if ((c | 0x20) == 'v' && (a | 0x20) == 'd' && (b | 0x20) == 'e') return true;
    if (c == 'U' && (a == 'N' || a == 'G') && b == 'P') return true;
    if (c == 'I' && i >= 4 && line.substr(i - 4, 6) == "chipId") return true;
    // A step line is full of ':': the byte before it decides first.
    if (c == ':' && b == 'a' && i >= 4 && line.substr(i - 4, 5) == "cuda:") return true;
    if (c == ':' && b == 'I' && i >= 4 && line.substr(i - 4, 5) == "(PCI:") return true;
    if (c == '(' && i >= 3 && line.substr(i - 3, 4) == "gpu(") return true;
  }
  return false;
}

// NCCL's own prefix "host:pid:tid [cudaDev] " (its debug.cc): the device, or empty.
std::string_view nccl_prefix_device(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && line[i] != ':' && line[i] != ' ' && line[i] != '\t' &&
         line[i] != '\n' && line[i] != '\r' && line[i] != '\f') {
    ++i;
  }
  if (i == 0 || i == line.size() || line[i] != ':') return {};
  for (int number = 0; number < 2; ++number) {  // pid, then tid
    const size_t d = digits_at(line, ++i);
    if (d == 0) return {};
    i += d;
    if (i >= line.size() || line[i] != (number == 0 ? ':' : ' ')) return {};
  }
  if (++i >= line.size() || line[i] != '[') return {};
  const size_t d = digits_at(line, ++i);
  if (d == 0 || d > 4 || i + d + 1 >= line.size() || line[i + d] != ']' || line[i + d + 1] != ' ') {
    return {};
  }
  return line.substr(i, d);
}

}  // namespace

std::string_view line_pid(std::string_view line) {
  if (!may_name_pid(line)) return {};
  static const RE2 re(R"((?:\b[A-Z][A-Z_]+\((\d+),[\w.-]+\)|\[PID: ?(\d+)\]|\(PID: ?(\d+)[,)]))");
  re2::StringPiece subs[4];
  if (!re.Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED, subs,
                4)) {
    return {};
  }
  for (int i = 1; i < 4; ++i) {
    if (subs[i].data() != nullptr) return {subs[i].data(), subs[i].size()};
  }
  return {};
}

std::string_view line_device(std::string_view line) {
  // NCCL's own prefix names the warning process's GPU.
  if (const std::string_view d = nccl_prefix_device(line); !d.empty()) return d;
  if (!may_name_device(line)) return {};
  re2::StringPiece dev;
  // A PCI address after "GPU" ("The NVIDIA GPU 0000:b3:00.0", "GPU 00000000:3B:00.0") is the
  // device's bus id, not a device numbered by its domain. Its function is any digit, as every
  // spelling here reads a byte's class, never its value (LineDeviceReader relies on it).
  static const RE2 bus(
      R"(\bGPU\s+(?:PCI:)?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\b)");
  if (RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), bus, &dev)) {
    return {dev.data(), dev.size()};
  }
  // The kernel's NVRM lines name the GPU by its bus: "NVRM: Xid (PCI:0000:01:00): 154, ...".
  static const RE2 nvrm_bus(R"(\(PCI:([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.\d)?)\))");
  if (RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), nvrm_bus, &dev)) {
    return {dev.data(), dev.size()};
  }
  // MXNet's context: "Running on [gpu(0)]".
  static const RE2 context(R"(\bgpu\((\d{1,4})\))");
  if (RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), context, &dev)) {
    return {dev.data(), dev.size()};
  }
  // TensorFlow's and XLA's allocator of a GPU: "Allocator (GPU_0_bfc) ran out of memory".
  static const RE2 allocator(R"(\bGPU_(\d{1,4})_bfc\b)");
  if (RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), allocator, &dev)) {
    return {dev.data(), dev.size()};
  }
  static const RE2 re(
      R"((?:\b(?:[Dd]evice[_ ]?[Ii][Dd]|[Dd]ev_?[Ii][Dd])(?:\s*[=:]\s*\[?|\[|-|\s+)|\bcudaDev\s|\bdevice\s+ordinal\s+|\[devid-|\bdevice\((?:chipId:)?|\b[Dd]evice\[|\bDEVICE\[|\b[Dd]evice:\s*|\bDevice\s|\bdevice(?:\s+is)?\s+|\(device=|\bNPU\s|\bchipId:|\bGPU[\s=:]|\bcuda:|\blogicDevId\[|\bdeviceLogicId[\[=])(\d{1,4})(?:[^\d.:]|\.(?:\D|$)|:(?:[^\dA-Fa-f]|$)|$))");
  re2::StringPiece subs[2];
  if (!re.Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED, subs,
                2)) {
    return {};
  }
  return {subs[1].data(), subs[1].size()};
}

std::string_view LineDeviceReader::read(std::string_view line) {
  if (const Place* place = places_.find(line)) return line.substr(place->offset, place->size);
  const std::string_view device = line_device(line);
  places_.keep(line, device.empty()
                         ? Place{}
                         : Place{static_cast<size_t>(device.data() - line.data()), device.size()});
  return device;
}

std::string_view path_device(std::string_view path) {
  for (size_t at = path.find("device-"); at != std::string_view::npos;
       at = path.find("device-", at + 1)) {
    if (at > 0 && path[at - 1] != '/') continue;
    const size_t d = digits_at(path, at + 7);
    if (d > 0 && d <= 4 && at + 7 + d < path.size() && path[at + 7 + d] == '/') {
      return path.substr(at + 7, d);
    }
  }
  return {};
}

}  // namespace faultd
