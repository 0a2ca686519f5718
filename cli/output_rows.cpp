#include "cli/output_rows.hpp"

#include <string>
#include <type_traits>

namespace collsim {

nlohmann::ordered_json to_json(const ResultRow& r) {
  nlohmann::ordered_json j;
  const auto values = column_values(r);
  for (int i = 0; i < kResultColumnCount; ++i) {
    const std::string key(column_name(static_cast<ResultColumn>(i)));
    std::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string_view>) {
            j[key] = std::string(v);
          } else {
            j[key] = v;
          }
        },
        values.at(i));
  }
  return j;
}

}  // namespace collsim
