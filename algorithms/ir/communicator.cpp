#include "algorithms/ir/communicator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "topology/error.hpp"

namespace collsim {

Communicator Communicator::flat(int ranks) {
  if (ranks < 1)
    throw RequestError(fmt::format("a communicator needs at least 1 rank, got {}", ranks));
  std::vector<int> gpus(ranks);
  for (int i = 0; i < ranks; ++i) gpus[i] = i;
  return Communicator(std::vector<int>(ranks, 0), std::move(gpus));
}

Communicator Communicator::grid(int nodes, int gpus_per_node) {
  if (nodes < 1 || gpus_per_node < 1) {
    throw RequestError(
        fmt::format("a grid communicator needs nodes >= 1 and gpus per node >= 1, got {} x {}",
                    nodes, gpus_per_node));
  }
  std::vector<int> node(nodes * gpus_per_node);
  std::vector<int> gpus(node.size());
  for (std::size_t i = 0; i < node.size(); ++i) {
    node[i] = static_cast<int>(i) / gpus_per_node;
    gpus[i] = static_cast<int>(i);
  }
  return Communicator(node, std::move(gpus));
}

Communicator::Communicator(const std::vector<int>& nodes, std::vector<int> gpus)
    : gpu_(std::move(gpus)) {
  if (nodes.empty()) throw RequestError("a communicator needs at least 1 rank, got 0");
  if (nodes.size() != gpu_.size()) {
    throw RequestError(
        fmt::format("communicator: {} node ids for {} GPUs", nodes.size(), gpu_.size()));
  }
  std::set<int> seen;
  for (std::size_t r = 0; r < gpu_.size(); ++r) {
    if (!seen.insert(gpu_[r]).second) {
      throw RequestError(
          fmt::format("communicator: GPU {} appears twice (ranks {} and {})", gpu_[r],
                      std::find(gpu_.begin(), gpu_.end(), gpu_[r]) - gpu_.begin(), r));
    }
  }
  std::map<int, int> dense;  // original node id -> dense id, by first appearance
  for (int n : nodes) {
    if (dense.count(n) == 0) {
      const int id = static_cast<int>(dense.size());
      dense[n] = id;
    }
  }
  node_ranks_.resize(dense.size());
  for (std::size_t r = 0; r < nodes.size(); ++r) {
    const int n = dense[nodes[r]];
    node_.push_back(n);
    local_.push_back(static_cast<int>(node_ranks_[n].size()));
    node_ranks_[n].push_back(static_cast<int>(r));
  }
  min_per_node_ = static_cast<int>(node_ranks_[0].size());
  for (const auto& ranks : node_ranks_) {
    max_per_node_ = std::max(max_per_node_, static_cast<int>(ranks.size()));
    min_per_node_ = std::min(min_per_node_, static_cast<int>(ranks.size()));
    if (ranks.size() != node_ranks_[0].size()) uniform_ = false;
  }
}

}  // namespace collsim
