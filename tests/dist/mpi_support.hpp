// What the tests run under mpirun share (mpi_test.cpp, mpi_nccl_test.cpp; their main is
// mpi_main.cpp): the world communicator and checks that every rank agrees on.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fieldft/dist.hpp"

namespace fieldft::test {

inline dist::CommPtr world() { return dist::mpi_world(); }

// True on every rank when `ok` holds on every rank.
inline bool all_ok(bool ok) { return world()->agree_max(ok ? 0 : 1) == 0; }

// Every rank's copy of v equals rank 0's, bit for bit (host memory).
template <class C>
bool same_on_every_rank(const std::vector<C>& v) {
  std::vector<C> root(v);
  world()->broadcast_bytes(root.data(), root.size() * sizeof(C), 0);
  return all_ok(std::memcmp(root.data(), v.data(), v.size() * sizeof(C)) == 0);
}

// Ends a test: fails it on every rank when it failed on any (so that rank 0's report shows it).
#define FIELDFT_EXPECT_ALL_RANKS_OK() EXPECT_TRUE(::fieldft::test::all_ok(!::testing::Test::HasFailure()))

}  // namespace fieldft::test
