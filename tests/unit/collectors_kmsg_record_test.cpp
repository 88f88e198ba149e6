#include <catch2/catch.hpp>

#include <string>

#include "collectors/kmsg/kmsg_source.hpp"

using namespace faultd;

TEST_CASE("parse_kmsg_record: headers, messages and what is not a record", "[collectors][kmsg]") {
  auto r = parse_kmsg_record(
      "4,1931,1126635824,-;NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU "
      "has fallen off the bus.");
  REQUIRE(r.has_value());
  CHECK(r->prio == 4);
  CHECK(r->seq == 1931);
  CHECK(r->usec == 1126635824);
  CHECK(r->message ==
        "NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
        "bus.");
  // Newer kernels add fields after the flags (caller id); a ';' in the message stays in it.
  auto extra = parse_kmsg_record("6,17,42,c,caller=T1;a;b");
  REQUIRE(extra.has_value());
  CHECK(extra->seq == 17);
  CHECK(extra->message == "a;b");
  auto empty = parse_kmsg_record("6,18,43,-;");
  REQUIRE(empty.has_value());
  CHECK(empty->message.empty());

  const char* not_records[] = {
      "",
      " SUBSYSTEM=pci",  // continuation line (dictionary)
      " DEVICE=+pci:0000:05:00.0",
      "4,1931,1126635824;no flags",
      "4,x,1,-;bad seq",
      "-4,1,1,-;negative",
      "4,1,,-;empty time",
      "plain text without header",
      "4,99999999999999999999999,1,-;seq overflows",
  };
  for (const char* line : not_records) {
    INFO(line);
    CHECK_FALSE(parse_kmsg_record(line).has_value());
  }
}

TEST_CASE("format_kmsg_line: the kmsg/pstore prefix of docs/log-formats.md", "[collectors][kmsg]") {
  KmsgRecord r;
  r.prio = 4;
  r.usec = 1126635824;
  r.message = "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus";
  CHECK(format_kmsg_line(r) ==
        "<4>[ 1126.635824] NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus");
  r.prio = 3;
  r.usec = 8108512;
  r.message = "x";
  CHECK(format_kmsg_line(r) == "<3>[    8.108512] x");
  r.usec = 251681794072;  // wider than five columns: not cut
  CHECK(format_kmsg_line(r) == "<3>[251681.794072] x");
}

TEST_CASE("boot_identity: stable, ignores the newline, never 0", "[collectors][kmsg]") {
  const auto a = boot_identity("d28a220d-67c1-4816-81dd-47f8956d9c26");
  CHECK(a == boot_identity("d28a220d-67c1-4816-81dd-47f8956d9c26\n"));
  CHECK(a != boot_identity("d28a220d-67c1-4816-81dd-47f8956d9c27"));
  CHECK(a != 0);
  // FNV-1a 64 of the empty string: fixed, so a stored position survives an upgrade.
  CHECK(boot_identity("") == 14695981039346656037ull);
}
