// fieldft::io ISMRMRD NDArrays (src/io/ismrmrd_maps.cpp): reading one, and checking and
// reordering a map against the grid. Private to the reader.
#pragma once

#include <hdf5.h>

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/hdf5_guard.hpp"
#include "io/hdf5_util.hpp"
#include "io/ismrmrd.hpp"

namespace fieldft::io::detail {

using hdf5::FileFacts;

struct NdArray {
  std::vector<std::size_t> dims;  // ISMRMRD order: fastest first
  bool complex = false;
  std::vector<std::complex<double>> values;
};

// Array 0 of the NDArray variable `name` in `group`, converted to complex double; nullopt when
// absent; errors for another number of arrays, other element types, more than max_bytes, or
// another number of elements than a map of d's grid with K maps has (K = 0: one map).
std::optional<NdArray> read_ndarray(hid_t group, const FileFacts& facts, const std::string& name,
                                    std::uint64_t max_bytes, const RawData& d, std::int64_t k);

// Checks a map's shape against d's grid and K maps (K = 0: one map; see ismrmrd.hpp for the
// accepted shapes) and its values for NaN/Inf, and returns them x fastest (from `order`).
std::vector<std::complex<double>> map_values(NdArray a, const RawData& d, std::int64_t k, MapOrder order,
                                             const std::string& path, const std::string& name, bool want_complex);

// The values in single precision (RawData::coil_maps); an error names the first one beyond it.
std::vector<std::complex<float>> single_precision(const std::vector<std::complex<double>>& v, const std::string& path,
                                                  const std::string& name);

std::vector<double> real_part(const std::vector<std::complex<double>>& v);

}  // namespace fieldft::io::detail
