#include "topology/device.hpp"

#include <array>
#include <utility>

namespace collsim {

namespace {

constexpr std::array<std::pair<DeviceKind, std::string_view>, 6> kDeviceKinds{{
    {DeviceKind::kGpu, "gpu"},
    {DeviceKind::kNvSwitch, "nvswitch"},
    {DeviceKind::kPcieSwitch, "pcie_switch"},
    {DeviceKind::kCpu, "cpu"},
    {DeviceKind::kNic, "nic"},
    {DeviceKind::kSwitch, "switch"},
}};

constexpr std::array<std::pair<LinkKind, std::string_view>, 9> kLinkKinds{{
    {LinkKind::kNvLink, "nvlink"},
    {LinkKind::kNvSwitch, "nvswitch"},
    {LinkKind::kPcie, "pcie"},
    {LinkKind::kSmp, "smp"},
    {LinkKind::kIb, "ib"},
    {LinkKind::kRoce, "roce"},
    {LinkKind::kEthernet, "ethernet"},
    {LinkKind::kC2c, "c2c"},
    {LinkKind::kEfa, "efa"},
}};

template <typename Kind, std::size_t N>
std::string_view name_of(const std::array<std::pair<Kind, std::string_view>, N>& table, Kind k) {
  for (const auto& [kind, name] : table) {
    if (kind == k) return name;
  }
  return "?";
}

template <typename Kind, std::size_t N>
bool parse(const std::array<std::pair<Kind, std::string_view>, N>& table, std::string_view s,
           Kind& out) {
  for (const auto& [kind, name] : table) {
    if (name == s) {
      out = kind;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view to_string(DeviceKind k) { return name_of(kDeviceKinds, k); }
std::string_view to_string(LinkKind k) { return name_of(kLinkKinds, k); }
bool parse_device_kind(std::string_view s, DeviceKind& out) { return parse(kDeviceKinds, s, out); }
bool parse_link_kind(std::string_view s, LinkKind& out) { return parse(kLinkKinds, s, out); }

bool is_network(LinkKind k) {
  return k == LinkKind::kIb || k == LinkKind::kRoce || k == LinkKind::kEthernet ||
         k == LinkKind::kEfa;
}

bool is_nvlink_class(LinkKind k) {
  return k == LinkKind::kNvLink || k == LinkKind::kNvSwitch || k == LinkKind::kC2c;
}

}  // namespace collsim
