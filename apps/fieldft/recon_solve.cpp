#include "recon_solve.hpp"

#include <chrono>

#include "fieldft/mri/density.hpp"
#include "fieldft/mri/pcsense.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/mri/time_segmentation.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "fieldft/solve/cg.hpp"
#include "op/upload.hpp"

namespace fieldft::cli {

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The operator of one problem on ctx: SENSE or pcSENSE on the chosen encoding.
template <class T>
op::OperatorPtr<T> build_operator(const SolveSettings<T>& s, const Problem<T>& p, const Context& ctx) {
  op::Shape maps_shape(p.shape.begin(), p.shape.end());
  maps_shape.push_back(p.coils);
  const auto factory = [&](std::shared_ptr<const mri::Encoding<T>> e, std::int64_t b) -> op::OperatorPtr<T> {
    if (!e->has_field()) {
      mri::NufftEncodingOptions no;
      no.eps = s.eps;
      no.batch = b;
      return std::make_shared<mri::NufftEncoding<T>>(e, ctx, no);
    }
    mri::TimeSegmentationOptions o;
    o.accuracy = s.accuracy;
    o.eps = s.eps;
    o.batch = b;
    // The cost model's verdict on the normal, where it ran (else the operator's own kAuto).
    if (s.field_choice.encoding == mri::EncodingKind::kTimeSegmented)
      o.toeplitz = s.field_choice.toeplitz ? mri::Toeplitz::kAuto : mri::Toeplitz::kOff;
    return std::make_shared<mri::TimeSegmentedEncoding<T>>(e, ctx, o);
  };
  const mri::EncodingKind kind = s.encoding == "dft" ? mri::EncodingKind::kDft : mri::EncodingKind::kNufft;
  if (s.model == "pcsense") {
    op::Shape phase_shape(p.shape.begin(), p.shape.end());
    phase_shape.push_back(p.shots);
    mri::PcSenseOptions<T> po;
    po.encoding = kind;
    po.eps = s.eps;
    po.gram = s.gram;
    if (s.encoding == "tseg") po.shot_encoding = factory;
    return mri::pcsense<T>(p.geometry, p.maps, maps_shape, p.phase, phase_shape, ctx, po);
  }
  if (!p.context_maps.values.empty()) {
    // The encoding batched over the coils as the other forms make it (mri::sense's defaults).
    op::OperatorPtr<T> e = p.encoding;  // shared_encoding's
    if (!e && s.encoding == "tseg") e = factory(p.geometry, p.coils);
    if (!e && s.encoding == "dft")
      e = std::make_shared<mri::DftEncoding<T>>(p.geometry, ctx, mri::DftEncodingOptions{.batch = p.coils});
    if (!e) e = shared_encoding<T>(s, p.no_field, p.coils, ctx);
    return mri::sense<T>(std::move(e), p.context_maps, maps_shape);
  }
  if (s.encoding == "tseg") return mri::sense<T>(factory(p.geometry, p.coils), p.maps, maps_shape);
  if (p.encoding) return mri::sense<T>(p.encoding, p.maps, maps_shape);  // shared_encoding's
  return mri::sense<T>(s.encoding == "dft" ? p.geometry : p.no_field, p.maps, maps_shape, ctx,
                       {.encoding = kind, .eps = s.eps});
}

}  // namespace

template <class T>
op::OperatorPtr<T> shared_encoding(const SolveSettings<T>& s, std::shared_ptr<const mri::Encoding<T>> no_field,
                                   std::int64_t coils, const Context& ctx) {
  if (s.model != "sense" || s.encoding == "dft" || s.encoding == "tseg") return nullptr;
  // What mri::sense builds for build_operator's NUFFT case (SenseOptions' defaults).
  mri::NufftEncodingOptions o;
  o.eps = s.eps;
  o.batch = coils;
  return std::make_shared<mri::NufftEncoding<T>>(std::move(no_field), ctx, o);
}

template <class T>
Solved solve_problem(const SolveSettings<T>& s, const Problem<T>& p, const Context& ctx, const std::complex<T>* y_c,
                     std::complex<T>* x_c, const dist::CommPtr& comm,
                     const std::function<void(const solve::Report&)>& on_report) {
  using Complex = std::complex<T>;
  Solved out;
  auto ts = std::chrono::steady_clock::now();
  op::OperatorPtr<T> a = build_operator(s, p, ctx);
  if (comm) a = dist::rank_sum<T>(std::move(a), comm);  // a coil share: Σ over the shares
  std::vector<Complex> w;  // on the host; the solver reads these themselves: they live to the end
  op::Workspace w_mem(ctx);
  const Complex* w_ctx = nullptr;
  const std::int64_t ms = p.no_field->num_samples();
  double weight_sum = static_cast<double>(ms);  // Σ_j w_j, M without weights
  if (s.dcf == "pipe") {
    const std::vector<T> wd = mri::density_compensation<T>(*p.no_field, ctx);
    w.resize(static_cast<std::size_t>(ms * p.coils));
    weight_sum = 0;
    for (std::int64_t j = 0; j < ms; ++j) {
      weight_sum += static_cast<double>(wd[static_cast<std::size_t>(j)]);
      for (std::int64_t c = 0; c < p.coils; ++c)
        w[static_cast<std::size_t>(j + ms * c)] = Complex(wd[static_cast<std::size_t>(j)]);
    }
    w_ctx = ctx.is_host() ? w.data() : op::upload(w_mem, w);  // once; for every coil the same weights
  }
  ctx.synchronize();  // the operator's uploads and tables, so that "setup" holds them
  out.setup_s = since(ts);

  out.lambda_abs = s.lambda * weight_sum * s.map_power;  // the caller's units
  solve::CgOptions cg;
  cg.max_iterations = s.iterations;
  cg.tolerance = s.tolerance;
  cg.lambda = out.lambda_abs / (s.map_scale * s.map_scale);  // Tikhonov in the solve's units
  cg.callback = [&](const solve::Report& r) {
    out.residuals.push_back(r.residual);
    if (on_report) on_report(r);
    return true;
  };
  // The callback reads the residuals that cg brings back to the host anyway (solve/cg.hpp);
  // nothing else waits for the device inside the loop. With nobody watching (a slice of a stack:
  // no report) and no tolerance, they come back once, after the last iteration: the slice's CG is
  // then enqueued in one go, and W slices sharing a device never wait for the host in between.
  if (!on_report && s.tolerance <= 0) cg.check_every = s.iterations;
  if (ctx.is_cuda()) op::VectorOps<T>(ctx).fill(a->domain_size(), Complex{}, x_c);
  ts = std::chrono::steady_clock::now();
  out.res = solve::cg<T>(*a, y_c, x_c, w_ctx, cg);
  ctx.synchronize();
  out.solve_s = since(ts);
  out.operator_name = a->name();  // after the solve: names the normal it built (e.g. a field-corrected Toeplitz)
  return out;
}

template <class T>
void rehearse(SolveSettings<T> s, Problem<T> p, bool context_maps, const Context& ctx) {
  using Complex = std::complex<T>;
  s.iterations = 1;
  s.tolerance = 0;
  // Not the stored Gram normal: building its N x N matrix (seconds, N^2 complex values) is a
  // slice's own set-up, not a first-use cost, and W rehearsals at once would hold W of them.
  s.gram = false;
  const std::int64_t nv = p.no_field->num_voxels(), ms = p.no_field->num_samples() * p.coils;
  std::vector<Complex> y_host, x_host, maps;
  std::vector<T> phase;
  op::Workspace y_ws(ctx), x_ws(ctx);
  Complex* y_c = nullptr;
  Complex* x_c = nullptr;
  if (ctx.is_host()) {
    y_host.assign(static_cast<std::size_t>(ms), Complex(1));
    x_host.assign(static_cast<std::size_t>(nv), Complex{});
    y_c = y_host.data();
    x_c = x_host.data();
  } else {
    y_c = y_ws.get_as<Complex>(ms);
    op::VectorOps<T>(ctx).fill(ms, Complex(1), y_c);
    x_c = x_ws.get_as<Complex>(nv);  // solve_problem starts it at 0
  }
  p.context_maps = {};
  p.maps = {};
  if (context_maps && ctx.is_cuda()) {
    auto ws = std::make_shared<op::Workspace>(ctx);
    Complex* m = ws->get_as<Complex>(nv * p.coils);
    op::VectorOps<T>(ctx).fill(nv * p.coils, Complex(1), m);
    p.context_maps = {std::span<const Complex>(m, static_cast<std::size_t>(nv * p.coils)), std::move(ws)};
  } else {
    maps.assign(static_cast<std::size_t>(nv * p.coils), Complex(1));
    p.maps = maps;
  }
  if (s.model == "pcsense") {
    phase.assign(static_cast<std::size_t>(nv * p.shots), T(0));
    p.phase = phase;
  }
  (void)solve_problem<T>(s, p, ctx, y_c, x_c, nullptr, {});
}

template <class T>
SliceWorkers<T>::SliceWorkers(std::vector<Context> contexts, std::function<void(Worker&)> start) {
  workers_.reserve(contexts.size());
  for (Context& c : contexts) workers_.push_back(Worker{std::move(c), nullptr, nullptr, 0.0});
  errors_.resize(workers_.size());
  threads_.reserve(workers_.size());
  try {
    for (std::size_t i = 0; i < workers_.size(); ++i)
      threads_.emplace_back([this, i, start] {
        const auto t0 = std::chrono::steady_clock::now();
        try {
          start(workers_[i]);
          workers_[i].context.synchronize();
        } catch (...) {
          errors_[i] = std::current_exception();
        }
        workers_[i].start_s = since(t0);
      });
  } catch (...) {  // no thread for one: the others finish before this unwinds
    join();
    throw;
  }
}

template <class T>
SliceWorkers<T>::~SliceWorkers() {
  join();
}

template <class T>
void SliceWorkers<T>::join() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

template <class T>
double SliceWorkers<T>::ready() {
  const auto t0 = std::chrono::steady_clock::now();
  join();
  for (const auto& e : errors_)
    if (e) std::rethrow_exception(e);
  return since(t0);
}

template <class T>
typename SliceWorkers<T>::Worker* SliceWorkers<T>::find(const Context& c) {
  for (Worker& w : workers_)
    if (w.context.is_cuda() == c.is_cuda() && w.context.device() == c.device() && w.context.stream() == c.stream())
      return &w;
  return nullptr;
}

template op::OperatorPtr<float> shared_encoding<float>(const SolveSettings<float>&,
                                                       std::shared_ptr<const mri::Encoding<float>>, std::int64_t,
                                                       const Context&);
template op::OperatorPtr<double> shared_encoding<double>(const SolveSettings<double>&,
                                                         std::shared_ptr<const mri::Encoding<double>>, std::int64_t,
                                                         const Context&);
template Solved solve_problem<float>(const SolveSettings<float>&, const Problem<float>&, const Context&,
                                     const std::complex<float>*, std::complex<float>*, const dist::CommPtr&,
                                     const std::function<void(const solve::Report&)>&);
template Solved solve_problem<double>(const SolveSettings<double>&, const Problem<double>&, const Context&,
                                      const std::complex<double>*, std::complex<double>*, const dist::CommPtr&,
                                      const std::function<void(const solve::Report&)>&);
template void rehearse<float>(SolveSettings<float>, Problem<float>, bool, const Context&);
template void rehearse<double>(SolveSettings<double>, Problem<double>, bool, const Context&);
template class SliceWorkers<float>;
template class SliceWorkers<double>;

}  // namespace fieldft::cli
