// Large work arrays of the CPU backend: std::vector with an allocator that leaves new entries
// unwritten (resize does not zero what the caller writes anyway) and asks the kernel for
// transparent huge pages on large blocks (Linux madvise). The bin-sorted scatter of set_points
// writes to thousands of places in each array at once; with 4 KiB pages nearly every such write
// misses the TLB, with 2 MiB pages few do.
#pragma once

#include <cstddef>
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
    const std::size_t bytes = n * sizeof(U);
    // Blocks of at least two huge pages start on a huge page; smaller ones on a cache line.
    const std::size_t align = bytes >= 2 * kHuge ? kHuge : 64;
    void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align == kHuge) madvise(p, (bytes + align - 1) / align * align, MADV_HUGEPAGE);  // a hint: failure is harmless
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
