#include <catch2/catch.hpp>

#include <string>

#include "daemon/config/flight_recorder_source_config.hpp"
#include "daemon/config/kmsg_source_config.hpp"
#include "daemon/config/overflow_dump_source_config.hpp"

using namespace faultd;

namespace {

// Parses `text` as the source entry of a file named cfg.yaml in /etc/faultd.
template <typename Loader>
auto load(const std::string& text, Loader loader, std::string& errors) {
  ErrorList list;
  yaml::Ctx ctx{"/etc/faultd/cfg.yaml", &list};
  auto node = yaml::load_text(text, ctx);
  REQUIRE(node.has_value());
  auto out = loader(*node, "src", "/etc/faultd", ctx);
  errors = list.to_string();
  return out;
}

}  // namespace

TEST_CASE("load_kmsg_source: defaults, every key, and errors with positions", "[config]") {
  std::string errors;
  auto c = load("{ name: src, type: kmsg }", load_kmsg_source, errors);
  REQUIRE(c.has_value());
  CHECK(errors.empty());
  CHECK(c->name == "src");
  CHECK(c->path == "/dev/kmsg");
  CHECK(c->boot_id_path == "/proc/sys/kernel/random/boot_id");

  c = load(
      "name: src\ntype: kmsg\npath: fixtures/kmsg\nboot_id_path: /tmp/boot\npoll_interval: 2s\n"
      "max_records_per_poll: 10\n",
      load_kmsg_source, errors);
  REQUIRE(c.has_value());
  CHECK(c->path == "/etc/faultd/fixtures/kmsg");
  CHECK(c->boot_id_path == "/tmp/boot");
  CHECK(c->poll_interval == std::chrono::seconds(2));
  CHECK(c->max_records_per_poll == 10);

  c = load("name: src\ntype: kmsg\nbogus: 1\npoll_interval: 1ms\nmax_records_per_poll: 0\n",
           load_kmsg_source, errors);
  CHECK_FALSE(c.has_value());
  CHECK(errors.find("/etc/faultd/cfg.yaml:3:1: unknown key 'bogus'") != std::string::npos);
  CHECK(errors.find("/etc/faultd/cfg.yaml:4:16: poll_interval must be at least 10ms") !=
        std::string::npos);
  CHECK(errors.find("/etc/faultd/cfg.yaml:5:") != std::string::npos);
}

TEST_CASE("load_overflow_dump_source: root required, keys and errors with positions", "[config]") {
  std::string errors;
  auto c = load("{ name: src, type: overflow_dump, root: /var/log/npu/overflow/ }",
                load_overflow_dump_source, errors);
  REQUIRE(c.has_value());
  CHECK(c->root == "/var/log/npu/overflow");
  CHECK(c->scan_interval == std::chrono::seconds(10));
  CHECK(c->max_directories == 4096);

  c = load(
      "name: src\ntype: overflow_dump\nroot: dumps\nscan_interval: 500ms\nsettle: 5s\n"
      "max_files_per_poll: 7\nmax_directories: 100\n",
      load_overflow_dump_source, errors);
  REQUIRE(c.has_value());
  CHECK(c->root == "/etc/faultd/dumps");
  CHECK(c->scan_interval == std::chrono::milliseconds(500));
  CHECK(c->settle == std::chrono::seconds(5));
  CHECK(c->max_files_per_poll == 7);
  CHECK(c->max_directories == 100);

  c = load("{ name: src, type: overflow_dump }", load_overflow_dump_source, errors);
  CHECK_FALSE(c.has_value());
  CHECK(errors.find("/etc/faultd/cfg.yaml:1:1: overflow_dump source 'src' needs a root") !=
        std::string::npos);

  c = load("name: src\ntype: overflow_dump\nroot: /d/*/x\npaths: [a]\n", load_overflow_dump_source,
           errors);
  CHECK_FALSE(c.has_value());
  CHECK(errors.find("/etc/faultd/cfg.yaml:3:7: root is a directory, not a glob") !=
        std::string::npos);
  CHECK(errors.find("/etc/faultd/cfg.yaml:4:1: unknown key 'paths'") != std::string::npos);
}

TEST_CASE("load_flight_recorder_source: prefix required, keys and errors with positions",
          "[config]") {
  std::string errors;
  auto c = load("{ name: src, type: flight_recorder, prefix: /var/log/train/nccl_trace_rank_ }",
                load_flight_recorder_source, errors);
  REQUIRE(c.has_value());
  CHECK(c->prefix == "/var/log/train/nccl_trace_rank_");
  CHECK(c->scan_interval == std::chrono::seconds(5));
  CHECK(c->ranks_per_node == 8);
  CHECK(c->max_dump_bytes == size_t{16} << 20);

  c = load(
      "name: src\ntype: flight_recorder\nprefix: fr/hccl_trace_rank_\nscan_interval: 500ms\n"
      "settle: 3s\nmax_dump_bytes: 4096\nmax_ranks: 64\nranks_per_node: 16\n",
      load_flight_recorder_source, errors);
  REQUIRE(c.has_value());
  CHECK(c->prefix == "/etc/faultd/fr/hccl_trace_rank_");
  CHECK(c->scan_interval == std::chrono::milliseconds(500));
  CHECK(c->settle == std::chrono::seconds(3));
  CHECK(c->max_dump_bytes == 4096);
  CHECK(c->max_ranks == 64);
  CHECK(c->ranks_per_node == 16);

  c = load("{ name: src, type: flight_recorder }", load_flight_recorder_source, errors);
  CHECK_FALSE(c.has_value());
  CHECK(errors.find("/etc/faultd/cfg.yaml:1:1: flight_recorder source 'src' needs a prefix") !=
        std::string::npos);

  c = load("name: src\ntype: flight_recorder\nprefix: /d/\nranks_per_node: 0\nroot: x\n",
           load_flight_recorder_source, errors);
  CHECK_FALSE(c.has_value());
  CHECK(errors.find("/etc/faultd/cfg.yaml:3:9: prefix is the dump files' path") !=
        std::string::npos);
  CHECK(errors.find("/etc/faultd/cfg.yaml:4:17:") != std::string::npos);
  CHECK(errors.find("/etc/faultd/cfg.yaml:5:1: unknown key 'root'") != std::string::npos);
}
