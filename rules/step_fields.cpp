#include "rules/step_fields.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <utility>

namespace faultd {
namespace {

using namespace std::string_view_literals;

constexpr size_t kMaxKeyWords = 6;  // a key is its last few words; prose before it is dropped

// ASCII only, locale-free: a step line is read for every training step, one table lookup per
// byte.
enum CharClass : uint8_t { kAlpha = 1, kDigit = 2, kBoundary = 4, kSignOrDot = 8 };
constexpr auto kCharClass = [] {
  std::array<uint8_t, 256> table{};
  for (int c = 'a'; c <= 'z'; ++c) table[c] = kAlpha;
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = kAlpha;
  for (int c = '0'; c <= '9'; ++c) table[c] = kDigit;
  // Ends the current key: a cell separator or the end of a sentence.
  // A '/' separates path components ("overflow/3/1"), which are no key.
  for (char c : {',', '|', '{', '}', ';', '/'}) table[static_cast<uint8_t>(c)] = kBoundary;
  for (char c : {'-', '+', '.'}) table[static_cast<uint8_t>(c)] = kSignOrDot;
  return table;
}();
uint8_t char_class(char c) { return kCharClass[static_cast<uint8_t>(c)]; }
bool is_alpha(char c) { return char_class(c) == kAlpha; }
bool is_digit(char c) { return char_class(c) == kDigit; }
constexpr char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// `a` equals the lower-case word `b`, whatever `a`'s case.
bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == y; });
}

// The words a key is compared with, named once when the tokenizer reads them (a step line is
// read for every training step: comparing ids is cheaper than comparing each word with every
// spelling).
enum class Word : uint8_t {
  other,
  loss,
  scale,
  scaler,
  norm,
  gnorm,
  iterations,
  iteration,
  iter,
  step,
  overflow,
  cond,
  from,
  to,
  ms,
  time,
  updates,
  nan,
  skipped,
  attempted,
  reducing,
  adjust,
  grad,
  cur,
  per,
  num,
  global,
  total,
  valid,
  val,
  eval,
  test,
  nll,
  copula,     // "is", "was", "are", "were": between a key and its value ("The grad norm is nan.")
  condition,  // "if", "when", "whether", "until", "unless": a key under it is no statement
  before,     // PaddlePaddle's scaler: "scale_before: 0.25, scale_after: 0.125"
  after,
  found  // "Found inf or nan, current scale is: ..." (PaddlePaddle's older scaler)
};

// Bytes [from, to) of `text`, lower-cased, as one integer (at most eight of them).
constexpr uint64_t packed(std::string_view text, size_t from, size_t to) {
  uint64_t v = 0;
  for (size_t i = from; i < std::min(to, text.size()); ++i) {
    v = v << 8 | static_cast<uint8_t>(lower(text[i]));
  }
  return v;
}

// The word's id, whatever its case; Word::other for any word no key form uses. Words are
// compared as lower-case integers, among those of the same length only.
Word classify(std::string_view w) {
  struct Spelling {
    std::string_view text;
    Word id;
  };
  // By length (2 to 10), each length's words together.
  static constexpr Spelling kWords[] = {
      {"to", Word::to},
      {"ms", Word::ms},
      {"is", Word::copula},
      {"if", Word::condition},
      {"nan", Word::nan},
      {"cur", Word::cur},
      {"per", Word::per},
      {"num", Word::num},
      {"val", Word::val},
      {"nll", Word::nll},
      {"was", Word::copula},
      {"are", Word::copula},
      {"loss", Word::loss},
      {"norm", Word::norm},
      {"iter", Word::iter},
      {"step", Word::step},
      {"cond", Word::cond},
      {"from", Word::from},
      {"time", Word::time},
      {"grad", Word::grad},
      {"eval", Word::eval},
      {"test", Word::test},
      {"were", Word::copula},
      {"when", Word::condition},
      {"scale", Word::scale},
      {"gnorm", Word::gnorm},
      {"total", Word::total},
      {"valid", Word::valid},
      {"found", Word::found},
      {"until", Word::condition},
      {"after", Word::after},
      {"scaler", Word::scaler},
      {"adjust", Word::adjust},
      {"global", Word::global},
      {"unless", Word::condition},
      {"before", Word::before},
      {"updates", Word::updates},
      {"skipped", Word::skipped},
      {"whether", Word::condition},
      {"current", Word::cur},
      {"overflow", Word::overflow},
      {"reducing", Word::reducing},
      {"iteration", Word::iteration},
      {"attempted", Word::attempted},
      {"iterations", Word::iterations},
  };
  constexpr size_t kShortest = 2, kLongest = 10;
  // kFirst[n - kShortest]: the first word of length n; kFirst[n + 1 - kShortest] ends them.
  static constexpr uint8_t kFirst[] = {0, 4, 12, 24, 31, 36, 40, 42, 44, 45};
  static_assert(std::size(kFirst) == kLongest - kShortest + 2);
  static_assert([] {
    for (size_t n = kShortest; n <= kLongest; ++n) {
      for (size_t i = kFirst[n - kShortest]; i < kFirst[n + 1 - kShortest]; ++i) {
        if (kWords[i].text.size() != n) return false;
      }
    }
    return kFirst[kLongest + 1 - kShortest] == std::size(kWords);
  }());
  if (w.size() < kShortest || w.size() > kLongest) return Word::other;
  // The first eight letters and the rest as integers: no memcmp per candidate.
  static constexpr auto kPacked = [] {
    std::array<std::pair<uint64_t, uint64_t>, std::size(kWords)> table{};
    for (size_t i = 0; i < table.size(); ++i) {
      table[i] = {packed(kWords[i].text, 0, 8), packed(kWords[i].text, 8, kLongest)};
    }
    return table;
  }();
  const std::pair<uint64_t, uint64_t> word{packed(w, 0, 8), packed(w, 8, kLongest)};
  for (size_t i = kFirst[w.size() - kShortest]; i < kFirst[w.size() + 1 - kShortest]; ++i) {
    if (kPacked[i] == word) return kWords[i].id;
  }
  return Word::other;
}

// The words of the key before a value, at most the last kMaxKeyWords, with their ids.
class Key {
 public:
  void add(std::string_view word) { add(word, classify(word)); }
  void add(std::string_view word, Word id) {
    if (size_ == kMaxKeyWords) {
      std::move(words_.begin() + 1, words_.end(), words_.begin());
      std::move(ids_.begin() + 1, ids_.end(), ids_.begin());
      --size_;
      if (named_ > 0) --named_;
    }
    words_[size_] = word;
    ids_[size_++] = id;
  }
  void clear() { size_ = named_ = 0; }
  // The words so far are a dotted namespace ("decode" of mmseg's "decode.loss_seg"): the name
  // proper starts after them, they still tell what it is a name of ("val.loss").
  void end_namespace() { named_ = size_; }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // The name proper: the words after the namespace.
  size_t name_size() const { return size_ - named_; }
  Word name_first_id() const { return ids_[named_]; }
  Word last_id() const { return ids_[size_ - 1]; }
  std::string_view last() const { return words_[size_ - 1]; }

  // The key ends with these words.
  bool ends_with(std::initializer_list<Word> tail) const {
    if (tail.size() > size_) return false;
    return std::equal(tail.begin(), tail.end(), ids_.begin() + (size_ - tail.size()));
  }
  bool has(Word w) const {
    return std::find(ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(size_), w) !=
           ids_.begin() + static_cast<std::ptrdiff_t>(size_);
  }

 private:
  std::array<std::string_view, kMaxKeyWords> words_{};
  std::array<Word, kMaxKeyWords> ids_{};
  size_t size_ = 0;
  size_t named_ = 0;  // words of a namespace before the name proper
};

// "IDLoss", "CELoss": a word that ends in a capitalised "Loss" after a letter.
bool camel_loss(std::string_view w) {
  return w.size() > 4 && w.substr(w.size() - 4) == "Loss" && is_alpha(w[w.size() - 5]);
}

// Whether a key may name a step field: each form canonical() knows ends with one of these words
// or is led by "loss". Most keys of a step line (learning rate, consumed samples, global batch
// size) are none of them, and are turned away here rather than by every form in turn.
bool may_be_field(const Key& k) {
  switch (k.last_id()) {
    case Word::loss:
    case Word::scale:
    case Word::norm:
    case Word::gnorm:
    case Word::iterations:
    case Word::iteration:
    case Word::iter:
    case Word::step:
    case Word::overflow:
    case Word::cond:
    case Word::from:
    case Word::to:
    case Word::ms:
    case Word::time:
    case Word::updates:
    case Word::before:
    case Word::after:
      return true;
    default:
      return camel_loss(k.last()) || (k.name_size() > 0 && k.name_first_id() == Word::loss);
  }
}

// The detectors' name for a key, or empty when the key is not one of the step fields. Longer and
// more specific forms are tried first ("step time" before "step").
std::string_view canonical(const Key& k) {
  using W = Word;
  if (k.empty() || !may_be_field(k)) return {};
  if (k.ends_with({W::nan, W::iterations})) return "nan_iterations";
  if (k.ends_with({W::skipped, W::iterations})) return "overflow";
  if (k.ends_with({W::overflow}) || k.ends_with({W::overflow, W::cond})) return "overflow";
  if (k.ends_with({W::attempted, W::loss, W::scale}) || k.ends_with({W::scale, W::from}) ||
      k.ends_with({W::scale, W::before})) {
    return "scale_from";
  }
  if (k.ends_with({W::scale, W::after})) return "scale";
  if (k.ends_with({W::scale, W::to}) || k.ends_with({W::reducing, W::to}) ||
      (k.ends_with({W::adjust, W::to}) && k.has(W::scale))) {
    return "scale";
  }
  if (k.ends_with({W::loss, W::scale}) || k.ends_with({W::grad, W::scale}) ||
      k.ends_with({W::cur, W::scale}) || (k.size() == 1 && k.ends_with({W::scale}))) {
    return "scale";
  }
  if (k.ends_with({W::time, W::per, W::iteration, W::ms}) ||
      k.ends_with({W::per, W::step, W::time}) || k.ends_with({W::step, W::time})) {
    return "step_time";
  }
  if (k.ends_with({W::iteration}) || k.ends_with({W::iter}) || k.ends_with({W::step}) ||
      k.ends_with({W::num, W::updates})) {
    return "step";
  }
  if (k.ends_with({W::grad, W::norm}) || k.ends_with({W::gnorm}) ||
      k.ends_with({W::global, W::norm}) || k.ends_with({W::total, W::norm}) ||
      (k.size() == 1 && k.ends_with({W::norm}))) {
    return "grad_norm";
  }
  for (Word other : {W::scale, W::scaler, W::valid, W::val, W::eval, W::test, W::nll}) {
    if (k.has(other)) return {};
  }
  // lm loss, train_loss, Training Loss; loss_net, loss total (a short name led by "loss", in
  // a namespace too: mmseg's decode.loss_seg); a camel-case compound that ends the word in
  // "Loss" (IDLoss, CELoss, TotalLoss).
  if (k.last_id() == W::loss ||
      (k.name_size() > 0 && k.name_size() <= 2 && k.name_first_id() == W::loss) ||
      camel_loss(k.last())) {
    return "loss";
  }
  return {};
}

bool is_word_value(std::string_view w) {
  if (!w.empty() && (w.front() == '-' || w.front() == '+')) w.remove_prefix(1);
  for (std::string_view v : {"nan"sv, "inf"sv, "infinity"sv, "true"sv, "false"sv}) {
    if (iequals(w, v)) return true;
  }
  return false;
}

struct Token {
  std::string_view text;
  bool value = false;
};

// The next token at `i`: a number as printed, with a unit glued to it ("166756ms"), a word of
// letters and digits, or a signed word ("-inf"). NaN, Inf, True and False are values. Advances
// `i` past the token.
Token next_token(std::string_view line, size_t& i) {
  const size_t n = line.size();
  const size_t begin = i;
  if (line[i] == '-' || line[i] == '+') ++i;
  if (i < n && (is_digit(line[i]) || (line[i] == '.' && i + 1 < n && is_digit(line[i + 1])))) {
    while (i < n && (is_digit(line[i]) || line[i] == '.')) ++i;
    // An exponent: "7.334521E-01".
    if (i + 1 < n && (line[i] == 'e' || line[i] == 'E') &&
        (is_digit(line[i + 1]) ||
         ((line[i + 1] == '-' || line[i + 1] == '+') && i + 2 < n && is_digit(line[i + 2])))) {
      i += 2;
      while (i < n && is_digit(line[i])) ++i;
    }
    while (i < n && is_alpha(line[i])) ++i;  // a unit
    std::string_view number = line.substr(begin, i - begin);
    if (number.back() == '.') {  // "step 3." ends a sentence
      number.remove_suffix(1);
      --i;
    }
    return {number, true};
  }
  while (i < n && (char_class(line[i]) & (kAlpha | kDigit)) != 0) ++i;
  std::string_view word = line.substr(begin, i - begin);
  // Only words led by n, i, t or f may be values: the others are keys, without a second look.
  const size_t sign = begin < i && (word[0] == '-' || word[0] == '+') ? 1 : 0;
  if (word.size() <= sign) return {word, false};
  const char lead = lower(word[sign]);
  if (lead != 'n' && lead != 'i' && lead != 't' && lead != 'f') return {word, false};
  // A progress bar redrawn with '\r' runs into the next output: Keras's "- loss: nanEpoch
  // 1/1000". A value word followed by a capital letter ends before it.
  for (std::string_view v : {"nan"sv, "inf"sv}) {
    const size_t end = sign + v.size();
    if (word.size() > end && iequals(word.substr(sign, v.size()), v) && word[end] >= 'A' &&
        word[end] <= 'Z') {
      i = begin + end;
      word = word.substr(0, end);
      break;
    }
  }
  return {word, is_word_value(word)};
}

// Python's repr of a (name, value) pair, "[('loss_ctc', 24.181), ('loss', 24.221)]" (FunASR's
// trainer): the ',' at `comma` closes a quoted name opened right after '(', and the value
// follows it.
bool ends_tuple_name(std::string_view line, size_t comma) {
  if (comma < 3) return false;
  const char quote = line[comma - 1];
  if (quote != '\'' && quote != '"') return false;
  const size_t open = line.rfind(quote, comma - 2);
  return open != std::string_view::npos && open > 0 && line[open - 1] == '(';
}

void add(StepFields& out, std::string_view name, std::string_view value) {
  const bool known =
      std::any_of(out.begin(), out.end(), [&](const auto& f) { return f.first == name; });
  if (!known) out.emplace_back(name, value);
}

// What the line says in its own bytes: every field's value is a view of `line`, and whether a
// byte is a digit matters, never which digit (StepFieldReader relies on it).
void read_fields(std::string_view line, StepFields& out) {
  const size_t first = out.size();
  Key key;
  std::string_view overflow_word;  // an overflow the line reports in words
  std::string_view reducing_word;  // "Reducing dynamic loss scale from 8.0 to 4.0"
  bool skipping = false;           // "Skipping step": what a scaler does on an overflow
  bool verb = false;               // the key and what follows are joined by a verb ("is")
  std::string_view last_name;      // the field the previous value gave
  const size_t n = line.size();
  for (size_t i = 0; i < n;) {
    const char c = line[i];
    const uint8_t cls = char_class(c);
    if (cls == 0) {
      if (c == '!') key.clear();
      ++i;  // blanks, quotes, brackets, ':' and '=' separate tokens
      continue;
    }
    if (c == ',' && ends_tuple_name(line, i)) {
      ++i;  // ('loss', 24.221): the key goes on to its value
      continue;
    }
    if (cls == kBoundary || (c == '.' && (i + 1 == n || line[i + 1] == ' '))) {
      key.clear();  // "Skipping step. Attempted loss scale: 16": the key starts after the '.'
      ++i;
      continue;
    }
    if (cls == kSignOrDot && i + 1 == n) break;  // a sign or dot that ends the line
    if (c == '.' && i > 0 && is_alpha(line[i - 1]) && is_alpha(line[i + 1]) && !key.empty()) {
      key.end_namespace();  // "decode.loss_seg", "mix.decode.loss_seg"
      ++i;
      continue;
    }
    const size_t at = i;
    Token t = next_token(line, i);
    if (i == at) ++i;                                                        // a lone dot
    if (!t.value && (t.text.empty() || !is_alpha(t.text.back()))) continue;  // a lone sign
    if (!t.value) {
      // PyTorch prints a tensor's value as "tensor(nan, device='cuda:1', grad_fn=...)": the
      // value is inside, and the word is no part of the key.
      if (iequals(t.text, "tensor") && i < n && line[i] == '(') continue;
      if (t.text.size() >= 4 && iequals(t.text.substr(0, 4), "skip")) skipping = true;
      const Word id = classify(t.text);
      if (id == Word::copula) {
        verb = !key.empty();  // "loss is nan": the key is what comes before the verb
        continue;
      }
      if (verb) {  // "loss is not nan", "scale is reduced": the verb joined no value
        key.clear();
        verb = false;
      }
      key.add(t.text, id);
      if (key.last_id() == Word::overflow) overflow_word = t.text;
      if (key.last_id() == Word::reducing) reducing_word = t.text;
      continue;
    }
    // A key joined to its value by a verb is a statement when nothing makes it a condition
    // ("when the loss is nan") and the value ends the clause ("The grad norm is nan."; not
    // "loss is nan or inf", "loss is nan?").
    if (verb) {
      verb = false;
      const bool ends_clause = i == n || line[i] == '.' || line[i] == ',' || line[i] == ';' ||
                               line[i] == '!' || line[i] == ')';
      if (!ends_clause || key.has(Word::condition)) {
        key.clear();
        continue;
      }
    }
    // A scaler that found the gradients not finite: "Found inf or nan, current scale is: ..."
    // (an overflow in words, counted as such when the line names the scale).
    if (!key.empty() && key.last_id() == Word::found &&
        (iequals(t.text, "inf") || iequals(t.text, "nan"))) {
      overflow_word = key.last();
      key.clear();
      continue;
    }
    // "100/3995" and "5426/  250000": the value is the first number; the total is skipped.
    size_t j = i;
    while (j < n && line[j] == ' ') ++j;
    if (j < n && line[j] == '/') {
      ++j;
      while (j < n && line[j] == ' ') ++j;
      if (j < n && is_digit(line[j])) {
        (void)next_token(line, j);
        i = j;
      }
    }
    // "... scale from 8.0 to 4.0": the value after "to" is the scale it went to.
    const std::string_view name =
        key.size() == 1 && key.last_id() == Word::to && last_name == "scale_from"
            ? std::string_view("scale")
            : canonical(key);
    last_name = name;
    if (name.empty() && is_alpha(t.text.back())) {
      key.add(t.text);  // "number of nan iterations": a NaN that completes no key is a word
      continue;
    }
    if (!name.empty()) add(out, name, t.text);
    key.clear();
  }
  // An overflow in words counts when the line is a loss scaler's: it skips the step or names
  // the scale ("overflow dump: device=5" is a dump record, not a step).
  auto named = [&](std::string_view name) {
    return std::any_of(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                       [&](const auto& f) { return f.first == name; });
  };
  if (!overflow_word.empty() && !named("overflow") &&
      (skipping || named("scale") || named("scale_from"))) {
    out.emplace_back("overflow", overflow_word);
  }
  // A dynamic loss scaler lowers its scale only on an overflow: "Reducing dynamic loss scale
  // from 8.0 to 4.0" (DeepSpeed's fused optimizer, after its "Grad overflow on iteration N").
  if (!reducing_word.empty() && !named("overflow") && named("scale_from") && named("scale")) {
    out.emplace_back("overflow", reducing_word);
  }
}

// What the fields imply beyond the line's bytes, from their values.
void add_implied(StepFields& out, size_t first) {
  auto named = [&](std::string_view name) {
    return std::any_of(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                       [&](const auto& f) { return f.first == name; });
  };
  // Megatron's training_log prints a loss only when its average over the interval is above 0
  // (`if avg > 0.0`): a NaN loss is left out, and so is that of an interval whose iterations
  // were all skipped (nothing averaged). So its iteration line (the one that counts NaN
  // iterations) with no loss and no skipped iteration had a NaN loss.
  if (named("nan_iterations") && !named("loss")) {
    const auto skipped = std::find_if(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                                      [](const auto& f) { return f.first == "overflow"; });
    if (skipped != out.end() && skipped->second == "0") out.emplace_back("loss", "nan");
  }
}

}  // namespace

void read_step_fields(std::string_view line, StepFields& out) {
  const size_t first = out.size();
  read_fields(line, out);
  add_implied(out, first);
}

const StepFields& StepFieldReader::read(std::string_view line) {
  fields_.clear();
  if (const std::vector<Place>* places = places_.find(line)) {
    for (const Place& p : *places) fields_.emplace_back(p.name, line.substr(p.offset, p.size));
  } else {
    read_fields(line, fields_);
    std::vector<Place> found;
    for (const auto& [name, value] : fields_)
      found.push_back({name, static_cast<size_t>(value.data() - line.data()), value.size()});
    places_.keep(line, std::move(found));
  }
  add_implied(fields_, 0);
  return fields_;
}

}  // namespace faultd
