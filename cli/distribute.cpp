#include "cli/distribute.hpp"

#include <algorithm>
#include <numeric>

#include "backends/registry.hpp"
#include "topology/error.hpp"

namespace collsim {

Distribution::Distribution() : processes_(job_processes()) {}

Distribution::~Distribution() = default;

std::vector<std::size_t> Distribution::share(const std::vector<double>& weights) const {
  std::vector<std::size_t> order(weights.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return weights[a] > weights[b]; });
  std::vector<double> load(static_cast<std::size_t>(processes()), 0.0);
  std::vector<std::size_t> mine;
  for (const std::size_t u : order) {
    const auto least = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    load[static_cast<std::size_t>(least)] += weights[u];
    if (least == processes_->index()) mine.push_back(u);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

Gathered Distribution::gather(const Gathered& mine, const std::string& error) const {
  nlohmann::json part;
  part["error"] = error;
  part["units"] = nlohmann::json::array();
  for (const auto& [unit, result] : mine) part["units"].push_back({unit, result});
  const std::vector<std::string> parts = processes_->gather_text(part.dump());
  if (!prints()) return {};
  Gathered all;
  for (const std::string& text : parts) {
    const nlohmann::json p = nlohmann::json::parse(text);
    if (const std::string e = p["error"].get<std::string>(); !e.empty()) throw RequestError(e);
    for (const nlohmann::json& u : p["units"]) all[u[0].get<std::size_t>()] = u[1];
  }
  return all;
}

double size_weight(std::uint64_t bytes) {
  constexpr double kFixedBytes = 4.0 * 1024 * 1024;
  return static_cast<double>(bytes) + kFixedBytes;
}

nlohmann::json encode(const Prediction& p) {
  return {{"ps", p.time.ps()},
          {"detail", p.detail},
          {"events", p.events},
          {"simulated_ranks", p.simulated_ranks},
          {"exact", p.exact}};
}

Prediction decode_prediction(const nlohmann::json& j) {
  Prediction p;
  p.time = Time::from_ps(j.at("ps").get<std::int64_t>());
  p.detail = j.at("detail").get<std::string>();
  p.events = j.at("events").get<std::uint64_t>();
  p.simulated_ranks = j.at("simulated_ranks").get<int>();
  p.exact = j.at("exact").get<bool>();
  return p;
}

nlohmann::json encode(const Choice& c) {
  return {{"algorithm", c.candidate.algorithm},
          {"protocol", std::string(to_string(c.candidate.protocol))},
          {"eval", encode(c.eval)},
          {"how", c.how},
          {"nccl_pick", c.nccl_pick},
          {"note", c.note}};
}

Choice decode_choice(const nlohmann::json& j) {
  Choice c;
  c.candidate.algorithm = j.at("algorithm").get<std::string>();
  c.candidate.protocol = parse_protocol(j.at("protocol").get<std::string>());
  c.eval = decode_prediction(j.at("eval"));
  c.how = j.at("how").get<std::string>();
  c.nccl_pick = j.at("nccl_pick").get<std::string>();
  c.note = j.at("note").get<std::string>();
  return c;
}

nlohmann::json encode(const ResultRow& r) {
  return {{"collective", std::string(to_string(r.collective))},
          {"algorithm", r.algorithm},
          {"protocol", r.protocol},
          {"channels", r.channels},
          {"ranks", r.ranks},
          {"bytes", r.bytes},
          {"count", r.count},
          {"dtype", std::string(to_string(r.dtype))},
          {"time_us", r.time_us},
          {"algbw", r.algbw_GBps},
          {"busbw", r.busbw_GBps}};
}

ResultRow decode_row(const nlohmann::json& j) {
  ResultRow r;
  r.collective = parse_collective(j.at("collective").get<std::string>());
  r.algorithm = j.at("algorithm").get<std::string>();
  r.protocol = j.at("protocol").get<std::string>();
  r.channels = j.at("channels").get<int>();
  r.ranks = j.at("ranks").get<int>();
  r.bytes = j.at("bytes").get<std::uint64_t>();
  r.count = j.at("count").get<std::uint64_t>();
  r.dtype = parse_data_type(j.at("dtype").get<std::string>());
  r.time_us = j.at("time_us").get<double>();
  r.algbw_GBps = j.at("algbw").get<double>();
  r.busbw_GBps = j.at("busbw").get<double>();
  return r;
}

}  // namespace collsim
