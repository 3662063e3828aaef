// What every per-backend test battery starts with. A battery is written once and compiled once
// per backend: its build defines FIELDFT_TEST_BACKEND to the fieldft::Backend value under test
// (1 = kCpu, 2 = kCuda), and every test body reads kBackend. Also brings in the helpers every
// battery uses: the oracles, GoogleTest helpers, error measures and random data.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "fieldft/reference.hpp"
#include "support/backends.hpp"
#include "support/gtest_helpers.hpp"
#include "support/measures.hpp"
#include "support/random_data.hpp"

#ifndef FIELDFT_TEST_BACKEND
#error "FIELDFT_TEST_BACKEND must be defined to the fieldft::Backend value under test"
#endif

namespace fieldft::test {

inline constexpr Backend kBackend = static_cast<Backend>(FIELDFT_TEST_BACKEND);

}  // namespace fieldft::test
