// The node's inventory: every spelling of a device resolves to it and nothing else does; a
// discoverer that stops listing a device loses it, and lists it again to bring it back.
#include <catch2/catch.hpp>

#include "daemon/state/inventory.hpp"
#include "tests/support/state_store_fixtures.hpp"

using namespace faultd;
using faultd::testing::at_ms;

namespace {

// GPU 5 of an 8-GPU A800 node (index, bus id of nvidia-smi, UUID and serial as nvidia-smi
// prints them; the UUID and serial are from tests/golden/nvidia-smi-query).
InventoryDevice gpu(const std::string& index, const std::string& bus, const std::string& uuid,
                    const std::string& serial) {
  InventoryDevice d;
  d.id = index;
  d.vendor = "nvidia";
  d.bus_id = bus;
  d.uuid = uuid;
  d.serial = serial;
  return d;
}

InventoryDevice npu(const std::string& id, const std::string& card, const std::string& chip,
                    const std::string& phy, const std::string& bus) {
  InventoryDevice d;
  d.id = id;
  d.vendor = "ascend";
  d.model = "Ascend910";
  d.card = card;
  d.chip = chip;
  d.physical_id = phy;
  d.bus_id = bus;
  return d;
}

Inventory inventory_of(std::vector<InventoryDevice> devices, const std::string& by = "test") {
  Inventory inv;
  inv.merge({by, std::move(devices)}, at_ms(1000));
  return inv;
}

}  // namespace

TEST_CASE("a PCI address in every width and case is one address", "[state][inventory]") {
  for (const char* form : {"0000:3b:00", "0000:3b:00.0", "00000000:3B:00.0", "3b:00.0", "3B:00",
                           "PCI:0000:3b:00", "pci:0000:3B:00.0", "0:3b:0.0"}) {
    INFO(form);
    CHECK(normalize_bdf(form) == "0000:3b:00.0");
  }
  CHECK(normalize_bdf("0000:3b:00.1") == "0000:3b:00.1");
  for (const char* not_one : {"", "3", "cuda:3", "GPU-fd189414", "0000:3b:00.9", "12345:3b:00.0",
                              "0000:3bb:00.0", "a:b:c:d", "Ascend910-3", "0000:3b:000.0"}) {
    INFO(not_one);
    CHECK(normalize_bdf(not_one).empty());
  }
}

TEST_CASE("every name of a GPU resolves to its index", "[state][inventory]") {
  const Inventory inv = inventory_of(
      {gpu("0", "00000000:18:00.0", "GPU-fd189414-e0f6-58a0-7031-fefe0ce43b1d", "1321923001828"),
       gpu("5", "00000000:3B:00.0", "GPU-67fc57fc-34ad-4126-2f66-0b8d29144c75", "1321923001319")});
  for (const char* name :
       {"5", "00000000:3B:00.0", "0000:3b:00", "0000:3b:00.0", "3b:00.0", "3B:00", "PCI:0000:3b:00",
        "GPU-67fc57fc-34ad-4126-2f66-0b8d29144c75", "gpu-67FC57FC-34AD-4126-2F66-0B8D29144C75",
        "1321923001319", "nvidia5", "cuda:5"}) {
    INFO(name);
    CHECK(inv.resolve(name) == "5");
  }
  for (const char* stranger : {"", "4", "50", "0000:3c:00", "GPU-67fc57fc", "1321923001318",
                               "cuda:4", "nvidia", "Ascend910-5", "davinci5"}) {
    INFO(stranger);
    CHECK_FALSE(inv.resolve(stranger));
  }
  CHECK(inv.resolve("0000:18:00") == "0");
}

TEST_CASE("every name of an NPU chip resolves to its logical id", "[state][inventory]") {
  // An A3 card: two chips per NPU, logical ids in table order, physical ids of their own.
  const Inventory inv = inventory_of(
      {npu("0", "0", "0", "0", "0000:9D:00.0"), npu("1", "0", "1", "1", "0000:9F:00.0"),
       npu("2", "1", "0", "8", "0000:A1:00.0"), npu("3", "1", "1", "9", "0000:A3:00.0")});
  for (const char* name : {"3", "1-1", "Ascend910-9", "ascend910-9", "davinci3", "npu:3",
                           "0000:a3:00", "0000:A3:00.0", "a3:00.0"}) {
    INFO(name);
    CHECK(inv.resolve(name) == "3");
  }
  // The card id alone names the card's first chip only when it is that chip's logical id;
  // Ascend910-<logical> is not an alias when the physical id differs.
  CHECK_FALSE(inv.resolve("Ascend910-3"));
  CHECK_FALSE(inv.resolve("1-2"));
  CHECK_FALSE(inv.resolve("9"));
}

TEST_CASE("a name that would move a finding to another device is no alias", "[state][inventory]") {
  // GPU 7's serial is "2", which is GPU 2's index: "2" stays GPU 2.
  Inventory inv = inventory_of(
      {gpu("2", "00000000:20:00.0", "GPU-a", "S-2"), gpu("7", "00000000:70:00.0", "GPU-b", "2")});
  CHECK(inv.resolve("2") == "2");
  // Two devices claiming one serial: the serial names neither.
  inv = inventory_of({gpu("0", "00000000:20:00.0", "GPU-a", "SAME"),
                      gpu("1", "00000000:70:00.0", "GPU-b", "SAME")});
  CHECK_FALSE(inv.resolve("SAME"));
  CHECK(inv.resolve("GPU-b") == "1");
}

TEST_CASE("a device its discoverer stops listing is lost, and returns when listed again",
          "[state][inventory]") {
  Inventory inv;
  CHECK_FALSE(inv.known());
  std::vector<InventoryDevice> eight;
  for (int i = 0; i < 8; ++i)
    eight.push_back(npu(std::to_string(i), std::to_string(i), "0", "", ""));
  auto change = inv.merge({"npu-smi", eight}, at_ms(1000));
  CHECK(change.added.size() == 8);
  CHECK(change.lost.empty());
  CHECK(inv.known());
  CHECK(inv.expected() == 8);
  CHECK(inv.present() == 8);

  auto seven = eight;
  seven.erase(seven.begin() + 5);
  change = inv.merge({"npu-smi", seven}, at_ms(2000));
  CHECK(change.lost == std::vector<std::string>{"5"});
  CHECK(change.changed.size() == 8);  // every device seen again, and 5 lost
  CHECK(inv.present() == 7);
  CHECK(inv.expected() == 8);  // remembered
  CHECK(inv.find("5")->missing_from == std::vector<std::string>{"npu-smi"});
  // Still missing: no second loss.
  CHECK(inv.merge({"npu-smi", seven}, at_ms(3000)).lost.empty());

  // Another discoverer still lists it (its /dev node): it stays lost for npu-smi.
  std::vector<InventoryDevice> nodes;
  for (int i = 0; i < 8; ++i) {
    InventoryDevice d;
    d.id = std::to_string(i);
    nodes.push_back(d);
  }
  change = inv.merge({"dev", nodes}, at_ms(3500));
  CHECK(change.returned.empty());
  CHECK(change.added.empty());
  CHECK(inv.present() == 7);

  change = inv.merge({"npu-smi", eight}, at_ms(4000));
  CHECK(change.returned == std::vector<std::string>{"5"});
  CHECK(inv.present() == 8);
  CHECK(inv.find("5")->first_seen == at_ms(1000));
  CHECK(inv.find("5")->last_seen == at_ms(4000));
  CHECK(inv.find("5")->seen_by == std::vector<std::string>{"dev", "npu-smi"});
}

TEST_CASE("the configured expected count wins; configured devices are forgotten, not lost",
          "[state][inventory]") {
  Inventory inv;
  inv.set_expected(16);
  InventoryDevice a;
  a.id = "a";
  InventoryDevice b;
  b.id = "b";
  inv.merge({std::string(kConfigDiscoverer), {a, b}}, at_ms(1000));
  CHECK(inv.expected() == 16);
  const auto change = inv.merge({std::string(kConfigDiscoverer), {a}}, at_ms(2000));
  CHECK(change.lost.empty());
  CHECK(change.removed == std::vector<std::string>{"b"});
  CHECK(inv.find("b") == nullptr);
  CHECK_FALSE(inv.resolve("b"));
  // A discovered device taken out of the config stays: its discoverer still knows it.
  inv.merge({"npu-smi", {a}}, at_ms(3000));
  CHECK(inv.merge({std::string(kConfigDiscoverer), {}}, at_ms(4000)).removed.empty());
  CHECK(inv.find("a") != nullptr);
}

TEST_CASE("a discovery's facts replace the stored ones, what it does not say is kept",
          "[state][inventory]") {
  Inventory inv = inventory_of({gpu("0", "00000000:18:00.0", "GPU-a", "S1")}, "nvidia-smi");
  InventoryDevice node;
  node.id = "0";
  node.vendor = "nvidia";
  auto change = inv.merge({"dev", {node}}, at_ms(2000));
  CHECK(inv.find("0")->serial == "S1");
  // A replaced card in the same slot: a new serial and UUID.
  change = inv.merge({"nvidia-smi", {gpu("0", "00000000:18:00.0", "GPU-new", "S9")}}, at_ms(3000));
  REQUIRE(change.changed.size() == 1);
  CHECK(inv.find("0")->serial == "S9");
  CHECK(inv.resolve("GPU-new") == "0");
  CHECK_FALSE(inv.resolve("GPU-a"));
}
