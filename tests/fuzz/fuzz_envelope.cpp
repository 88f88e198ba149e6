// Fuzzes the envelope recognisers and the device and process spellings (rules/envelope.hpp), and
// the step-line tokenizer (rules/step_fields.hpp): whatever a log writer puts on a line,
// unwrapping ends, the message is a part of the line (or of its decoded form, never longer than
// the line), an id found is digits (or, for a GPU, a PCI address) within the line and a valid
// device id, and every step field is a known name with a non-empty value within the line (or the
// NaN loss of a Megatron line that prints none), each name at most once.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/core/types.hpp"
#include "rules/envelope.hpp"
#include "rules/step_fields.hpp"
#include "tests/support/fuzz_support.hpp"

namespace {

using namespace faultd;

bool within(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

bool digits(std::string_view s) {
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  Envelope env;
  unwrap(line, env);
  FAULTD_FUZZ_CHECK(env.layers <= 8);
  FAULTD_FUZZ_CHECK(within(env.message, line) || within(env.message, env.decoded));
  FAULTD_FUZZ_CHECK(env.message.size() <= line.size());
  const std::string_view level = line_level(env.message);
  FAULTD_FUZZ_CHECK(within(level, env.message));
  for (std::string_view id : {torch_npu_device(line), line_pid(line)}) {
    FAULTD_FUZZ_CHECK(within(id, line) && digits(id));
  }
  const std::string_view device = line_device(line);
  FAULTD_FUZZ_CHECK(within(device, line) &&
                    (device.empty() || digits(device) || is_valid_device_id(device)));
  FAULTD_FUZZ_CHECK(digits(path_device(env.path)));
  StepFields fields;
  read_step_fields(line, fields);
  FAULTD_FUZZ_CHECK(fields.size() <= 8);
  for (const auto& [name, value] : fields) {
    FAULTD_FUZZ_CHECK(!value.empty() &&
                      (within(value, line) || (name == "loss" && value == "nan")));
    FAULTD_FUZZ_CHECK(name == "step" || name == "loss" || name == "grad_norm" || name == "scale" ||
                      name == "scale_from" || name == "overflow" || name == "nan_iterations" ||
                      name == "step_time");
  }
  // A reader that kept this line's shape gives, for a line of the same shape (its digits
  // rotated), what that line gives alone.
  std::string other(line);
  for (char& c : other) {
    if (c >= '0' && c <= '9') c = static_cast<char>('0' + (c - '0' + 7) % 10);
  }
  StepFieldReader reader;
  FAULTD_FUZZ_CHECK(reader.read(line) == fields);
  StepFields alone;
  read_step_fields(other, alone);
  FAULTD_FUZZ_CHECK(reader.read(other) == alone);
  return 0;
}
