// fieldft::nufft::Plan: validates, designs (core), and hands the work to a backend.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below
#include "core/plan_impl.hpp"
#include "core/plan_setup.hpp"
#include "core/wisdom.hpp"
#include "cpu/cpu_plan.hpp"
#if FIELDFT_HAVE_CUDA
#include "cuda/cuda_plan.hpp"
#endif
#include "fieldft/nufft.hpp"

namespace fieldft::nufft {

namespace {
// The backend of a validated setup (options.backend is kCpu or kCuda).
template <class T>
std::unique_ptr<detail::PlanImpl<T>> make_impl(core::PlanSetup setup) {
#if FIELDFT_HAVE_CUDA
  if (setup.options.backend == Backend::kCuda) return cuda::make_cuda_plan<T>(std::move(setup));
#endif
  return cpu::make_cpu_plan<T>(std::move(setup));
}

template <class T>
core::PlanSetup plan_setup(int type, std::span<const std::int64_t> modes, int isign, std::int64_t ntransf, double eps,
                           const Options& options) {
  return core::make_plan_setup(type, modes, isign, ntransf, eps, options, min_eps<T>(),
                               std::numeric_limits<T>::epsilon() / 2);
}
// ---- planning kMeasure (docs/tuning.md, "Measured planning and wisdom") ----

// A backend for the problem of `base` planned with options `o`.
template <class T>
std::unique_ptr<detail::PlanImpl<T>> plan_with(const core::PlanSetup& base, const Options& o) {
  const PlanInfo& i = base.info;
  return make_impl<T>(plan_setup<T>(i.type, std::span<const std::int64_t>(i.modes.data(), i.dim), i.isign, i.ntransf,
                                    i.eps, o));
}

// Seconds per execute of a plan with points: pairs of execute and execute_adjoint in runs of
// about 10 ms (at least one pair, at most 16), the fastest of three runs (other work on the
// machine only ever adds time), halved.
template <class T>
double seconds_per_execute(detail::PlanImpl<T>& p) {
  const double one = std::max(p.time_transforms(1), 1e-7);
  const int reps = static_cast<int>(std::clamp(0.01 / one, 1.0, 16.0));
  double best = p.time_transforms(reps);
  for (int run = 1; run < 3; ++run) best = std::min(best, p.time_transforms(reps));
  return best / (2.0 * reps);
}

std::string ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g ms", seconds * 1e3);
  return buf;
}

// The candidates of options `req`: the planner's choice first (req itself), then method x
// upsampling factor x bins over the knobs req leaves automatic. `planner_bins`: the bins the
// planner chose for the planner's candidate (CUDA tries them doubled along x as well).
std::vector<Options> measure_candidates(const Options& req, int dim, const std::array<int, 3>& planner_bins) {
  const bool cuda = req.backend == Backend::kCuda;
  std::vector<Method> methods{req.method};
  if (req.method == Method::kAuto)
    methods = cuda ? std::vector<Method>{Method::kNuptsDriven, Method::kSubproblem, Method::kOutputDriven,
                                         Method::kPrecomputed}
                   : std::vector<Method>{Method::kNuptsDriven, Method::kPrecomputed};
  std::vector<double> sigmas{req.upsampfac};
  if (req.upsampfac == 0) sigmas = {1.25, 2.0, 2.25};
  std::vector<std::array<int, 3>> bins{req.bin_size};
  const bool auto_bins = req.bin_size == std::array<int, 3>{0, 0, 0};
  if (cuda && auto_bins) {
    std::array<int, 3> wider = planner_bins;
    wider[0] *= 2;
    for (int d = dim; d < 3; ++d) wider[d] = 1;
    bins.push_back(wider);
  }
  std::vector<Options> out{req};
  for (Method m : methods)
    for (double s : sigmas)
      for (const auto& b : bins) {
        // Bins matter to the tiled CUDA methods only (the CPU's and nupts' sort by the planner's).
        if (b != req.bin_size && (m == Method::kNuptsDriven || m == Method::kPrecomputed || m == Method::kAuto))
          continue;
        Options o = req;
        o.method = m;
        o.upsampfac = s;
        o.bin_size = b;
        out.push_back(o);
      }
  return out;
}

// Plans `impl`'s problem for points (m, x, y, z) by planning kMeasure / kRemeasure: from the
// wisdom where it has the signature, else by timing every candidate; returns the backend with the
// points set and PlanInfo::configured_by filled in.
template <class T>
std::unique_ptr<detail::PlanImpl<T>> measured_plan(const detail::PlanImpl<T>& impl, std::int64_t m, const T* x,
                                                   const T* y, const T* z) {
  const Options req = impl.requested_options();
  const core::PlanSetup& base = impl.setup();
  const std::string device = core::wisdom_device(req, base.info.nthreads);
  const std::string signature = core::wisdom_signature(base.info, req, device, sizeof(T), m);
  const std::string path = core::wisdom_path(req);
  // The stored options applied to the user's: the signature includes the user's fixed knobs, so
  // the entry only fills in the ones left automatic.
  const auto with = [&](Method method, double sigma, const std::array<int, 3>& bins) {
    Options o = req;
    o.method = method;
    o.upsampfac = sigma;
    o.bin_size = bins;
    return o;
  };
  std::string unreadable;
  if (req.planning == Planning::kMeasure) {
    std::optional<core::WisdomEntry> e;
    if (path.empty()) {
      e = core::process_wisdom(signature);
    } else {
      const core::Wisdom w = core::read_wisdom(path, &unreadable);
      if (auto it = w.find(signature); it != w.end()) e = it->second;
    }
    // An entry that no longer applies (e.g. precomputed weights above the memory limit at this
    // M of the bucket) is measured again.
    std::unique_ptr<detail::PlanImpl<T>> p;
    if (e) try {
        p = plan_with<T>(base, with(e->method, e->upsampfac, e->bin_size));
        p->set_points(m, x, y, z);
      } catch (const Error&) {
        p.reset();
      }
    if (p) {
      p->set_requested_options(req);
      p->set_planning_note((path.empty() ? std::string("wisdom (this process)") : "wisdom " + path) + ": " +
                               core::describe_config(e->method, e->upsampfac, e->bin_size) + ", measured " +
                               ms(e->seconds) + " vs the planner's " + ms(e->planner_seconds),
                           {});
      return p;
    }
  }
  if (!path.empty()) core::check_wisdom_writable(path);  // before anything is timed

  // The planner's own choice first: its errors (bad points, too large) are the plan's.
  const auto setpoints_seconds = [&](detail::PlanImpl<T>& p) {
    const auto t0 = std::chrono::steady_clock::now();
    p.set_points(m, x, y, z);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const auto cost = [&](detail::PlanImpl<T>& p, double setpoints) {
    return seconds_per_execute(p) + (req.reuse > 0 ? setpoints / static_cast<double>(req.reuse) : 0.0);
  };
  std::unique_ptr<detail::PlanImpl<T>> best = plan_with<T>(base, req);
  const double planner_seconds = cost(*best, setpoints_seconds(*best));
  const auto described = [](const PlanInfo& i) { return core::describe_config(i.method, i.upsampfac, i.bin_size); };
  std::vector<PlanInfo::MeasuredCandidate> timed{{best->info().method, best->info().upsampfac,
                                                  best->info().bin_size, planner_seconds, true}};
  Options best_options = with(best->info().method, best->info().upsampfac, req.bin_size);
  double best_seconds = planner_seconds;
  for (const Options& o : measure_candidates(req, base.info.dim, best->info().bin_size)) {
    if (o.method == req.method && o.upsampfac == req.upsampfac && o.bin_size == req.bin_size)
      continue;  // the planner's, timed above
    std::unique_ptr<detail::PlanImpl<T>> p;
    double setpoints = 0;
    try {
      p = plan_with<T>(base, o);
      setpoints = setpoints_seconds(*p);
    } catch (const Error&) {
      continue;  // not available for this problem (eps at this factor, memory, bins): not a candidate
    }
    const PlanInfo& i = p->info();
    const bool seen = std::any_of(timed.begin(), timed.end(), [&](const PlanInfo::MeasuredCandidate& c) {
      return c.method == i.method && c.upsampfac == i.upsampfac && c.bin_size == i.bin_size;
    });
    if (seen) continue;  // the same configuration as one already timed
    const double seconds = cost(*p, setpoints);
    timed.push_back({i.method, i.upsampfac, i.bin_size, seconds, false});
    if (seconds < best_seconds) {
      best_seconds = seconds;
      best_options = with(i.method, i.upsampfac, o.bin_size);
      best = std::move(p);
    }
  }
  std::stable_sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) { return a.seconds < b.seconds; });

  core::WisdomEntry entry;
  entry.method = best_options.method;
  entry.upsampfac = best_options.upsampfac;
  entry.bin_size = best_options.bin_size;
  entry.seconds = best_seconds;
  entry.planner_seconds = planner_seconds;
  entry.candidates = static_cast<int>(timed.size());
  if (timed.size() > 1) entry.runner_up = core::describe_config(timed[1].method, timed[1].upsampfac, timed[1].bin_size) +
                                          ", " + ms(timed[1].seconds);
  std::string where;
  if (path.empty()) {
    core::remember_wisdom(signature, entry);
    where = "kept in this process (no wisdom file)";
  } else {
    core::store_wisdom(path, signature, entry);
    where = "stored in " + path;
    if (!unreadable.empty()) where += ", replacing an unreadable file (" + unreadable + ")";
  }
  best->set_requested_options(req);
  const std::size_t count = timed.size();  // before timed is moved into the note
  best->set_planning_note("measured now (" + std::to_string(count) + " candidates, best " + described(best->info()) +
                              " " + ms(best_seconds) + " vs the planner's " + ms(planner_seconds) + "; " + where + ")",
                          std::move(timed));
  return best;
}

// The note of a plan that planning kMeasure does not cover.
template <class T>
void note_estimated(detail::PlanImpl<T>& impl, const char* why) {
  if (impl.requested_options().planning != Planning::kEstimate)
    impl.set_planning_note(std::string("estimate (planning measure does not cover ") + why + ")", {});
}
}  // namespace

template <class T>
Plan<T>::Plan(int type, std::span<const std::int64_t> modes, int isign, std::int64_t ntransf, double eps,
              const Context& context, const Options& options)
    : context_(context) {
  // The context's place and threads replace the options' (the setup records the backend;
  // PlanInfo::nthreads is 0 on CUDA).
  nufft::Options resolved = options;
  resolved.backend = context_.backend();
  resolved.device = context_.is_cuda() ? context_.device() : options.device;
  resolved.stream = context_.stream();
  resolved.nthreads = context_.nthreads();
  impl_ = make_impl<T>(plan_setup<T>(type, modes, isign, ntransf, eps, resolved));
}

template <class T>
Plan<T>::Plan(int type, std::span<const std::int64_t> modes, int isign, std::int64_t ntransf, double eps,
              const Options& options) {
  nufft::Options resolved = options;
#if FIELDFT_HAVE_CUDA
  if (resolved.backend == Backend::kAuto)
    resolved.backend = cuda::device_count() > 0 ? Backend::kCuda : Backend::kCpu;
#else
  if (resolved.backend == Backend::kAuto) resolved.backend = Backend::kCpu;
#endif
  // The problem is validated before the context is made, so that its errors come first.
  core::PlanSetup setup = plan_setup<T>(type, modes, isign, ntransf, eps, resolved);
#if !FIELDFT_HAVE_CUDA
  require(resolved.backend != Backend::kCuda, ErrorCode::kBackendUnavailable,
          "this fieldft was built without CUDA (FIELDFT_CUDA=OFF or no nvcc); use backend cpu");
#endif
  context_ = Context::from_options(resolved.backend, options.device, options.stream, options.nthreads,
                                   /*own_stream=*/false);
  impl_ = make_impl<T>(std::move(setup));
}

template <class T>
Plan<T>::~Plan() = default;
template <class T>
Plan<T>::Plan(Plan&&) noexcept = default;
// The backend goes first, while the context that owns its stream is still alive.
template <class T>
Plan<T>& Plan<T>::operator=(Plan&& other) noexcept {
  if (this != &other) {
    impl_ = std::move(other.impl_);
    context_ = std::move(other.context_);
  }
  return *this;
}

namespace {
// The backend of a plan, or kInvalidState for a plan that was moved from.
template <class T>
detail::PlanImpl<T>& backend_of(const std::unique_ptr<detail::PlanImpl<T>>& impl) {
  require(impl != nullptr, ErrorCode::kInvalidState, "this plan was moved from and has no backend");
  return *impl;
}
}  // namespace

template <class T>
void Plan<T>::set_points(std::int64_t m, const T* x, const T* y, const T* z) {
  require(backend_of(impl_).info().type != 3, ErrorCode::kInvalidArgument,
          "set_points(m, x, y, z) is for type 1 and 2 plans; a type 3 plan needs its targets too: "
          "set_points(m, x, y, z, nk, s, t, u)");
  const bool measure = impl_->requested_options().planning != Planning::kEstimate;
  if (measure && m > 0 && !impl_->info().spread_interp_only) {
    impl_ = measured_plan<T>(*impl_, m, x, y, z);  // the plan keeps its backend where this throws
    return;
  }
  impl_->set_points(m, x, y, z);  // validates (on the device where the points are)
  if (measure) note_estimated(*impl_, m == 0 ? "plans without points" : "spread/interpolate-only plans");
}

template <class T>
void Plan<T>::set_points(std::int64_t m, const T* x, const T* y, const T* z, std::int64_t nk, const T* s,
                         const T* t, const T* u) {
  const int type = backend_of(impl_).info().type;
  require(type == 3, ErrorCode::kInvalidArgument,
          "set_points with targets (nk, s, t, u) is for type 3 plans; this plan is type " + std::to_string(type) +
              ": use set_points(m, x, y, z)");
  const T* src[3] = {x, y, z};
  const T* tgt[3] = {s, t, u};
  impl_->set_points_type3(m, src, nk, tgt);
  note_estimated(*impl_, "type 3");
}

template <class T>
void Plan<T>::execute(const Complex* in, Complex* out) {
  require(backend_of(impl_).has_points(), ErrorCode::kInvalidState, "execute called before set_points");
  impl_->execute(in, out, false);
}

template <class T>
void Plan<T>::execute_adjoint(const Complex* in, Complex* out) {
  require(backend_of(impl_).has_points(), ErrorCode::kInvalidState, "execute_adjoint called before set_points");
  impl_->execute(in, out, true);
}

template <class T>
const PlanInfo& Plan<T>::info() const {
  return backend_of(impl_).info();
}

template class Plan<float>;
template class Plan<double>;

}  // namespace fieldft::nufft
