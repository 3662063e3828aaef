// dist::for_each_problem: independent problems dealt dynamically to places, one host thread per
// place (include/fieldft/dist.hpp).
#include <atomic>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "fieldft/dist.hpp"

namespace fieldft::dist {

namespace {

// The first failure, rethrown after the join with the problem and the place named.
struct FirstFailure {
  std::mutex mutex;
  std::exception_ptr error;
  std::int64_t index = -1;
  std::string place;

  void keep(std::int64_t i, const Context& where) {
    std::lock_guard<std::mutex> lock(mutex);
    if (error) return;
    error = std::current_exception();
    index = i;
    place = where.describe();
  }

  [[noreturn]] void rethrow() const {
    const std::string where = "dist::for_each_problem: problem " + std::to_string(index) + " on " + place + ": ";
    try {
      std::rethrow_exception(error);
    } catch (const Error& e) {
      throw Error(e.code(), where + e.what());
    } catch (const std::bad_alloc&) {
      throw Error(ErrorCode::kOutOfMemory, where + "out of memory");
    } catch (const std::exception& e) {
      throw std::runtime_error(where + e.what());
    }
    // Anything else (not a std::exception) goes out as it came.
  }
};

}  // namespace

void for_each_problem(std::int64_t count, std::span<const Context> places,
                      const std::function<void(std::int64_t index, const Context& place)>& fn) {
  require(count >= 0, ErrorCode::kInvalidArgument,
          "dist::for_each_problem: count " + std::to_string(count) + " (expected >= 0)");
  require(!places.empty(), ErrorCode::kInvalidArgument,
          "dist::for_each_problem: no places (expected at least one context)");
  require(static_cast<bool>(fn), ErrorCode::kInvalidArgument,
          "dist::for_each_problem: the function is empty");

  std::atomic<std::int64_t> next{0};
  std::atomic<bool> stop{false};
  FirstFailure failure;
  // Each worker takes the next index until none is left or some problem failed.
  const auto work = [&](const Context& place) {
    for (;;) {
      if (stop.load(std::memory_order_acquire)) return;
      const std::int64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= count) return;
      try {
        fn(i, place);
      } catch (...) {
        failure.keep(i, place);
        stop.store(true, std::memory_order_release);
        return;
      }
    }
  };

  if (places.size() == 1) {
    work(places[0]);  // one place: no thread needed
  } else {
    std::vector<std::thread> threads;
    threads.reserve(places.size());
    try {
      for (const Context& place : places) threads.emplace_back(work, std::cref(place));
    } catch (...) {
      // A thread could not start: stop the dealing, join what started, then report.
      stop.store(true);
      for (auto& t : threads) t.join();
      throw Error(ErrorCode::kOutOfMemory, "dist::for_each_problem: could not start a thread per place (" +
                                               std::to_string(places.size()) + " places)");
    }
    for (auto& t : threads) t.join();
  }
  if (failure.error) failure.rethrow();
}

}  // namespace fieldft::dist
