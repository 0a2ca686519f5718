#include "topology/error.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace collsim {

namespace {

// Optimal string alignment distance (Levenshtein plus adjacent transpositions, the commonest
// typo), case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  };
  const std::size_t w = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * w);
  for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t v = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1,
                                d[(i - 1) * w + j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1])) {
        v = std::min(v, d[(i - 2) * w + j - 2] + 1);
      }
      d[i * w + j] = v;
    }
  }
  return d[a.size() * w + b.size()];
}

}  // namespace

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // A typo changes at most a third of the word (and at least one letter is allowed).
  const std::size_t limit = std::max<std::size_t>(1, std::max(word.size(), best.size()) / 3);
  return best_d <= limit ? best : std::string();
}

std::string expected_one_of(std::string_view got, const std::vector<std::string>& candidates) {
  std::string msg = fmt::format("expected one of {}", fmt::join(candidates, ", "));
  const std::string near = nearest(got, candidates);
  if (!near.empty()) msg += fmt::format("; did you mean \"{}\"?", near);
  return msg;
}

}  // namespace collsim
