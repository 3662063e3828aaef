// Large arrays of the CPU backend: std::vector with an allocator that leaves new entries
// unwritten (resize does not zero what the caller writes anyway: set_points' arrays, tens of MB,
// were zeroed and then overwritten) and asks the kernel for transparent huge pages on large
// blocks (Linux madvise): one page fault per 2 MiB instead of per 4 KiB at the first set_points,
// and fewer TLB misses where the sort reads and writes these arrays at many places. Not measured
// apart (docs/benchmarks.md, 2026-11-27: the first set_points as a whole went from 480 to 180 ms).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace fieldft::cpu {

template <class U>
struct BigAllocator {
  using value_type = U;
  static constexpr std::size_t kHuge = std::size_t(2) << 20;  // x86-64 huge page
  BigAllocator() = default;
  template <class V>
  BigAllocator(const BigAllocator<V>&) {}  // NOLINT(google-explicit-constructor): allocator rebind

  U* allocate(std::size_t n) {
    // Cache-line aligned only, not to a huge page: that would put every array of SortedPoints at
    // the same address modulo 2 MiB, and execute's loads of one point's entries (one from each
    // array) in the same cache sets. (An A/B of execute showed no difference beyond the noise
    // either way; this keeps the layout std::vector had.) Huge pages are asked for the block's
    // aligned interior.
    const std::size_t bytes = (n * sizeof(U) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t lo = (a + kHuge - 1) / kHuge * kHuge, hi = (a + bytes) / kHuge * kHuge;
    if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
    return static_cast<U*>(p);
  }
  void deallocate(U* p, std::size_t) noexcept { std::free(p); }

  // Default-initialisation: no zeroing of trivial types on resize.
  template <class V, class... Args>
  void construct(V* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) ::new (static_cast<void*>(p)) V;
    else ::new (static_cast<void*>(p)) V(std::forward<Args>(args)...);
  }

  template <class V>
  bool operator==(const BigAllocator<V>&) const noexcept { return true; }
};

template <class U>
using BigVector = std::vector<U, BigAllocator<U>>;

}  // namespace fieldft::cpu
