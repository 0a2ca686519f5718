#include "cli/distribute.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "backends/registry.hpp"
#include "predict/parallel.hpp"
#include "topology/error.hpp"

namespace collsim {

Distribution::Distribution() : processes_(job_processes()) {}

Distribution::Distribution(std::unique_ptr<ProcessGroup> processes)
    : processes_(std::move(processes)) {}

Distribution::~Distribution() = default;

namespace {

// A process's workers, fed one unit at a time by its main thread, the only thread that calls MPI
// (MPI_THREAD_FUNNELED): a worker that has finished waits for the main thread to get it the next
// unit, from the queue on process 0 or from process 0 over MPI elsewhere.
class Workers {
 public:
  // Each unit's result goes to `results`, or its error to `errors`.
  Workers(std::size_t threads, const std::function<nlohmann::json(std::size_t)>& compute,
          Gathered& results, std::map<std::size_t, std::string>& errors)
      : compute_(compute), results_(results), errors_(errors) {
    for (std::size_t t = 0; t < threads; ++t) {
      threads_.emplace_back([this, pool = threads > 1] { work(pool); });
    }
  }
  // Stops the workers that were not stopped (the main thread's loop threw), each once its unit
  // is done, and joins them all.
  ~Workers() {
    while (!all_stopped()) give(std::nullopt);
    wake_workers_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  // Whether a worker waits for a unit that is not queued yet; waits up to `patience` for one.
  bool wants(std::chrono::microseconds patience) {
    std::unique_lock<std::mutex> lock(mutex_);
    return wake_main_.wait_for(lock, patience, [&] { return hungry(); });
  }
  void wait_until_wanted() {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_main_.wait(lock, [&] { return hungry(); });
  }
  // Hands `unit` to a waiting worker; nullopt stops one.
  void give(std::optional<std::size_t> unit) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(unit);
      if (!unit) ++stopped_;
    }
    wake_workers_.notify_one();
  }
  bool all_stopped() const { return stopped_ == threads_.size(); }  // main thread only

 private:
  bool hungry() const { return waiting_ > queue_.size() && stopped_ < threads_.size(); }

  void work(bool pool) {
    // Several workers are the process's threads: a unit's own parallel_for runs on its worker.
    t_pool_worker = pool;
    for (;;) {
      std::optional<std::size_t> unit;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ++waiting_;
        wake_main_.notify_one();
        wake_workers_.wait(lock, [&] { return !queue_.empty(); });
        --waiting_;
        unit = queue_.front();
        queue_.pop_front();
      }
      if (!unit) return;
      nlohmann::json result;
      std::optional<std::string> error;
      try {
        result = compute_(*unit);
      } catch (const std::exception& e) {
        error = e.what();
      } catch (...) {
        error = "unknown error";
      }
      const std::lock_guard<std::mutex> lock(mutex_);
      if (error) {
        errors_[*unit] = std::move(*error);
      } else {
        results_[*unit] = std::move(result);
      }
    }
  }

  const std::function<nlohmann::json(std::size_t)>& compute_;
  Gathered& results_;
  std::map<std::size_t, std::string>& errors_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_main_, wake_workers_;
  std::deque<std::optional<std::size_t>> queue_;
  std::size_t waiting_ = 0;
  std::size_t stopped_ = 0;
};

// How long process 0 waits for a worker of its own to free up before it looks for requests from
// the other processes again: each request waits at most this long for its answer. The shortest
// units are compare's cells of small sizes, about 0.4 ms each on the 2-core machine
// (`compare dgx-h100 --op allgather -b 8 -e 64K`: 182 cells past the first size in 75 ms, one
// thread); a sweep's sizes take milliseconds to seconds. So an answer delays a unit by a quarter
// of it at worst, while process 0's main thread wakes at most 10,000 times a second.
constexpr std::chrono::microseconds kAnswerWithin{100};

}  // namespace

Gathered Distribution::run(const std::vector<double>& weights, std::size_t threads,
                           const std::function<nlohmann::json(std::size_t)>& compute,
                           const std::function<void(std::size_t)>& started) const {
  threads = std::max<std::size_t>(threads, 1);
  Gathered results;
  std::map<std::size_t, std::string> errors;
  {
    Workers workers(threads, compute, results, errors);
    if (prints()) {
      std::vector<std::size_t> order(weights.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return weights[a] > weights[b]; });
      std::size_t next = 0;
      const auto take = [&]() -> std::optional<std::size_t> {
        if (next == order.size()) return std::nullopt;
        const std::size_t unit = order[next++];
        if (started) started(unit);
        return unit;
      };
      int others_stopped = 0;
      while (others_stopped < processes() - 1 || !workers.all_stopped()) {
        others_stopped += processes_->answer_unit_requests(take);
        if (workers.all_stopped()) {
          std::this_thread::sleep_for(kAnswerWithin);  // only the other processes still ask
          continue;
        }
        while (!workers.all_stopped() && workers.wants(kAnswerWithin)) workers.give(take());
      }
    } else {
      for (;;) {
        workers.wait_until_wanted();
        const std::optional<std::size_t> unit = processes_->request_unit();
        if (!unit) {
          for (std::size_t t = 0; t < threads; ++t) workers.give(std::nullopt);
          break;
        }
        workers.give(unit);
      }
    }
  }  // the workers are joined

  nlohmann::json part;
  part["units"] = nlohmann::json::array();
  for (const auto& [unit, result] : results) part["units"].push_back({unit, result});
  part["errors"] = nlohmann::json::array();
  for (const auto& [unit, error] : errors) part["errors"].push_back({unit, error});
  const std::vector<std::string> parts = processes_->gather_text(part.dump());
  if (!prints()) return {};
  Gathered all;
  std::map<std::size_t, std::string> failed;
  for (const std::string& text : parts) {
    const nlohmann::json p = nlohmann::json::parse(text);
    for (const nlohmann::json& u : p["units"]) all[u[0].get<std::size_t>()] = u[1];
    for (const nlohmann::json& e : p["errors"]) {
      failed[e[0].get<std::size_t>()] = e[1].get<std::string>();
    }
  }
  if (!failed.empty()) throw RequestError(failed.begin()->second);
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
          {"note", c.note},
          {"nccl_can_run", c.nccl_can_run}};
}

Choice decode_choice(const nlohmann::json& j) {
  Choice c;
  c.candidate.algorithm = j.at("algorithm").get<std::string>();
  c.candidate.protocol = parse_protocol(j.at("protocol").get<std::string>());
  c.eval = decode_prediction(j.at("eval"));
  c.how = j.at("how").get<std::string>();
  c.nccl_pick = j.at("nccl_pick").get<std::string>();
  c.note = j.at("note").get<std::string>();
  c.nccl_can_run = j.at("nccl_can_run").get<bool>();
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
