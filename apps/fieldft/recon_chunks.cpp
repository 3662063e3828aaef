#include "recon_chunks.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <numbers>
#include <sstream>
#include <thread>

#include "common.hpp"
#include "cpu/fftw.hpp"

namespace fieldft::cli {

std::string bytes_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.3g %s", bytes, units[u]);
  return buf;
}

std::string MemoryEstimate::text() const {
  return bytes_text(total) + " (data " + bytes_text(data) + ", geometry " + bytes_text(geometry) + ", maps " +
         bytes_text(maps) + ", operator " + bytes_text(op) + ", solver " + bytes_text(solver) +
         "; x 1.25 + 64 MiB of margin)";
}

MemoryEstimate estimate_memory(const MemoryProblem& p) {
  const double c = 2.0 * static_cast<double>(p.real_bytes), r = static_cast<double>(p.real_bytes);
  const double m = static_cast<double>(p.samples), n = static_cast<double>(p.voxels);
  const double coils = static_cast<double>(p.coils), shots = static_cast<double>(p.shots);
  const double fine = std::pow(2.0, p.dim) * n;  // upsampling factor 2 per axis
  MemoryEstimate e;
  e.data = m * coils * c * (p.weights ? 2 : 1);
  e.geometry = m * (p.dim + 1) * r + 4 * m + (p.field ? n * r : 0) + (p.pcsense ? n * shots * r : 0);
  e.maps = n * coils * c * (p.estimate_maps ? 2 : 1);
  e.op = n * coils * c + m * coils * c;
  if (p.segments > 0) {
    const double l = p.segments;
    e.op += l * (fine * coils * c + n * coils * c) + m * l * c + n * l * c + 8 * m;
  } else if (!p.dft) {
    e.op += fine * coils * c + fine * c + 8 * m;
  }
  if (p.pcsense) e.op += shots * n * coils * c;
  e.solver = 5 * n * c + m * coils * c;
  e.total = 1.25 * (e.data + e.geometry + e.maps + e.op + e.solver) + 64.0 * 1024 * 1024;
  return e;
}

double parse_bytes(const std::string& text, const std::string& option) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  for (auto& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static const std::map<std::string, double> scale = {
      {"", 1},          {"b", 1},          {"k", 1024.0},      {"kb", 1024.0},         {"kib", 1024.0},
      {"m", 1048576.0}, {"mb", 1048576.0}, {"mib", 1048576.0}, {"g", 1073741824.0},    {"gb", 1073741824.0},
      {"gib", 1073741824.0}, {"t", 1099511627776.0}, {"tb", 1099511627776.0}, {"tib", 1099511627776.0}};
  const auto it = scale.find(unit);
  if (used == 0 || it == scale.end() || !std::isfinite(v) || v <= 0)
    throw UsageError(option + ": '" + text + "' is not a size (a positive number with an optional unit B, K, M, G or T, "
                     "binary: 1G = 2^30 bytes)");
  return v * it->second;
}

double available_host_memory() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024.0;
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<double>(pages) * static_cast<double>(size) : 0.0;
}

std::optional<Stack> detect_stack(const io::RawData& d, std::string* why_not) {
  const auto no = [&](const std::string& why) {
    if (why_not) *why_not = why;
    return std::optional<Stack>();
  };
  if (d.dim != 3 || d.kz.empty()) return no("they are 2D: there is nothing to split");
  const std::int64_t m = d.num_samples(), nz = d.grid[2];
  std::map<long long, std::int64_t> plane_of;  // integer kz -> plane
  std::vector<std::vector<std::int64_t>> planes;
  Stack s;
  for (std::int64_t j = 0; j < m; ++j) {
    const double kz = d.kz[static_cast<std::size_t>(j)];
    const double k = std::round(kz);
    if (std::abs(kz - k) > 1e-6) return no("k_z is not on the Cartesian grid (k_z = " + std::to_string(kz) + ")");
    auto [it, fresh] = plane_of.try_emplace(static_cast<long long>(k), static_cast<std::int64_t>(planes.size()));
    if (fresh) {
      planes.emplace_back();
      s.kz.push_back(k);
    }
    planes[static_cast<std::size_t>(it->second)].push_back(j);
  }
  if (static_cast<std::int64_t>(planes.size()) != nz)
    return no(std::to_string(planes.size()) + " k_z planes for Nz = " + std::to_string(nz) + " (a stack samples every plane)");
  std::vector<bool> residue(static_cast<std::size_t>(nz), false);
  for (double k : s.kz) {
    const auto r = static_cast<std::size_t>(((static_cast<long long>(k) % nz) + nz) % nz);
    if (residue[r]) return no("two k_z planes alias on the grid (equal modulo Nz)");
    residue[r] = true;
  }
  const std::size_t per = planes.front().size();
  const auto same = [](double a, double b) { return std::abs(a - b) <= 1e-6 * (1 + std::abs(a)); };
  for (const auto& p : planes) {
    if (p.size() != per) return no("the k_z planes hold different numbers of samples");
    for (std::size_t j = 0; j < per; ++j) {
      const auto a = static_cast<std::size_t>(planes.front()[j]), b = static_cast<std::size_t>(p[j]);
      if (!same(d.kx[a], d.kx[b]) || !same(d.ky[a], d.ky[b]) ||
          (!d.times.empty() && !same(d.times[a], d.times[b])) || d.shots[a] != d.shots[b])
        return no("the k_z planes differ in their in-plane trajectory, readout times or shots");
    }
  }
  s.planes = nz;
  s.plane_samples = static_cast<std::int64_t>(per);
  s.index.reserve(static_cast<std::size_t>(m));
  for (const auto& p : planes) s.index.insert(s.index.end(), p.begin(), p.end());
  return s;
}

namespace {

// e^{sign·i2π κ_p z_v}·scale with z_v = (v - ⌊Nz/2⌋)/Nz, at p + planes·z; in double.
std::vector<std::complex<double>> kz_weights(const Stack& s, std::int64_t nz, double sign, double scale) {
  std::vector<std::complex<double>> w(static_cast<std::size_t>(nz * s.planes));
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t p = 0; p < s.planes; ++p)
      w[static_cast<std::size_t>(p + s.planes * z)] =
          std::polar(scale, sign * 2 * std::numbers::pi * s.kz[static_cast<std::size_t>(p)] *
                                static_cast<double>(z - nz / 2) / static_cast<double>(nz));
  return w;
}

// work(i) for i in [0, n) over the host's threads (i = t, t + workers, ...).
template <class F>
void over_threads(std::int64_t n, const F& work) {
  const std::int64_t workers = std::min<std::int64_t>(n, std::max<std::int64_t>(1, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (std::int64_t t = 0; t < workers; ++t)
    threads.emplace_back([&, t] {
      for (std::int64_t i = t; i < n; i += workers) work(i);
    });
  for (auto& th : threads) th.join();
}

// The k_z transforms are one complex matrix product, out(r, col) = Σ_q W[q + nq·r] · in(q, col),
// with nq and nr the planes and slices (either way round) and a column per in-plane sample and
// coil. Taken a block of columns at a time: the block's nq rows are gathered once (in double,
// real and imaginary parts apart, so that the loops below vectorise), and every output row of
// the block is made from them while they are in cache. Before, each output value gathered its nq
// inputs from rows M values apart: 6-8 s for 64 slices of 32 coils x 65536 samples on a 32-core
// host (2x H200 machine, session 26), dominated by cache misses.
template <class In, class Out>
void plane_product(const std::vector<std::complex<double>>& w, std::int64_t nq, std::int64_t nr, std::int64_t cols,
                   const In& in, const Out& out) {
  constexpr std::int64_t kBlock = 256;  // nq x 256 x 16 bytes: 256 KiB for 64 planes
  over_threads((cols + kBlock - 1) / kBlock, [&](std::int64_t b) {
    const std::int64_t c0 = b * kBlock, nb = std::min(kBlock, cols - c0);
    std::vector<double> re(static_cast<std::size_t>(nq * nb)), im(re.size()), acc_re(static_cast<std::size_t>(nb)),
        acc_im(acc_re.size());
    for (std::int64_t q = 0; q < nq; ++q)
      for (std::int64_t i = 0; i < nb; ++i) {
        const std::complex<double> v = in(q, c0 + i);
        re[static_cast<std::size_t>(q * nb + i)] = v.real();
        im[static_cast<std::size_t>(q * nb + i)] = v.imag();
      }
    for (std::int64_t r = 0; r < nr; ++r) {
      std::fill(acc_re.begin(), acc_re.end(), 0.0);
      std::fill(acc_im.begin(), acc_im.end(), 0.0);
      double* __restrict ar = acc_re.data();
      double* __restrict ai = acc_im.data();
      for (std::int64_t q = 0; q < nq; ++q) {
        const double wr = w[static_cast<std::size_t>(q + nq * r)].real(),
                     wi = w[static_cast<std::size_t>(q + nq * r)].imag();
        const double* __restrict xr = re.data() + q * nb;
        const double* __restrict xi = im.data() + q * nb;
#pragma omp simd
        for (std::int64_t i = 0; i < nb; ++i) {
          ar[i] += wr * xr[i] - wi * xi[i];
          ai[i] += wr * xi[i] + wi * xr[i];
        }
      }
      for (std::int64_t i = 0; i < nb; ++i)
        out(r, c0 + i, std::complex<double>(acc_re[static_cast<std::size_t>(i)], acc_im[static_cast<std::size_t>(i)]));
    }
  });
}

// Where every κ_p is an integer and no two are equal modulo Nz (a stack sampled on the k_z grid of
// its slices, the usual case), the k_z transform is an FFT of length Nz: κ_p's bin, κ_p mod Nz.
// Empty otherwise.
std::vector<std::int64_t> fft_bins(const Stack& s, std::int64_t nz) {
  std::vector<std::int64_t> bins;
  std::vector<char> used(static_cast<std::size_t>(nz), 0);
  for (const double k : s.kz) {
    const double r = std::round(k);
    if (!(std::abs(k - r) <= 1e-9 * std::max(1.0, std::abs(k)))) return {};
    const std::int64_t b = ((static_cast<std::int64_t>(r) % nz) + nz) % nz;
    if (used[static_cast<std::size_t>(b)]) return {};
    used[static_cast<std::size_t>(b)] = 1;
    bins.push_back(b);
  }
  return bins;
}

// Length-Nz FFTs (FFTW, `sign` FFTW_FORWARD or FFTW_BACKWARD) along the rows of `cols` columns, a
// block of kFftBlock columns at a time, each thread with its own buffer (rows slowest, columns
// fastest; one plan made for that layout, run on every buffer): load(buffer, c0, nb) fills the
// block's rows (zeros elsewhere), store(buffer, c0, nb) takes the transformed rows.
constexpr std::int64_t kFftBlock = 256;
template <class Load, class Store>
void fft_along_rows(std::int64_t nz, std::int64_t cols, int sign, const Load& load, const Store& store) {
  const auto size = static_cast<std::size_t>(nz * kFftBlock);
  cpu::FftwBuffer<double> planned(size);
  const fftw_iodim64 along = {static_cast<ptrdiff_t>(nz), kFftBlock, kFftBlock}, over = {kFftBlock, 1, 1};
  const cpu::FftwPlan<double> plan(1, &along, 1, &over, planned.get(), sign, false, 1);
  const std::int64_t blocks = (cols + kFftBlock - 1) / kFftBlock;
  const std::int64_t workers =
      std::min<std::int64_t>(blocks, std::max<std::int64_t>(1, std::thread::hardware_concurrency()));
  over_threads(workers, [&](std::int64_t t) {  // one task per thread: its buffer, every workers-th block
    cpu::FftwBuffer<double> buf(size);
    std::complex<double>* b = buf.get();
    for (std::int64_t blk = t; blk < blocks; blk += workers) {
      const std::int64_t c0 = blk * kFftBlock, nb = std::min(kFftBlock, cols - c0);
      std::fill(b, b + size, std::complex<double>{});
      load(b, c0, nb);
      plan.execute(b);
      store(static_cast<const std::complex<double>*>(b), c0, nb);
    }
  });
}

// e^{sign·i2π κ_p ⌊Nz/2⌋/Nz}·scale for every plane p: what turns the transform about the centre
// slice, e^{∓i2π κ_p (z − ⌊Nz/2⌋)/Nz}, into an FFT over z = 0 … Nz − 1.
std::vector<std::complex<double>> centre_shift(const Stack& s, std::int64_t nz, double sign, double scale) {
  std::vector<std::complex<double>> shift(s.kz.size());
  for (std::size_t p = 0; p < shift.size(); ++p)
    shift[p] = std::polar(
        scale, sign * 2 * std::numbers::pi * s.kz[p] * static_cast<double>(nz / 2) / static_cast<double>(nz));
  return shift;
}

}  // namespace

template <class T>
std::vector<std::complex<T>> kz_to_slices(const Stack& s, std::int64_t nz, std::int64_t coils,
                                          const std::vector<std::complex<T>>& y) {
  const std::int64_t per = s.plane_samples, m = per * s.planes, cols = per * coils;
  std::vector<std::complex<T>> out(static_cast<std::size_t>(nz * cols));
  const auto in = [&](std::int64_t p, std::int64_t col) {  // plane p's value in column j + per·c
    const std::int64_t c = col / per, j = col - per * c;
    return std::complex<double>(y[static_cast<std::size_t>(s.index[static_cast<std::size_t>(p * per + j)] + m * c)]);
  };
  const std::vector<std::int64_t> bins = fft_bins(s, nz);
  if (bins.empty()) {
    // W[p + planes·z] = e^{+i2π κ_p z_v}/Nz: slice z (row) from the planes p.
    const auto w = kz_weights(s, nz, +1.0, 1.0 / static_cast<double>(nz));
    plane_product(w, s.planes, nz, cols, in, [&](std::int64_t z, std::int64_t col, std::complex<double> v) {
      out[static_cast<std::size_t>(z * cols + col)] = std::complex<T>(v);
    });
    return out;
  }
  // The FFT: e^{i2π κ_p (z - ⌊Nz/2⌋)/Nz} = e^{-i2π κ_p ⌊Nz/2⌋/Nz} · e^{i2π bin_p z/Nz}, so plane p,
  // times its first factor and 1/Nz, goes into bin_p, and FFTW's backward transform along the
  // bins makes the slices. Nz log Nz per column where the product took Nz·planes (64 planes: ~10x
  // fewer operations).
  const auto shift = centre_shift(s, nz, -1.0, 1.0 / static_cast<double>(nz));
  fft_along_rows(
      nz, cols, FFTW_BACKWARD,
      [&](std::complex<double>* b, std::int64_t c0, std::int64_t nb) {
        for (std::size_t p = 0; p < bins.size(); ++p) {
          std::complex<double>* row = b + bins[p] * kFftBlock;
          for (std::int64_t i = 0; i < nb; ++i) row[i] = shift[p] * in(static_cast<std::int64_t>(p), c0 + i);
        }
      },
      [&](const std::complex<double>* b, std::int64_t c0, std::int64_t nb) {
        for (std::int64_t z = 0; z < nz; ++z)
          for (std::int64_t i = 0; i < nb; ++i)
            out[static_cast<std::size_t>(z * cols + c0 + i)] = std::complex<T>(b[z * kFftBlock + i]);
      });
  return out;
}

template <class T>
void slices_to_kz(const Stack& s, std::int64_t nz, std::int64_t coils,
                  const std::vector<std::vector<std::complex<T>>>& slices, std::vector<std::complex<T>>& y) {
  const std::int64_t per = s.plane_samples, m = per * s.planes, cols = per * coils;
  y.assign(static_cast<std::size_t>(m * coils), std::complex<T>{});
  const auto put = [&](std::int64_t p, std::int64_t col, std::complex<double> v) {  // plane p, column j + per·c
    const std::int64_t c = col / per, j = col - per * c;
    y[static_cast<std::size_t>(s.index[static_cast<std::size_t>(p * per + j)] + m * c)] = std::complex<T>(v);
  };
  const std::vector<std::int64_t> bins = fft_bins(s, nz);
  if (bins.empty()) {
    // Plane p (row) from the slices z: kz_weights' layout transposed to W[z + nz·p].
    const auto wz = kz_weights(s, nz, -1.0, 1.0);
    std::vector<std::complex<double>> w(wz.size());
    for (std::int64_t z = 0; z < nz; ++z)
      for (std::int64_t p = 0; p < s.planes; ++p)
        w[static_cast<std::size_t>(z + nz * p)] = wz[static_cast<std::size_t>(p + s.planes * z)];
    plane_product(
        w, nz, s.planes, cols,
        [&](std::int64_t z, std::int64_t col) {
          return std::complex<double>(slices[static_cast<std::size_t>(z)][static_cast<std::size_t>(col)]);
        },
        put);
    return;
  }
  // The FFT, kz_to_slices' mirrored: e^{-i2π κ_p (z - ⌊Nz/2⌋)/Nz} = e^{+i2π κ_p ⌊Nz/2⌋/Nz} ·
  // e^{-i2π bin_p z/Nz}: FFTW's forward transform of the slices along z, then plane p is bin_p
  // times its factor.
  const auto shift = centre_shift(s, nz, +1.0, 1.0);
  fft_along_rows(
      nz, cols, FFTW_FORWARD,
      [&](std::complex<double>* b, std::int64_t c0, std::int64_t nb) {
        for (std::int64_t z = 0; z < nz; ++z)
          for (std::int64_t i = 0; i < nb; ++i)
            b[z * kFftBlock + i] =
                std::complex<double>(slices[static_cast<std::size_t>(z)][static_cast<std::size_t>(c0 + i)]);
      },
      [&](const std::complex<double>* b, std::int64_t c0, std::int64_t nb) {
        for (std::size_t p = 0; p < bins.size(); ++p)
          for (std::int64_t i = 0; i < nb; ++i)
            put(static_cast<std::int64_t>(p), c0 + i, shift[p] * b[bins[p] * kFftBlock + i]);
      });
}

template std::vector<std::complex<float>> kz_to_slices<float>(const Stack&, std::int64_t, std::int64_t,
                                                              const std::vector<std::complex<float>>&);
template std::vector<std::complex<double>> kz_to_slices<double>(const Stack&, std::int64_t, std::int64_t,
                                                                const std::vector<std::complex<double>>&);

template void slices_to_kz<double>(const Stack&, std::int64_t, std::int64_t,
                                   const std::vector<std::vector<std::complex<double>>>&,
                                   std::vector<std::complex<double>>&);

}  // namespace fieldft::cli
