// Log lines arrive wrapped: on their way from the program that printed them to the file faultd
// reads, container runtimes, log shippers, launchers and people's tools put their own text
// around them. unwrap() peels the wrappers off, once per candidate line, before any rule looks
// at it, so rules and `level:` see the message as the program printed it, and what a wrapper
// said (stream, host, pid, rank, the path of a collected file) becomes fields.
//
// Recognised, outermost first, repeatedly (docs/log-formats.md §4 has each with its source):
//   - ANSI colour and cursor sequences anywhere in the line (removed);
//   - docker's json-file object {"log":"...","stream":"stderr","time":"..."} (decoded);
//   - a quoted excerpt's "> " (a log pasted into an e-mail reply or a Markdown blockquote);
//   - the CRI format of /var/log/pods: "2024-01-01T00:00:00.123456789Z stderr F ";
//   - syslog and journald prefixes: "Jan  2 03:04:05 host ident[pid]: ", the same with an
//     RFC 3339 time, and the kernel's own "[ 1126.635824] " or "<4>[ 1126.635824] ";
//   - a bare date and time that a collector or launcher put first: " 2025-02-18 12:54 ",
//     "2025-02-18 12:54:03,422 ", "[2025-02-18 12:54:03.422] ", an ISO 8601 time with a colon
//     after it ("2019-06-02T16:13:44.884Z: ", an mpirun --timestamp-output line);
//   - `grep -rn` output of a collected log bundle: "device-2/device-305322_1.log:1859:" (the
//     path must look like a log file or lie in a directory);
//   - launcher prefixes: torchrun "[rank3]: " and "[default3]:", "rank3: ", Ray and vLLM
//     "(RayWorkerWrapper pid=123, ip=10.0.0.1) " and "(pid=1) ", mpirun "[1,0]<stderr>:", a
//     node and local rank "[nccl-e9ef-7d4f-0:3]:";
//   - a tqdm progress bar sharing the line with the message after it
//     ("... 5/10 [00:01<00:01,  4.50it/s]RuntimeError: ...").
// A wrapper is only taken when it is complete; text that merely resembles one stays message.
// Behind any other prefix (an unknown launcher's label: srun -l's "12: ", kubectl logs
// --prefix's "[pod/NAME/CONTAINER] "), the message starts where a known record form starts
// (record_start in envelope.cpp: CANN's "[LEVEL] MODULE(", NCCL's "host:pid:tid [N] ", "NVRM: ",
// Python's "Traceback" and "SomeError: ", or one of the wrappers above), looked for after
// the end of a label within the first 160 bytes; such a label carries nothing faultd reads,
// so a task number is never a device.
//
// Threading: pure functions; an Envelope belongs to its caller.
#pragma once

#include <string>
#include <string_view>

#include "rules/line_shape.hpp"

namespace faultd {

struct Envelope {
  std::string_view message;  // into the line, or into `decoded`
  // What the wrappers said; empty when none said it. Copies, so they outlive `decoded`.
  std::string stream;  // stdout or stderr
  std::string host;
  std::string pid;        // the innermost wrapper's that named one (the printing process)
  std::string outer_pid;  // an outer wrapper's, when an inner one named another (a relay)
  std::string rank;
  std::string path;     // the file a `grep -rn` line came from
  std::string decoded;  // backing store when a wrapper had to be decoded (JSON, ANSI)
  int layers = 0;       // wrappers removed
};

// Fills `env` for `line` (without its newline). `env.message` views `line` or `env.decoded`.
void unwrap(std::string_view line, Envelope& env);

// `line` without its ANSI escape sequences (CSI and OSC forms, anywhere in the line).
std::string without_ansi(std::string_view line);

// The line without launcher prefixes only ("(train pid=1234) ", "[rank7]: ", "rank3: ", ...).
std::string_view strip_launcher_prefix(std::string_view line);

// The line's log level: the first `[WORD]` at the start of the line (after blanks and launcher
// prefixes), e.g. "ERROR" for "(train pid=7) [ERROR] AICPU(...)". Empty when the line has none.
std::string_view line_level(std::string_view line);

// The device of the torch_npu tuple "(PID:n, Device:N, RankID:n)" in `line`, empty when none.
std::string_view torch_npu_device(std::string_view line);

// The process id a CANN or torch_npu line names: "RUNTIME(150840,python)", "[PID: 150840]",
// "(PID:150840, Device:0, RankID:8)". Empty when none.
std::string_view line_pid(std::string_view line);

// The device a line names in one of the documented spellings (docs/log-formats.md §11):
// NCCL's "host:pid:tid [N] " prefix; a key spelled device or dev and id (device_id, deviceId,
// devId, devid, dev_id, Device ID) followed by "=", ":", "-", "[" or blanks (device_id=N,
// device_id: N, deviceId[N], devId N, devid: N, device_id-N); [devid-N], cudaDev N, device ordinal
// N, device(N), device(chipId:N), Device N, Device:N, Device[N], device[N], DEVICE[N], device N,
// device is N, (device=N, NPU N, chipId:N, GPU N, GPU=N, GPU:N, cuda:N, logicDevId[N],
// deviceLogicId[N] or =N, deviceId:N. An id is 1 to 4 digits not followed by more digits, by a
// decimal point and a digit (an IP address, "Device 1.5 GiB") or by a colon and a hex digit (a PCI
// address). A PCI address after "GPU"
// ("The NVIDIA GPU 0000:b3:00.0") is the bus id itself. The first spelling in the line wins.
// Empty when the line names none.
std::string_view line_device(std::string_view line);

// line_device for one source's lines, which a training job prints alike step after step: what
// it finds depends on which bytes are digits, never on which digits they are, so a line of a
// shape read before (rules/line_shape.hpp) names its device at the same place, taken from there
// instead of being looked for again. Gives what line_device gives, whatever the lines.
class LineDeviceReader {
 public:
  std::string_view read(std::string_view line);

 private:
  struct Place {
    size_t offset = 0;
    size_t size = 0;  // 0: the line names none
  };
  ShapeCache<Place> places_;
};

// The device a collected file's path names: a "device-N/" directory. Empty when none.
std::string_view path_device(std::string_view path);

}  // namespace faultd
