#include "rules/step_fields.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>

namespace faultd {
namespace {

using namespace std::string_view_literals;

constexpr size_t kMaxKeyWords = 6;  // a key is its last few words; prose before it is dropped

// ASCII only, locale-free: a step line is read for every training step.
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// `a` equals the lower-case word `b`, whatever `a`'s case.
bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == y; });
}

// Ends the current key: a cell separator or the end of a sentence.
// A '/' separates path components ("overflow/3/1"), which are no key.
bool is_boundary(char c) {
  return c == ',' || c == '|' || c == '{' || c == '}' || c == ';' || c == '/';
}

// The words of the key before a value, lower-cased by comparison (iequals), at most the last
// kMaxKeyWords.
class Key {
 public:
  void add(std::string_view word) {
    if (size_ == kMaxKeyWords) {
      std::move(words_.begin() + 1, words_.end(), words_.begin());
      --size_;
    }
    words_[size_++] = word;
  }
  void clear() { size_ = 0; }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  std::string_view word(size_t i) const { return words_[i]; }
  std::string_view last() const { return words_[size_ - 1]; }

  // The key ends with these words.
  bool ends_with(std::initializer_list<std::string_view> tail) const {
    if (tail.size() > size_) return false;
    // From the last word back: most tails differ there.
    size_t i = size_;
    return std::all_of(std::rbegin(tail), std::rend(tail),
                       [&](std::string_view w) { return iequals(words_[--i], w); });
  }
  bool has(std::string_view w) const {
    return std::any_of(words_.begin(), words_.begin() + static_cast<std::ptrdiff_t>(size_),
                       [&](std::string_view x) { return iequals(x, w); });
  }

 private:
  std::array<std::string_view, kMaxKeyWords> words_{};
  size_t size_ = 0;
};

// "IDLoss", "CELoss": a word that ends in a capitalised "Loss" after a letter.
bool camel_loss(std::string_view w) {
  return w.size() > 4 && w.substr(w.size() - 4) == "Loss" && is_alpha(w[w.size() - 5]);
}

// Whether a key may name a step field: each form canonical() knows ends with one of these words
// or is led by "loss". Most keys of a step line (learning rate, consumed samples, global batch
// size) are none of them, and are turned away here rather than by every form in turn.
bool may_be_field(const Key& k) {
  const std::string_view last = k.last();
  for (std::string_view w :
       {"loss"sv, "scale"sv, "norm"sv, "gnorm"sv, "iterations"sv, "iteration"sv, "iter"sv, "step"sv,
        "overflow"sv, "cond"sv, "from"sv, "to"sv, "ms"sv, "time"sv, "updates"sv}) {
    if (iequals(last, w)) return true;
  }
  return camel_loss(last) || iequals(k.word(0), "loss");
}

// The detectors' name for a key, or empty when the key is not one of the step fields. Longer and
// more specific forms are tried first ("step time" before "step").
std::string_view canonical(const Key& k) {
  if (k.empty() || !may_be_field(k)) return {};
  if (k.ends_with({"nan", "iterations"})) return "nan_iterations";
  if (k.ends_with({"skipped", "iterations"})) return "overflow";
  if (k.ends_with({"overflow"}) || k.ends_with({"overflow", "cond"})) return "overflow";
  if (k.ends_with({"attempted", "loss", "scale"}) || k.ends_with({"scale", "from"})) {
    return "scale_from";
  }
  if (k.ends_with({"scale", "to"}) || k.ends_with({"reducing", "to"}) ||
      (k.ends_with({"adjust", "to"}) && k.has("scale"))) {
    return "scale";
  }
  if (k.ends_with({"loss", "scale"}) || k.ends_with({"grad", "scale"}) ||
      k.ends_with({"cur", "scale"}) || (k.size() == 1 && k.ends_with({"scale"}))) {
    return "scale";
  }
  if (k.ends_with({"time", "per", "iteration", "ms"}) || k.ends_with({"per", "step", "time"}) ||
      k.ends_with({"step", "time"})) {
    return "step_time";
  }
  if (k.ends_with({"iteration"}) || k.ends_with({"iter"}) || k.ends_with({"step"}) ||
      k.ends_with({"num", "updates"})) {
    return "step";
  }
  if (k.ends_with({"grad", "norm"}) || k.ends_with({"gnorm"}) || k.ends_with({"global", "norm"}) ||
      k.ends_with({"total", "norm"}) || (k.size() == 1 && k.ends_with({"norm"}))) {
    return "grad_norm";
  }
  for (std::string_view other :
       {"scale"sv, "scaler"sv, "valid"sv, "val"sv, "eval"sv, "test"sv, "nll"sv}) {
    if (k.has(other)) return {};
  }
  // lm loss, train_loss, Training Loss; loss_net, loss total (a short key led by "loss"); a
  // camel-case compound that ends the word in "Loss" (IDLoss, CELoss, TotalLoss).
  if (iequals(k.last(), "loss") || (k.size() <= 2 && iequals(k.word(0), "loss")) ||
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
  while (i < n && (is_alpha(line[i]) || is_digit(line[i]))) ++i;
  std::string_view word = line.substr(begin, i - begin);
  // A progress bar redrawn with '\r' runs into the next output: Keras's "- loss: nanEpoch
  // 1/1000". A value word followed by a capital letter ends before it.
  for (std::string_view v : {"nan"sv, "inf"sv}) {
    const size_t sign = word.size() > 0 && (word[0] == '-' || word[0] == '+') ? 1 : 0;
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

void add(StepFields& out, std::string_view name, std::string_view value) {
  const bool known =
      std::any_of(out.begin(), out.end(), [&](const auto& f) { return f.first == name; });
  if (!known) out.emplace_back(name, value);
}

}  // namespace

void read_step_fields(std::string_view line, StepFields& out) {
  const size_t first = out.size();
  Key key;
  std::string_view overflow_word;  // an overflow the line reports in words
  std::string_view reducing_word;  // "Reducing dynamic loss scale from 8.0 to 4.0"
  bool skipping = false;           // "Skipping step": what a scaler does on an overflow
  std::string_view last_name;      // the field the previous value gave
  const size_t n = line.size();
  for (size_t i = 0; i < n;) {
    const char c = line[i];
    if (is_boundary(c) || (c == '.' && (i + 1 == n || line[i + 1] == ' ')) || c == '!') {
      key.clear();  // "Skipping step. Attempted loss scale: 16": the key starts after the '.'
      ++i;
      continue;
    }
    if (!is_alpha(c) && !is_digit(c) && !((c == '-' || c == '+' || c == '.') && i + 1 < n)) {
      ++i;  // blanks, quotes, brackets, ':' and '=' separate tokens
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
      if (iequals(t.text, "overflow")) overflow_word = t.text;
      if (iequals(t.text, "reducing")) reducing_word = t.text;
      if (t.text.size() >= 4 && iequals(t.text.substr(0, 4), "skip")) skipping = true;
      key.add(t.text);
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
        key.size() == 1 && iequals(key.last(), "to") && last_name == "scale_from"
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

}  // namespace faultd
