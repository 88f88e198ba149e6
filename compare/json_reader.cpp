#include "compare/json_reader.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace faultd::compare {

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

namespace {

struct ParseFailure {
  size_t offset;
  bool truncated;
  std::string what;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}
  Parser(std::string_view text, std::string_view member, const MemberSink* sink)
      : text_(text), stream_member_(member), sink_(sink) {}

  void parse_document(JsonValue& out) {
    skip_space();
    parse_value(out, 0);
    skip_space();
    if (pos_ != text_.size()) fail("extra data after the JSON value");
  }

  std::vector<size_t> path_;  // open containers' current indices; unwound only on success

 private:
  [[noreturn]] void fail(const std::string& what) { throw ParseFailure{pos_, false, what}; }
  [[noreturn]] void end() { throw ParseFailure{pos_, true, "unexpected end of input"}; }

  char peek() {
    if (pos_ >= text_.size()) end();
    return text_[pos_];
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t'))
      ++pos_;
  }

  void expect_word(std::string_view word) {
    for (char c : word) {
      if (pos_ >= text_.size()) end();
      if (text_[pos_] != c) fail("invalid literal");
      ++pos_;
    }
  }

  void parse_value(JsonValue& out, size_t depth) {
    if (depth > kMaxJsonDepth) fail("nesting too deep");
    const char c = peek();
    switch (c) {
      case '{':
        parse_object(out, depth);
        return;
      case '[':
        parse_array(out, depth);
        return;
      case '"':
        out.type = JsonValue::Type::String;
        parse_string(out.text);
        return;
      case 't':
        expect_word("true");
        out.type = JsonValue::Type::Bool;
        out.boolean = true;
        return;
      case 'f':
        expect_word("false");
        out.type = JsonValue::Type::Bool;
        return;
      case 'n':
        expect_word("null");
        return;
      case 'N':  // Python's json.dumps writes these for non-finite floats
        expect_word("NaN");
        out.type = JsonValue::Type::Float;
        out.number = std::numeric_limits<double>::quiet_NaN();
        return;
      case 'I':
        expect_word("Infinity");
        out.type = JsonValue::Type::Float;
        out.number = std::numeric_limits<double>::infinity();
        return;
      default:
        parse_number(out);
    }
  }

  void parse_number(JsonValue& out) {
    const size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') {
      ++pos_;
      if (pos_ < text_.size() && text_[pos_] == 'I') {
        expect_word("Infinity");
        out.type = JsonValue::Type::Float;
        out.number = -std::numeric_limits<double>::infinity();
        return;
      }
    }
    bool is_float = false;
    size_t digits = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c >= '0' && c <= '9') {
        ++digits;
      } else if (c == '.' || c == 'e' || c == 'E' || ((c == '+' || c == '-') && pos_ > start)) {
        is_float = true;
      } else {
        break;
      }
      ++pos_;
    }
    if (digits == 0) {
      if (pos_ >= text_.size()) end();
      fail("invalid value");
    }
    const std::string_view token = text_.substr(start, pos_ - start);
    if (pos_ >= text_.size() && !at_top_) end();  // a number cut by the end may be incomplete
    if (!is_float) {
      int64_t v = 0;
      const auto r = std::from_chars(token.data(), token.data() + token.size(), v);
      if (r.ec == std::errc() && r.ptr == token.data() + token.size()) {
        out.type = JsonValue::Type::Int;
        out.integer = v;
        out.number = static_cast<double>(v);
        return;
      }
    }
    // from_chars for double rejects a leading '+' in exponents only; strtod needs a terminator.
    const std::string copy(token);
    char* stop = nullptr;
    const double v = std::strtod(copy.c_str(), &stop);
    if (stop != copy.c_str() + copy.size()) {
      pos_ = start;
      fail("invalid number");
    }
    out.type = JsonValue::Type::Float;
    out.number = v;
  }

  static void append_utf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  uint32_t hex4() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = peek();
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        fail("invalid \\u escape");
      }
      ++pos_;
    }
    return v;
  }

  void parse_string(std::string& out) {
    ++pos_;  // the opening quote
    for (;;) {
      const char c = peek();
      ++pos_;
      if (c == '"') return;
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = peek();
      ++pos_;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && pos_ + 1 < text_.size() && text_[pos_] == '\\' &&
              text_[pos_ + 1] == 'u') {
            pos_ += 2;
            const uint32_t low = hex4();
            if (low >= 0xDC00 && low < 0xE000) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            } else {
              append_utf8(out, cp);
              cp = low;
            }
          }
          append_utf8(out, cp);
          break;
        }
        default:
          fail("invalid escape");
      }
    }
  }

  void parse_array(JsonValue& out, size_t depth) {
    out.type = JsonValue::Type::Array;
    ++pos_;
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      out.items.emplace_back();
      path_.push_back(out.items.size() - 1);
      skip_space();
      parse_value(out.items.back(), depth + 1);
      path_.pop_back();
      skip_space();
      const char c = peek();
      ++pos_;
      if (c == ']') return;
      if (c != ',') {
        --pos_;
        fail("expected ',' or ']'");
      }
    }
  }

  void parse_object(JsonValue& out, size_t depth) {
    out.type = JsonValue::Type::Object;
    ++pos_;
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      skip_space();
      if (peek() != '"') fail("expected a member name");
      std::string key;
      parse_string(key);
      skip_space();
      if (peek() != ':') fail("expected ':'");
      ++pos_;
      skip_space();
      const bool stream_this = sink_ != nullptr && depth == 0 && key == stream_member_;
      out.members.push_back(JsonMember{std::move(key), JsonValue{}});
      path_.push_back(out.members.size() - 1);
      if (stream_this) streamed_ = &out.members.back().second;
      parse_value(out.members.back().second, depth + 1);
      path_.pop_back();
      if (stream_this) streamed_ = nullptr;  // done; its address may be reused
      if (&out == streamed_) {  // a complete entry of the streamed object: hand it over
        JsonMember done = std::move(out.members.back());
        out.members.pop_back();
        (*sink_)(std::move(done.first), std::move(done.second));
      }
      skip_space();
      const char c = peek();
      ++pos_;
      if (c == '}') return;
      if (c != ',') {
        --pos_;
        fail("expected ',' or '}'");
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string_view stream_member_;
  const MemberSink* sink_ = nullptr;
  const JsonValue* streamed_ = nullptr;  // the object whose members go to the sink

 public:
  bool at_top_ = false;  // a bare number may end exactly at the end of the text
};

}  // namespace

namespace {

JsonParse run(Parser& parser, std::string_view text) {
  JsonParse result;
  // A document that is a bare number ends at the end of the text; any other number must not.
  size_t first = 0;
  while (first < text.size() &&
         (text[first] == ' ' || text[first] == '\n' || text[first] == '\r' || text[first] == '\t'))
    ++first;
  parser.at_top_ = first < text.size() && text[first] != '{' && text[first] != '[';
  try {
    parser.parse_document(result.value);
  } catch (const ParseFailure& f) {
    JsonError e;
    e.offset = f.offset;
    e.truncated = f.truncated;
    const size_t upto = std::min(f.offset, text.size());
    for (size_t i = 0; i < upto; ++i) {
      if (text[i] == '\n') {
        ++e.line;
        e.column = 1;
      } else {
        ++e.column;
      }
    }
    e.message = f.what + " (line " + std::to_string(e.line) + ", column " +
                std::to_string(e.column) + ", byte " + std::to_string(e.offset) + ")";
    result.error = std::move(e);
    result.open_path = parser.path_;
  }
  return result;
}

}  // namespace

JsonParse parse_json(std::string_view text) {
  Parser parser(text);
  return run(parser, text);
}

JsonParse parse_json_streaming(std::string_view text, std::string_view member,
                               const MemberSink& sink) {
  Parser parser(text, member, &sink);
  return run(parser, text);
}

}  // namespace faultd::compare
