#include "import/device_facts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>

#include "import/xml.hpp"

namespace collsim {

double pcie_x16_GBps(std::string_view link_speed, std::string_view where) {
  const std::string s(link_speed);
  char* end = nullptr;
  const double gts = std::strtod(s.c_str(), &end);
  const struct { double gts; double x16; } kRates[] = {
      {2.5, 4.0}, {5.0, 8.0}, {8.0, 15.75}, {16.0, 31.5}, {32.0, 63.0}};
  for (const auto& r : kRates) {
    if (end != s.c_str() && gts == r.gts) return r.x16;
  }
  throw ImportError(fmt::format("{}: link_speed: expected a PCIe rate such as \"32.0 GT/s PCIe\" "
                                "(2.5, 5, 8, 16 or 32 GT/s), got \"{}\"",
                                where, link_speed));
}

std::string nic_kind_of(const std::vector<std::string>& names, const std::string& chosen,
                        std::vector<std::string>& assumed) {
  if (!chosen.empty()) {
    if (chosen != "ib" && chosen != "roce" && chosen != "ethernet") {
      throw ImportError(fmt::format("--nic-kind: expected ib, roce or ethernet, got \"{}\"", chosen));
    }
    return chosen;
  }
  auto all = [&](auto pred) {
    for (const std::string& n : names) {
      if (!pred(n)) return false;
    }
    return true;
  };
  if (all([](const std::string& n) { return n.starts_with("roce"); })) return "roce";
  if (all([](const std::string& n) {
        return n.starts_with("eth") || n.starts_with("en") || n.starts_with("bond");
      })) {
    return "ethernet";
  }
  if (all([](const std::string& n) { return n.starts_with("ib"); })) return "ib";
  assumed.push_back(fmt::format("NICs {} taken as InfiniBand (--nic-kind roce|ethernet if not)",
                                fmt::join(names, ", ")));
  return "ib";
}

}  // namespace collsim
