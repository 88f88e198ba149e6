// How the reference tools (Python, pandas) spell values in their result tables, in one place:
// a float as Python's repr ("1e-05", "0.1", "1.0"), a list as str(list) ("[32, 3]"), a CSV
// field quoted as pandas' to_csv quotes it. Existing spreadsheets and scripts parse these.
// Lifecycle: pure functions. Threading: none shared.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace faultd::compare {

// repr(float): the shortest text that reads back as the same double; "nan", "inf", "-inf".
std::string python_float_repr(double v);

// str(list of ints): "[]", "[3]", "[32, 3, 224, 224]".
std::string python_list_repr(const std::vector<int64_t>& v);

// A CSV field as the csv module's QUOTE_MINIMAL writes it: quoted (inner quotes doubled) when
// it holds a comma, a quote or a line break. A text cell that a spreadsheet would run as a
// formula (it starts with = + - @, a tab or CR) gets a leading ' first; numbers keep their sign.
std::string csv_field(std::string_view text);

}  // namespace faultd::compare
