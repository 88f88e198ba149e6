// Fault codes: one normalisation and one acceptance rule for every reader.
#include <catch2/catch.hpp>

#include "daemon/core/fault_code.hpp"

using namespace faultd;

TEST_CASE("fault codes: normalised, validated, hex codes and labels", "[core][code]") {
  CHECK(normalize_code("0x80818c00") == "80818C00");
  CHECK(normalize_code("0X80E18402") == "80E18402");
  CHECK(normalize_code("xid79") == "XID79");
  CHECK(normalize_code("0x") == "0X");  // too short to carry a prefix
  CHECK(is_valid_code("80818C00"));
  CHECK(is_valid_code("XID79"));
  CHECK(is_valid_code("EE9999"));
  CHECK(is_valid_code("a.b_c-1") == false);  // lower case: normalise first
  CHECK_FALSE(is_valid_code(""));
  CHECK_FALSE(is_valid_code(std::string(33, 'A')));
  CHECK(is_valid_code(std::string(32, 'A')));
  CHECK_FALSE(is_valid_code("80818C00; rm -rf /"));
  CHECK(hex_code("0xa8028801") == "A8028801");
  CHECK(hex_code("56000005") == "56000005");
  CHECK(hex_code("NA") == "");
  CHECK(hex_code("") == "");
  CHECK(hex_code("12345678901234567") == "");  // over 16 digits
  CHECK(code_label("80818c00") == "80818C00");
  CHECK(code_label("bad code") == "invalid");
  CHECK(code_label("").empty());  // no code is not a wrong code
}
