// main() of the tests that run under mpirun: MPI starts through dist::mpi_world() (and is
// finalised at exit); rank 0 prints GoogleTest's usual report, the other ranks only their own
// failures, each line marked with the rank; the exit status is 1 on every rank when a test
// failed on any.
#include <gtest/gtest.h>

#include <cstdio>

#include "fieldft/dist.hpp"

namespace {

class FailurePrinter final : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, r.file_name() ? r.file_name() : "?",
                 r.line_number(), r.summary());
    std::fflush(stderr);
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto world = fieldft::dist::mpi_world();
  if (world->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(world->rank()));
  }
  const int failed = RUN_ALL_TESTS();
  return world->agree_max(failed != 0 ? 1 : 0);
}
