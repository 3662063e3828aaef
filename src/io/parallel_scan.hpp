// fieldft::io::first_where: the first index of a large array where a test holds, over pieces on
// several threads (the readers check every value of gigabyte arrays for NaN/Inf: one core took
// ~0.2 s per GB). std::thread rather than OpenMP: the readers are also built alone, for fuzzing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace fieldft::io {

// The smallest i < n with bad(i), or n when there is none. bad must be safe to call from several
// threads at once. Pieces of at least 4M indices, at most 8 threads; one thread below that.
template <class Bad>
std::size_t first_where(std::size_t n, const Bad& bad) {
  const auto scan = [&bad](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      if (bad(i)) return i;
    return end;
  };
  constexpr std::size_t kPiece = std::size_t{1} << 22;
  const std::size_t pieces = std::min<std::size_t>({n / kPiece, std::max(1u, std::thread::hardware_concurrency()), 8});
  if (pieces < 2) return scan(0, n);
  const std::size_t step = (n + pieces - 1) / pieces;
  std::vector<std::size_t> found(pieces, n);
  std::vector<std::thread> threads;
  threads.reserve(pieces);
  std::size_t started = 0;
  try {
    for (; started < pieces; ++started)
      threads.emplace_back([&, p = started] {
        const std::size_t begin = p * step, end = std::min(n, begin + step);
        const std::size_t i = scan(begin, end);
        found[p] = i < end ? i : n;
      });
  } catch (const std::system_error&) {  // no thread to be had: scan what is left here
  }
  if (started < pieces) {
    const std::size_t i = scan(started * step, n);
    found[started] = i;
  }
  for (auto& t : threads) t.join();
  return *std::min_element(found.begin(), found.end());
}

}  // namespace fieldft::io
