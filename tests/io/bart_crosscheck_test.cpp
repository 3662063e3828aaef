// fieldft and BART exchange data both ways: files written by fieldft are read by the `bart`
// tool (Debian package bart), files written by `bart` are read by fieldft, and `bart nufft` on a
// trajectory and an image written by fieldft agrees with fieldft's NUFFT under the conventions
// documented in src/io/cfl.hpp (same sign, same trajectory units, BART's 1/sqrt(voxels) factor).
// Skipped, with the reason, when `bart` is not on PATH.
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "fieldft/nufft.hpp"
#include "io/cfl.hpp"
#include "io_test_common.hpp"

namespace fieldft::io {
namespace {

using C = std::complex<float>;

bool have_bart() { return std::system("command -v bart >/dev/null 2>&1") == 0; }

// Runs a shell command; returns its exit status and standard output.
std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, ""};
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class BartTest : public test::IoTest {
 protected:
  void SetUp() override {
    if (!have_bart()) GTEST_SKIP() << "`bart` is not on PATH (Debian: apt-get install bart): BART cross-checks skipped";
    test::IoTest::SetUp();
  }

 public:
  using test::IoTest::path;
  std::string bart(const std::string& args) {
    const auto [rc, out] = run("cd '" + dir_.string() + "' && bart " + args);
    EXPECT_EQ(rc, 0) << "bart " << args << ":\n" << out;
    return out;
  }
};

TEST_F(BartTest, BartReadsFieldftFilesAndFieldftReadsBarts) {
  const std::vector<std::int64_t> shape = {6, 5};
  std::vector<C> a(30), b(30);
  for (std::size_t i = 0; i < 30; ++i) {
    a[i] = C(static_cast<float>(i), 1.0f);
    b[i] = C(0.5f, -static_cast<float>(i) / 4);
  }
  write_cfl_image(path("a"), shape, 1, a);
  write_cfl_image(path("b"), shape, 1, b);
  // bart show prints what it read: the dimensions and the values.
  const std::string dims = bart("show -m a");
  EXPECT_NE(dims.find("AoD:\t6\t5\t1\t"), std::string::npos) << dims;
  // bart fmac multiplies elementwise; fieldft reads BART's output.
  bart("fmac a b ab");
  const BartImage ab = read_cfl_image(path("ab"));
  ASSERT_EQ(ab.shape, shape);
  for (std::size_t i = 0; i < 30; ++i) EXPECT_NEAR(std::abs(ab.data[i] - a[i] * b[i]), 0.0f, 1e-4f * std::abs(a[i] * b[i]) + 1e-6f);
  // A Cartesian trajectory written by `bart traj` ([3, samples, spokes]): 16 readout samples
  // at kx = -8 ... 7 and 5 lines at ky = -2 ... 2, the integer frequencies of a 16 x 5 grid, i.e.
  // cycles/FOV, fieldft's unit.
  bart("traj -x 16 -y 5 t");
  const BartTrajectory t = read_cfl_trajectory(path("t"));
  EXPECT_EQ(t.samples, 16);
  EXPECT_EQ(t.spokes, 5);
  EXPECT_EQ(t.dim, 2);
  for (std::size_t j = 0; j < 80; ++j) {
    EXPECT_EQ(t.k[0][j], static_cast<float>(static_cast<int>(j % 16) - 8));
    EXPECT_EQ(t.k[1][j], static_cast<float>(static_cast<int>(j / 16) - 2));
  }
}

// fieldft's type 2 NUFFT (isign -1, points 2π k/N, modes in increasing order: mode p − ⌊N/2⌋ at
// index p, which is voxel p of the image) against `bart nufft` on the same files. BART's centre
// is N/2 per axis: fieldft's ⌊N/2⌋ for even N; for odd N half a voxel further, which is the
// factor exp(iπ k/N) per odd axis. `bart nufft -s` (exact DFT) is unscaled; the default gridding
// NUFFT carries 1/sqrt(voxels) and is used only for even sizes and |k| <= 0.35 N (see cfl.hpp).
void compare_nufft(BartTest& t, const std::vector<std::int64_t>& shape, std::int64_t samples, std::int64_t spokes,
                   std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  std::size_t nvox = 1;
  bool even = true;
  for (const auto n : shape) {
    nvox *= static_cast<std::size_t>(n);
    even = even && n % 2 == 0;
  }
  std::vector<C> image(nvox);
  for (auto& v : image) v = C(static_cast<float>(u(rng)), static_cast<float>(u(rng)));
  const auto m = static_cast<std::size_t>(samples * spokes);
  const double reach = even ? 0.7 : 1.0;  // k in [-reach N/2, reach N/2)
  std::array<std::vector<float>, 3> k;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    k[d].resize(m);
    for (auto& v : k[d]) v = static_cast<float>(reach * u(rng) * static_cast<double>(shape[d]));
  }
  write_cfl_image(t.path("img"), shape, 1, image);
  write_cfl_trajectory<float>(t.path("traj"), samples, spokes, k[0], k[1],
                              shape.size() == 3 ? std::span<const float>(k[2]) : std::span<const float>{});

  std::array<std::vector<double>, 3> x;
  std::vector<std::complex<double>> shift(m, 1.0);  // BART's centre N/2 against fieldft's ⌊N/2⌋
  for (std::size_t d = 0; d < shape.size(); ++d)
    for (std::size_t j = 0; j < m; ++j) {
      x[d].push_back(2 * M_PI * k[d][j] / static_cast<double>(shape[d]));
      if (shape[d] % 2) shift[j] *= std::polar(1.0, M_PI * k[d][j] / static_cast<double>(shape[d]));
    }
  const double* z = shape.size() == 3 ? x[2].data() : nullptr;
  std::vector<std::complex<double>> f(image.begin(), image.end()), c(m);
  nufft::Plan<double> plan(2, shape, -1, 1, 1e-12);
  plan.set_points(static_cast<std::int64_t>(m), x[0].data(), x[1].data(), z);
  plan.execute(f.data(), c.data());
  for (std::size_t j = 0; j < m; ++j) c[j] *= shift[j];
  const auto rel = [](const auto& got, const auto& want, double scale) {
    double num = 0, den = 0;
    for (std::size_t j = 0; j < want.size(); ++j) {
      num += std::norm(std::complex<double>(got[j]) - scale * want[j]);
      den += std::norm(scale * want[j]);
    }
    return std::sqrt(num / den);
  };

  // -s, BART's exact DFT, unscaled: agreement to float rounding.
  t.bart("nufft -s traj img ksp");
  const BartKspace exact = read_cfl_kspace(t.path("ksp"));
  ASSERT_EQ(exact.samples, samples);
  ASSERT_EQ(exact.spokes, spokes);
  EXPECT_LT(rel(exact.data, c, 1.0), 1e-5) << "bart nufft -s vs fieldft";
  if (even) {
    // BART's gridding NUFFT: 1/sqrt(voxels), within its own accuracy (cfl.hpp).
    t.bart("nufft traj img ksp");
    EXPECT_LT(rel(read_cfl_kspace(t.path("ksp")).data, c, 1.0 / std::sqrt(static_cast<double>(nvox))), 1e-2)
        << "bart nufft vs fieldft / sqrt(voxels)";
  }
  // The adjoint: bart nufft -s -a = fieldft's type 1 (isign +1) with the conjugate shift.
  std::vector<C> kdata(m);
  for (auto& v : kdata) v = C(static_cast<float>(u(rng)), static_cast<float>(u(rng)));
  write_cfl_kspace(t.path("kd"), samples, spokes, 1, kdata);
  std::string dims;
  for (std::size_t d = 0; d < 3; ++d) {
    if (d) dims += ':';
    dims += std::to_string(d < shape.size() ? shape[d] : 1);
  }
  t.bart("nufft -s -a -d " + dims + " traj kd adj");
  const BartImage adj = read_cfl_image(t.path("adj"));
  ASSERT_EQ(adj.shape, shape);
  std::vector<std::complex<double>> cin(m), fout(nvox);
  for (std::size_t j = 0; j < m; ++j) cin[j] = std::complex<double>(kdata[j]) * std::conj(shift[j]);
  nufft::Plan<double> plan1(1, shape, +1, 1, 1e-12);
  plan1.set_points(static_cast<std::int64_t>(m), x[0].data(), x[1].data(), z);
  plan1.execute(cin.data(), fout.data());
  EXPECT_LT(rel(adj.data, fout, 1.0), 1e-5) << "bart nufft -s -a vs fieldft's adjoint";
}

TEST_F(BartTest, NufftAgrees2D) { compare_nufft(*this, {24, 20}, 40, 6, 1); }
TEST_F(BartTest, NufftAgrees2DOddSizes) { compare_nufft(*this, {15, 21}, 30, 4, 2); }
TEST_F(BartTest, NufftAgrees3D) { compare_nufft(*this, {12, 10, 8}, 30, 5, 3); }

}  // namespace
}  // namespace fieldft::io
