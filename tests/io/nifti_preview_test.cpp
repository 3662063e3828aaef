// NIfTI-1 output (src/io/nifti.hpp), read back with libnifti's own reader, and the mosaic
// previews (src/io/preview.hpp).
#include <sys/resource.h>

#include <cmath>
#include <csignal>
#include <complex>
#include <numbers>

#include "io/nifti.hpp"
#include "io/preview.hpp"
#include "io_test_common.hpp"

#ifdef FIELDFT_HAVE_NIFTI
#include <nifti/nifti2_io.h>
#endif

namespace fieldft::io {
namespace {

using test::expect_error;
using C = std::complex<float>;

class NiftiTest : public test::IoTest {};
class PreviewTest : public test::IoTest {};

std::vector<C> volume(std::size_t n) {
  std::vector<C> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::polar(1.0f + static_cast<float>(i), 0.01f * static_cast<float>(i) - 1.0f);
  return v;
}

#ifdef FIELDFT_HAVE_NIFTI
struct Read {
  nifti_image* p;
  explicit Read(const std::string& path) : p(nifti_image_read(path.c_str(), 1)) {}
  ~Read() {
    if (p) nifti_image_free(p);
  }
};

TEST_F(NiftiTest, MagnitudePhaseComplexWithVoxelSizesFromTheFov) {
  const std::vector<std::int64_t> shape = {6, 5, 4};
  const auto v = volume(120);
  NiftiOptions o;
  o.fov_mm = {240.0, 200.0, 40.0};
  write_nifti<float>(path("mag.nii"), shape, v, o);
  o.kind = NiftiKind::kPhase;
  write_nifti<float>(path("phase.nii.gz"), shape, v, o);
  o.kind = NiftiKind::kComplex;
  write_nifti<float>(path("cplx.nii"), shape, v, o);

  const Read mag(path("mag.nii"));
  ASSERT_NE(mag.p, nullptr);
  EXPECT_EQ(mag.p->nifti_type, NIFTI_FTYPE_NIFTI1_1);
  EXPECT_EQ(mag.p->datatype, DT_FLOAT32);
  EXPECT_EQ(mag.p->nx, 6);
  EXPECT_EQ(mag.p->ny, 5);
  EXPECT_EQ(mag.p->nz, 4);
  EXPECT_DOUBLE_EQ(mag.p->dx, 40.0);
  EXPECT_DOUBLE_EQ(mag.p->dy, 40.0);
  EXPECT_DOUBLE_EQ(mag.p->dz, 10.0);
  EXPECT_EQ(mag.p->xyz_units, NIFTI_UNITS_MM);
  EXPECT_EQ(mag.p->qform_code, NIFTI_XFORM_SCANNER_ANAT);
  // Voxel (3, 2, 2) = (⌊N/2⌋ per axis) sits at the origin.
  EXPECT_NEAR(mag.p->qoffset_x + 3 * 40.0, 0.0, 1e-9);
  EXPECT_NEAR(mag.p->qoffset_z + 2 * 10.0, 0.0, 1e-9);
  const auto* m = static_cast<const float*>(mag.p->data);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_FLOAT_EQ(m[i], std::abs(v[i]));

  const Read ph(path("phase.nii.gz"));
  ASSERT_NE(ph.p, nullptr);
  const auto* a = static_cast<const float*>(ph.p->data);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(a[i], std::arg(v[i]), 1e-6);

  const Read cx(path("cplx.nii"));
  ASSERT_NE(cx.p, nullptr);
  EXPECT_EQ(cx.p->datatype, DT_COMPLEX64);
  const auto* c = static_cast<const C*>(cx.p->data);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(c[i], v[i]);
  EXPECT_EQ(entries().size(), 3u);  // no temporary file left
}

TEST_F(NiftiTest, FailedWriteLeavesTheOldFile) {
  const std::vector<std::int64_t> small = {2, 2};
  write_nifti<float>(path("keep.nii"), small, volume(4));
  write_nifti<float>(path("keep.nii.gz"), small, volume(4));
  const auto before = test::read_bytes(path("keep.nii")), before_gz = test::read_bytes(path("keep.nii.gz"));
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limit = saved;
  limit.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  const std::vector<std::int64_t> big = {64, 64, 8};
  std::vector<C> noise(64 * 64 * 8);
  for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = C(static_cast<float>((i * 2654435761u) % 1000), 1.0f);
  NiftiOptions o;
  o.kind = NiftiKind::kComplex;
  EXPECT_THROW(write_nifti<float>(path("keep.nii"), big, noise, o), Error);
  EXPECT_THROW(write_nifti<float>(path("keep.nii.gz"), big, noise, o), Error);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(test::read_bytes(path("keep.nii")), before);
  EXPECT_EQ(test::read_bytes(path("keep.nii.gz")), before_gz);
  EXPECT_EQ(entries().size(), 2u);
}

TEST_F(NiftiTest, RealDataAndFrames) {
  const std::vector<std::int64_t> shape = {3, 2, 1, 2};
  const std::vector<double> v = {-1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -12};
  NiftiOptions o;
  o.kind = NiftiKind::kReal;
  o.frame_seconds = 0.5;
  write_nifti<double>(path("r.nii"), shape, v, o);
  const Read r(path("r.nii"));
  ASSERT_NE(r.p, nullptr);
  EXPECT_EQ(r.p->nt, 2);
  EXPECT_DOUBLE_EQ(r.p->dt, 0.5);
  EXPECT_DOUBLE_EQ(r.p->dx, 1.0);  // no FOV: 1 mm voxels
  EXPECT_FLOAT_EQ(static_cast<const float*>(r.p->data)[11], -12.0f);
}
#endif

TEST_F(NiftiTest, BadInput) {
  const std::vector<std::int64_t> shape = {4, 4};
  auto v = volume(16);
  if (!nifti_available()) {
    expect_error([&] { write_nifti<float>(path("a.nii"), shape, v); }, ErrorCode::kBackendUnavailable,
                 {"a.nii", "libnifti2-dev"});
    return;
  }
  expect_error([&] { write_nifti<float>(path("a.img"), shape, v); }, ErrorCode::kInvalidArgument, {".nii or .nii.gz"});
  expect_error([&] { write_nifti<float>(path("a.nii"), std::vector<std::int64_t>{4, 5}, v); },
               ErrorCode::kShapeMismatch, {"20 voxels", "given 16"});
  expect_error([&] { write_nifti<float>(path("a.nii"), std::vector<std::int64_t>{16, 1, 1, 1, 1}, v); },
               ErrorCode::kInvalidArgument, {"1 to 4 axes"});
  NiftiOptions o;
  o.kind = NiftiKind::kPhase;
  const std::vector<float> real(16, 1.0f);
  expect_error([&] { write_nifti<float>(path("a.nii"), shape, real, o); }, ErrorCode::kInvalidArgument, {"real data"});
  o = {};
  o.fov_mm = {NAN, 1, 1};
  expect_error([&] { write_nifti<float>(path("a.nii"), shape, v, o); }, ErrorCode::kNonFinite, {"FOV"});
  v[5] = C(NAN, 0);
  expect_error([&] { write_nifti<float>(path("a.nii"), shape, v); }, ErrorCode::kNonFinite, {"voxel 5"});
  expect_error([&] { write_nifti<float>(path("nodir/a.nii"), shape, volume(16)); }, ErrorCode::kInvalidArgument,
               {"nodir/a.nii"});
  EXPECT_TRUE(entries().empty());
}

TEST_F(PreviewTest, MosaicOfSlicesWithRobustScaling) {
  // 3 x 2 x 5 volume: 3 columns (⌈√5⌉), 2 rows; voxel value = 1 + slice, one outlier.
  const std::vector<std::int64_t> shape = {3, 2, 5};
  std::vector<double> mag(30);
  for (std::size_t i = 0; i < mag.size(); ++i) mag[i] = 1.0 + static_cast<double>(i / 6);
  mag[29] = 1000;  // an outlier above the 90th percentile must saturate, not darken the rest
  const Mosaic m = make_mosaic(shape, mag, {.percentile = 90});
  EXPECT_EQ(m.width, 9);
  EXPECT_EQ(m.height, 4);
  // Slice 4 (value 5) is the white point (90th percentile of 30 values = 27th smallest = 5).
  // Tile of slice z: column z % 3, row z / 3; y upwards within a tile.
  const auto px = [&](std::int64_t z, std::int64_t x, std::int64_t y) {
    return m.pixels[static_cast<std::size_t>(((z / 3) * 2 + (1 - y)) * m.width + (z % 3) * 3 + x)];
  };
  EXPECT_EQ(px(0, 0, 0), static_cast<std::uint8_t>(255.0 / 5 + 0.5));
  EXPECT_EQ(px(1, 2, 1), static_cast<std::uint8_t>(2 * 255.0 / 5 + 0.5));
  EXPECT_EQ(px(4, 0, 0), 255);
  EXPECT_EQ(px(4, 2, 1), 255);  // the outlier saturates
  EXPECT_EQ(m.pixels[static_cast<std::size_t>(3 * m.width + 8)], 0);  // the unused sixth tile
  // Explicit columns; 2D images are one tile.
  EXPECT_EQ(make_mosaic(shape, mag, {.columns = 5}).width, 15);
  const std::vector<std::int64_t> s2 = {3, 10};
  EXPECT_EQ(make_mosaic(s2, mag).height, 10);
}

TEST_F(PreviewTest, WritesPngAndPgmAndRefusesBadInput) {
  const std::vector<std::int64_t> shape = {8, 8, 3};
  const auto v = volume(192);
  write_preview<float>(path("p.png"), shape, v);
  write_preview<float>(path("p.pgm"), shape, v);
  const auto pgm = test::read_bytes(path("p.pgm"));
  const std::string head(pgm.begin(), pgm.begin() + 13);
  EXPECT_EQ(head, "P5\n16 16\n255\n");  // 2 x 2 tiles of 8 x 8
  const auto png = test::read_bytes(path("p.png"));
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png[1], 'P');
  expect_error([&] { write_preview<float>(path("p.jpg"), shape, v); }, ErrorCode::kInvalidArgument, {".png or .pgm"});
  expect_error([&] { write_preview<float>(path("q.png"), std::vector<std::int64_t>{8, 8}, v); },
               ErrorCode::kShapeMismatch, {"64 voxels", "given 192"});
  std::vector<double> r(64, 1.0);
  r[7] = NAN;
  expect_error([&] { write_preview<double>(path("q.png"), std::vector<std::int64_t>{8, 8}, r); }, ErrorCode::kNonFinite,
               {"voxel 7"});
  expect_error([&] { make_mosaic(std::vector<std::int64_t>{8, 8}, std::vector<double>(64), {.percentile = 0}); },
               ErrorCode::kInvalidArgument, {"percentile"});
  expect_error([&] { write_preview<float>(path("nodir/q.png"), shape, v); }, ErrorCode::kInvalidArgument, {"nodir"});
  EXPECT_EQ(entries().size(), 2u);
}

}  // namespace
}  // namespace fieldft::io
