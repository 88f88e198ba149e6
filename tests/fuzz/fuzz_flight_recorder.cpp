// Fuzzes the Flight Recorder reader (parse_dump: the data-only pickle machine and the dump's
// layout). It must give a dump or a PickleError / FormatError, never a crash; a dump it gives
// must compare with itself without naming anyone (two identical ranks wait for nobody).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "collectors/flight_recorder/flight_recorder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace faultd::flight_recorder;
  try {
    Dump d = parse_dump(std::string_view(reinterpret_cast<const char*>(data), size));
    const auto waves = find_wavefronts({{0, d}, {1, d}});
    for (const auto& w : waves) {
      if (!w.behind.empty()) std::abort();  // identical ranks: nobody is behind
    }
  } catch (const faultd::pickle::PickleError&) {
  } catch (const FormatError&) {
  }
  return 0;
}
