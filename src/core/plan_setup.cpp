#include "core/plan_setup.hpp"

#include <unistd.h>

#include "core/threads.hpp"

#include <algorithm>
#include <limits>
#include <sstream>
#include <utility>

namespace fieldft::core {

std::int64_t next_smooth(std::int64_t n) {
  if (n <= 2) return 2;
  if (n % 2) ++n;
  for (;; n += 2) {
    std::int64_t m = n;
    for (int p : {2, 3, 5})
      while (m % p == 0) m /= p;
    if (m == 1) return n;
  }
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw Error(ErrorCode::kTooLarge, std::string(what) + " overflows 64-bit indexing (" +
                                          std::to_string(a) + " x " + std::to_string(b) + ")");
  return r;
}

double host_memory_bytes() {
  const double phys = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  return phys > 0 ? phys : 0.0;
}

void check_host_memory(double bytes, const std::string& what) {
  const double phys = host_memory_bytes();
  if (phys > 0 && bytes > phys) {
    std::ostringstream os;
    os << what << " needs " << bytes / (1 << 30) << " GiB but this machine has "
       << phys / (1 << 30) << " GiB of memory; reduce the mode counts, ntransf/max_batch or upsampfac";
    throw Error(ErrorCode::kTooLarge, os.str());
  }
}

void throw_beyond_fold_limit(const char* name, std::int64_t index, double value, double limit,
                             const char* type_name) {
  std::ostringstream os;
  os << name << "[" << index << "] = " << value << " is beyond the fold limit of " << type_name
     << " coordinates (absolute values up to " << limit
     << "): points are 2π-periodic, and this far out the value no longer fixes the point's position within its "
        "period; reduce the coordinates modulo 2π (in higher precision) first";
  throw Error(ErrorCode::kInvalidArgument, os.str());
}

double deconvolution_gain(std::span<const double> phihat, std::int64_t n) {
  double sum = 0;
  for (std::int64_t k = -(n / 2); k <= (n - 1) / 2; ++k) {
    const double r = phihat[0] / phihat[static_cast<std::size_t>(k >= 0 ? k : -k)];
    sum += r * r;
  }
  return std::sqrt(sum / static_cast<double>(n));
}

void check_rounding_floor(double eps, double unit_roundoff, double gain, double sigma, const char* what) {
  if (unit_roundoff * gain <= eps) return;
  std::ostringstream os;
  os << "eps = " << eps << " is below the rounding floor of this precision at upsampfac " << sigma << " (about "
     << unit_roundoff * gain << ": " << what << " amplifies rounding " << gain << "-fold); use "
     << (sigma < 2.0 ? "upsampfac 2, " : "") << "a larger eps or double precision";
  throw Error(ErrorCode::kEpsTooSmall, os.str());
}

namespace {

// The grid of a spread/interpolate-only plan (nufft.hpp): the modes themselves, each mode index
// mapped to its cell as a mode k to fine-grid index k mod nf, and no deconvolution (factors 1),
// so that the backends' mode copies place the cells in the mode order and the FFT is all they
// skip.
PlanSetup spread_interp_setup(PlanSetup s, std::span<const std::int64_t> modes) {
  nufft::PlanInfo& info = s.info;
  const int w = s.kernel.width;
  for (int d = 0; d < info.dim; ++d) {
    if (modes[d] < 2 * w) {
      std::ostringstream os;
      os << "spread_interp_only: the grid has " << modes[d] << " cells in dimension " << d + 1
         << ", fewer than twice the kernel width (2w = " << 2 * w << " cells for eps " << info.eps << " at upsampfac "
         << info.upsampfac << "); use at least " << 2 * w << " cells or a larger eps";
      throw Error(ErrorCode::kInvalidArgument, os.str());
    }
    info.fine_grid[d] = modes[d];
  }
  check_host_memory(16.0 * (info.modes[0] + info.modes[1] + info.modes[2]), "the mode tables");
  check_host_memory(8.0 * static_cast<double>(info.num_modes()), "one grid");
  for (int d = 0; d < 3; ++d) {
    const std::int64_t n = info.modes[d];
    s.fine_index[d].resize(n);
    s.deconv[d].assign(n, 1.0);
    for (std::int64_t p = 0; p < n; ++p) {
      const std::int64_t k = info.modeord == 0 ? p - n / 2 : p;
      s.fine_index[d][p] = k >= 0 ? k : k + n;
    }
  }
  info.spread_interp_only = true;
  return s;
}

}  // namespace

std::optional<PlanSetup> setup_at_upsampfac(const PlanSetup& s, double sigma, double min_eps, double unit_roundoff,
                                            std::string* error) {
  const nufft::PlanInfo& info = s.info;
  nufft::Options opt = s.options;
  opt.upsampfac = sigma;
  std::optional<PlanSetup> out;
  try {
    out = make_plan_setup(info.type, std::span<const std::int64_t>(info.modes.data(), static_cast<std::size_t>(info.dim)),
                          info.isign, info.ntransf, info.eps, opt, min_eps, unit_roundoff);
  } catch (const Error& e) {
    if (error != nullptr) *error = e.what();
    return std::nullopt;
  }
  out->options.upsampfac = 0.0;
  return out;
}

PlanSetup make_plan_setup(int type, std::span<const std::int64_t> modes, int isign,
                          std::int64_t ntransf, double eps, const nufft::Options& options,
                          double min_eps, double unit_roundoff) {
  PlanSetup s;
  s.options = options;
  nufft::PlanInfo& info = s.info;
  require(type >= 1 && type <= 3, ErrorCode::kInvalidArgument,
          "NUFFT type must be 1, 2 or 3, got " + std::to_string(type));
  info.type = type;
  require(!(options.spread_interp_only && type == 3), ErrorCode::kInvalidArgument,
          "spread_interp_only is for type 1 (spread) and type 2 (interpolate) plans; a type 3 plan's grid follows "
          "from its points, so it has no spread-only form");
  require(!modes.empty() && modes.size() <= 3, ErrorCode::kInvalidArgument,
          "dimension (number of mode counts) must be 1, 2 or 3, got " + std::to_string(modes.size()));
  info.dim = static_cast<int>(modes.size());
  std::int64_t total = 1;
  // Type 3 has no modes: modes.size() gives the dimension, the values are not used.
  for (int d = 0; d < info.dim && type != 3; ++d) {
    require(modes[d] >= 1, ErrorCode::kInvalidArgument,
            "mode count N" + std::to_string(d + 1) + " must be >= 1, got " + std::to_string(modes[d]));
    info.modes[d] = modes[d];
    total = checked_mul(total, modes[d], "number of modes");
  }
  require(isign == 1 || isign == -1, ErrorCode::kInvalidArgument,
          "isign must be +1 or -1 (the sign of the exponent), got " + std::to_string(isign));
  info.isign = isign;
  require(ntransf >= 1, ErrorCode::kInvalidArgument,
          "ntransf must be >= 1, got " + std::to_string(ntransf));
  info.ntransf = ntransf;
  if (!(eps > 0 && eps <= 1)) {  // also NaN
    std::ostringstream os;
    os << "eps must be a relative tolerance in (0, 1] (at least " << min_eps << " for this precision), got "
       << eps;
    throw Error(ErrorCode::kInvalidArgument, os.str());
  }
  if (eps < min_eps) {
    std::ostringstream os;
    os << "eps = " << eps << " is below what this precision can reach (smallest accepted: " << min_eps
       << "); use double precision or a larger eps";
    throw Error(ErrorCode::kEpsTooSmall, os.str());
  }
  info.eps = eps;
  require(options.modeord == 0 || options.modeord == 1, ErrorCode::kInvalidArgument,
          "modeord must be 0 (increasing) or 1 (FFT order), got " + std::to_string(options.modeord));
  info.modeord = options.modeord;
  require(options.max_batch >= 0, ErrorCode::kInvalidArgument, "max_batch must be >= 0 (0 = automatic)");
  require(options.spread_boxes >= -1 && options.spread_boxes <= 1, ErrorCode::kInvalidArgument,
          "spread_boxes must be -1 (automatic), 0 or 1, got " + std::to_string(options.spread_boxes));
  for (int b : options.bin_size)
    require(b >= 0, ErrorCode::kInvalidArgument, "bin sizes must be >= 0 (0 = automatic)");
  for (const auto& [value, name] : {std::pair{options.tuning.bulk_rows, "tuning.bulk_rows"},
                                     std::pair{options.tuning.tensor_cores, "tuning.tensor_cores"},
                                     std::pair{options.tuning.mode_fft, "tuning.mode_fft"}})
    require(value >= -1 && value <= 1, ErrorCode::kInvalidArgument,
            std::string(name) + " must be -1 (automatic), 0 (never) or 1 (always), got " + std::to_string(value));
  require(options.type3_direct >= -1 && options.type3_direct <= 1, ErrorCode::kInvalidArgument,
          "type3_direct must be -1 (automatic), 0 (grid) or 1 (direct sums), got " +
              std::to_string(options.type3_direct));
  require(options.planning == nufft::Planning::kEstimate || options.planning == nufft::Planning::kMeasure ||
              options.planning == nufft::Planning::kRemeasure,
          ErrorCode::kInvalidArgument,
          "planning must be estimate (0), measure (1) or remeasure (2), got " +
              std::to_string(static_cast<int>(options.planning)));
  require(options.reuse >= 0, ErrorCode::kInvalidArgument,
          "reuse (expected executes per set_points) must be >= 0 (0 = unknown), got " + std::to_string(options.reuse));
  require(std::isfinite(options.precompute_max_bytes) && options.precompute_max_bytes >= 0, ErrorCode::kInvalidArgument,
          "precompute_max_bytes must be a finite number >= 0 (0 = automatic)");
  if (options.method == nufft::Method::kPrecomputed) {
    require(type != 3, ErrorCode::kInvalidArgument,
            "method precomputed is for type 1 and 2 plans; type 3 spreads onto a grid chosen from its points and "
            "does not precompute its kernel weights (use method auto or nupts)");
  }
  // Validated for every backend; only the CPU backend uses threads (the backend is resolved by
  // the caller, nufft::Plan, before the setup is made).
  const int nthreads = resolve_cpu_threads(options.nthreads, "nthreads");
  info.nthreads = options.backend == Backend::kCuda ? 0 : nthreads;
  const double sigma = options.upsampfac == 0.0 ? 2.0 : options.upsampfac;
  require(std::isfinite(sigma) && sigma >= 1.25 - 1e-12 && sigma <= kWideUpsampfac + 1e-12,
          ErrorCode::kInvalidArgument,
          "upsampfac must be 0 (automatic) or in [1.25, 2.25], got " + std::to_string(options.upsampfac));
  info.upsampfac = sigma;

  s.kernel = design_kernel(eps, sigma, info.dim);
  if (s.kernel.width_needed > kMaxKernelWidth) {
    std::ostringstream os;
    os << "eps = " << eps << " cannot be reached with upsampfac " << sigma << " (it would need a kernel width of "
       << s.kernel.width_needed << " > " << kMaxKernelWidth << "); use "
       << (sigma < 2.0 ? "upsampfac 2 or " : "") << "a larger eps";
    throw Error(ErrorCode::kEpsTooSmall, os.str());
  }
  info.kernel_width = s.kernel.width;
  info.kernel_beta = s.kernel.beta;
  info.horner_degree = s.kernel.degree;
  info.method = options.method;
  if (options.spread_interp_only) return spread_interp_setup(std::move(s), modes);
  if (type == 3) {
    // The grid depends on the points (core/type3.hpp, at set_points), which also checks the
    // rounding floor of both of type 3's deconvolutions. Trivial mode tables keep the backends'
    // type 1/2 members well-formed.
    for (int d = 0; d < 3; ++d) {
      s.fine_index[d] = {0};
      s.deconv[d] = {1.0};
    }
    return s;
  }

  std::int64_t fine_total = 1;
  for (int d = 0; d < info.dim; ++d) {
    const double want = std::max(sigma * static_cast<double>(modes[d]), 2.0 * s.kernel.width);
    require(want < 4e18, ErrorCode::kTooLarge, "fine grid size overflows 64-bit indexing");
    info.fine_grid[d] = next_smooth(static_cast<std::int64_t>(std::ceil(want)));
    fine_total = checked_mul(fine_total, info.fine_grid[d], "fine grid size");
  }
  // Before any allocation: the per-mode tables below and one fine grid of the smallest complex
  // type must fit in memory, or the request is hopeless whatever the backend.
  check_host_memory(16.0 * (info.modes[0] + info.modes[1] + info.modes[2]), "the mode tables");
  check_host_memory(8.0 * static_cast<double>(fine_total), "one fine grid");

  double gain = 1;  // the deconvolution's rounding gain, checked below
  for (int d = 0; d < 3; ++d) {
    const std::int64_t n = info.modes[d], nf = info.fine_grid[d];
    s.fine_index[d].resize(n);
    s.deconv[d].resize(n);
    if (d >= info.dim) {
      s.fine_index[d][0] = 0;
      s.deconv[d][0] = 1.0;
      continue;
    }
    const std::vector<double> phihat = kernel_fourier_series(s.kernel, nf, n / 2 + 1);
    gain *= deconvolution_gain(phihat, n);
    for (std::int64_t p = 0; p < n; ++p) {
      const std::int64_t k = info.modeord == 0 ? p - n / 2 : (p < (n + 1) / 2 ? p : p - n);
      s.fine_index[d][p] = k >= 0 ? k : k + nf;
      s.deconv[d][p] = 1.0 / phihat[static_cast<std::size_t>(k >= 0 ? k : -k)];
    }
  }
  // Rounding on the fine grid is amplified by the deconvolution, by G = Π_d rms_k ψ̂(0)/ψ̂(k)
  // (large at small upsampling factors). A tolerance below u·G cannot be met in this precision.
  check_rounding_floor(eps, unit_roundoff, gain, sigma, "the deconvolution");
  return s;
}

}  // namespace fieldft::core
