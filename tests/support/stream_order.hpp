// A check that a call only enqueues device work (compiled per backend; GPU executables only):
// the context's stream is held by a host function waiting for a flag while the call runs; a call
// that synchronises the stream cannot return before the flag is released. A watchdog releases
// the flag after 20 s, so that such a call fails the test instead of hanging it.
#pragma once

#if FIELDFT_TEST_BACKEND == 2

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "fieldft/context.hpp"

namespace fieldft::test {

// Runs f() with c's stream held; true when f returned before the hold was released. Waits for
// the stream afterwards. Stage data BEFORE calling (uploads synchronise).
template <class F>
bool returns_before_the_work(const Context& c, F&& f) {
  std::atomic<bool> release{false};
  auto wait = [](void* flag) {
    while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  if (cudaLaunchHostFunc(static_cast<cudaStream_t>(c.stream()), wait, &release) != cudaSuccess)
    throw std::runtime_error("returns_before_the_work: cudaLaunchHostFunc failed");
  std::thread watchdog([&release] {
    for (int i = 0; i < 20000 && !release.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    release = true;
  });
  bool returned_first = false;
  try {
    f();
    returned_first = !release.load();
  } catch (...) {
    release = true;
    watchdog.join();
    throw;
  }
  release = true;
  watchdog.join();
  c.synchronize();
  return returned_first;
}

}  // namespace fieldft::test

#endif  // FIELDFT_TEST_BACKEND == 2
