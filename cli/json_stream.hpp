// A JSON document with a "rows" array, written row by row as the rows are finished, byte for byte
// what nlohmann's dump(2) prints for the whole document: the keys before "rows", the rows, then
// the keys after them. A command cut short still closes it, so its output stays valid JSON.
//
//   JsonRows out(std::cout, run_json(ev));       // {"cluster": ..., "rows": [
//   out.row(to_json(row));                       //   {...},
//   out.close({{"ranges", ...}});                // ], "ranges": ...}
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

namespace collsim {

class JsonRows {
 public:
  JsonRows(std::ostream& out, const nlohmann::ordered_json& head);
  void row(const nlohmann::ordered_json& row);
  // Ends the array, writes `tail`'s keys and the closing brace; flushes.
  void close(const nlohmann::ordered_json& tail = nlohmann::ordered_json::object());

 private:
  std::ostream& out_;
  bool any_row_ = false;
};

}  // namespace collsim
