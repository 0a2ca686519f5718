#include "simulator/symmetry.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

namespace collsim::detail {

namespace {

// What the engine sees of a route: each link's kind, bandwidth and latency, in order.
using Signature = std::vector<std::tuple<int, double, std::int64_t>>;

struct Connections {
  int n = 0, channels = 0;
  std::vector<int> next, prev;       // [r * channels + c], -1 for none
  std::vector<int> signature;        // interned route signature of r -> next (-1 for none)
  std::vector<std::uint32_t> first;  // route of r -> next: links[first[id], first[id + 1])
  std::vector<std::int32_t> links;
  std::size_t link_count = 0;
};

Connections connections(const Schedule& s, const Topology& topo, const std::vector<int>& gpu) {
  Connections k;
  k.n = s.rank_count();
  k.channels = s.channel_count();
  k.link_count = topo.links().size();
  const std::size_t streams = static_cast<std::size_t>(k.n) * k.channels;
  k.next.assign(streams, -1);
  k.prev.assign(streams, -1);
  k.signature.assign(streams, -1);
  k.first.reserve(streams + 1);
  std::map<Signature, int> interned;
  for (int r = 0; r < k.n; ++r) {
    for (int c = 0; c < k.channels; ++c) {
      const std::size_t id = static_cast<std::size_t>(r) * k.channels + c;
      k.first.push_back(static_cast<std::uint32_t>(k.links.size()));
      // Neighbours are fixed per stream (rank_symmetric), so the first ops name them.
      auto cursor = s.source()->stream(r, c);
      for (int i = 0; i < 4 && cursor->index() < cursor->size(); ++i, cursor->next()) {
        const Op& op = cursor->op();
        if (k.next[id] < 0 && sends(op.kind)) k.next[id] = op.send_peer;
        if (k.prev[id] < 0 && receives(op.kind)) k.prev[id] = op.recv_peer;
      }
      if (k.next[id] < 0) continue;
      // The engine's route for this connection (engine_setup.cpp route_between).
      const Route& route = topo.route(topo.gpu_of(Rank{gpu[r]}), topo.gpu_of(Rank{gpu[k.next[id]]}),
                                      topo.route_flow(s.info().request_channel(c)));
      Signature sig;
      for (LinkId l : route.links) {
        const Link& link = topo.link(l);
        sig.emplace_back(static_cast<int>(link.kind), link.bandwidth.bytes_per_second(),
                         link.latency.ps());
        k.links.push_back(l.value);
      }
      k.signature[id] = interned.emplace(sig, static_cast<int>(interned.size())).first->second;
    }
  }
  k.first.push_back(static_cast<std::uint32_t>(k.links.size()));
  return k;
}

// Conditions 2 and 3: every stream's neighbours and route shift with it.
bool shifts_alike(const Connections& k, int p) {
  const int n = k.n, ch = k.channels;
  auto shifted = [&](int peer) { return peer < 0 ? -1 : (peer + p) % n; };
  for (int r = 0; r < n; ++r) {
    const int image = (r + p) % n;
    for (int c = 0; c < ch; ++c) {
      const std::size_t a = static_cast<std::size_t>(r) * ch + c;
      const std::size_t b = static_cast<std::size_t>(image) * ch + c;
      if (k.next[b] != shifted(k.next[a]) || k.prev[b] != shifted(k.prev[a])) return false;
      if (k.signature[b] != k.signature[a]) return false;
    }
  }
  return true;
}

// Condition 4, exact case: each link in use carries connections of one period only (the
// period of the sender: ranks [jp, (j+1)p)), and the connections sharing a link in period j
// are those sharing one in period 0, shifted by jp.
bool periods_apart(const Connections& k, int p) {
  const int n = k.n, ch = k.channels;
  const std::size_t streams = static_cast<std::size_t>(n) * ch;
  std::vector<std::int32_t> owner(k.link_count, -1);
  std::vector<std::vector<int>> users(k.link_count);
  for (std::size_t id = 0; id < streams; ++id) {
    const int period = static_cast<int>(id) / ch / p;
    const int rel = static_cast<int>(id) - period * p * ch;
    for (std::uint32_t i = k.first[id]; i < k.first[id + 1]; ++i) {
      const std::int32_t l = k.links[i];
      if (owner[l] >= 0 && owner[l] != period) return false;
      owner[l] = period;
      users[l].push_back(rel);
    }
  }
  std::vector<std::pair<int, std::vector<int>>> groups;  // (period, users relative to it)
  for (std::size_t l = 0; l < k.link_count; ++l) {
    if (users[l].size() < 2) continue;
    std::sort(users[l].begin(), users[l].end());
    groups.emplace_back(owner[l], std::move(users[l]));
  }
  std::sort(groups.begin(), groups.end());
  const auto first_end =
      std::find_if(groups.begin(), groups.end(), [](const auto& g) { return g.first != 0; });
  const std::size_t per = static_cast<std::size_t>(first_end - groups.begin());
  if (groups.size() != per * static_cast<std::size_t>(n / p)) return false;
  for (std::size_t i = per; i < groups.size(); ++i) {
    if (groups[i].first != static_cast<int>(i / per) ||
        groups[i].second != groups[i % per].second) {
      return false;
    }
  }
  return true;
}

// Condition 4 where periods share links: the shift as a map of links (link i of (r, c)'s
// route to link i of (r + p, c)'s) must be one-to-one with every orbit N / p long. Returns,
// per link, the first link of its orbit (-1 for links no route crosses); empty if it fails.
std::vector<std::int32_t> link_orbits(const Connections& k, int p) {
  const int n = k.n, ch = k.channels;
  const std::size_t streams = static_cast<std::size_t>(n) * ch;
  std::vector<std::int32_t> image(k.link_count, -1), preimage(k.link_count, -1);
  for (std::size_t id = 0; id < streams; ++id) {
    const int r = static_cast<int>(id) / ch;
    const std::size_t twin = static_cast<std::size_t>((r + p) % n) * ch + id % ch;
    // Same signature (shifts_alike), so the same number of links.
    for (std::uint32_t i = k.first[id], j = k.first[twin]; i < k.first[id + 1]; ++i, ++j) {
      const std::int32_t from = k.links[i], to = k.links[j];
      if (image[from] < 0 && preimage[to] < 0) {
        image[from] = to;
        preimage[to] = from;
      } else if (image[from] != to || preimage[to] != from) {
        return {};
      }
    }
  }
  std::vector<std::int32_t> rep(k.link_count, -1);
  const int orbit = n / p;
  for (std::size_t l = 0; l < k.link_count; ++l) {
    if (image[l] < 0 || rep[l] >= 0) continue;
    int length = 0;
    std::int32_t m = static_cast<std::int32_t>(l);
    do {
      rep[m] = static_cast<std::int32_t>(l);
      m = image[m];
      ++length;
    } while (m >= 0 && m != static_cast<std::int32_t>(l) && length <= orbit);
    if (m != static_cast<std::int32_t>(l) || length != orbit) return {};
  }
  return rep;
}

}  // namespace

RankSymmetry rank_symmetry(const Schedule& s, const Topology& topo, const std::vector<int>& gpu,
                           bool shared_links) {
  const int n = s.actor_count();  // a rank-symmetric schedule has no switch actors
  RankSymmetry none{n, {}};
  if (n < 2 || !s.source()->rank_symmetric()) return none;
  const Connections k = connections(s, topo, gpu);
  // The exact shortcut where there is one, even at a longer period; then folded links.
  std::vector<int> alike;
  for (int p = 1; p < n; ++p) {
    if (n % p != 0 || !shifts_alike(k, p)) continue;
    if (!shared_links || periods_apart(k, p)) return RankSymmetry{p, {}};
    alike.push_back(p);
  }
  // Folded links stand each period's flows in for every other's on a shared link. Where the
  // channels carry unequal parts (NCCL's division, Request::split, or a count the channels do
  // not divide), that drifted 1.1-1.5 % from the full simulation on one dgx-h100 node at 24
  // channels, far beyond the roundings of symmetry.hpp (channel_fold_test.cpp,
  // UnevenSplitsFoldExactly): those are simulated in full.
  if (!s.info().channels_alike()) return none;
  for (int p : alike) {
    std::vector<std::int32_t> rep = link_orbits(k, p);
    if (!rep.empty()) return RankSymmetry{p, std::move(rep)};
  }
  return none;
}

namespace {

// Whether NCCL channel k (IR channels [k g, (k + 1) g)) copies channel j, given for each actor
// and NCCL channel the first channel with the same dependencies (same_deps[a * channels + c]).
bool copies(const Schedule& s, const Topology& topo, const std::vector<int>& device, int actors,
            int g, int j, int k, const std::vector<int>& same_deps, int channels) {
  const std::uint32_t flow_j = topo.route_flow(j);
  const std::uint32_t flow_k = topo.route_flow(k);
  std::vector<std::int32_t> peers;
  for (int a = 0; a < actors; ++a) {
    const std::size_t row = static_cast<std::size_t>(a) * static_cast<std::size_t>(channels);
    if (same_deps[row + j] != same_deps[row + k]) return false;
    peers.clear();
    for (int i = 0; i < g; ++i) {
      if (!s.source()->same_shape(a, j * g + i, k * g + i, peers)) return false;
    }
    if (flow_j == flow_k) continue;
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    for (std::int32_t peer : peers) {
      const DeviceId from{device[a]}, to{device[peer]};
      if (topo.route(from, to, flow_j).links != topo.route(from, to, flow_k).links) return false;
    }
  }
  return true;
}

// IR channels per NCCL channel (ScheduleInfo::request_channel); 0 when they do not divide.
int ir_per_nccl_channel(const Schedule& s) {
  const int ir = s.channel_count();
  const int g = std::max(1, ir / std::max(1, s.info().requested_channels));
  return ir % g == 0 ? g : 0;
}

}  // namespace

ChannelFold no_fold(const Schedule& s) {
  const int ir = s.channel_count();
  const int g = ir_per_nccl_channel(s);
  ChannelFold f;
  for (int c = 0; c < ir; ++c) f.simulated.push_back(c);
  f.weight.assign(static_cast<std::size_t>(ir), 1);
  f.nccl_channels = f.nccl_simulated = g > 0 ? ir / g : 1;
  return f;
}

ChannelFold fold_channels(const Schedule& s, const Topology& topo, const std::vector<int>& device,
                          int actors) {
  const int g = ir_per_nccl_channel(s);
  if (g == 0 || s.channel_count() / g < 2) return no_fold(s);
  ChannelFold f;
  f.nccl_channels = s.channel_count() / g;
  // Dependencies relative to their NCCL channel; one that crosses NCCL channels stops the fold.
  // Each actor's are compared here and dropped, keeping only which channels have the same ones
  // (a schedule can have millions: one per piece for NVLSTree's switches).
  const int nc = f.nccl_channels;
  std::vector<int> same_deps(static_cast<std::size_t>(actors) * static_cast<std::size_t>(nc));
  // They are compared as canonical runs (DependencyRun): equal runs, equal lists, without the
  // list (a 1 TiB tree's roots have a dependency per piece, millions).
  std::vector<std::vector<DependencyRun>> deps(static_cast<std::size_t>(nc));
  std::vector<DependencyRun> runs;  // one actor's, the buffer kept from actor to actor
  for (int a = 0; a < actors; ++a) {
    for (auto& d : deps) d.clear();
    runs.clear();
    s.append_dependency_runs(a, 0, s.channel_count(), runs);
    for (DependencyRun d : runs) {
      const int k = d.first.channel / g;
      if (d.first.after_channel / g != k) return no_fold(s);
      d.first.channel -= k * g;
      d.first.after_channel -= k * g;
      deps[k].push_back(d);
    }
    for (int k = 0; k < nc; ++k) {
      int first = 0;
      while (deps[first] != deps[k]) ++first;
      same_deps[static_cast<std::size_t>(a) * static_cast<std::size_t>(nc) + k] = first;
    }
  }
  // Each channel copies the first representative it matches, or becomes one.
  std::vector<int> reps;
  std::vector<std::uint32_t> count;
  for (int k = 0; k < nc; ++k) {
    std::size_t r = 0;
    while (r < reps.size() && !copies(s, topo, device, actors, g, reps[r], k, same_deps, nc)) ++r;
    if (r == reps.size()) {
      reps.push_back(k);
      count.push_back(0);
    }
    ++count[r];
  }
  f.nccl_simulated = static_cast<int>(reps.size());
  for (std::size_t r = 0; r < reps.size(); ++r) {
    for (int i = 0; i < g; ++i) {
      f.simulated.push_back(reps[r] * g + i);
      f.weight.push_back(count[r]);
    }
  }
  return f;
}

}  // namespace collsim::detail
