// A result row's JSON form (predict, sweep, compare, scale, validate, bench): an object with the
// CSV's columns as keys, in the same order (algorithms/ir/result_row.hpp names them).
//
//   nlohmann::ordered_json j = to_json(make_row(request, candidate, time));
//   j["wrong"] = 0;   // commands append their own keys after the columns
#pragma once

#include <nlohmann/json.hpp>

#include "algorithms/ir/result_row.hpp"

namespace collsim {

nlohmann::ordered_json to_json(const ResultRow& r);

}  // namespace collsim
