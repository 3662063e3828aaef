// Writes the seed corpus of cfl_fuzz into the directory argv[1]: datasets from fieldft's BART
// writers (k-space, 2D and 3D trajectories, images, coil maps, a generic array), each as one
// file: the .hdr text, a NUL byte, the .cfl data (cfl_fuzz.cpp's input format).
#include <complex>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "io/cfl.hpp"

namespace {

namespace fs = std::filesystem;
using C = std::complex<float>;

std::vector<C> ramp(std::size_t n) {
  std::vector<C> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = C(static_cast<float>(i) - 2, 0.5f * static_cast<float>(i));
  return v;
}
std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
// Joins base.hdr and base.cfl into one seed and removes the pair.
void join(const fs::path& dir, const std::string& name) {
  const fs::path base = dir / name;
  const std::string seed = slurp(base.string() + ".hdr") + std::string(1, '\0') + slurp(base.string() + ".cfl");
  std::ofstream(dir / (name + ".seed"), std::ios::binary) << seed;
  fs::remove(base.string() + ".hdr");
  fs::remove(base.string() + ".cfl");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const fs::path dir = argv[1];
  fs::create_directories(dir);
  using namespace fieldft::io;
  write_cfl_kspace((dir / "kspace").string(), 4, 3, 2, ramp(24));
  join(dir, "kspace");
  const std::vector<float> kx = {-2, -1, 0, 1, 1.5f, 2}, ky = {0, 1, 0, -1, 0.25f, 2}, kz = {1, 1, 1, 0, 0, 0};
  write_cfl_trajectory<float>((dir / "traj2d").string(), 3, 2, kx, ky);
  join(dir, "traj2d");
  write_cfl_trajectory<float>((dir / "traj3d").string(), 2, 3, kx, ky, kz);
  join(dir, "traj3d");
  write_cfl_image((dir / "image").string(), std::vector<std::int64_t>{4, 3}, 1, ramp(12));
  join(dir, "image");
  write_cfl_image((dir / "maps").string(), std::vector<std::int64_t>{2, 2, 2}, 3, ramp(24));
  join(dir, "maps");
  write_cfl((dir / "array").string(), std::vector<std::int64_t>{5}, ramp(5));
  join(dir, "array");
  return 0;
}
