// terminal_safe: what a log writer's text can do to an operator's terminal (security audit F17).
#include <catch2/catch.hpp>

#include <string>

#include "daemon/core/terminal_text.hpp"

using namespace faultd;

TEST_CASE("terminal_safe escapes control bytes and keeps text", "[core][terminal]") {
  // The audit's file name: set the title, erase the line, return, forge a row, hide the rest.
  const std::string name = "x\x1b]0;pwned-title\x07\x1b[2K\r9 forged row\x1b[8m.log";
  CHECK(terminal_safe(name) == "x\\x1b]0;pwned-title\\x07\\x1b[2K\\x0d9 forged row\\x1b[8m.log");
  CHECK(terminal_safe("a\nb\tc\x7f") == "a\\x0ab\\x09c\\x7f");
  // C1 controls (CSI as U+009B), a lone continuation byte, a truncated sequence, an overlong
  // '/', a surrogate: escaped byte by byte.
  CHECK(terminal_safe("\xc2\x9b"
                      "2J") == "\\xc2\\x9b2J");
  CHECK(terminal_safe("\x80") == "\\x80");
  CHECK(terminal_safe("\xe4\xb8") == "\\xe4\\xb8");
  CHECK(terminal_safe("\xc0\xaf") == "\\xc0\\xaf");
  CHECK(terminal_safe("\xed\xa0\x80") == "\\xed\\xa0\\x80");
  // A backslash is doubled, so "\x1b" typed by the writer is not taken for an escape.
  CHECK(terminal_safe("C:\\x1b") == "C:\\\\x1b");
  // Valid UTF-8 is kept: plain text, Chinese, an emoji, U+00A0.
  const std::string text = "device 3: 数据dump比对 \xf0\x9f\x94\xa5 \xc2\xa0ok";
  CHECK(terminal_safe(text) == text);
  CHECK(terminal_safe("") == "");
}
