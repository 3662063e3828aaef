// fieldft::io parallel pieces: a range cut into pieces, each on a thread of its own, for the
// readers' work on gigabyte arrays (the copy out of the page cache, the NaN/Inf checks: one core
// took ~1 s per 2 GB). std::thread rather than OpenMP: the readers are also built alone, for fuzzing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace fieldft::io {

// How many pieces for_pieces cuts [0, n) into: at least min_piece each, at most 8 and the cores.
inline std::size_t piece_count(std::size_t n, std::size_t min_piece) {
  return std::max<std::size_t>(
      1, std::min<std::size_t>({n / min_piece, std::max(1u, std::thread::hardware_concurrency()), 8}));
}

// fn(p, begin, end) for the `pieces` equal pieces p of [0, n), each on a thread of its own (one
// piece: on this thread). Where no more threads can be had, this thread does the rest as one
// last piece, numbered as the first it covers. fn must be safe to call from several threads.
template <class Fn>
void for_pieces(std::size_t n, std::size_t pieces, const Fn& fn) {
  if (pieces <= 1) {
    fn(std::size_t{0}, std::size_t{0}, n);
    return;
  }
  const std::size_t step = (n + pieces - 1) / pieces;
  std::vector<std::thread> threads;
  threads.reserve(pieces);
  std::size_t started = 0;
  try {
    for (; started < pieces; ++started)
      threads.emplace_back([&fn, p = started, step, n] { fn(p, p * step, std::min(n, (p + 1) * step)); });
  } catch (const std::system_error&) {  // no thread to be had: the rest on this one
  }
  if (started < pieces) fn(started, started * step, n);
  for (auto& t : threads) t.join();
}

// The smallest i < n with bad(i), or n when there is none, over pieces of at least 4M indices.
template <class Bad>
std::size_t first_where(std::size_t n, const Bad& bad) {
  const std::size_t pieces = piece_count(n, std::size_t{1} << 22);
  std::vector<std::size_t> found(pieces, n);
  for_pieces(n, pieces, [&](std::size_t p, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      if (bad(i)) {
        found[p] = i;
        return;
      }
  });
  return *std::min_element(found.begin(), found.end());
}

}  // namespace fieldft::io
