#include "recon_io.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "common.hpp"
#include "dataset.hpp"
#include "fieldft/runtime.hpp"
#include "io/cfl.hpp"
#include "io/ismrmrd.hpp"
#include "io/nifti.hpp"
#include "io/npy.hpp"
#include "io/preview.hpp"

namespace fieldft::cli {

namespace {

enum class OutKind { kNifti, kNpy, kCfl, kPng };

std::optional<OutKind> out_kind(const std::string& p) {
  if (ends_with(p, ".nii") || ends_with(p, ".nii.gz")) return OutKind::kNifti;
  if (ends_with(p, ".npy")) return OutKind::kNpy;
  if (ends_with(p, ".cfl")) return OutKind::kCfl;
  if (ends_with(p, ".png") || ends_with(p, ".pgm")) return OutKind::kPng;
  return std::nullopt;
}

}  // namespace

void check_outputs(const std::vector<std::string>& outs) {
  if (outs.empty()) throw UsageError("-o/--out is required (FILE.nii, .nii.gz, .npy, .cfl or .png; repeatable)");
  for (const auto& o : outs) {
    const auto k = out_kind(o);
    if (!k) throw UsageError("-o: '" + o + "' must end in .nii, .nii.gz, .npy, .cfl, .png or .pgm");
    if (*k == OutKind::kNifti && !io::nifti_available())
      throw Error(ErrorCode::kBackendUnavailable, "'" + o + "': this build has no NIfTI support (FIELDFT_NIFTI)");
    std::filesystem::path dir = std::filesystem::path(o).parent_path();
    if (dir.empty()) dir = ".";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      throw Error(ErrorCode::kInvalidArgument, "cannot write '" + o + "': its directory does not exist");
    if (::access(dir.c_str(), W_OK) != 0)
      throw Error(ErrorCode::kInvalidArgument, "cannot write '" + o + "': its directory is not writable");
    if (std::filesystem::is_directory(o, ec))
      throw Error(ErrorCode::kInvalidArgument, "cannot write '" + o + "': it is a directory");
  }
}

// A truth image from --truth: .cfl image, .npy (numpy order, complex or real), or ISMRMRD's Truth.
std::vector<std::complex<double>> read_truth(const std::string& path, std::int64_t voxels) {
  std::vector<std::complex<double>> t;
  if (is_ismrmrd_path(path)) {
    t = io::read_ismrmrd(path).truth;
    if (t.empty()) throw Error(ErrorCode::kInvalidArgument, "--truth '" + path + "': no Truth array in the file");
  } else if (ends_with(path, ".npy")) {
    auto a = io::read_npy<std::complex<double>>(path);
    t = std::move(a.data);
  } else {
    auto a = io::read_cfl_image(io::cfl_base(path));
    t.assign(a.data.begin(), a.data.end());
  }
  if (static_cast<std::int64_t>(t.size()) != voxels)
    throw Error(ErrorCode::kShapeMismatch, "--truth '" + path + "': " + std::to_string(t.size()) +
                                               " values, the image has " + std::to_string(voxels));
  return t;
}


template <class T>
void write_outputs(const std::vector<std::string>& outs, const std::vector<std::int64_t>& shape,
                   const std::vector<std::complex<T>>& x, const std::array<double, 3>& fov_mm,
                   const std::string& description) {
  for (const auto& o : outs) {
    switch (*out_kind(o)) {
      case OutKind::kNifti: {
        io::NiftiOptions no;
        no.fov_mm = fov_mm;
        no.description = description;
        io::write_nifti<T>(o, shape, x, no);
        break;
      }
      case OutKind::kNpy: {
        const std::vector<std::int64_t> np_shape(shape.rbegin(), shape.rend());  // numpy: (.., Ny, Nx)
        io::write_npy<std::complex<T>>(o, np_shape, x);
        break;
      }
      case OutKind::kCfl: {
        const std::vector<std::complex<float>> xf(x.begin(), x.end());
        io::write_cfl_image(io::cfl_base(o), shape, 1, xf);
        break;
      }
      case OutKind::kPng:
        io::write_preview<T>(o, shape, x);
        break;
    }
  }
}

template void write_outputs<float>(const std::vector<std::string>&, const std::vector<std::int64_t>&,
                                   const std::vector<std::complex<float>>&, const std::array<double, 3>&, const std::string&);
template void write_outputs<double>(const std::vector<std::string>&, const std::vector<std::int64_t>&,
                                    const std::vector<std::complex<double>>&, const std::array<double, 3>&, const std::string&);

Placement choose_placement(const std::string& backend_text, int device, int threads) {
  const Backend backend = parse_backend(backend_text);
  if (backend == Backend::kCpu) return {Context::host(threads), "asked for", ""};
  const bool built = build_info().cuda;
  const std::vector<DeviceInfo> gpus = cuda_devices();
  if (backend == Backend::kCuda && !built)
    throw Error(ErrorCode::kBackendUnavailable,
                "--backend cuda: this fieldft was built without CUDA (FIELDFT_CUDA=OFF, or no nvcc or GPU at build "
                "time); use --backend cpu or auto, or rebuild with -DFIELDFT_CUDA=ON");
  if (backend == Backend::kCuda && gpus.empty())
    throw Error(ErrorCode::kBackendUnavailable,
                "--backend cuda: no CUDA device is visible (no GPU, no driver, or CUDA_VISIBLE_DEVICES hides them); "
                "use --backend cpu or auto");
  if (!built) return {Context::host(threads), "auto: this build has no CUDA", ""};
  if (gpus.empty()) return {Context::host(threads), "auto: no CUDA device is visible", ""};
  if (device >= static_cast<int>(gpus.size()))
    throw Error(ErrorCode::kBackendUnavailable,
                "--device " + std::to_string(device) + ": out of range, " + std::to_string(gpus.size()) +
                    " CUDA device" + (gpus.size() == 1 ? " is" : "s are") + " visible (0.." +
                    std::to_string(gpus.size() - 1) + ")");
  const std::string name = gpus[static_cast<std::size_t>(device)].name;
  // An owned stream; the threads serve the host-side set-up (planning, sorting).
  Context c = Context::from_options(Backend::kCuda, device, nullptr, threads, /*own_stream=*/true);
  // The host side of a GPU run is set-up (plans, designs, tables): this (main) thread's default
  // OpenMP team to at most kGpuRunTeam, as OMP_NUM_THREADS would (loops that take their team size
  // from the context are not affected). Measured (2026-11-27, 64-core host, H200, 64 slices of R1
  // one after another on one GPU): 3.7-6.7 s with the default team of 64, 1.68 s with
  // OMP_NUM_THREADS=4 (each slice's set-up 37-65 ms -> 6-7 ms, its CG 31-47 ms -> 9-10 ms; likely
  // idle team threads spin-waiting after each region, crowding the thread that drives the GPU).
  constexpr int kGpuRunTeam = 8;
  if (threads == 0) omp_set_num_threads(std::min(kGpuRunTeam, omp_get_max_threads()));
  return {std::move(c), backend == Backend::kCuda ? "asked for" : "auto: a CUDA device is visible", name};
}

}  // namespace fieldft::cli
