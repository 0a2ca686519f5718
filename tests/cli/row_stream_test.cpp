// The pieces that let sweep, compare and scale print rows as they finish: JsonRows writes what
// nlohmann's dump(2) writes for the whole document, and InOrder hands out-of-order results on in
// order, nothing after close().
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/json_stream.hpp"
#include "cli/row_stream.hpp"

namespace collsim {
namespace {

using Json = nlohmann::ordered_json;

std::string streamed(const Json& head, const std::vector<Json>& rows, const Json& tail) {
  std::ostringstream out;
  JsonRows w(out, head);
  for (const Json& r : rows) w.row(r);
  w.close(tail);
  return out.str();
}

std::string whole(const Json& head, const std::vector<Json>& rows, const Json& tail) {
  Json j = head;
  j["rows"] = Json::array();
  for (const Json& r : rows) j["rows"].push_back(r);
  for (const auto& [k, v] : tail.items()) j[k] = v;
  return j.dump(2) + "\n";
}

TEST(JsonRows, WritesWhatDumpWrites) {
  const Json head = {{"cluster", "dgx-h100"}, {"ranks", 8}, {"nested", {{"a", {1, 2}}}}};
  const Json row = {{"bytes", 8}, {"time_us", 40.65}, {"note", "a \"quoted\"\nline"}};
  const Json tail = {{"ranges", "ring/ll"}, {"crossovers", Json::array()}, {"list", {"x", "y"}}};
  for (std::size_t n : {0u, 1u, 3u}) {
    const std::vector<Json> rows(n, row);
    EXPECT_EQ(streamed(head, rows, tail), whole(head, rows, tail)) << n << " rows";
    EXPECT_EQ(streamed(Json::object(), rows, Json::object()),
              whole(Json::object(), rows, Json::object()))
        << n << " rows";
  }
}

TEST(InOrder, EmitsInIndexOrderAndStopsWhenClosed) {
  std::vector<int> seen;
  InOrder<int> s(5, [&](std::size_t i, const int& v) { seen.push_back(static_cast<int>(i) * v); });
  s.put(2, 10);
  s.put(1, 10);
  EXPECT_TRUE(seen.empty());  // 0 is not done: nothing may go before it
  s.put(0, 10);
  EXPECT_EQ(seen, (std::vector<int>{0, 10, 20}));
  EXPECT_EQ(s.close(), 3u);
  s.put(3, 10);
  EXPECT_EQ(seen.size(), 3u);
}

}  // namespace
}  // namespace collsim
