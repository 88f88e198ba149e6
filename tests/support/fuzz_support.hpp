// Shared by the fuzz targets: a scratch directory per fuzzing process (loaders that take a path
// get their input through a file in it) and a check that aborts, so that a broken invariant is a
// crash libFuzzer records with its input, like a sanitizer report.
//
// Lifecycle: the scratch directory is made on first use and lives as long as the process (a
// fuzzer never returns from its loop; the OS temp cleaner reclaims it). Threading: libFuzzer
// calls a target from one thread; nothing here is thread-safe.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace faultd::fuzz {

inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::string templ = (std::filesystem::temp_directory_path() / "faultd-fuzz-XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr) std::abort();
    return std::filesystem::path(templ);
  }();
  return dir;
}

// Writes bytes to `name` in the scratch directory (replacing it) and returns the full path.
inline std::string write_scratch(const std::string& name, std::string_view bytes) {
  const auto path = scratch_dir() / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path.string();
}

// Like assert(), but also in release builds, and with the broken invariant named.
#define FAULTD_FUZZ_CHECK(cond)                                                         \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

}  // namespace faultd::fuzz
