// fieldft_bench_gpu: times fieldft's CUDA NUFFT with inputs and outputs already on the device, as
// shared/BENCHMARKS.md asks (set_points once, then execute timed with CUDA events, minimum over
// repeats after a warm-up), and measures its accuracy against fieldft::reference on the same data.
// bench/gpu_nufft/run_matrix.py runs the whole matrix A–M with it; README.md beside this file
// describes both.
//
// Usage: fieldft_bench_gpu TYPE DIM N M EPS PREC(f|d) [NTRANSF] [METHODS] [REPEAT] [POINTS_FILE|-] [BINS]
//                          [--check K] [--ref-terms T] [--dump DIR] [--seed S] [--tuning K=V,...]
//   TYPE 1, 2: N^DIM modes, M points uniform in [-π, π)^DIM, isign +1.
//   TYPE 3:    M sources uniform in [-π, π)^DIM and N^DIM targets uniform in [-N/2, N/2)^DIM (the
//              frequencies of an N^DIM type 1), isign +1.
//   Inputs (strengths or modes): real and imaginary parts uniform in [-1, 1], NTRANSF stacked.
//   METHODS: auto, output, subproblem, nupts or precomputed (nupts' kernels reading kernel weights
//            stored at set_points; types 1 and 2), measured (auto with Options::planning remeasure and
//            no wisdom file: the JSON adds every timed candidate, the planner's marked, types 1 and
//            2), or several separated by commas: each is planned and
//            timed on the same data and checked against the same reference values. A suffix
//            +boxes or -boxes forces Options::spread_boxes on or off (e.g. output+boxes); a
//            last suffix @S sets Options::upsampfac to S (e.g. output@2.5, auto+boxes@2).
//   REPEAT: timed executes per method (default 5).
//   POINTS_FILE: raw little-endian float64 coordinates, DIM arrays of M values, instead of random
//                points ("-" for random).
//   BINS: bin sizes in fine-grid cells, e.g. 8,8,8 (0 = automatic).
//   --check K:     outputs compared with the direct double sum, per transform (default 64; 0: no
//                  check). They are a random subset of modes (type 1), points (type 2) or targets
//                  (type 3), the same for every transform and every method.
//   --ref-terms T: cap on the terms of the direct sum (default 4e9); K is lowered to fit, so that
//                  the largest cases stay at seconds on 16 cores. The count used is printed.
//   --dump DIR:    writes the exact inputs, subset and reference values (README.md: "Dump format"),
//                  so that another program (cuFINUFFT in run_matrix.py) runs on the same data.
//   --seed S:      seed of all random data (default 1234); the data do not depend on thread count.
//   --tuning K=V,...: nufft::Options::tuning for every method; K is bulk_rows, tensor_cores or
//                  mode_fft, V is -1 (the planner's rule), 0 or 1 (docs/tuning.md, "Knobs"), e.g.
//                  --tuning bulk_rows=0,tensor_cores=1. The library validates V.
// Prints one JSON object per method on stdout; exit status 1 if any method failed.
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <random>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fieldft/fieldft.hpp"

namespace {

using fieldft::reference::cdouble;
using fieldft::reference::Points;
using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    std::exit(3);
  }
}

struct Args {
  int type = 1, dim = 1;
  std::int64_t n = 0, m = 0, ntransf = 1;
  double eps = 1e-5;
  std::string prec = "f";
  std::vector<std::string> methods{"auto"};
  int repeat = 5;
  std::string points_file;
  std::array<int, 3> bins{0, 0, 0};
  std::int64_t check = 64;
  double ref_terms = 4e9;
  std::string dump_dir;
  std::uint64_t seed = 1234;
  fieldft::nufft::Tuning tuning{};
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr,
               "fieldft_bench_gpu: %s\n"
               "usage: fieldft_bench_gpu TYPE DIM N M EPS PREC(f|d) [NTRANSF] [METHODS] [REPEAT] [POINTS_FILE|-] [BINS]\n"
               "                         [--check K] [--ref-terms T] [--dump DIR] [--seed S] [--tuning K=V,...]\n",
               what.c_str());
  std::exit(2);
}

double parse_number(const std::string& s, const char* name) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  usage_error(std::string(name) + " must be a number, got '" + s + "'");
}

std::int64_t parse_count(const std::string& s, const char* name, std::int64_t lo) {
  const double v = parse_number(s, name);  // accepts 1.34e8
  if (v != std::floor(v) || v < static_cast<double>(lo) || v > 9e18)
    usage_error(std::string(name) + " must be an integer >= " + std::to_string(lo) + ", got '" + s + "'");
  return static_cast<std::int64_t>(v);
}

// "bulk_rows=0,tensor_cores=1" into the knobs it names; the others keep their defaults.
fieldft::nufft::Tuning parse_tuning(const std::string& list) {
  fieldft::nufft::Tuning t;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) usage_error("--tuning expects K=V items, got '" + item + "'");
    const std::string key = item.substr(0, eq);
    const int value = static_cast<int>(parse_count(item.substr(eq + 1), "a --tuning value", -1));
    if (key == "bulk_rows") t.bulk_rows = value;
    else if (key == "tensor_cores") t.tensor_cores = value;
    else if (key == "mode_fft") t.mode_fft = value;
    else usage_error("--tuning: unknown knob '" + key + "'; expected bulk_rows, tensor_cores or mode_fft");
  }
  return t;
}

Args parse_args(int argc, char** argv) {
  Args a;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--", 0) != 0) {
      pos.push_back(s);
      continue;
    }
    std::string value;
    if (const auto eq = s.find('='); eq != std::string::npos) {
      value = s.substr(eq + 1);
      s = s.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      usage_error("option " + s + " needs a value");
    }
    if (s == "--check") a.check = parse_count(value, "--check", 0);
    else if (s == "--ref-terms") a.ref_terms = parse_number(value, "--ref-terms");
    else if (s == "--dump") a.dump_dir = value;
    else if (s == "--seed") a.seed = static_cast<std::uint64_t>(parse_count(value, "--seed", 0));
    else if (s == "--tuning") a.tuning = parse_tuning(value);
    else usage_error("unknown option " + s + "; expected --check, --ref-terms, --dump, --seed or --tuning");
  }
  if (pos.size() < 6) usage_error("expected at least 6 positional arguments, got " + std::to_string(pos.size()));
  a.type = static_cast<int>(parse_count(pos[0], "TYPE", 1));
  a.dim = static_cast<int>(parse_count(pos[1], "DIM", 1));
  if (a.type > 3) usage_error("TYPE must be 1, 2 or 3, got " + pos[0]);
  if (a.dim > 3) usage_error("DIM must be 1, 2 or 3, got " + pos[1]);
  a.n = parse_count(pos[2], "N", 1);
  a.m = parse_count(pos[3], "M", 0);
  a.eps = parse_number(pos[4], "EPS");
  a.prec = pos[5];
  if (a.prec != "f" && a.prec != "d") usage_error("PREC must be f or d, got '" + a.prec + "'");
  if (pos.size() > 6) a.ntransf = parse_count(pos[6], "NTRANSF", 1);
  if (pos.size() > 7) {
    a.methods.clear();
    std::stringstream ss(pos[7]);
    for (std::string item; std::getline(ss, item, ',');)
      if (!item.empty()) a.methods.push_back(item);
    if (a.methods.empty()) usage_error("METHODS is empty");
  }
  if (pos.size() > 8) a.repeat = static_cast<int>(parse_count(pos[8], "REPEAT", 1));
  if (pos.size() > 9 && pos[9] != "-") a.points_file = pos[9];
  if (pos.size() > 10 &&
      std::sscanf(pos[10].c_str(), "%d,%d,%d", &a.bins[0], &a.bins[1], &a.bins[2]) < 1)
    usage_error("BINS must look like 8,8,8, got '" + pos[10] + "'");
  if (pos.size() > 11) usage_error("too many positional arguments");
  if (a.ref_terms < 1) usage_error("--ref-terms must be >= 1");
  return a;
}

// Random streams keyed by (seed, stream, chunk): values are the same whatever the thread count.
std::uint64_t mix(std::uint64_t seed, std::uint64_t stream, std::uint64_t chunk) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull ^ (stream + 1) * 0xBF58476D1CE4E5B9ull ^ (chunk + 1) * 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <class T>
void fill_uniform(std::span<T> v, double lo, double hi, std::uint64_t seed, std::uint64_t stream) {
  constexpr std::int64_t kChunk = 1 << 16;
  const std::int64_t n = static_cast<std::int64_t>(v.size()), chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (std::int64_t ch = 0; ch < chunks; ++ch) {
    std::mt19937_64 rng(mix(seed, stream, static_cast<std::uint64_t>(ch)));
    const std::int64_t end = std::min(n, (ch + 1) * kChunk);
    for (std::int64_t i = ch * kChunk; i < end; ++i) {
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
      v[i] = static_cast<T>(lo + (hi - lo) * u);
    }
  }
}

// Everything both the timed plans and the reference see; the reference reads exactly these
// T values, converted to double.
template <class T>
struct Problem {
  int type = 1, dim = 1, isign = 1;
  std::vector<std::int64_t> modes;
  std::int64_t m = 0, nk = 0, ntransf = 1;
  std::vector<std::vector<T>> x;   // dim arrays of m source/point coordinates
  std::vector<std::vector<T>> s;   // type 3: dim arrays of nk target coordinates
  std::vector<std::complex<T>> in; // ntransf inputs, stacked
  std::int64_t num_modes() const {
    std::int64_t p = 1;
    for (auto v : modes) p *= v;
    return p;
  }
  std::int64_t in_len() const { return type == 2 ? num_modes() : m; }
  std::int64_t out_len() const { return type == 1 ? num_modes() : (type == 2 ? m : nk); }
  // Terms of the direct sum behind one output of one transform.
  std::int64_t terms_per_output() const { return type == 2 ? num_modes() : m; }
};

template <class T>
Points to_points(const std::vector<std::vector<T>>& c, int dim, std::span<const std::int64_t> idx) {
  Points p;
  p.dim = dim;
  std::vector<double>* dst[3] = {&p.x, &p.y, &p.z};
  for (int d = 0; d < dim; ++d) {
    dst[d]->resize(idx.size());
    for (std::size_t i = 0; i < idx.size(); ++i) (*dst[d])[i] = static_cast<double>(c[d][idx[i]]);
  }
  return p;
}

template <class T>
Points to_points(const std::vector<std::vector<T>>& c, int dim, std::int64_t lo, std::int64_t hi) {
  Points p;
  p.dim = dim;
  std::vector<double>* dst[3] = {&p.x, &p.y, &p.z};
  for (int d = 0; d < dim; ++d) dst[d]->assign(c[d].begin() + lo, c[d].begin() + hi);
  return p;
}

// Distinct sorted indices in [0, n): all of them when count >= n.
std::vector<std::int64_t> pick_subset(std::int64_t n, std::int64_t count, std::uint64_t seed) {
  std::vector<std::int64_t> w;
  if (count >= n) {
    for (std::int64_t i = 0; i < n; ++i) w.push_back(i);
    return w;
  }
  std::mt19937_64 rng(mix(seed, 7, 0));
  std::uniform_int_distribution<std::int64_t> d(0, n - 1);
  std::set<std::int64_t> s;
  while (static_cast<std::int64_t>(s.size()) < count) s.insert(d(rng));
  return {s.begin(), s.end()};
}

// Reference values at `which` for every transform (ntransf × which.size(), transform-major).
// fieldft::reference parallelises over outputs, which leaves most of 16 cores idle at 64
// outputs; here the work is split into tasks instead (sums over points: slices of points,
// added in a fixed order; sums over modes: groups of outputs), each calling the reference on
// one thread.
template <class T>
std::vector<cdouble> reference_values(const Problem<T>& p, std::span<const std::int64_t> which) {
  namespace ref = fieldft::reference;
  const std::int64_t count = static_cast<std::int64_t>(which.size()), nt = p.ntransf, inl = p.in_len();
  std::vector<cdouble> out(nt * count, cdouble(0));
  if (count == 0) return out;
  const int threads = omp_get_max_threads();
  omp_set_max_active_levels(1);  // the reference's own parallel loops run on the calling thread
  std::string failure;
  if (p.type == 2) {
    std::vector<cdouble> f(p.in.begin(), p.in.end());
    const std::int64_t groups = std::clamp<std::int64_t>((threads + nt - 1) / nt, 1, count);
    std::vector<std::vector<cdouble>> part(nt * groups);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t task = 0; task < nt * groups; ++task) {
      const std::int64_t t = task / groups, g = task % groups;
      const std::int64_t lo = count * g / groups, hi = count * (g + 1) / groups;
      try {
        const Points pts = to_points(p.x, p.dim, which.subspan(lo, hi - lo));
        part[task] = ref::nufft_type2(pts, std::span<const cdouble>(f).subspan(t * inl, inl), p.modes, p.isign, 0);
      } catch (const std::exception& e) {
#pragma omp critical
        failure = e.what();
      }
    }
    if (!failure.empty()) throw std::runtime_error("reference: " + failure);
    for (std::int64_t task = 0; task < nt * groups; ++task) {
      const std::int64_t t = task / groups, g = task % groups, lo = count * g / groups;
      std::copy(part[task].begin(), part[task].end(), out.begin() + t * count + lo);
    }
    return out;
  }
  const Points targets = p.type == 3 ? to_points(p.s, p.dim, which) : Points{};
  // About 4 slices per thread for load balance, none under 16k points (per-slice set-up cost).
  const std::int64_t slices = std::clamp<std::int64_t>(p.m / 16384, 1, 4 * threads);
  std::vector<std::vector<cdouble>> part(nt * slices);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t task = 0; task < nt * slices; ++task) {
    const std::int64_t t = task / slices, sl = task % slices;
    const std::int64_t lo = p.m * sl / slices, hi = p.m * (sl + 1) / slices;
    try {
      const Points pts = to_points(p.x, p.dim, lo, hi);
      std::vector<cdouble> c(p.in.begin() + t * inl + lo, p.in.begin() + t * inl + hi);
      part[task] = p.type == 1 ? ref::nufft_type1_at(pts, c, p.modes, p.isign, 0, which)
                               : ref::nufft_type3(pts, c, targets, p.isign);
    } catch (const std::exception& e) {
#pragma omp critical
      failure = e.what();
    }
  }
  if (!failure.empty()) throw std::runtime_error("reference: " + failure);
  for (std::int64_t task = 0; task < nt * slices; ++task) {
    const std::int64_t t = task / slices;
    for (std::int64_t i = 0; i < count; ++i) out[t * count + i] += part[task][i];
  }
  return out;
}

template <class V>
void write_raw(const std::filesystem::path& path, const V& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(v[0])));
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\', o += ch;
    else if (static_cast<unsigned char>(ch) < 0x20) o += ' ';
    else o += ch;
  }
  return o;
}

std::string json_number(double v, const char* fmt = "%.6g") {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// The dump: raw little-endian arrays and a meta.json describing them (README.md, "Dump format").
template <class T>
void dump(const std::filesystem::path& dir, const Problem<T>& p, double eps, std::span<const std::int64_t> which,
          const std::vector<cdouble>& ref) {
  std::filesystem::create_directories(dir);
  const char* real = sizeof(T) == 4 ? "float32" : "float64";
  const char* cplx = sizeof(T) == 4 ? "complex64" : "complex128";
  for (int d = 0; d < p.dim; ++d) write_raw(dir / ("x" + std::to_string(d) + ".bin"), p.x[d]);
  for (int d = 0; d < (p.type == 3 ? p.dim : 0); ++d) write_raw(dir / ("s" + std::to_string(d) + ".bin"), p.s[d]);
  write_raw(dir / "input.bin", p.in);
  write_raw(dir / "which.bin", std::vector<std::int64_t>(which.begin(), which.end()));
  write_raw(dir / "reference.bin", ref);
  std::ofstream f(dir / "meta.json");
  f << "{\"type\": " << p.type << ", \"dim\": " << p.dim << ", \"isign\": " << p.isign << ", \"modes\": [";
  for (std::size_t d = 0; d < p.modes.size(); ++d) f << (d ? ", " : "") << p.modes[d];
  f << "], \"eps\": " << json_number(eps) << ", \"m\": " << p.m << ", \"nk\": " << p.nk << ", \"ntransf\": " << p.ntransf << ", \"modeord\": 0"
    << ", \"real_dtype\": \"" << real << "\", \"complex_dtype\": \"" << cplx << "\", \"count\": " << which.size()
    << ", \"points\": \"x<d>.bin: m values each\", \"targets\": \"s<d>.bin: nk values each (type 3)\""
    << ", \"input\": \"input.bin: ntransf x in_len, in_len = m (types 1, 3) or prod(modes) (type 2), modes x fastest\""
    << ", \"which\": \"which.bin: int64 output indices within one transform\""
    << ", \"reference\": \"reference.bin: complex128, ntransf x count\"}\n";
  if (!f) throw std::runtime_error("cannot write " + (dir / "meta.json").string());
}

template <class T>
int run(const Args& a) {
  Problem<T> p;
  p.type = a.type;
  p.dim = a.dim;
  p.ntransf = a.ntransf;
  p.m = a.m;
  p.modes.assign(a.dim, a.type == 3 ? 1 : a.n);
  const auto g0 = Clock::now();
  p.x.assign(a.dim, std::vector<T>(a.m));
  if (!a.points_file.empty()) {
    std::ifstream f(a.points_file, std::ios::binary);
    std::vector<double> buf(a.m);
    for (int d = 0; d < a.dim; ++d) {
      f.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(a.m * sizeof(double)));
      if (!f) {
        std::fprintf(stderr, "fieldft_bench_gpu: cannot read %lld float64 coordinates of dimension %d from %s\n",
                     (long long)a.m, d, a.points_file.c_str());
        return 2;
      }
      std::transform(buf.begin(), buf.end(), p.x[d].begin(), [](double v) { return static_cast<T>(v); });
    }
  } else {
    for (int d = 0; d < a.dim; ++d) fill_uniform<T>(p.x[d], -std::numbers::pi, std::numbers::pi, a.seed, d);
  }
  if (a.type == 3) {
    p.nk = 1;
    for (int d = 0; d < a.dim; ++d) p.nk *= a.n;
    p.s.assign(a.dim, std::vector<T>(p.nk));
    const double half = static_cast<double>(a.n) / 2;
    for (int d = 0; d < a.dim; ++d) fill_uniform<T>(p.s[d], -half, half, a.seed, 10 + d);
  }
  const std::int64_t in_total = p.in_len() * p.ntransf, out_len = p.out_len();
  p.in.resize(in_total);
  fill_uniform<T>(std::span<T>(reinterpret_cast<T*>(p.in.data()), 2 * in_total), -1, 1, a.seed, 20);
  const double gen_ms = ms_between(g0, Clock::now());

  // Accuracy subset and reference values.
  std::int64_t count = std::min(a.check, out_len);
  const double per_output = static_cast<double>(p.terms_per_output()) * static_cast<double>(p.ntransf);
  if (count > 0 && per_output * static_cast<double>(count) > a.ref_terms)
    count = std::max<std::int64_t>(1, static_cast<std::int64_t>(a.ref_terms / per_output));
  const auto which = pick_subset(out_len, count, a.seed);
  const auto r0 = Clock::now();
  const auto ref = reference_values(p, which);
  const double ref_ms = ms_between(r0, Clock::now());
  std::fprintf(stderr, "fieldft_bench_gpu: data %.0f ms; reference at %zu outputs x %lld transforms (%.3g terms) %.0f ms on %d threads\n",
               gen_ms, which.size(), (long long)p.ntransf, per_output * static_cast<double>(which.size()), ref_ms,
               omp_get_max_threads());
  if (!a.dump_dir.empty()) dump(a.dump_dir, p, a.eps, which, ref);

  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  T* dx[3] = {nullptr, nullptr, nullptr};
  T* ds[3] = {nullptr, nullptr, nullptr};
  for (int d = 0; d < a.dim; ++d) {
    check(cudaMalloc(&dx[d], a.m * sizeof(T)), "cudaMalloc");
    check(cudaMemcpy(dx[d], p.x[d].data(), a.m * sizeof(T), cudaMemcpyHostToDevice), "upload");
    if (a.type == 3) {
      check(cudaMalloc(&ds[d], p.nk * sizeof(T)), "cudaMalloc");
      check(cudaMemcpy(ds[d], p.s[d].data(), p.nk * sizeof(T), cudaMemcpyHostToDevice), "upload");
    }
  }
  std::complex<T>*din, *dout;
  const std::int64_t out_total = out_len * p.ntransf;
  check(cudaMalloc(&din, in_total * sizeof(std::complex<T>)), "cudaMalloc");
  check(cudaMalloc(&dout, out_total * sizeof(std::complex<T>)), "cudaMalloc");
  check(cudaMemcpy(din, p.in.data(), in_total * sizeof(std::complex<T>), cudaMemcpyHostToDevice), "upload");
  check(cudaDeviceSynchronize(), "sync");
  cudaEvent_t ev0, ev1;
  check(cudaEventCreate(&ev0), "cudaEventCreate");
  check(cudaEventCreate(&ev1), "cudaEventCreate");

  int status = 0;
  std::vector<std::complex<T>> hout(out_total), got(which.size() * p.ntransf);
  for (const auto& method : a.methods) {
    std::ostringstream js;
    js << "{\"type\": " << a.type << ", \"dim\": " << a.dim << ", \"n\": " << a.n << ", \"m\": " << a.m
       << ", \"nk\": " << p.nk << ", \"ntransf\": " << a.ntransf << ", \"eps\": " << json_number(a.eps)
       << ", \"prec\": \"" << a.prec << "\", \"method_requested\": \"" << json_escape(method) << "\"";
    try {
      fieldft::nufft::Options opt;
      opt.backend = fieldft::Backend::kCuda;
      opt.tuning = a.tuning;
      // "output+boxes" / "output-boxes": method output with register boxes forced on / off.
      std::string name = method;
      if (const auto at = name.rfind('@'); at != std::string::npos) {
        opt.upsampfac = parse_number(name.substr(at + 1), "the upsampfac after @");
        name.resize(at);
      }
      for (const auto& [suffix, value] : {std::pair<std::string, int>{"+boxes", 1}, {"-boxes", 0}})
        if (name.size() > suffix.size() && name.ends_with(suffix)) {
          name.resize(name.size() - suffix.size());
          opt.spread_boxes = value;
        }
      // "measured": method auto with planning remeasure (no wisdom file: every candidate is timed
      // in this run, and the JSON lists them with the planner's own marked).
      if (name == "measured") {
        opt.planning = fieldft::nufft::Planning::kRemeasure;
        opt.wisdom_path.clear();
      } else {
        opt.method = fieldft::nufft::parse_method(name);
      }
      opt.bin_size = a.bins;
      const auto t0 = Clock::now();
      fieldft::nufft::Plan<T> plan(a.type, p.modes, p.isign, a.ntransf, a.eps, opt);
      const auto t1 = Clock::now();
      check(cudaDeviceSynchronize(), "sync");
      auto set_points = [&] {
        if (a.type == 3)
          plan.set_points(a.m, dx[0], dx[1], dx[2], p.nk, ds[0], ds[1], ds[2]);
        else
          plan.set_points(a.m, dx[0], dx[1], dx[2]);
        check(cudaDeviceSynchronize(), "sync");
      };
      const auto t2 = Clock::now();
      set_points();
      const auto t3 = Clock::now();
      plan.execute(din, dout);  // warm-up (also creates the cuFFT plan)
      check(cudaDeviceSynchronize(), "warm-up execute");
      float best = 1e30f;
      for (int r = 0; r < a.repeat; ++r) {
        check(cudaEventRecord(ev0), "cudaEventRecord");
        plan.execute(din, dout);
        check(cudaEventRecord(ev1), "cudaEventRecord");
        check(cudaEventSynchronize(ev1), "execute");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, ev0, ev1), "cudaEventElapsedTime");
        best = std::min(best, ms);
      }
      check(cudaMemcpy(hout.data(), dout, out_total * sizeof(std::complex<T>), cudaMemcpyDeviceToHost), "download");
      // set_points again on the same plan and points: the cost of new points on a plan whose
      // grid, upsampling factor and buffers are already in place (the first call includes them).
      const auto t4 = Clock::now();
      set_points();
      const auto t5 = Clock::now();
      double err = NAN;
      if (!which.empty()) {
        for (std::int64_t t = 0; t < p.ntransf; ++t)
          for (std::size_t i = 0; i < which.size(); ++i) got[t * which.size() + i] = hout[t * out_len + which[i]];
        err = fieldft::reference::rel_l2_error<std::complex<T>>(got, ref);
      }
      const auto& info = plan.info();
      js << ", \"method\": \"" << fieldft::nufft::method_name(info.method) << "\", \"bins\": \"" << info.bin_size[0]
         << "," << info.bin_size[1] << "," << info.bin_size[2] << "\", \"fine_grid\": \"" << info.fine_grid[0] << ","
         << info.fine_grid[1] << "," << info.fine_grid[2] << "\", \"kernel_width\": " << info.kernel_width
         << ", \"boxes\": " << (info.spread_boxes ? "true" : "false")
         << ", \"tensor_cores\": " << (info.spread_tensor_cores ? "true" : "false")
         << ", \"spread_kernel\": \"" << fieldft::nufft::spread_kernel_name(info.spread_kernel)
         << "\", \"interp_kernel\": \"" << fieldft::nufft::interp_kernel_name(info.interp_kernel)
         << "\", \"fft\": \"" << fieldft::nufft::fft_strategy_name(info.fft)
         << "\", \"mode_fft\": " << (info.mode_fft ? "true" : "false")
         << ", \"precomputed_bytes\": " << info.precomputed_bytes
         << ", \"upsampfac\": " << json_number(info.upsampfac) << ", \"plan_ms\": " << json_number(ms_between(t0, t1), "%.3f")
         << ", \"setpts_ms\": " << json_number(ms_between(t2, t3), "%.3f")
         << ", \"setpts_again_ms\": " << json_number(ms_between(t4, t5), "%.3f") << ", \"exec_ms\": " << json_number(best, "%.4f")
         << ", \"repeat\": " << a.repeat << ", \"rel_error\": " << json_number(err, "%.3e");
      if (!info.measured.empty()) {
        js << ", \"configured_by\": \"" << json_escape(info.configured_by) << "\", \"candidates\": [";
        for (std::size_t c = 0; c < info.measured.size(); ++c) {
          const auto& mc = info.measured[c];
          js << (c ? ", " : "") << "{\"method\": \"" << fieldft::nufft::method_name(mc.method)
             << "\", \"upsampfac\": " << json_number(mc.upsampfac) << ", \"bins\": \"" << mc.bin_size[0] << ","
             << mc.bin_size[1] << "," << mc.bin_size[2] << "\", \"ms\": " << json_number(mc.seconds * 1e3, "%.4f")
             << ", \"planner\": " << (mc.planner_choice ? "true" : "false") << "}";
        }
        js << "]";
      }
    } catch (const std::exception& e) {
      status = 1;
      js << ", \"error\": \"" << json_escape(e.what()) << "\"";
    }
    js << ", \"check_outputs\": " << which.size() << ", \"check_terms\": "
       << json_number(per_output * static_cast<double>(which.size()), "%.4g") << ", \"ref_ms\": "
       << json_number(ref_ms, "%.1f") << ", \"gen_ms\": " << json_number(gen_ms, "%.1f") << ", \"threads\": "
       << omp_get_max_threads() << ", \"device\": \"" << json_escape(prop.name) << "\"}";
    std::printf("%s\n", js.str().c_str());
    std::fflush(stdout);
  }
  for (int d = 0; d < a.dim; ++d) {
    cudaFree(dx[d]);
    cudaFree(ds[d]);
  }
  cudaFree(din);
  cudaFree(dout);
  cudaEventDestroy(ev0);
  cudaEventDestroy(ev1);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse_args(argc, argv);
  try {
    return a.prec == "d" ? run<double>(a) : run<float>(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fieldft_bench_gpu: error: %s\n", e.what());
    return 1;
  }
}
