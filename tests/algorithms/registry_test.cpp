#include "algorithms/generators/registry.hpp"

#include <gtest/gtest.h>

#include "topology/error.hpp"

namespace collsim {
namespace {

std::string error_of(const Request& r) {
  try {
    plan(r);
  } catch (const RequestError& e) {
    return e.what();
  }
  return "";
}

TEST(Registry, UnknownAlgorithmSuggestsTheNearest) {
  Request r;
  r.algorithm = "rign";
  EXPECT_EQ(
      error_of(r),
      "unknown algorithm \"rign\": expected one of ring, bintree, dbtree, ring2d, rhd, direct, "
      "binomial, nvls, nvls_tree, pat, collnet_direct, collnet_chain; did you mean \"ring\"?");
}

TEST(Registry, UnsupportedPairListsTheAlgorithmsThatDo) {
  Request r;
  r.algorithm = "bintree";
  r.collective = Collective::kAllToAll;
  EXPECT_EQ(error_of(r),
            "algorithm \"bintree\" does not implement alltoall; algorithms that do: direct");
  r.collective = Collective::kAllReduce;
  r.algorithm = "direct";
  EXPECT_EQ(error_of(r),
            "algorithm \"direct\" does not implement allreduce; algorithms that do: ring, bintree, "
            "dbtree, ring2d, rhd, nvls, nvls_tree, collnet_direct, collnet_chain");
}

TEST(Registry, AutoIsResolvedElsewhere) {
  Request r;
  r.algorithm = "auto";
  EXPECT_EQ(error_of(r),
            "algorithm \"auto\" must be resolved by the selector before planning; name one of "
            "ring, bintree, dbtree, ring2d, rhd, direct, binomial, nvls, nvls_tree, pat, "
            "collnet_direct, collnet_chain");
}

TEST(Registry, RequestChecks) {
  Request r;
  r.collective = Collective::kBroadcast;
  r.comm = Communicator::flat(4);
  r.root = 4;
  EXPECT_EQ(error_of(r), "root 4 is not a rank of this 4-rank communicator");
  r.root = 0;
  r.channels = 0;
  EXPECT_EQ(error_of(r), "channels must be between 1 and 1024, got 0");
}

TEST(Registry, Ring2dNeedsEvenNodes) {
  Request r;
  r.algorithm = "ring2d";
  r.count = 100;
  r.comm = Communicator({0, 0, 1}, {0, 1, 2});
  EXPECT_EQ(error_of(r),
            "ring2d needs the same number of ranks on every node; this communicator has 2 nodes "
            "with between 1 and 2 ranks (use ring or dbtree)");
}

TEST(Registry, ListMatrix) {
  EXPECT_EQ(format_algorithm_matrix(),
            "algorithm      allreduce         allgather         reducescatter     broadcast      "
            "   reduce            gather            scatter           alltoall          barrier  "
            "         sendrecv\n"
            "ring           ll ll128 simple   ll ll128 simple   ll ll128 simple   ll ll128 simple"
            "   ll ll128 simple   -                 -                 -                 -        "
            "         -\n"
            "bintree        ll ll128 simple   -                 -                 ll ll128 simple"
            "   ll ll128 simple   -                 -                 -                 -        "
            "         -\n"
            "dbtree         ll ll128 simple   -                 -                 -              "
            "   -                 -                 -                 -                 -        "
            "         -\n"
            "ring2d         ll ll128 simple   ll ll128 simple   ll ll128 simple   -              "
            "   -                 -                 -                 -                 -        "
            "         -\n"
            "rhd            ll ll128 simple   ll ll128 simple   ll ll128 simple   -              "
            "   -                 -                 -                 -                 -        "
            "         -\n"
            "direct         -                 ll ll128 simple   -                 -              "
            "   -                 ll ll128 simple   ll ll128 simple   ll ll128 simple   -        "
            "         ll ll128 simple\n"
            "binomial       -                 -                 -                 ll ll128 simple"
            "   ll ll128 simple   ll ll128 simple   ll ll128 simple   -                 ll ll128 "
            "simple   -\n"
            "nvls           simple            simple            simple            -              "
            "   -                 -                 -                 -                 -        "
            "         -\n"
            "nvls_tree      simple            -                 -                 -              "
            "   -                 -                 -                 -                 -        "
            "         -\n"
            "pat            -                 simple            simple            -              "
            "   -                 -                 -                 -                 -        "
            "         -\n"
            "collnet_direct simple            simple            simple            -              "
            "   -                 -                 -                 -                 -        "
            "         -\n"
            "collnet_chain  simple            -                 -                 -              "
            "   -                 -                 -                 -                 -        "
            "         -\n");
}

}  // namespace
}  // namespace collsim
