// Data that is not the project's and is never copied into it: MindCluster's real catalogues
// (faultCode.json, faultCustomization.json, FaultDiag's kg-config.json) are read from the shared
// directory beside the project's root, <source dir>/../shared/data/mindcluster/, or from
// $FAULTD_SHARED_DIR/data/mindcluster/ when that variable is set.
//
// A test case that needs them starts with SKIP_WITHOUT_MINDCLUSTER(): when they are absent it
// warns, saying what was skipped and why, and returns. The accuracy tools' dumps and result
// tables (data/compare/) work the same way, with SKIP_WITHOUT_COMPARE_FIXTURE(path). The message
// matches the ctest SKIP_REGULAR_EXPRESSION set in tests/CMakeLists.txt, so ctest reports the case
// as skipped.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace faultd::testing {

inline std::filesystem::path shared_dir() {
  const char* env = std::getenv("FAULTD_SHARED_DIR");
  if (env != nullptr && *env != '\0') return std::filesystem::path(env);
  return (std::filesystem::path(FAULTD_SOURCE_DIR) / ".." / "shared").lexically_normal();
}

inline std::filesystem::path mindcluster_dir() { return shared_dir() / "data" / "mindcluster"; }

// A MindCluster file by name, e.g. mindcluster_file("kg-config.json").
inline std::string mindcluster_file(const std::string& name) {
  return (mindcluster_dir() / name).string();
}

// The three files the tests read, not just the directory.
inline bool has_mindcluster() {
  for (const char* name : {"faultCode.json", "faultCustomization.json", "kg-config.json"}) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(mindcluster_dir() / name, ec)) return false;
  }
  return true;
}

inline std::string mindcluster_skip_message() {
  return "skipped: MindCluster catalogues not found at " + mindcluster_dir().string() +
         " (set FAULTD_SHARED_DIR to the shared directory)";
}

// The accuracy tools' real dumps and result tables (data/compare/, see its README), for the
// compare component's tests.
inline std::filesystem::path compare_fixture(const std::string& relative) {
  return shared_dir() / "data" / "compare" / relative;
}

inline bool has_compare_fixture(const std::string& relative) {
  std::error_code ec;
  return std::filesystem::exists(compare_fixture(relative), ec);
}

inline std::string compare_fixture_skip_message(const std::string& relative) {
  return "skipped: compare fixture not found: " + compare_fixture(relative).string() +
         " (set FAULTD_SHARED_DIR to the shared directory)";
}

}  // namespace faultd::testing

// Returns from the test case, with a warning that says so, when the catalogues are absent.
#define SKIP_WITHOUT_MINDCLUSTER()                         \
  do {                                                     \
    if (!::faultd::testing::has_mindcluster()) {           \
      WARN(::faultd::testing::mindcluster_skip_message()); \
      return;                                              \
    }                                                      \
  } while (false)

// Returns from the test case, with a warning that says so, when a compare fixture is absent.
#define SKIP_WITHOUT_COMPARE_FIXTURE(relative)                         \
  do {                                                                 \
    if (!::faultd::testing::has_compare_fixture(relative)) {           \
      WARN(::faultd::testing::compare_fixture_skip_message(relative)); \
      return;                                                          \
    }                                                                  \
  } while (false)
