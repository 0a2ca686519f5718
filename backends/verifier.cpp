#include "backends/verifier.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/reduce_kernels.hpp"

namespace collsim {

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finalizer
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

double input_value(const ScheduleInfo& info, std::uint64_t seed, int rank, std::uint64_t i) {
  const std::uint64_t h =
      mix(seed * 0x100000001B3ULL ^ mix(static_cast<std::uint64_t>(rank) << 40 ^ i));
  const DataType t = info.dtype;
  // Unsigned integers take no negative values: a wrapped one would not fit a double exactly.
  const bool is_unsigned = t == DataType::kU8 || t == DataType::kU32 || t == DataType::kU64;
  if (info.redop == ReduceOp::kProd) {
    if (is_unsigned) return static_cast<double>(1 + h % 3);
    double v = (h & 1) ? 1.0 : -1.0;
    if (rank < 8 && (h >> 8) % 4 == 0) v *= (is_floating(t) && ((h >> 16) & 1)) ? 0.5 : 2.0;
    return v;
  }
  if (is_unsigned) return static_cast<double>(h % 17);
  const double v = static_cast<double>(h % 17) - 8.0;
  return is_floating(t) ? v / 4.0 : v;
}

// Unit roundoff of a floating type.
double unit_roundoff(DataType t) {
  switch (t) {
    case DataType::kF16:
      return std::ldexp(1.0, -11);
    case DataType::kBf16:
      return std::ldexp(1.0, -8);
    case DataType::kF32:
      return std::ldexp(1.0, -24);
    case DataType::kF64:
      return std::ldexp(1.0, -53);
    case DataType::kF8E4M3:  // 2^-(mantissa bits + 1): 3 bits (backends/fp8.hpp)
      return std::ldexp(1.0, -4);
    case DataType::kF8E5M2:  // 2 mantissa bits
      return std::ldexp(1.0, -3);
    default:
      return 0;
  }
}

// A value as the dtype holds it (integers wrap, floats round).
double as_stored(DataType t, double v) {
  std::byte buf[8];
  store_element(t, buf, 0, v);
  return load_element(t, buf, 0);
}

// The reduction over ranks of every input element, with its tolerance (AllReduce, Reduce,
// ReduceScatter), streamed rank by rank.
struct Reduced {
  std::vector<double> value;
  std::vector<double> tolerance;
};

// `load(k, out)` reads the `len` input elements of rank k that are being reduced into out.
template <typename Load>
Reduced reduce_with(const ScheduleInfo& info, int n, std::size_t len, Load load) {
  const DataType t = info.dtype;
  Reduced red;
  red.value.resize(len);
  std::vector<double> abs_sum(len), x(len);
  load(0, red.value.data());
  for (std::size_t i = 0; i < len; ++i) abs_sum[i] = std::fabs(red.value[i]);
  for (int k = 1; k < n; ++k) {
    load(k, x.data());
    for (std::size_t i = 0; i < len; ++i) {
      double& acc = red.value[i];
      abs_sum[i] += std::fabs(x[i]);
      switch (info.redop) {
        case ReduceOp::kSum:
        case ReduceOp::kAvg:
          acc += x[i];
          break;
        case ReduceOp::kProd:
          acc *= x[i];
          break;
        case ReduceOp::kMin:
          acc = std::min(acc, x[i]);
          break;
        case ReduceOp::kMax:
          acc = std::max(acc, x[i]);
          break;
      }
    }
  }
  const double u = unit_roundoff(t);
  const bool rounded =
      is_floating(t) && (info.redop == ReduceOp::kSum || info.redop == ReduceOp::kAvg);
  red.tolerance.assign(rounded ? len : 0, 0);
  for (std::size_t i = 0; i < len; ++i) {
    double& acc = red.value[i];
    if (info.redop == ReduceOp::kAvg) {
      if (is_floating(t)) {
        acc /= n;
        abs_sum[i] /= n;
      } else {
        acc = std::trunc(as_stored(t, acc) / n);
      }
    }
    if (!is_floating(t)) acc = as_stored(t, acc);
    if (rounded) red.tolerance[i] = n * u * abs_sum[i] + u * std::fabs(acc);
  }
  return red;
}

Reduced reduce_inputs(const Schedule& s, const HostBuffers& in) {
  const DataType t = s.info().dtype;
  const std::size_t len = in.input[0].size() / element_size(t);
  return reduce_with(s.info(), s.rank_count(), len,
                     [&](int k, double* out) { load_elements(t, in.input[k].data(), len, out); });
}

// Elements [first, first + n) of rank `rank`'s input as make_inputs() stores them.
void generate(const ScheduleInfo& info, std::uint64_t seed, int rank, std::uint64_t first,
              std::size_t n, std::byte* out) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = input_value(info, seed, rank, first + i);
  store_elements(info.dtype, out, n, v.data());
}

// For the collectives that only move data: where element j of rank r's output comes from.
std::pair<int, std::uint64_t> source_of(const ScheduleInfo& info, int n, int r, std::uint64_t j) {
  const std::uint64_t count = info.count;
  const std::uint64_t blk = count == 0 ? 0 : j / count;
  const std::uint64_t i = count == 0 ? 0 : j % count;
  switch (info.collective) {
    case Collective::kAllGather:
    case Collective::kGather:
      return {static_cast<int>(blk), i};
    case Collective::kBroadcast:
      return {info.root, j};
    case Collective::kScatter:
      return {info.root, static_cast<std::uint64_t>(r) * count + j};
    case Collective::kAllToAll:
      return {static_cast<int>(blk), static_cast<std::uint64_t>(r) * count + i};
    case Collective::kSendRecv:
      return {(r - 1 + n) % n, j};
    default:
      return {r, j};
  }
}

}  // namespace

HostBuffers make_inputs(const Schedule& s, std::uint64_t seed) {
  HostBuffers b = HostBuffers::for_schedule(s);
  for (int r = 0; r < s.rank_count(); ++r) fill_input(s, seed, r, b.input[r]);
  return b;
}

void fill_input(const Schedule& s, std::uint64_t seed, int rank, std::vector<std::byte>& input) {
  input.resize(s.buffer_bytes(rank, BufferKind::kInput));
  const std::size_t e = element_size(s.info().dtype);
  constexpr std::size_t kBlock = 1 << 16;
  const std::size_t n = input.size() / e;
  for (std::size_t i = 0; i < n; i += kBlock) {
    generate(s.info(), seed, rank, i, std::min(kBlock, n - i), input.data() + i * e);
  }
}

WrongCount count_wrong(const Schedule& s, std::uint64_t seed, int rank,
                       const std::vector<std::byte>& output) {
  const ScheduleInfo& info = s.info();
  const DataType t = info.dtype;
  const std::size_t e = element_size(t);
  const int n = s.rank_count();
  const std::uint64_t len = s.buffer_bytes(rank, BufferKind::kOutput) / e;
  WrongCount w;
  if (output.size() < len * e) {
    w.wrong = len;
    w.detail = fmt::format("rank {}: output of {} B, expected {} B", rank, output.size(), len * e);
    return w;
  }
  auto mismatch = [&](std::uint64_t j, double got, double want, double tol) {
    if (w.wrong == 0) w.first = j;
    if (w.wrong++ < 5) {
      w.detail += fmt::format("{}rank {} output[{}]: got {}, expected {} (tolerance {})",
                              w.detail.empty() ? "" : "; ", rank, j, got, want, tol);
    }
  };
  constexpr std::uint64_t kBlock = 1 << 15;
  std::vector<std::byte> want(kBlock * e);
  std::vector<double> got(kBlock);
  for (std::uint64_t j0 = 0; j0 < len; j0 += kBlock) {
    const std::size_t b = static_cast<std::size_t>(std::min(kBlock, len - j0));
    const std::byte* o = output.data() + j0 * e;
    if (!is_reduction(info.collective)) {
      for (std::size_t q = 0; q < b;) {  // runs of consecutive elements of one source rank
        const std::uint64_t j = j0 + q;
        const auto [k, i] = source_of(info, n, rank, j);
        const std::size_t run = static_cast<std::size_t>(
            info.count == 0 ? b - q : std::min<std::uint64_t>(b - q, info.count - j % info.count));
        generate(info, seed, k, i, run, want.data());
        if (std::memcmp(o + q * e, want.data(), run * e) != 0) {
          for (std::size_t x = 0; x < run; ++x) {
            if (std::memcmp(o + (q + x) * e, want.data() + x * e, e) != 0) {
              mismatch(j + x, load_element(t, o, q + x), load_element(t, want.data(), x), 0);
            }
          }
        }
        q += run;
      }
      continue;
    }
    const std::uint64_t base =
        (info.collective == Collective::kReduceScatter ? rank * info.count : 0) + j0;
    const Reduced red = reduce_with(info, n, b, [&](int k, double* out) {
      generate(info, seed, k, base, b, want.data());
      load_elements(t, want.data(), b, out);
    });
    load_elements(t, o, b, got.data());
    for (std::size_t q = 0; q < b; ++q) {
      const double tol = red.tolerance.empty() ? 0 : red.tolerance[q];
      if (got[q] == red.value[q] || std::fabs(got[q] - red.value[q]) <= tol) continue;
      mismatch(j0 + q, got[q], red.value[q], tol);
    }
  }
  return w;
}

std::vector<std::vector<double>> expected_outputs(const Schedule& s, const HostBuffers& inputs) {
  const ScheduleInfo& info = s.info();
  const DataType t = info.dtype;
  const std::size_t e = element_size(t);
  const Reduced red = is_reduction(info.collective) ? reduce_inputs(s, inputs) : Reduced{};
  std::vector<std::vector<double>> out(s.rank_count());
  for (int r = 0; r < s.rank_count(); ++r) {
    out[r].resize(s.buffer_bytes(r, BufferKind::kOutput) / e);
    for (std::uint64_t j = 0; j < out[r].size(); ++j) {
      if (is_reduction(info.collective)) {
        const std::uint64_t base =
            info.collective == Collective::kReduceScatter ? r * info.count : 0;
        out[r][j] = red.value[base + j];
      } else {
        const auto [k, i] = source_of(info, s.rank_count(), r, j);
        out[r][j] = load_element(t, inputs.input[k].data(), i);
      }
    }
  }
  return out;
}

std::string compare_outputs(const Schedule& s, const HostBuffers& inputs,
                            const HostBuffers& outputs) {
  const ScheduleInfo& info = s.info();
  const DataType t = info.dtype;
  const std::size_t e = element_size(t);
  const int n = s.rank_count();
  const bool reduction = is_reduction(info.collective);
  const Reduced red = reduction ? reduce_inputs(s, inputs) : Reduced{};
  std::string msg;
  int shown = 0;
  std::uint64_t bad = 0;
  auto mismatch = [&](int r, std::uint64_t j, double got, double want, double tol) {
    ++bad;
    if (shown++ < 5) {
      msg += fmt::format("{}rank {} output[{}]: got {}, expected {} (tolerance {})",
                         msg.empty() ? "" : "; ", r, j, got, want, tol);
    }
  };
  std::vector<double> got;
  for (int r = 0; r < n; ++r) {
    const std::uint64_t len = s.buffer_bytes(r, BufferKind::kOutput) / e;
    const std::byte* o = outputs.output[r].data();
    if (!reduction) {
      // Pure data movement: the bytes must be identical; compare a block at a time.
      for (std::uint64_t j = 0; j < len;) {
        const auto [k, i] = source_of(info, n, r, j);
        const std::uint64_t run =
            info.count == 0 ? len - j : std::min(len - j, info.count - j % info.count);
        const std::byte* src = inputs.input[k].data() + i * e;
        if (std::memcmp(o + j * e, src, run * e) != 0) {
          for (std::uint64_t q = 0; q < run; ++q) {
            if (std::memcmp(o + (j + q) * e, src + q * e, e) != 0) {
              mismatch(r, j + q, load_element(t, o, j + q), load_element(t, src, q), 0);
            }
          }
        }
        j += run;
      }
      continue;
    }
    const std::uint64_t base = info.collective == Collective::kReduceScatter ? r * info.count : 0;
    got.resize(len);
    load_elements(t, o, len, got.data());
    for (std::uint64_t j = 0; j < len; ++j) {
      const double want = red.value[base + j];
      const double tol = red.tolerance.empty() ? 0 : red.tolerance[base + j];
      if (got[j] == want || std::fabs(got[j] - want) <= tol) continue;
      mismatch(r, j, got[j], want, tol);
    }
  }
  if (bad > 0) {
    const ScheduleInfo& i = s.info();
    msg =
        fmt::format("{} {} {} {} {} ranks {} count {} channels {}: {} wrong elements: {}",
                    to_string(i.collective), i.algorithm, to_string(i.protocol), to_string(i.dtype),
                    to_string(i.redop), i.ranks, i.count, i.channels, bad, msg);
  }
  return msg;
}

VerifyResult verify(Backend& backend, const Schedule& s, std::uint64_t seed,
                    const RunOptions& options) {
  HostBuffers buf = make_inputs(s, seed);
  VerifyResult v;
  v.run = backend.run(s, buf, options);
  v.message = compare_outputs(s, buf, buf);
  v.ok = v.message.empty();
  return v;
}

}  // namespace collsim
