#include "calibrate/measurement_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>

#include "algorithms/ir/nccl_tests_names.hpp"

namespace collsim::detail {

namespace {

std::string where(const std::string& path, const MeasurementRow& r) {
  return fmt::format("{}:{}", path, r.line);
}

// The algbw a half can stand for: what its size / time allows, narrowed by its printed algbw.
Range algbw_bounds(std::uint64_t bytes, const Half& h) {
  const Range a = algbw_range(bytes, h.time);
  const Range p = printed_range(h.algbw);
  return {std::max(a.lo, p.lo), std::min(a.hi, p.hi)};
}

// A range of rank counts; empty when lo > hi.
struct RankRange {
  long long lo = 1;
  long long hi = LLONG_MAX;
  bool empty() const { return lo > hi; }
};
std::string describe(const RankRange& r) {
  if (r.lo == r.hi) return fmt::format("n = {}", r.lo);
  if (r.hi == LLONG_MAX) return fmt::format("n >= {}", r.lo);
  return fmt::format("n from {} to {}", r.lo, r.hi);
}

// Rank counts n whose factor c(n-1)/n lies in [f_lo, f_hi] (c = 1 or 2): c - c/n >= f_lo gives
// n >= c / (c - f_lo); c - c/n <= f_hi gives n <= c / (c - f_hi).
RankRange ranks_for_factor(int c, double f_lo, double f_hi) {
  RankRange r;
  if (f_lo >= c) return {1, 0};
  if (f_lo > 0) r.lo = std::max(1LL, static_cast<long long>(std::ceil(c / (c - f_lo) - 1e-9)));
  if (f_hi < 0) return {1, 0};
  if (f_hi < c) r.hi = static_cast<long long>(std::floor(c / (c - f_hi) + 1e-9));
  return r;
}

// The rank counts one half of a row allows, from busbw / algbw; all counts if algbw is ~0.
RankRange ranks_for_half(int c, std::uint64_t bytes, const Half& h) {
  const Range a = algbw_bounds(bytes, h);
  const Range b = printed_range(h.busbw);
  if (a.lo <= 0) return {};
  return ranks_for_factor(c, std::max(0.0, b.lo) / a.hi, b.hi / a.lo);
}

std::optional<std::uint64_t> element_bytes(const MeasurementRow& r) {
  const auto size = nccl_tests_type_size(r.dtype);
  if (!size) return std::nullopt;
  return static_cast<std::uint64_t>(*size);
}

// Blocked collectives (AllGather, ReduceScatter, AllToAll, Gather, Scatter): nccl-tests' size is
// count x element size x ranks.
void infer_from_size(const std::string& path, Collective c, std::vector<MeasurementRow*>& rows) {
  const MeasurementRow* first = nullptr;
  for (MeasurementRow* r : rows) {
    const auto elem = element_bytes(*r);
    if (!elem || r->count == 0) continue;
    const std::uint64_t block = r->count * *elem;
    if (r->bytes % block != 0) {
      throw MeasurementError(fmt::format(
          "{}: size {} B is not a multiple of count {} x {} B ({}); expected size = count x "
          "element size x ranks for {}",
          where(path, *r), r->bytes, r->count, *elem, r->dtype, to_string(c)));
    }
    const std::uint64_t n = r->bytes / block;
    if (first != nullptr && static_cast<std::uint64_t>(first->ranks) != n) {
      throw MeasurementError(fmt::format(
          "{}: size / (count x element size) = {} ranks here but {} at line {}; expected one "
          "rank count for the whole run",
          where(path, *r), n, first->ranks, first->line));
    }
    r->ranks = static_cast<int>(n);
    first = r;
  }
  for (MeasurementRow* r : rows) {
    if (first == nullptr) break;
    r->ranks = first->ranks;
    r->ranks_source = RanksSource::kSizeCount;
  }
}

void infer_from_busbw(const std::string& path, Collective c, std::vector<MeasurementRow*>& rows,
                      const std::vector<const RowContext*>& ctx) {
  const int scale = busbw_factor_scale(c);
  RankRange all{std::max(1, ctx.front()->min_ranks), LLONG_MAX};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const Half& h : ctx[i]->numbers.halves) {
      const RankRange r = ranks_for_half(scale, rows[i]->bytes, h);
      const RankRange both{std::max(all.lo, r.lo), std::min(all.hi, r.hi)};
      if (both.empty()) {
        throw MeasurementError(fmt::format(
            "{}: {} busbw / algbw = {} / {} fits no rank count n that fits the rows above{} "
            "({}); expected busbw = algbw x {} with one n for the whole run",
            where(path, *rows[i]), h.name, h.busbw.text, h.algbw.text,
            ctx.front()->min_ranks > 0 ? " and the rank lines" : "", describe(all),
            busbw_factor_formula(c)));
      }
      all = both;
    }
  }
  if (all.lo != all.hi) return;  // too little bandwidth in the rows to tell
  for (MeasurementRow* r : rows) {
    r->ranks = static_cast<int>(all.lo);
    r->ranks_source = RanksSource::kBusbwRatio;
  }
}

void check_size(const std::string& path, Collective c, const MeasurementRow& r) {
  const auto elem = element_bytes(r);
  if (!elem) return;
  const bool blocked = is_blocked(c);
  if (blocked && r.ranks == 0) return;
  const std::uint64_t expected = r.count * *elem * (blocked ? r.ranks : 1);
  if (expected == r.bytes) return;
  throw MeasurementError(
      fmt::format("{}: size {} B is not count {} x {} B ({}){} = {} B; "
                  "expected size = count x element size{} for {}",
                  where(path, r), r.bytes, r.count, *elem, r.dtype,
                  blocked ? fmt::format(" x {} ranks", r.ranks) : "", expected,
                  blocked ? " x ranks" : "", to_string(c)));
}

void check_busbw(const std::string& path, Collective c, const MeasurementRow& r,
                 const RowContext& ctx, const std::string& origin) {
  const bool needs_ranks = busbw_factor_scale(c) > 0;
  if (needs_ranks && r.ranks == 0) return;
  const double f = busbw_factor(c, r.ranks);
  for (const Half& h : ctx.numbers.halves) {
    const Range a = algbw_bounds(r.bytes, h);
    const Range b = printed_range(h.busbw);
    if (a.hi * f >= b.lo && a.lo * f <= b.hi) continue;
    std::string with;
    std::string hint;
    if (needs_ranks) {
      with = fmt::format(" with n = {} ranks ({})", r.ranks, origin);
      const RankRange fits = ranks_for_half(busbw_factor_scale(c), r.bytes, h);
      if (!fits.empty()) hint = fmt::format(" (the printed values fit {})", describe(fits));
    }
    throw MeasurementError(
        fmt::format("{}: {} busbw: {} GB/s printed, but algbw x {} = {} x {:.4g} = {:.2f} GB/s "
                    "for {}{}; expected them to agree to the printed precision{}",
                    where(path, r), h.name, h.busbw.text, busbw_factor_formula(c), h.algbw.text, f,
                    h.algbw.value * f, to_string(c), with, hint));
  }
}

}  // namespace

void resolve_ranks_and_check(const std::string& path, Collective c,
                             std::vector<MeasurementRow>& rows,
                             const std::vector<RowContext>& context) {
  std::map<int, std::vector<std::size_t>> unknown;  // segment -> rows without a rank count
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].ranks == 0) unknown[context[i].segment].push_back(i);
  }
  for (const auto& [segment, indices] : unknown) {
    std::vector<MeasurementRow*> seg_rows;
    std::vector<const RowContext*> seg_ctx;
    for (std::size_t i : indices) {
      seg_rows.push_back(&rows[i]);
      seg_ctx.push_back(&context[i]);
    }
    if (is_blocked(c)) infer_from_size(path, c, seg_rows);
    if (seg_rows.front()->ranks == 0 && busbw_factor_scale(c) > 0) {
      infer_from_busbw(path, c, seg_rows, seg_ctx);
    }
    for (std::size_t k = 0; k < seg_rows.size(); ++k) {
      if (seg_rows[k]->ranks != 0 || seg_ctx[k]->min_ranks == 0) continue;
      seg_rows[k]->ranks = seg_ctx[k]->min_ranks;
      seg_rows[k]->ranks_source = RanksSource::kRankLines;
    }
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    check_size(path, c, rows[i]);
    std::string origin = context[i].ranks_origin;
    if (rows[i].ranks_source == RanksSource::kSizeCount) origin = "from size / count";
    if (rows[i].ranks_source == RanksSource::kBusbwRatio) origin = "inferred from busbw / algbw";
    check_busbw(path, c, rows[i], context[i], origin);
  }
}

}  // namespace collsim::detail
