// Session 26 diagnostic: the cost of page-locking 2.15 GB (64 R1 slices' maps + k-space) serially
// and on several threads, cudaHostAlloc, and H2D copy rates of one slice (33.5 MB) pinned/pageable,
// alone and concurrently on 2 devices. Not part of the tree.
#include <cuda_runtime.h>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#include <unistd.h>
using clk = std::chrono::steady_clock;
static double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); } } while (0)
int main() {
  const size_t slice = 32ull * 65536 * 8 * 2;  // maps + k-space of one slice, bytes
  const size_t total = 64 * slice;
  const size_t page = sysconf(_SC_PAGESIZE);
  int ndev = 0; CK(cudaGetDeviceCount(&ndev));
  for (int d = 0; d < ndev; ++d) { CK(cudaSetDevice(d)); CK(cudaFree(0)); }
  std::vector<char> buf(total + page);
  char* base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(buf.data()) + page - 1) / page * page);
  memset(base, 1, total);
  printf("devices %d, total %.2f GB, slice %.1f MB\n", ndev, total / 1e9, slice / 1e6);
  for (int T : {1, 2, 4, 8, 16}) {
    auto t = clk::now();
    std::vector<std::thread> th;
    const size_t chunk = (total / T + page - 1) / page * page;
    for (int i = 0; i < T; ++i) th.emplace_back([&, i] {
      size_t off = i * chunk; if (off >= total) return;
      size_t b = std::min(chunk, total - off);
      CK(cudaHostRegister(base + off, b, cudaHostRegisterPortable));
    });
    for (auto& x : th) x.join();
    double reg = since(t);
    t = clk::now();
    for (int i = 0; i < T; ++i) if (i * chunk < total) CK(cudaHostUnregister(base + i * chunk));
    printf("register %2d threads: %.1f ms (%.1f GB/s); unregister %.1f ms\n", T, reg * 1e3, total / reg / 1e9, since(t) * 1e3);
  }
  {
    void* p = nullptr;
    auto t = clk::now();
    CK(cudaHostAlloc(&p, total, cudaHostAllocPortable));
    double a = since(t);
    t = clk::now();
    memset(p, 0, total);
    double m = since(t);
    for (int T : {1, 4, 8, 16}) {
      t = clk::now();
      std::vector<std::thread> th;
      for (int i = 0; i < T; ++i) th.emplace_back([&, i] { size_t c = total / T; memcpy((char*)p + i * c, base + i * c, c); });
      for (auto& x : th) x.join();
      double s = since(t);
      printf("memcpy pageable->pinned %2d threads: %.1f ms (%.1f GB/s)\n", T, s * 1e3, total / s / 1e9);
    }
    t = clk::now();
    CK(cudaFreeHost(p));
    printf("cudaHostAlloc %.1f ms, first touch %.1f ms, free %.1f ms\n", a * 1e3, m * 1e3, since(t) * 1e3);
  }
  // H2D of one slice: pinned vs pageable, 1..4 threads over the devices.
  void* pinned = nullptr; CK(cudaHostAlloc(&pinned, 4 * slice, cudaHostAllocPortable)); memset(pinned, 1, 4 * slice);
  std::vector<void*> dbuf(4);
  for (int i = 0; i < 4; ++i) { CK(cudaSetDevice(i % ndev)); CK(cudaMalloc(&dbuf[i], slice)); }
  for (int pin = 0; pin < 2; ++pin)
    for (int T : {1, 2, 4}) {
      const int reps = 16;
      auto t = clk::now();
      std::vector<std::thread> th;
      for (int i = 0; i < T; ++i) th.emplace_back([&, i] {
        CK(cudaSetDevice(i % ndev)); cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        for (int r = 0; r < reps; ++r) {
          const char* src = pin ? (char*)pinned + i * slice : base + ((i * reps + r) % 64) * slice;
          CK(cudaMemcpyAsync(dbuf[i], src, slice, cudaMemcpyHostToDevice, s));
        }
        CK(cudaStreamSynchronize(s)); CK(cudaStreamDestroy(s));
      });
      for (auto& x : th) x.join();
      double s = since(t);
      printf("H2D %s, %d threads (devices %s): %.2f ms per slice per thread, aggregate %.1f GB/s\n", pin ? "pinned" : "pageable", T,
             T == 1 ? "0" : T == 2 ? "0,1" : "0,1,0,1", s / reps * 1e3, T * reps * slice / s / 1e9);
    }
  return 0;
}
