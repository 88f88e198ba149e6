// Text that a log writer chose (file names, evidence, reasons) on its way to an operator's
// terminal or a log line: control bytes would set the terminal's title, erase lines, forge
// table rows or hide what follows. Escaped instead, visibly and reversibly.
#pragma once

#include <string>
#include <string_view>

namespace faultd {

// `text` with C0 control bytes, DEL, C1 controls (U+0080..U+009F) and bytes that are not UTF-8
// written as \xNN; '\' itself as "\\" so that an escape cannot be forged. Valid UTF-8 text
// outside those ranges is kept as it is.
std::string terminal_safe(std::string_view text);

}  // namespace faultd
