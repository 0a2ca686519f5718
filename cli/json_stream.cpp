#include "cli/json_stream.hpp"

#include <string>

namespace collsim {

namespace {

// `text` (a dump(2)) with every line after the first indented by `spaces` more.
std::string indented(const std::string& text, int spaces) {
  std::string out;
  const std::string pad(spaces, ' ');
  for (const char ch : text) {
    out += ch;
    if (ch == '\n') out += pad;
  }
  return out;
}

// `"key": value` as a member at depth 1 of a dump(2).
std::string member(const std::string& key, const nlohmann::ordered_json& value) {
  return "  " + nlohmann::ordered_json(key).dump() + ": " + indented(value.dump(2), 2);
}

}  // namespace

JsonRows::JsonRows(std::ostream& out, const nlohmann::ordered_json& head) : out_(out) {
  out_ << "{\n";
  for (const auto& [key, value] : head.items()) out_ << member(key, value) << ",\n";
  out_ << "  \"rows\": [";
  out_.flush();
}

void JsonRows::row(const nlohmann::ordered_json& row) {
  out_ << (any_row_ ? ",\n    " : "\n    ") << indented(row.dump(2), 4);
  any_row_ = true;
  out_.flush();
}

void JsonRows::close(const nlohmann::ordered_json& tail) {
  out_ << (any_row_ ? "\n  ]" : "]");
  for (const auto& [key, value] : tail.items()) out_ << ",\n" << member(key, value);
  out_ << "\n}\n";
  out_.flush();
}

}  // namespace collsim
